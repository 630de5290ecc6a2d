/* attribution.c -- which location an allocation is charged to.
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
** - A reallocation of a Lua stack is INTERNAL (the reference forces that
**   too): the running thread's own, or a coroutine's grown by the code that
**   resumes it (coroutine.resume and the function coroutine.wrap returns copy
**   the arguments in; a C function before lua_resume). The frames are read
**   before the real allocator runs, so the old stack is still valid.
*/
#include "recorder/vm/attribution.h"

REC_API RecFastIds rec_ff;

static int ff_of(lua_State *L, const char *name)
{
  const GCfunc *fn;
  int id = 0;
  lua_pushstring(L, name);
  lua_rawget(L, -2);
  fn = lua_type(L, -1) == LUA_TFUNCTION ? lua_topointer(L, -1) : NULL;
  if (fn && isffunc(fn)) id = fn->c.ffid;
  lua_pop(L, 1);
  return id;
}

/* Fast function ids of coroutine.resume and of the function
** coroutine.wrap returns (no global names that; it is numbered between
** resume and wrap in LuaJIT's library, which the neighbours confirm). */
void rec_attr_start(lua_State *L)
{
  int top = lua_gettop(L), yield, resume, wrap;
  rec_ff.resume = rec_ff.wrap = 0;
  lua_pushliteral(L, "_LOADED");
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (lua_istable(L, -1)) {
    lua_pushliteral(L, "coroutine");
    lua_rawget(L, -2);
    if (lua_istable(L, -1)) {
      yield = ff_of(L, "yield");
      resume = ff_of(L, "resume");
      wrap = ff_of(L, "wrap");
      rec_ff.resume = resume;
      if (resume && yield == resume - 1 && wrap == resume + 2) rec_ff.wrap = resume + 1;
    }
  }
  lua_settop(L, top);
}

/* PC saved in the C frame chain for the frame below 'next' (a frame that
** is neither Lua nor a continuation: pcall, C entry, hook). */
const BCIns *rec_attr_cframe_pc_below(lua_State *L, cTValue *next)
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
    if (!rec_frame_ok(L, f)) return NULL;
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

