/* ljm_heapgraph.h -- a heap snapshot as a graph: objects, references,
** the dominator tree with retained sizes, and paths from the roots in Lua
** notation (_G.sessions[12], package.loaded.mymod.cache).
**
** Weak references (a weak table's keys or values) keep nothing alive: they
** are in the graph, but neither paths nor dominators follow them.
**
** Each object's path is the one a person would search their code for: the
** fewest penalised steps first, then the fewest steps. A step costs 0 but
** for a named local of a thread's frame (1: "main chunk (app.lua) local
** cache"), and an anonymous one (2): a stack slot no local names, an open
** upvalue, a registry entry other than _LOADED (package.loaded), a root
** other than _G, the registry and the main and current threads. So globals
** and modules come first, then locals, then registry internals. Which of
** paths as good does not depend on the order a snapshot lists a table's
** entries in (its hash order): loading sorts them.
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
  uint16_t cost;       /* that path's penalty (ljm_heapgraph_penalty), at most 65535 */
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
  /* The process at that moment (version 2 snapshots; 0: not recorded). */
  uint64_t rss, malloc_in_use, malloc_held;
  uint64_t recorder;   /* what the recorder itself held: left out of
                          malloc_in_use and malloc_held, the program's */
  uint64_t recorder_rss;  /* the part of it in RAM: left out of rss */
  uint32_t registry;   /* the registry table's index (0: none) */
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

/* Reference e as one step, the way a graph's edge names it: the key
** ("cache", "[3]", "[\"a b\"]", "[table: 0x7f3c2a1b4e80]"), the slot
** ("metatable", "upvalue M", "main chunk (app.lua) local cache", "_G"), or
** "<key ...>" for a key object itself. Returns buf. */
const char *ljm_heapgraph_step(const LjmHeapGraph *g, uint32_t e, char *buf, size_t len);

/* The steps of object i's path after object a, an object on that path (its
** dominator, say): "sessions[17].buf", "upvalue M", "package.loaded"; at
** most max steps, the nearest to i, after "..." when there are more. A
** leading "." is left out. Returns buf. */
const char *ljm_heapgraph_path_below(const LjmHeapGraph *g, uint32_t i, uint32_t a, uint32_t max,
                                     char *buf, size_t len);

/* What the step r costs a path (0, 1 or 2, as above). */
int ljm_heapgraph_penalty(const LjmHeapGraph *g, const LjmHeapRef *r);

/* The path through reference e: its source's path, then e's step (e is a
** strong reference whose source is reachable). Written as
** ljm_heapgraph_path writes paths. Returns buf. */
const char *ljm_heapgraph_path_via(const LjmHeapGraph *g, uint32_t e, char *buf, size_t len);

/* The name the views give object i's type: a table's or userdata's
** metatable __name when that is a string ("Point"), else its type's
** ("table", "function"). memo: g->nobj zeroed entries kept between calls
** (each metatable is looked at once), or NULL. */
const char *ljm_heapgraph_type_name(const LjmHeapGraph *g, uint32_t i, uint32_t *memo);

/* A function's name from where it is kept: the key, local or upvalue of
** its path's last step, after the table's own key when that is one too
** and the table is no root ("coroutine.create", "mymod.new", "new_point").
** Writes "" when its path names nothing. Returns buf. */
const char *ljm_heapgraph_func_name(const LjmHeapGraph *g, uint32_t i, char *buf, size_t len);

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

/* The same of the objects 'keep' accepts (nonzero; keep NULL: all). */
uint32_t ljm_heapgraph_top_retainers_of(const LjmHeapGraph *g, uint32_t *out, uint32_t max,
                                        int (*keep)(void *ud, uint32_t i), void *ud);

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

/* Up to max of the strong references into object i whose sources are
** reachable, best first: the reference its own path arrives by, then by
** their paths' penalty, length and order. Writes their indexes (into
** g->ref) to out and returns how many such references there are in all
** (its retainers; more than max says some were left out). */
uint32_t ljm_heapgraph_retainers(const LjmHeapGraph *g, const LjmHeapPreds *p, uint32_t i,
                                 uint32_t *out, uint32_t max);

/* Calls cb with each best path from the roots to object i (all those as
** good as its own: of the same penalty and length; every strong reference
** from an object one step nearer the roots on such a path starts one), at
** most max paths; returns how many there are in all,
** counted up to max + 1 (so more than max says some were left out).
** Paths are written as ljm_heapgraph_path writes them, into 4 KiB. An
** object deeper than 2 * LJM_HEAP_PATH_HEAD steps gets its one shortest
** path of ljm_heapgraph_path (enumerating would cost the depth per path).
** p: g's predecessors (ljm_heapgraph_preds). */
uint32_t ljm_heapgraph_all_paths(const LjmHeapGraph *g, const LjmHeapPreds *p, uint32_t i,
                                 uint32_t max, void (*cb)(void *ud, const char *path), void *ud);

/* What grew between two snapshots, by retaining path: the objects that
** retain the most in either (the top `candidates` of each) matched by their
** paths (object keys by address and type), then grouped by container: an
** object only one snapshot has (an entry added or dropped) whose path steps
** from another row's object dominating it (cache.key5002 from cache) is
** counted under that row; such rows whose container is no row, two or
** more, under a row made for the container (`made` set). */
typedef struct LjmHeapGrowth {
  char *path;
  const char *type;                     /* as ljm_heapgraph_type_name names it */
  uint64_t old_retained, new_retained;  /* 0 where the path is absent */
  int64_t diff;                         /* new - old (a made row: its rows' sum) */
  uint32_t old_obj, new_obj;            /* the object in each (LJM_HEAP_NONE: absent) */
  uint32_t container;                   /* the row it is counted under, or LJM_HEAP_NONE */
  uint32_t grown;                       /* rows counted under it that changed (of
                                           the candidates: a part of its entries) */
  int64_t grown_bytes;                  /* their growth */
  uint32_t example[2];                  /* the two that grew most (LJM_HEAP_NONE: none) */
  int64_t entries;                      /* strong references out of it but to keys
                                           (its entries and fields): new - old */
  int made;                             /* a row made for its container only */
} LjmHeapGrowth;

/* Fills *out (malloc'd) and *n: the rows counted under no other first,
** largest growth first (ties: by path), then the others. 0, or -1 out of
** memory. Free with ljm_heapgraph_growth_free. */
int ljm_heapgraph_growth(const LjmHeapGraph *old, const LjmHeapGraph *new_, uint32_t candidates,
                         LjmHeapGrowth **out, uint32_t *n);
void ljm_heapgraph_growth_free(LjmHeapGrowth *g, uint32_t n);

#endif
