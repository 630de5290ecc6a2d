/* ljm_heapgraph_int.h -- what the heap graph's files share (ljm_heapgraph.c,
** ljm_heappaths.c, ljm_heapgrowth.c); not for the graph's users. */
#ifndef LJM_HEAPGRAPH_INT_H
#define LJM_HEAPGRAPH_INT_H

#include <string.h>

#include "model/ljm_heapgraph.h"

/* One past object i's last reference. */
static inline uint32_t edge_end(const LjmHeapGraph *g, uint32_t i)
{
  return i + 1 < g->nobj ? g->obj[i + 1].first_edge : g->nref;
}

/* Whether r is the named reference 'name' (a metatable, an environment). */
static inline int name_is(const LjmHeapGraph *g, const LjmHeapRef *r, const char *name)
{
  return r->kind == LJH_EDGE_NAME && !strcmp(g->labels + r->what, name);
}

/* "... local NAME": a named local of a thread's frame (recorder/vm/heap_snapshot.c). */
static inline const char *local_name(const LjmHeapGraph *g, const LjmHeapRef *r)
{
  if (r->kind != LJH_EDGE_NAME || g->obj[r->from].type != LJH_THREAD) return NULL;
  const char *l = strstr(g->labels + r->what, " local ");
  return l ? l + 7 : NULL;
}

/* A path's references, object first: all n of them (tail), or only its two
** ends (tail: the steps nearest the object; head: those nearest the root,
** both object first) around steps never read. */
typedef struct LjmHeapSteps {
  const uint32_t *tail, *head;
  uint32_t ntail, nhead, n;
} LjmHeapSteps;

/* Writes the path p (object first, root last) into buf, root first, in Lua
** notation (ljm_heappaths.c); O(len), however deep the path. */
void ljm_heapgraph_render(const LjmHeapGraph *g, const LjmHeapSteps *p, char *buf, size_t len);

#endif
