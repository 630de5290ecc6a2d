/* vm_info.c -- the running VM's version and file (api/vm_info.h). */
#include "recorder/api/vm_info.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

/* jit.version from the table on top, then pops it. */
static size_t version_in(lua_State *L, char *buf, size_t n)
{
  size_t len = 0;
  if (lua_istable(L, -1)) {
    const char *s;
    lua_pushliteral(L, "version");
    lua_rawget(L, -2);
    s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (!s || !n) len = 0;
    else {
      if (len >= n) len = n - 1;
      memcpy(buf, s, len);
      buf[len] = '\0';
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return len;
}

size_t rec_vm_version(lua_State *L, char *buf, size_t n)
{
  size_t len;
  lua_pushliteral(L, "jit");
  lua_rawget(L, LUA_GLOBALSINDEX);
  if ((len = version_in(L, buf, n))) return len;
  lua_pushliteral(L, "_LOADED");  /* package.loaded, where require keeps it */
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (lua_istable(L, -1)) {
    lua_pushliteral(L, "jit");
    lua_rawget(L, -2);
    lua_remove(L, -2);
  }
  return version_in(L, buf, n);
}

const char *rec_vm_library(void)
{
  static char exe[4096];
  Dl_info info;
  union { int (*f)(lua_State *); void *p; } u = {lua_gettop};
  if (!dladdr(u.p, &info) || !info.dli_fname) return "";
  if (strchr(info.dli_fname, '/')) return info.dli_fname;
  /* The executable itself (a host linking LuaJIT in): dladdr gives argv[0]. */
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return info.dli_fname;
  exe[n] = '\0';
  return exe;
}
