/* attribution.h -- which location an allocation is charged to.
**
** Reads the VM state the public API hides: g->vmstate, the running
** coroutine g->cur_L and its frames (see vm/attribution.c for the rules). The
** hot path is inline here: it runs on every allocator call.
*/
#ifndef REC_ATTR_H
#define REC_ATTR_H

#include "recorder/vm/unit.h"

#include <stdint.h>

#include "recorder/vm/lj.h"

/* Source kinds, already shifted as in the event header. */
#define REC_SRC_INT   0x04
#define REC_SRC_LFUNC 0x08
#define REC_SRC_CFUNC 0x0C
#define REC_SRC_TRACE 0x10

typedef struct RecLoc {
  uint8_t src;          /* REC_SRC_* */
  const GCproto *pt;    /* LFUNC: prototype */
  uint64_t line;        /* LFUNC: current line */
  uint64_t addr;        /* CFUNC: function address */
  int32_t traceno;      /* TRACE: trace number */
} RecLoc;

/* Fast function ids of coroutine.resume and of the function coroutine.wrap
** returns; 0 if unknown. */
typedef struct RecFastIds {
  int resume, wrap;
} RecFastIds;
REC_API RecFastIds rec_ff;

/* Reads rec_ff from L's coroutine library (outside the allocator: it calls
** the Lua API). At the start of every recording. */
REC_API void rec_attr_start(lua_State *L);

/* PC saved in the C frame chain for the frame below 'next' (a frame that
** is neither Lua nor a continuation: pcall, C entry, hook); vm/attribution.c. */
REC_API const BCIns *rec_attr_cframe_pc_below(lua_State *L, cTValue *next);

/* Is thread L running inside the VM? Not when it has no C frame (never
** resumed, finished, or left by lua_resume) or is suspended; an error
** handler (xpcall's message handler) runs with status LUA_ERRERR. */
static inline int rec_thread_running(lua_State *L)
{
  return L->cframe && (L->status == LUA_OK || L->status == LUA_ERRERR);
}

/* Frame slot still inside the thread's stack? */
static inline int rec_frame_ok(lua_State *L, cTValue *f)
{
  cTValue *lo = tvref(L->stack) + 1 + LJ_FR2;
  return f >= lo && f < tvref(L->maxstack) + LJ_STACK_EXTRA;
}

/* Function of a frame, or NULL for dummy (thread) frames and junk. */
static inline GCfunc *rec_frame_fn(lua_State *L, cTValue *f)
{
  GCobj *o;
  if (!rec_frame_ok(L, f)) return NULL;
  o = rec_lj_frame_gc(f);
  if (!o || o->gch.gct != (uint8_t)~LJ_TFUNC) return NULL;
  return &o->fn;
}

/* Is ptr the stack of a coroutine that fn, running on top of L, holds?
** coroutine.resume (the coroutine is its first argument) and the function
** coroutine.wrap returns (its upvalue) grow it to copy the arguments in; a
** C function may grow one it holds (an argument, an upvalue) before
** lua_resume. Only values that are surely live are looked at: resume's
** argument once its C fallback (the only place it grows a stack) has set
** L->top, a C function's values below L->top. */
static inline int rec_coro_stack(lua_State *L, GCfunc *fn, const void *ptr)
{
  cTValue *o, *top;
  uint32_t i;
  if (isffunc(fn)) {
    if (fn->c.ffid == rec_ff.resume && rec_ff.resume)  /* its fallback set L->top */
      return L->top > L->base && tvisthread(L->base) &&
             mref(threadV(L->base)->stack, void) == ptr;
    if (fn->c.ffid == rec_ff.wrap && rec_ff.wrap && fn->c.nupvalues >= 1)
      return tvisthread(&fn->c.upvalue[0]) &&
             mref(threadV(&fn->c.upvalue[0])->stack, void) == ptr;
    return 0;
  }
  top = L->top < L->base + 8 ? L->top : L->base + 8;
  for (o = L->base; o < top; o++)
    if (tvisthread(o) && mref(threadV(o)->stack, void) == ptr) return 1;
  for (i = 0; i < fn->c.nupvalues && i < 4; i++)
    if (tvisthread(&fn->c.upvalue[i]) && mref(threadV(&fn->c.upvalue[i])->stack, void) == ptr)
      return 1;
  return 0;
}

