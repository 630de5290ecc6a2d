/* ljm_heapgraph.h -- a heap snapshot as a graph: objects, references,
** the dominator tree with retained sizes, and shortest paths from the
** roots in Lua notation (_G.sessions[12], registry._LOADED.mymod.cache).
**
** Weak references (a weak table's keys or values) keep nothing alive: they
** are in the graph, but neither paths nor dominators follow them.
*/
#ifndef LJM_HEAPGRAPH_H
#define LJM_HEAPGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/ljh_decoder.h"

#define LJM_HEAP_NONE UINT32_MAX

typedef struct LjmHeapObj {
  uint64_t addr, size;
  uint64_t retained;   /* bytes freed if this object went: its dominator subtree
                          (at most 2^62: the decoder bounds the sizes' sum) */
  uint32_t label;      /* offset in the label arena */
  uint32_t first_edge; /* its edges: [first_edge, next object's first_edge) */
  uint32_t idom;       /* immediate dominator (LJM_HEAP_NONE: the root, or
                          reachable through weak references only) */
  uint32_t parent;     /* the edge a shortest path arrives by (LJM_HEAP_NONE) */
  uint32_t depth;      /* references from the root on that path */
  uint8_t type;        /* LjhType */
} LjmHeapObj;

/* Packed to 20 bytes (not 24): a snapshot holds several per object. */
typedef struct __attribute__((packed, aligned(4))) LjmHeapRef {
  uint32_t from, to;   /* object indexes */
  uint64_t what;       /* NAME: label arena offset; STRKEY, OBJKEY: the key's
                          object index; INDEX: the integer */
  uint8_t kind;        /* LjhEdgeKind */
  uint8_t weak;
} LjmHeapRef;

typedef struct LjmHeapGraph {
  char *build;
  uint64_t gctotal;
  LjmHeapObj *obj;     /* obj[0] is the root */
  uint32_t nobj;
  LjmHeapRef *ref;
  uint32_t nref;
  char *labels;        /* NUL-terminated labels and edge names */
  size_t nlabels, caplabels;
  uint32_t dangling;   /* references to addresses no object has (dropped) */
  uint32_t *head;      /* per object: its shortest path's object at depth
                          LJM_HEAP_PATH_HEAD (itself when not deeper), so
                          a path is written from its two ends in O(1) */
} LjmHeapGraph;

/* Steps of a path's root end (and object end) a written path can show. */
#define LJM_HEAP_PATH_HEAD 4096

/* Reads a snapshot into g (zeroed first) and computes dominators, retained
** sizes and shortest paths. Status and diag as ljh_decode gives them; what
** was read before a cut or an error is kept and analysed. Out of memory:
** LJM_ERROR and g left empty. */
LjmStatus ljm_heapgraph_load(LjmHeapGraph *g, LjmInput *in, LjmDiag *diag);

/* Frees g's arrays. */
void ljm_heapgraph_free(LjmHeapGraph *g);

/* An object's label. */
static inline const char *ljm_heapgraph_label(const LjmHeapGraph *g, uint32_t i)
{
  return g->labels + g->obj[i].label;
}

/* Writes object i's shortest path from the roots into buf, in Lua notation
** ("_G.points[3]", "registry._LOADED.mymod", "main thread<stack slot 4>",
** "_G.owners[table: 0x7f3c2a1b4e80]" under an object key, "_G.owners<key
** table: 0x7f3c2a1b4e80>" the key itself);
** "(only weakly reachable)" when no strong path exists. A path longer than
** buf (128 bytes or more) keeps both ends with the steps between counted:
** "_G.list.next<... 299850 steps ...>.next.v". Returns buf. */
const char *ljm_heapgraph_path(const LjmHeapGraph *g, uint32_t i, char *buf, size_t len);

/* Objects and bytes of one type. */
typedef struct LjmHeapType {
  LjhType type;
  uint64_t count, bytes;
} LjmHeapType;

/* The types that occur (the root excluded), largest bytes first (ties: by
** name), into out (LJH_NTYPES entries); returns how many. *objects and
** *bytes get the totals. */
int ljm_heapgraph_types(const LjmHeapGraph *g, LjmHeapType *out, uint64_t *objects,
                        uint64_t *bytes);

/* Objects other than the root and VM internals, by retained bytes, largest
** first (ties: the shorter path, then the lower index); returns how many
** were written to out (at most max). */
uint32_t ljm_heapgraph_top_retainers(const LjmHeapGraph *g, uint32_t *out, uint32_t max);

/* The strong references into each object: edge[start[v] .. start[v + 1])
** are the indexes (into g->ref) of those into object v. Built once, for
** walking paths backwards (ljm_heapgraph_all_paths) and for dominators. */
typedef struct LjmHeapPreds {
  uint32_t *start, *edge;
} LjmHeapPreds;

/* Builds p for g; 0, or -1 out of memory. */
int ljm_heapgraph_preds(const LjmHeapGraph *g, LjmHeapPreds *p);
/* Frees what ljm_heapgraph_preds allocated. */
void ljm_heapgraph_preds_free(LjmHeapPreds *p);

/* Calls cb with each shortest path from the roots to object i (all of
** them: every strong reference from an object one step nearer the roots
** starts one), at most max paths; returns how many there are in all,
** counted up to max + 1 (so more than max says some were left out).
** Paths are written as ljm_heapgraph_path writes them, into 4 KiB. An
** object deeper than 2 * LJM_HEAP_PATH_HEAD steps gets its one shortest
** path of ljm_heapgraph_path (enumerating would cost the depth per path).
** p: g's predecessors (ljm_heapgraph_preds). */
uint32_t ljm_heapgraph_all_paths(const LjmHeapGraph *g, const LjmHeapPreds *p, uint32_t i,
                                 uint32_t max, void (*cb)(void *ud, const char *path), void *ud);

/* What grew between two snapshots, by retaining path: the objects that
** retain the most in either (the top `candidates` of each) matched by their
** shortest paths (object keys by address and type). */
typedef struct LjmHeapGrowth {
  char *path;
  LjhType type;
  uint64_t old_retained, new_retained;  /* 0 where the path is absent */
  int64_t diff;                         /* new - old */
} LjmHeapGrowth;

/* Fills *out (malloc'd, largest growth first; ties: by path) and *n;
** 0, or -1 out of memory. Free with ljm_heapgraph_growth_free. */
int ljm_heapgraph_growth(const LjmHeapGraph *old, const LjmHeapGraph *new_, uint32_t candidates,
                         LjmHeapGrowth **out, uint32_t *n);
void ljm_heapgraph_growth_free(LjmHeapGrowth *g, uint32_t n);

#endif
