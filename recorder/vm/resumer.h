/* resumer.h -- which thread resumed a coroutine (for call stacks).
**
** LuaJIT keeps no link from a coroutine to its resumer: the stack walker
** (vm/stack_walk.c) asks here, below each coroutine's frames. The search
** needs every live thread of the VM, tracked from the allocator calls;
** the rules are in vm/resumer.c.
*/
#ifndef REC_RESUMER_H
#define REC_RESUMER_H

#include "recorder/vm/unit.h"

#include <stdint.h>

#include "recorder/base/u64_map.h"
#include "recorder/vm/lj.h"

struct CoEntry;

typedef struct RecThreads {
  global_State *g;     /* the VM walked */
  RecMap threads;      /* every live thread of g */
  GCobj *last_root;    /* GC list head checked last */
  uint64_t epoch;      /* bumped when a thread is freed */
  RecMap co;           /* coroutine -> CoEntry* (vm/resumer.c) */
  lua_State *last_co;  /* one-entry front of 'co' */
  struct CoEntry *last_ce;
} RecThreads;

/* The threads of the walked VM (one VM at a time). */
REC_API RecThreads rec_threads;

/* Tracks the threads of L's VM (from the GC list); 0 or ENOMEM. */
REC_API int rec_resumer_start(lua_State *L);
/* Forgets every thread and cached resumer. */
REC_API void rec_resumer_stop(void);

/* Are the threads of g tracked already? */
static inline int rec_resumer_tracks(const global_State *g)
{
  return rec_threads.g == g && rec_threads.threads.n;
}

/* Notes a thread created since the last event (the GC list head when its
** stack is allocated). On every event, so inline. */
static inline void rec_resumer_track(global_State *g)
{
  GCobj *h = gcref(g->gc.root);
  if (h != rec_threads.last_root) {
    rec_threads.last_root = h;
    if (h && h->gch.gct == (uint8_t)~LJ_TTHREAD)
      rec_map_put(&rec_threads.threads, (uint64_t)(uintptr_t)h, 1);
  }
}

/* Forgets thread T and its cached resumer (T is being freed). */
REC_API void rec_resumer_freed(lua_State *T);

/* The thread that resumed co (running, inside the VM), or NULL. */
REC_API lua_State *rec_resumer_find(lua_State *co);

#endif
