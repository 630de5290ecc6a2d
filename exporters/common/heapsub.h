/* heapsub.h -- the part of a heap snapshot a graph output draws: the objects
** ljm heap's view picks and, level by level, what holds references to them.
**
** The picked objects are the text views' own: --path-to's (o->pattern set:
** type name matches first, then label), --top TYPE's (o->match alone: the
** largest retainers of a matching type) or the largest retainers. From each
** drawn object at most o->paths references in are followed, best first (as
** the text views list them), up to o->depth levels and o->max_objects
** objects in all; each edge is one strong reference of the snapshot. The
** roots are one node (object 0).
*/
#ifndef LJM_EXPORTERS_HEAPSUB_H
#define LJM_EXPORTERS_HEAPSUB_H

#include <stdint.h>
#include <stdio.h>

#include "exporters/common/buf.h"
#include "exporters/ljm_exporter.h"
#include "model/ljm_heapgraph.h"

typedef struct LjmHeapSubNode {
  uint32_t obj;    /* object index (0: the roots) */
  uint32_t level;  /* 0: picked; k: retains one of level k - 1 */
  uint32_t more;   /* strong references into it not drawn */
  uint32_t shared; /* another node drawn has its address (a hostile
                      snapshot): names it by address and object index */
} LjmHeapSubNode;

typedef struct LjmHeapSubEdge {
  uint32_t from, to;  /* node indexes: from holds a reference to to */
  uint32_t ref;       /* the reference (index into g->ref) */
} LjmHeapSubEdge;

typedef struct LjmHeapSub {
  LjmHeapSubNode *node;
  uint32_t nnode;
  LjmHeapSubEdge *edge;
  uint32_t nedge;
  uint32_t picked;    /* nodes of level 0 */
  uint32_t matched;   /* objects the view matches in all (--path-to) */
  uint32_t depth, max;  /* the limits used */
  uint32_t cut;       /* references left out because max objects were drawn */
  uint32_t *memo;     /* type names (ljm_heapgraph_type_name) */
} LjmHeapSub;

/* Which pass of --path-to object i is listed in: 1 its type name matches,
** 2 only its label does, 0 neither (nor for VM internals). memo as
** ljm_heapgraph_type_name's. */
int ljm_heap_matches(const LjmHeapGraph *g, uint32_t *memo, uint32_t i, LjmHeapLabelMatch match,
                     void *ud);

/* Fills s (zeroed first) for the view o asks for. 0, or -1 out of memory. */
int ljm_heap_sub(LjmHeapSub *s, const LjmHeapGraph *g, const LjmExportOptions *o);
/* Frees what ljm_heap_sub allocated. */
void ljm_heap_sub_free(LjmHeapSub *s);

/* What the view draws, in one line: "what retains the objects whose type
** name or label matches 'Point' (20 of 200), 3 levels, at most 50 objects". */
void ljm_heap_sub_title(const LjmHeapSub *s, const LjmExportOptions *o, LjmBuf *b);

/* Node k's text, its lines separated by '\n': its type name and label, its
** path from the roots (both cut, cleaned to printable UTF-8), its size and
** what it retains, and how many references into it are not drawn. */
void ljm_heap_sub_node_text(const LjmHeapSub *s, const LjmHeapGraph *g, uint32_t k, LjmBuf *b);

/* Edge k's text: the reference's key, index or slot (cleaned). */
void ljm_heap_sub_edge_text(const LjmHeapSub *s, const LjmHeapGraph *g, uint32_t k, LjmBuf *b);

/* A drawing's syntax (dot, mermaid): each callback writes one part of it to
** f; texts are the ones above. Node k of s is s->node[k]; the first
** s->picked nodes are the objects the view picked. */
typedef struct LjmHeapDraw {
  void (*begin)(FILE *f, const char *title);
  void (*node)(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s, uint32_t k, const char *text);
  void (*edge)(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s, uint32_t k, const char *text);
  void (*end)(FILE *f, const LjmHeapGraph *g, const LjmHeapSub *s);
} LjmHeapDraw;

/* Builds the view o asks for and draws it with d: the title, every node,
** every edge, the end. 0, or -1 with err set (out of memory). */
int ljm_heap_sub_draw(const LjmHeapGraph *g, const LjmExportOptions *o, FILE *f,
                      const LjmHeapDraw *d, char *err, size_t errlen);

#endif
