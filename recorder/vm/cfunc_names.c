/* cfunc_names.c -- Lua-side names of C functions ("string.rep"). */
#include "recorder/vm/cfunc_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/base/u64_map.h"
#include "recorder/vm/lj.h"

static RecMap names;  /* C function address -> malloc'd name */
/* Built-ins written in assembler (coroutine.resume, pcall, ...): the
** public API does not give their C handler, so C-attributed events never
** use it; stack frames of extended streams do. */
static RecMap ffnames;

/* Adds name to the names of addr: several built-ins share a handler
** (pcall and xpcall): "pcall/xpcall", in byte order whatever the order
** of the scan. */
static void add_ffname(uint64_t addr, const char *name)
{
  RecMapEntry *e = rec_map_get(&ffnames, addr);
  char *copy;
  if (e) {
    const char *old = (const char *)(uintptr_t)e->val, *p = old;
    size_t n = strlen(name), len = strlen(old);
    char *merged, *q;
    for (;;) {  /* already there? */
      const char *end = strchr(p, '/');
      size_t k = end ? (size_t)(end - p) : strlen(p);
      if (k == n && !memcmp(p, name, n)) return;
      if (!end) break;
      p = end + 1;
    }
    if (len + n + 2 > 200) return;
    merged = malloc(len + n + 2);
    if (!merged) return;
    /* Insert name before the first part that sorts after it. */
    for (p = old, q = merged;;) {
      const char *end = strchr(p, '/');
      size_t k = end ? (size_t)(end - p) : strlen(p);
      int c = strncmp(name, p, k < n ? n : k);
      if (c < 0) break;
      memcpy(q, p, k);
      q += k;
      *q++ = '/';
      if (!end) {
        p = NULL;
        break;
      }
      p = end + 1;
    }
    memcpy(q, name, n);
    q += n;
    if (p) {
      *q++ = '/';
      strcpy(q, p);
    } else {
      *q = 0;
    }
    free((void *)(uintptr_t)e->val);
    e->val = (uint64_t)(uintptr_t)merged;
    return;
  }
  copy = strdup(name);
  if (copy && rec_map_put(&ffnames, addr, (uint64_t)(uintptr_t)copy)) free(copy);
}

static void remember_ff(lua_State *L, int idx, const char *name)
{
  const GCfunc *fn = lua_topointer(L, idx);
  if (!fn || !isffunc(fn) || !fn->c.f) return;
  add_ffname((uint64_t)(uintptr_t)fn->c.f, name);
}

/* Remembers name for the C function at addr, unless it has one. */
static void remember_addr(uint64_t addr, const char *name)
{
  char *copy;
  if (rec_map_get(&names, addr)) return;
  copy = strdup(name);
  if (copy && rec_map_put(&names, addr, (uint64_t)(uintptr_t)copy)) free(copy);
}

static void remember(lua_State *L, int idx, const char *name)
{
  /* The same address the recorder reads from the function object. */
  lua_CFunction f = lua_tocfunction(L, idx);
  if (!f) {
    remember_ff(L, idx, name);
    return;
  }
  remember_addr((uint64_t)(uintptr_t)f, name);
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

/* -- The same scan from the VM's own tables, inside the allocator --------- */

#define SCAN_SLOTS_MAX (1u << 20)  /* table slots one rescan reads at most */

/* The value of string key `key` in the hash part of t, or NULL. */
static cTValue *hash_str(const GCtab *t, const char *key, size_t len)
{
  const Node *node = noderef(t->node);
  uint32_t i;
  for (i = 0; i <= t->hmask; i++) {
    const GCstr *k;
    if (!tvisstr(&node[i].key) || tvisnil(&node[i].val)) continue;
    k = strV(&node[i].key);
    if (k->len == len && !memcmp(strdata(k), key, len)) return &node[i].val;
  }
  return NULL;
}

/* Names every C function under a string key of table t after the key mod
** names it by ("cjson.decode"); *budget counts the slots left to read. */
static void rescan_module(const GCtab *t, const GCstr *mod, uint32_t *budget)
{
  const Node *node = noderef(t->node);
  uint32_t i;
  char name[256];
  for (i = 0; i <= t->hmask && *budget; i++) {
    const GCfunc *fn;
    const GCstr *k;
    uint64_t addr;
    (*budget)--;
    if (!tvisstr(&node[i].key) || !tvisfunc(&node[i].val)) continue;
    fn = funcV(&node[i].val);
    if (isluafunc(fn) || fn->c.ffid != FF_C || !fn->c.f) continue;
    addr = (uint64_t)(uintptr_t)fn->c.f;
    if (rec_map_get(&names, addr)) continue;  /* named: no name to format */
    k = strV(&node[i].key);
    if (mod->len == 2 && !memcmp(strdata(mod), "_G", 2))
      snprintf(name, sizeof(name), "%.*s", (int)k->len, strdata(k));
    else
      snprintf(name, sizeof(name), "%.*s.%.*s", (int)mod->len, strdata(mod), (int)k->len,
               strdata(k));
    remember_addr(addr, name);
  }
}

void rec_cname_rescan(global_State *g)
{
  const GCtab *reg = tabV(&g->registrytv), *loaded;
  const Node *node;
  cTValue *tv = hash_str(reg, "_LOADED", 7);
  uint32_t i, budget = SCAN_SLOTS_MAX;
  if (tv && tvistab(tv)) {
    loaded = tabV(tv);
    node = noderef(loaded->node);
    for (i = 0; i <= loaded->hmask && budget; i++) {
      budget--;
      if (tvisstr(&node[i].key) && tvistab(&node[i].val))
        rescan_module(tabV(&node[i].val), strV(&node[i].key), &budget);
    }
  }
  /* Metatables a C module keeps in the registry under its own key
  ** (lpeg's "lpeg-pattern": __mul, __pow, ...): "lpeg-pattern.__mul". */
  node = noderef(reg->node);
  for (i = 0; i <= reg->hmask && budget; i++) {
    budget--;
    if (tvisstr(&node[i].key) && tvistab(&node[i].val) && &node[i].val != tv)
      rescan_module(tabV(&node[i].val), strV(&node[i].key), &budget);
  }
}

void rec_cname_add_ff(uint64_t addr, const char *name)
{
  if (addr && !rec_map_get(&ffnames, addr)) add_ffname(addr, name);
}

const char *rec_cname_get(uint64_t addr)
{
  RecMapEntry *e = rec_map_get(&names, addr);
  return e ? (const char *)(uintptr_t)e->val : NULL;
}

const char *rec_cname_get_ff(uint64_t addr)
{
  RecMapEntry *e = rec_map_get(&ffnames, addr);
  return e ? (const char *)(uintptr_t)e->val : NULL;
}

static size_t names_bytes(const RecMap *m)
{
  size_t i, n = m->e ? (m->mask + 1) * sizeof(*m->e) : 0;
  for (i = 0; m->e && i <= m->mask; i++)
    if (m->e[i].key) n += strlen((const char *)(uintptr_t)m->e[i].val) + 1;
  return n;
}

size_t rec_cname_bytes(void)
{
  return names_bytes(&names) + names_bytes(&ffnames);
}
