/* mermaid.c -- ljm heap --format mermaid: what retains the objects a heap
** view picks, as a mermaid flowchart (Markdown on GitHub and GitLab draws it):
**
**   %% <title>
**   flowchart TD
**     roots(["roots"])
**     n7f3c2a1b4e80["Point
**     56 B, retains 56 B"]
**     n7f3c2a1b4f00 -->|"[3]"| n7f3c2a1b4e80
**     classDef picked fill:#ffe0b2,stroke:#e65100
**     class n7f3c2a1b4e80 picked
**
** Nodes are named by their objects' addresses ("n" and hex digits: a name
** starting with "o" or "x" could end an arrow in a circle or a cross); an
** edge goes from the object holding a reference to the object it refers to.
** Texts are in double quotes, where mermaid reads entity codes: every
** character it could take as syntax is written as a code (escaped(): "#95;"
** for '_', which it would set in italics), so no name is read as markup, a
** directive or a comment; a line break is a newline in the quotes (with
** <br>, mermaid would read Markdown marks even as codes). The title, a
** comment, is written the same way. mermaid's defaults refuse a text over
** 50,000 characters or 500 edges (doc/snapshots.md). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "exporters/common/heapsub.h"
#include "exporters/ljm_exporter.h"

/* t with every character mermaid could read as syntax as an entity code:
** quotes, '#', markup, Markdown marks, '%' and braces (a "%%{" anywhere is a
** directive, even in quotes), ':' ("style:..." lines), and U+2028/U+2029,
** after which a "%%" would start a comment line. */
static void escaped(FILE *f, const char *t)
{
  static const char codes[] = "\"#<>&|`_*~\\%{}:";
  for (; *t; t++) {
    unsigned char c = (unsigned char)*t;
    if (c == '\n') {
      fputc('\n', f);
    } else if (c == 0xe2 && (unsigned char)t[1] == 0x80 && ((unsigned char)t[2] | 1) == 0xa9) {
      fprintf(f, "#%d;", (unsigned char)t[2] == 0xa8 ? 0x2028 : 0x2029);
      t += 2;
    } else if (c && strchr(codes, c)) {
      fprintf(f, "#%d;", c);
    } else {
      fputc(c, f);
    }
  }
}

static void quoted(FILE *f, const char *t)
{
  fputc('"', f);
  escaped(f, t);
  fputc('"', f);
}

static void node_id(FILE *f, const LjmHeapGraph *g, const LjmHeapSubNode *n)
{
  if (n->obj == 0) fputs("roots", f);
  else if (n->shared) fprintf(f, "n%" PRIx64 "_%" PRIu32, g->obj[n->obj].addr, n->obj);
  else fprintf(f, "n%" PRIx64, g->obj[n->obj].addr);
}

static void mm_begin(FILE *f, const char *title)
{
  fputs("%% ", f);
  escaped(f, title);
  fputs(" (ljm heap)\nflowchart TD\n", f);
}

static void mm_node(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s, uint32_t k,
                    const char *text)
{
  fputs("  ", f);
  node_id(f, g, &s->node[k]);
  fputs(s->node[k].obj == 0 ? "([" : "[", f);
  quoted(f, text);
  fputs(s->node[k].obj == 0 ? "])\n" : "]\n", f);
}

static void mm_edge(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s, uint32_t k,
                    const char *text)
{
  fputs("  ", f);
  node_id(f, g, &s->node[s->edge[k].from]);
  fputs(" -->|", f);
  quoted(f, text);
  fputs("| ", f);
  node_id(f, g, &s->node[s->edge[k].to]);
  fputc('\n', f);
}

/* The picked objects, filled. */
static void mm_end(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s)
{
  if (!s->picked) return;
  fputs("  classDef picked fill:#ffe0b2,stroke:#e65100\n  class ", f);
  for (uint32_t k = 0; k < s->picked; k++) {
    if (k) fputc(',', f);
    node_id(f, g, &s->node[k]);
  }
  fputs(" picked\n", f);
}

static const LjmHeapDraw mm_draw = { mm_begin, mm_node, mm_edge, mm_end };

static int mermaid_write(const LjmHeapGraph *g, const LjmExportOptions *o, FILE *f, char *err,
                         size_t errlen)
{
  return ljm_heap_sub_draw(g, o, f, &mm_draw, err, errlen);
}

const LjmExporter ljm_exporter_mermaid = {
  .name = "mermaid", .command = "heap", .reads = LJM_READS_SNAPSHOT,
  .summary = "what retains a heap snapshot's objects, as a mermaid flowchart (ljm heap --format mermaid)",
  .write_heap = mermaid_write,
};
