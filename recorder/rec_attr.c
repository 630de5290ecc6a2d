/* rec_attr.c -- which location an allocation is charged to.
**
** Rules (those of the reference memprof where stock LuaJIT allows):
** - vmstate >= 0: a trace runs; frames are stale, so TRACE n and nothing
**   else is read. GC, trace exit, recorder, optimizer, assembler: INTERNAL.
** - interpreter or C function: the running thread is g->cur_L. It stays
**   set after a lua_resume() from C has returned, so a thread that is not
**   actually inside the VM (no C frame, or suspended) falls back to the
**   main thread; a main thread outside the VM (host code calling the API
**   directly) is INTERNAL.
** - Lua function on top: its prototype and the line of the saved PC.
**   Built-in (fast) function: the calling Lua function's line if the
**   caller is Lua (a tail-called one has no frame of its own, so the
**   caller's caller), else the built-in as a C function. C function: its
**   address.
** - A reallocation of the thread's own stack is INTERNAL (the reference
**   forces that too), and the frames are read before the real allocator
**   runs, so the old stack is still valid.
*/
#include "rec_attr.h"

#include "lj_state.h"

/* Frame slot still inside the thread's stack? */
static int frame_ok(lua_State *L, cTValue *f)
{
  cTValue *lo = tvref(L->stack) + 1 + LJ_FR2;
  return f >= lo && f < tvref(L->maxstack) + LJ_STACK_EXTRA;
}

/* Function of a frame, or NULL for dummy (thread) frames and junk. */
static GCfunc *frame_fn(lua_State *L, cTValue *f)
{
  GCobj *o;
  if (!frame_ok(L, f)) return NULL;
  o = frame_gc(f);
  if (!o || o->gch.gct != (uint8_t)~LJ_TFUNC) return NULL;
  return &o->fn;
}

/* PC saved in the C frame chain for the frame below 'next' (a frame that
** is neither Lua nor a continuation: pcall, C entry, hook). */
static const BCIns *cframe_pc_below(lua_State *L, cTValue *next)
{
  void *cf = cframe_raw(L->cframe);
  cTValue *f = L->base - 1;
  for (;;) {
    if (!cf) return NULL;
    while (cframe_nres(cf) < 0) {  /* C frames without a Lua frame */
      if (f >= restorestack(L, -cframe_nres(cf))) break;
      cf = cframe_raw(cframe_prev(cf));
      if (!cf) return NULL;
    }
    if (f < next) break;
    if (!frame_ok(L, f)) return NULL;
    if (frame_islua(f)) {
      f = frame_prevl(f);
    } else {
      if (frame_isc(f) || (frame_iscont(f) && frame_iscont_fficb(f)))
        cf = cframe_raw(cframe_prev(cf));
      f = frame_prevd(f);
    }
  }
  return cframe_pc(cf);
}

/* Current line of Lua function fn; 'next' is the frame above it (NULL:
** fn is on top). Negative when no PC is known. */
static BCLine frame_line(lua_State *L, GCfunc *fn, cTValue *next)
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
    ins = cframe_pc_below(L, next);
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

static void loc_lua(RecLoc *loc, lua_State *L, GCfunc *fn, cTValue *next)
{
  BCLine line = frame_line(L, fn, next);
  if (line < 0) {
    loc->src = REC_SRC_INT;  /* as the reference: no line, no blame */
    return;
  }
  loc->src = REC_SRC_LFUNC;
  loc->pt = funcproto(fn);
  loc->line = (uint64_t)line;
}

void rec_attr(global_State *g, const void *ptr, RecLoc *loc)
{
  int32_t st = g->vmstate;
  lua_State *L;
  TValue *frame;
  GCfunc *fn;

  loc->src = REC_SRC_INT;
  if (st >= 0) {
    /* Only the thread object is read here, never its frames. */
    L = gco2th(gcref(g->cur_L));
    if (ptr && L && ptr == mref(L->stack, void)) return;  /* stack resize */
    loc->src = REC_SRC_TRACE;
    loc->traceno = st;
    return;
  }
  if (st != ~LJ_VMST_INTERP && st != ~LJ_VMST_C) return;
  if (mref(g->jit_base, void)) return;  /* compiled code owns the frames */

  L = gco2th(gcref(g->cur_L));
  if (!L || !L->cframe || L->status != LUA_OK) {
    L = mainthread(g);
    if (!L->cframe || L->status != LUA_OK) return;
  }
  if (ptr && ptr == mref(L->stack, void)) return;  /* stack resize */

  frame = L->base - 1;
  fn = frame_fn(L, frame);
  if (!fn) return;
  if (isluafunc(fn)) {
    loc_lua(loc, L, fn, NULL);
  } else if (isffunc(fn)) {
    GCfunc *pfn = frame_fn(L, frame_prev(frame));  /* checks the bounds */
    if (pfn && isluafunc(pfn)) {
      loc_lua(loc, L, pfn, frame);  /* the calling line */
    } else {
      loc->src = REC_SRC_CFUNC;
      loc->addr = (uint64_t)(uintptr_t)fn->c.f;
    }
  } else {
    loc->src = REC_SRC_CFUNC;
    loc->addr = (uint64_t)(uintptr_t)fn->c.f;
  }
}
