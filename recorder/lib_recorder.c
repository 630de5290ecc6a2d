/* lib_recorder.c -- the Lua binding: require "ljm.recorder", misc.memprof.
**
** Mirrors Tarantool's misc.memprof: start(path) / stop() return true, or
** nil, message, errno. One module-level recording at a time; it is
** independent of recordings a host makes through the C API.
*/
#include "lib_recorder.h"

#include <errno.h>
#include <lauxlib.h>

#ifdef LJM_REC_MODULE
#include <dlfcn.h>
#endif

#include "ljm_recorder.h"

static LjmRecorder *mod_rec;  /* the module's recording, or NULL */

static int push_fail(lua_State *L, const char *msg, int code)
{
  lua_pushnil(L);
  lua_pushstring(L, msg);
  lua_pushinteger(L, code);
  return 3;
}

static int rec_start(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  LjmRecError err;
  if (mod_rec && !ljm_recorder_is_running(mod_rec)) {
    /* Ended by lua_close(), exit() or a write error nobody collected. */
    ljm_recorder_stop(mod_rec, NULL);
    mod_rec = NULL;
  }
  if (mod_rec) return push_fail(L, "profiler is running already", EINVAL);
  mod_rec = ljm_recorder_start_path(L, path, &err);
  if (!mod_rec) return push_fail(L, err.msg, err.code);
  lua_pushboolean(L, 1);
  return 1;
}

static int rec_stop(lua_State *L)
{
  LjmRecError err;
  LjmRecorder *r = mod_rec;
  if (!r) return push_fail(L, "profiler is not running", EINVAL);
  mod_rec = NULL;
  if (ljm_recorder_stop(r, &err)) return push_fail(L, err.msg, err.code);
  lua_pushboolean(L, 1);
  return 1;
}

static int rec_is_running(lua_State *L)
{
  lua_pushboolean(L, mod_rec && ljm_recorder_is_running(mod_rec));
  return 1;
}

int ljm_recorder_open(lua_State *L)
{
  static const luaL_Reg funcs[] = {
    {"start", rec_start},
    {"stop", rec_stop},
    {"is_running", rec_is_running},
    {NULL, NULL}
  };
  lua_createtable(L, 0, 3);
  luaL_register(L, NULL, funcs);
  return 1;
}

void ljm_recorder_open_misc(lua_State *L)
{
  lua_getglobal(L, "misc");
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "misc");
  }
  ljm_recorder_open(L);
  lua_setfield(L, -2, "memprof");
  lua_pop(L, 1);
}

int luaopen_ljm_recorder(lua_State *L)
{
#ifdef LJM_REC_MODULE
  /* Stay mapped until exit: the allocator wrapper, the lua_close()
  ** finalizer and the atexit() handler all point into this object. */
  Dl_info info;
  if (dladdr((void *)luaopen_ljm_recorder, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE | RTLD_NOLOAD);
#endif
  return ljm_recorder_open(L);
}
