/* layout_check.c -- does the running LuaJIT match this flavour's headers?
**
** The recorder reads global_State, lua_State, frames and traces through
** the internal headers of one LuaJIT build. Each check below compares a
** value read through those layouts with the same value obtained through
** the public API; any difference means another build (other flavour or
** version, GC64 vs. not, other options) and recording would read
** garbage. The checks go from the start of lua_State outwards and only
** follow a pointer once the layout that holds it has passed, so that
** asking the wrong flavour is harmless (api/c_api.c asks each in turn).
*/
#include "recorder/vm/layout_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "luajit.h"
#include "recorder/vm/lj.h"

/* The reason only: api/c_api.c names the build (RecFlavour.label). */
static int fail(LjmRecError *err, const char *what)
{
  if (err) {
    err->code = ENOTSUP;
    snprintf(err->msg, sizeof(err->msg), "%s", what);
  }
  return ENOTSUP;
}

int rec_check(lua_State *L, const char *version, LjmRecError *err)
{
  global_State *g;
  void *ud = NULL;
  lua_Alloc f;
  const char *s;
  int top = lua_gettop(L), ok;

  /* lua_State first: only its own fields are read until it passes. */
  if ((ptrdiff_t)top != L->top - L->base) return fail(err, "lua_State layout");
  lua_pushnil(L);
  ok = L->top - L->base == top + 1 && tvisnil(L->top - 1);
  lua_pop(L, 1);
  if (!ok) return fail(err, "stack slot layout");

  g = G(L);
  f = lua_getallocf(L, &ud);
  if (g->allocf != f || g->allocd != ud) return fail(err, "global_State layout");
  if (&G2GG(g)->L != mainthread(g) || G(mainthread(g)) != g)
    return fail(err, "GG_State layout");
  lua_pushvalue(L, LUA_REGISTRYINDEX);
  ok = lua_topointer(L, -1) == (const void *)tabV(&g->registrytv);
  lua_pop(L, 1);
  if (!ok) return fail(err, "registry anchor");
  lua_pushlstring(L, "", 0);
  s = lua_tostring(L, -1);
  lua_pop(L, 1);
  if (s != strdata(&g->strempty)) return fail(err, "string layout");
  /* The C function entries lua_newstate writes (lj_dispatch_init) pin
  ** global_State up to there, which moves with upstream's vmthref, and
  ** the bytecode numbers, which moved with its bit ops. Reading them
  ** allocates nothing: a snapshot's check must not show in a recording. */
  if (g->bc_cfunc_int != BCINS_AD(BC_FUNCC, LUA_MINSTACK, 0) ||
      (bc_op(g->bc_cfunc_ext) != BC_FUNCC && bc_op(g->bc_cfunc_ext) != BC_FUNCCW))
    return fail(err, "C function entry");
  /* The fast functions' bytecodes end GG_State: BC__MAX + i in slot i
  ** (lj_dispatch_init). Pins sizeof(global_State) and jit_State, which
  ** differ where the fields above do not (OpenResty 2023 vs. 2025). */
  if (bc_op(G2GG(g)->bcff[0]) != BC__MAX ||
      bc_op(G2GG(g)->bcff[GG_NUM_ASMFF - 1]) != BC__MAX + GG_NUM_ASMFF - 1)
    return fail(err, "GG_State size");
#if LJ_HASFFI && LJM_LJ_FFI_FIN_ROOT
  {  /* made with the state: a weak table that is its own metatable */
    GCobj *o = gcref(g->gcroot[GCROOT_FFI_FIN]);
    if (!o || o->gch.gct != ~LJ_TTAB || tabref(o->tab.metatable) != &o->tab)
      return fail(err, "FFI finalizer table");
  }
#endif
  if (g->vmstate < ~(int32_t)(LJ_VMST__MAX - 1) && g->vmstate < 0)
    return fail(err, "VM state");
  if ((GCSize)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (GCSize)lua_gc(L, LUA_GCCOUNTB, 0) !=
      g->gc.total)
    return fail(err, "GC state layout");
  {
    jit_State *J = G2J(g);
    if (J->sizetrace && (!J->trace || J->freetrace > J->sizetrace))
      return fail(err, "jit_State layout");
  }
  /* The version string as compiled vs. as running, when the host has
  ** loaded the jit library (trees with equal layouts differ only here). */
  if (version && strcmp(version, LUAJIT_VERSION)) return fail(err, "version");
  return 0;
}