/* Current line of Lua function fn; 'next' is the frame above it (NULL:
** fn is on top). Negative when no PC is known. */
static inline __attribute__((always_inline)) BCLine
rec_frame_line(lua_State *L, GCfunc *fn, cTValue *next)
{
  const GCproto *pt = funcproto(fn);
  const BCIns *ins;
  BCPos pos;
  if (!next) {
    void *cf = cframe_raw(L->cframe);
    if (!cf || (const void *)cframe_pc(cf) == (const void *)cframe_L(cf))
      return -1;  /* VM entered, no bytecode run yet */
    ins = cframe_pc(cf);
  } else if (frame_islua(next)) {
    ins = frame_pc(next);
  } else if (frame_iscont(next)) {
    ins = frame_contpc(next);
  } else {
    ins = rec_attr_cframe_pc_below(L, next);
  }
  if (!ins) return -1;
  pos = proto_bcpos(pt, ins) - 1;
  if (pos > pt->sizebc) {
    /* A trace exit through JLOOP leaves the PC in the trace's copy of the
    ** start instruction: map it back to the loop, or give up. */
    if (!bc_isret(bc_op(ins[-1]))) return -1;
    {
      const GCtrace *T =
          (const GCtrace *)((const char *)(ins - 1) - offsetof(GCtrace, startins));
      pos = proto_bcpos(pt, mref(T->startpc, const BCIns));
      if (pos > pt->sizebc) return -1;
    }
  }
  return rec_lj_line(pt, pos);
}

static inline __attribute__((always_inline)) void
rec_loc_lua(RecLoc *loc, lua_State *L, GCfunc *fn, cTValue *next)
{
  BCLine line = rec_frame_line(L, fn, next);
  if (line < 0) {
    loc->src = REC_SRC_INT;  /* as the reference: no line, no blame */
    return;
  }
  loc->src = REC_SRC_LFUNC;
  loc->pt = funcproto(fn);
  loc->line = (uint64_t)line;
}

/* Location of an allocator call about to happen; ptr is the block being
** reallocated or freed (NULL for a new one). Never walks frames while a
** trace runs or the VM is outside a function state. Returns the running
** thread whose frames it read (what labels are read from), or NULL when it
** read none. */
static inline __attribute__((always_inline)) lua_State *
rec_attr(global_State *g, const void *ptr, RecLoc *loc)
{
  int32_t st = g->vmstate;
  lua_State *L;
  TValue *frame;
  GCfunc *fn;

  loc->src = REC_SRC_INT;
  if (rec_lj_vmst_trace(st)) {
    /* Only the thread object is read here, never its frames. */
    L = gco2th(gcref(g->cur_L));
    if (ptr && L && ptr == mref(L->stack, void)) return NULL;  /* stack resize */
    loc->src = REC_SRC_TRACE;
    loc->traceno = st;
    return NULL;
  }
  if (!rec_lj_vmst_frames(st)) return NULL;
  if (mref(g->jit_base, void)) return NULL;  /* compiled code owns the frames */

  L = gco2th(gcref(g->cur_L));
  if (!L || !rec_thread_running(L)) {
    L = mainthread(g);
    if (!rec_thread_running(L)) return NULL;
  }
  if (ptr && ptr == mref(L->stack, void)) return L;  /* stack resize */

  frame = L->base - 1;
  fn = rec_frame_fn(L, frame);
  if (!fn) return L;
  if (isluafunc(fn)) {
    rec_loc_lua(loc, L, fn, NULL);
    return L;
  }
  if (ptr && rec_coro_stack(L, fn, ptr)) return L;  /* a coroutine's stack grows */
  if (isffunc(fn)) {
    GCfunc *pfn = rec_frame_fn(L, frame_prev(frame));  /* checks the bounds */
    if (pfn && isluafunc(pfn)) {
      rec_loc_lua(loc, L, pfn, frame);  /* the calling line */
    } else {
      loc->src = REC_SRC_CFUNC;
      loc->addr = (uint64_t)(uintptr_t)fn->c.f;
    }
  } else {
    loc->src = REC_SRC_CFUNC;
    loc->addr = (uint64_t)(uintptr_t)fn->c.f;
  }
  return L;
}

#endif
