/* stack_walk.h -- call stacks of allocation events (extended streams).
**
** Once per allocator call (while an extended recording runs) the walker
** collects the call chain of the running coroutine and of whoever
** resumed it, innermost first, as keys: (frame slot, function, PC that
** gives the line). It compares them from the bottom with the previous
** event's chain, so that only frames above the first difference need
** their contents (prototype, line, C address) and a node in each
** stream's trie; a repeated stack costs one compare per frame and no
** hashing. The rules are in vm/stack_walk.c (what is a frame, traces,
** VM-internal work), vm/resumer.c (coroutines), vm/tail_calls.c (tail
** calls) and the README, "Recording".
*/
#ifndef REC_STACK_H
#define REC_STACK_H

#include "recorder/vm/unit.h"

#include <stdint.h>

#include "recorder/vm/attribution.h"

/* Frame kinds, as written in stack nodes (decoder/EXTENSION.md). */
#define REC_FR_LUA   0x01
#define REC_FR_C     0x02
#define REC_FR_TRACE 0x03
#define REC_FR_CORO  0x04
#define REC_FR_TAIL  0x05
#define REC_FR_TRUNC 0x06

/* Default and largest number of innermost frames kept per stack. */
#define REC_STACK_DEPTH_DEFAULT 256u
#define REC_STACK_DEPTH_MAX 65535u

typedef struct RecFrame {
  /* The key: frames with equal keys at the same height have equal
  ** contents. Pointers are compared, never followed, so a frame of the
  ** previous event that has gone away is harmless. */
  const void *slot;    /* frame slot; the GCtrace of a trace frame */
  uint64_t fn;         /* GCfunc address, or a REC_KEY_* tag */
  uint64_t pc;         /* PC that gives the line; line|REC_LEAF for a Lua
                          leaf; trace number */
  uintptr_t aux;       /* thread | REC_AUX_* (not part of the key) */
  uint64_t link;       /* the raw frame link (lets the next walk predict
                          the frame below without reading bytecode) */
  uint64_t vlink;      /* vararg frame: its own raw link (to the frame
                          holding 'link'); 0 otherwise */
  /* The tail-call decision read *dep (a register of the caller); the
  ** frame only matches while it still holds depv. */
  const uint64_t *dep;
  uint64_t depv;
  /* Contents, for the trie (filled for frames that changed). */
  uint64_t a;          /* prototype, C address or trace number */
  uint64_t ident;      /* what the prototype/trace stood for when read */
  uint32_t line;       /* Lua: the line */
  uint8_t kind;        /* REC_FR_* */
  uint8_t tail;        /* a REC_FR_TAIL frame lies between this frame and
                          the one below */
} RecFrame;

/* Tags of synthetic frames in RecFrame.fn (never a heap address). */
#define REC_KEY_CORO  1u
#define REC_KEY_TRACE 2u
#define REC_KEY_TRUNC 3u
#define REC_LEAF ((uint64_t)1 << 63)
#define REC_AUX_LUALINK 1u  /* the frame's link is a Lua return PC */
#define REC_AUX_PLAIN 2u    /* not a vararg frame, link read at slot */
#define REC_AUX_MASK 7u

typedef struct RecWalk {
  RecFrame *cur;       /* scratch: this event's frames, innermost first */
  RecFrame *prev;      /* the last stack, outermost first */
  uint32_t ncur;
  uint32_t n;          /* frames in prev */
  uint32_t common;     /* bottom frames this event shares with the last */
  uint32_t same;       /* bottom frames with the same contents (>= common) */
  uint32_t cap;        /* room in cur and prev */
  /* For checking prev[i] below prev[i+1] quickly (outermost first):
  ** vs/vl/vf the slot, raw link and raw function value of prev[i] (vk
  ** the slot holding the link, vv the moved frame's link if vararg);
  ** vok[i] set when that is all there is to check (a plain frame of the
  ** same thread, no tail-call dependency, its PC given by the Lua link of
  ** prev[i+1] or not needed). */
  const TValue **vs, **vk;   /* slot; where the link is (vararg: below) */
  uint64_t *vl, *vf, *vv;     /* link, function, vararg frame's own link */
  const uint64_t **vd;        /* its tail-call dependency (or a zero) */
  uint64_t *vdv;              /* and the value it must hold */
  uint8_t *vok;
  int pk;              /* walk: cursor in prev (predictions) */
  int join;            /* walk: prev[0..join] is the bottom of this stack
                          (-1: no join, cur holds the whole stack) */
  int tryjoin;         /* walk: a join may still be tried */
  uint32_t depth;      /* innermost frames kept (largest of the streams) */
  int known;           /* 0: no stack for this event (stack 0) */
} RecWalk;

/* The walker of the recorded VM (one VM at a time). */
REC_API RecWalk rec_walk;

/* Prepares walking L's VM: the thread table from the GC list, the fast
** function ids of coroutine.resume/wrap, the frame limit. Called at the
** start of an extended recording (depth = the largest limit of the
** extended recordings now running); 0 or ENOMEM. */
REC_API int rec_stack_start(lua_State *L, uint32_t depth);
/* Sets the frame limit (an extended recording stopped). */
REC_API void rec_stack_depth(uint32_t depth);
/* Releases everything (no extended recording left). */
REC_API void rec_stack_stop(void);

/* Captures the stack of the allocator call about to happen (ptr, osize,
** nsize as passed to the allocator) into rec_walk: prev holds it,
** common says how much of it the last event had too. */
REC_API void rec_stack_event(global_State *g, const RecLoc *loc, const void *ptr,
                     size_t osize, size_t nsize);
/* An allocator call no stream writes (a sampled recording skips most):
** what the caches must learn of it all the same, which rec_stack_event
** learns of every call. A reallocation or a free (ptr not NULL) goes to
** rec_stack_skipped: a stack moved under a trace, a freed thread (else the
** caches would keep pointers into freed memory). The call after an
** allocation of sizeof(lua_State) bytes, written or not, goes to
** rec_stack_thread_new: a new thread heads the GC list by then (for the
** resumer search). Functions and prototypes freed unseen are not looked
** for: rec_stack_resync() before each written event makes the walk read
** every frame afresh and the PC caches start over. */
REC_API void rec_stack_skipped(global_State *g, const void *ptr, size_t osize, size_t nsize);
REC_API void rec_stack_thread_new(global_State *g);
REC_API void rec_stack_resync(void);
/* Forgets the last stack (its event was not written). */
REC_API void rec_stack_forget(void);

#endif
