/* dot.c -- ljm heap --format dot: what retains the objects a heap view picks,
** as a GraphViz digraph (dot -Tsvg draws it):
**
**   // <title>
**   digraph retainers {
**     "roots" [label="roots", shape=ellipse];
**     "0x7f3c2a1b4e80" [label="Point\n56 B, retains 56 B", <picked: filled>];
**     "0x7f3c2a1b4f00" -> "0x7f3c2a1b4e80" [label="[3]"];
**   }
**
** Nodes are named by their objects' addresses (and index, where a hostile
** snapshot gives two one address); an edge goes from the object
** holding a reference to the object it refers to, labelled with its key,
** index or slot. Texts are UTF-8 without control characters (heapsub.h),
** quoted with '"' and '\' escaped and '&' as "&amp;" (dot reads HTML
** entities in labels); a line break is the \n escape. */
#include <inttypes.h>
#include <stdio.h>

#include "exporters/common/heapsub.h"
#include "exporters/ljm_exporter.h"

/* t as a DOT quoted string: '\n' becomes the \n escape. */
static void quoted(FILE *f, const char *t)
{
  fputc('"', f);
  for (; *t; t++) {
    if (*t == '\n') fputs("\\n", f);
    else if (*t == '"' || *t == '\\') fprintf(f, "\\%c", *t);
    else if (*t == '&') fputs("&amp;", f);  /* dot reads entities: "&amp;" would show "&" */
    else fputc(*t, f);
  }
  fputc('"', f);
}

static void node_id(FILE *f, const LjmHeapGraph *g, const LjmHeapSubNode *n)
{
  if (n->obj == 0) fputs("\"roots\"", f);
  else if (n->shared) fprintf(f, "\"0x%" PRIx64 "_%" PRIu32 "\"", g->obj[n->obj].addr, n->obj);
  else fprintf(f, "\"0x%" PRIx64 "\"", g->obj[n->obj].addr);
}

static void dot_begin(FILE *f, const char *title)
{
  fprintf(f, "// %s (ljm heap)\ndigraph retainers {\n  graph [label=", title);
  quoted(f, title);
  fputs(", labelloc=t, fontname=\"sans-serif\"];\n"
        "  node [shape=box, fontname=\"sans-serif\", fontsize=10];\n"
        "  edge [fontname=\"sans-serif\", fontsize=9];\n", f);
}

static void dot_node(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s, uint32_t k,
                     const char *text)
{
  fputs("  ", f);
  node_id(f, g, &s->node[k]);
  fputs(" [label=", f);
  quoted(f, text);
  if (s->node[k].obj == 0) fputs(", shape=ellipse", f);
  else if (s->node[k].level == 0) fputs(", style=filled, fillcolor=\"#ffe0b2\"", f);
  fputs("];\n", f);
}

static void dot_edge(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s, uint32_t k,
                     const char *text)
{
  fputs("  ", f);
  node_id(f, g, &s->node[s->edge[k].from]);
  fputs(" -> ", f);
  node_id(f, g, &s->node[s->edge[k].to]);
  fputs(" [label=", f);
  quoted(f, text);
  fputs("];\n", f);
}

static void dot_end(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s)
{
  (void)g;
  (void)s;
  fputs("}\n", f);
}

static const LjmHeapDraw dot_draw = { dot_begin, dot_node, dot_edge, dot_end };

static int dot_write(const LjmHeapGraph *g, const LjmExportOptions *o, FILE *f, char *err,
                     size_t errlen)
{
  return ljm_heap_sub_draw(g, o, f, &dot_draw, err, errlen);
}

const LjmExporter ljm_exporter_dot = {
  .name = "dot", .command = "heap", .reads = LJM_READS_SNAPSHOT,
  .summary = "what retains a heap snapshot's objects, as a GraphViz graph (ljm heap --format dot)",
  .write_heap = dot_write,
};
