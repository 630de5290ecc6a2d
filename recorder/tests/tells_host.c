/* tells_host.c -- asks every build compiled in whether the VM this runs on
** (LD_LIBRARY_PATH) has its layouts: first with the jit library not loaded
** (no version string to go by), then with it. Prints one line per build:
** "<phase> <build name> accept|refuse <reason>". */
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"
#include "recorder/capture/flavour.h"

static void open_lib(lua_State *L, lua_CFunction f)
{
  lua_pushcfunction(L, f);
  lua_call(L, 0, 0);
}

static void ask(lua_State *L, const char *phase)
{
  for (int i = 0; rec_flavours[i]; i++) {
    LjmRecError e = {0};
    int top = lua_gettop(L);
    int ok = rec_flavours[i]->check(L, NULL, &e) == 0;
    /* The version as api/c_api.c passes it: jit.version, if loaded. */
    if (ok && phase[0] == 'j') {
      lua_getglobal(L, "jit");
      lua_getfield(L, -1, "version");
      ok = rec_flavours[i]->check(L, lua_tostring(L, -1), &e) == 0;
      lua_pop(L, 2);
    }
    if (lua_gettop(L) != top) printf("%s %s left the stack changed\n", phase, rec_flavours[i]->name);
    printf("%s %s %s %s\n", phase, rec_flavours[i]->name, ok ? "accept" : "refuse", ok ? "" : e.msg);
  }
}

int main(void)
{
  lua_State *L = luaL_newstate();
  open_lib(L, luaopen_base);
  open_lib(L, luaopen_package);
  open_lib(L, luaopen_table);
  open_lib(L, luaopen_string);
  open_lib(L, luaopen_math);
  open_lib(L, luaopen_ffi);
  ask(L, "nojit");
  open_lib(L, luaopen_jit);
  ask(L, "jit");
  lua_close(L);
  return 0;
}
