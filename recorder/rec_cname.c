/* rec_cname.c -- Lua-side names of C functions ("string.rep"). */
#include "rec_cname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_map.h"

static RecMap names;  /* C function address -> malloc'd name */

static void remember(lua_State *L, int idx, const char *name)
{
  /* The same address the recorder reads from the function object. */
  lua_CFunction f = lua_tocfunction(L, idx);
  char *copy;
  if (!f || rec_map_get(&names, (uint64_t)(uintptr_t)f)) return;
  copy = strdup(name);
  if (copy && rec_map_put(&names, (uint64_t)(uintptr_t)f, (uint64_t)(uintptr_t)copy))
    free(copy);
}

/* Every C function field of the table at the top, named prefix.key. */
static void scan_table(lua_State *L, const char *prefix)
{
  char name[256];
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_iscfunction(L, -1)) {
      if (lua_type(L, -2) == LUA_TSTRING)
        snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "." : "",
                 lua_tostring(L, -2));
      else if (lua_type(L, -2) == LUA_TNUMBER)
        snprintf(name, sizeof(name), "%s[%d]", prefix, (int)lua_tointeger(L, -2));
      else
        name[0] = 0;
      if (name[0]) remember(L, -1, name);
    }
    lua_pop(L, 1);
  }
}

/* t[key] of the table at idx without metamethods (no Lua code runs). */
static void rawfield(lua_State *L, int idx, const char *key)
{
  lua_pushstring(L, key);
  lua_rawget(L, idx < 0 && idx > LUA_REGISTRYINDEX ? idx - 1 : idx);
}

void rec_cname_scan(lua_State *L)
{
  int top = lua_gettop(L);
  rawfield(L, LUA_GLOBALSINDEX, "package");
  if (lua_istable(L, -1)) {
    rawfield(L, -1, "loaders");
    if (lua_istable(L, -1)) scan_table(L, "package.loaders");
    lua_pop(L, 1);
    rawfield(L, -1, "loaded");
    if (lua_istable(L, -1)) {
      lua_pushnil(L);
      while (lua_next(L, -2)) {  /* loaded[modname] = module table */
        if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1)) {
          const char *mod = lua_tostring(L, -2);
          scan_table(L, strcmp(mod, "_G") ? mod : "");
        }
        lua_pop(L, 1);
      }
    }
  }
  lua_settop(L, top);
}

const char *rec_cname_get(uint64_t addr)
{
  RecMapEntry *e = rec_map_get(&names, addr);
  return e ? (const char *)(uintptr_t)e->val : NULL;
}
