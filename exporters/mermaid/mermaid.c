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
** Texts are in double quotes, where mermaid reads entity codes: '"', '#',
** '<', '>', '&', '|', and the Markdown marks '`', '_', '*', '~', '\' are
** written as codes (#quot;, #95; ...), so no name is read as markup (mermaid
** would set "_x_" in italics); a line break is a newline in the quotes
** (with <br>, mermaid would read Markdown marks even as codes). */
#include <inttypes.h>
#include <stdio.h>

#include "exporters/common/buf.h"
#include "exporters/common/heapsub.h"
#include "exporters/ljm_exporter.h"

static void quoted(FILE *f, const char *t)
{
  fputc('"', f);
  for (; *t; t++) {
    switch (*t) {
    case '"': fputs("#quot;", f); break;
    case '#': fputs("#35;", f); break;
    case '<': fputs("#lt;", f); break;
    case '>': fputs("#gt;", f); break;
    case '&': fputs("#amp;", f); break;
    case '|': fputs("#124;", f); break;
    case '`': fputs("#96;", f); break;
    case '_': fputs("#95;", f); break;
    case '*': fputs("#42;", f); break;
    case '~': fputs("#126;", f); break;
    case '\\': fputs("#92;", f); break;
    default: fputc(*t, f);
    }
  }
  fputc('"', f);
}

static void node_id(FILE *f, const LjmHeapGraph *g, uint32_t obj)
{
  if (obj == 0) fputs("roots", f);
  else fprintf(f, "n%" PRIx64, g->obj[obj].addr);
}

static int mermaid_write(const LjmHeapGraph *g, const LjmExportOptions *o, FILE *f, char *err,
                         size_t errlen)
{
  LjmHeapSub s;
  if (ljm_heap_sub(&s, g, o)) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  LjmBuf b = { 0 };
  ljm_heap_sub_title(&s, o, &b);
  fprintf(f, "%%%% %s (ljm heap)\nflowchart TD\n", ljm_buf_str(&b));
  for (uint32_t k = 0; k < s.nnode; k++) {
    ljm_buf_reset(&b);
    ljm_heap_sub_node_text(&s, g, k, &b);
    fputs("  ", f);
    node_id(f, g, s.node[k].obj);
    fputs(s.node[k].obj == 0 ? "([" : "[", f);
    quoted(f, ljm_buf_str(&b));
    fputs(s.node[k].obj == 0 ? "])\n" : "]\n", f);
  }
  for (uint32_t k = 0; k < s.nedge; k++) {
    ljm_buf_reset(&b);
    ljm_heap_sub_edge_text(&s, g, k, &b);
    fputs("  ", f);
    node_id(f, g, s.node[s.edge[k].from].obj);
    fputs(" -->|", f);
    quoted(f, ljm_buf_str(&b));
    fputs("| ", f);
    node_id(f, g, s.node[s.edge[k].to].obj);
    fputc('\n', f);
  }
  if (s.picked) {
    fputs("  classDef picked fill:#ffe0b2,stroke:#e65100\n  class ", f);
    for (uint32_t k = 0; k < s.picked; k++) {
      if (k) fputc(',', f);
      node_id(f, g, s.node[k].obj);
    }
    fputs(" picked\n", f);
  }
  int oom = b.oom;
  ljm_buf_free(&b);
  ljm_heap_sub_free(&s);
  if (oom) snprintf(err, errlen, "out of memory");
  return oom ? -1 : 0;
}

const LjmExporter ljm_exporter_mermaid = {
  .name = "mermaid", .command = "heap", .reads = LJM_READS_SNAPSHOT,
  .summary = "what retains a heap snapshot's objects, as a mermaid flowchart (ljm heap --format mermaid)",
  .write_heap = mermaid_write,
};
