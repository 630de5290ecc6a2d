/* lua_module.c -- the Lua binding: require "ljm.recorder", misc.memprof.
**
** Mirrors Tarantool's misc.memprof: start(path) / stop() return true, or
** nil, message, errno. One module-level recording per lua_State, kept in
** its registry (a userdata whose __gc stops it at lua_close); it is
** independent of recordings a host makes through the C API. A recording
** that failed and was never stopped is reported on stderr at lua_close or
** exit: nobody else would see the error.
** start(path, {stacks = true, depth = N}) writes the extended stream
** (decoder/EXTENSION.md), {time = true} one with time marks and no stacks
** (for ljm growth); {sample = BYTES, seed = N} a sampled one (BYTES
** a number or a string with a k or M suffix: "512k"); {write_timeout = S}
** bounds how long a stalled reader of a pipe or FIFO may hold the host
** (ljm_recorder.h; 0: for ever); label(key, value), labels() and
** with_labels(t, fn, ...) label the running coroutine (doc/labels.md);
** unknown keys, wrong types and strings with
** a NUL byte are misuse (nil, message, EINVAL).
*/
#include "recorder/api/lua_module.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#ifdef LJM_REC_MODULE
#include <dlfcn.h>
#endif

#include "recorder/ljm_recorder.h"

#define REPORT_PREFIX "ljm.recorder: "

static const char MOD_KEY[] = "ljm.recorder.module";

/* This lua_State's module recording (the registry's MOD_KEY). */
typedef struct ModRec {
  LjmRecorder *r;  /* or NULL */
} ModRec;

static int modrec_gc(lua_State *L)
{
  ModRec *m = lua_touserdata(L, 1);
  LjmRecorder *r = m->r;
  LjmRecError err;
  m->r = NULL;
  /* ECHILD: a forked child's copy of the parent's recording, dropped. */
  if (r && ljm_recorder_stop(r, &err) && err.code != ECHILD) {
    fprintf(stderr, REPORT_PREFIX "%s\n", err.msg);
    fflush(stderr);
  }
  return 0;
}

/* L's slot, created on first use. */
static ModRec *modrec(lua_State *L)
{
  ModRec *m;
  lua_getfield(L, LUA_REGISTRYINDEX, MOD_KEY);
  m = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (m) return m;
  m = lua_newuserdata(L, sizeof(*m));
  m->r = NULL;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, modrec_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, MOD_KEY);  /* anchors m */
  return m;
}

static int push_fail(lua_State *L, const char *msg, int code)
{
  lua_pushnil(L);
  lua_pushstring(L, msg);
  lua_pushinteger(L, code);
  return 3;
}

/* The string at idx, or NULL when it holds a NUL byte: C would read only
** the part before it ("512k\0junk" is not "512k"). */
static const char *c_string(lua_State *L, int idx)
{
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  return s && strlen(s) == len ? s : NULL;
}

/* A path argument: the string, or NULL after pushing nil, message, EINVAL. */
static const char *path_arg(lua_State *L, int idx)
{
  const char *path = luaL_checkstring(L, idx);
  if (c_string(L, idx)) return path;
  push_fail(L, "path contains a NUL byte", EINVAL);
  return NULL;
}

/* A byte count at idx: a whole number, or a string of digits with an
** optional suffix k/K (KiB), m/M (MiB), g/G (GiB). 0 or -1. */
static int ljm_rec_parse_bytes(lua_State *L, int idx, uint64_t *out)
{
  if (lua_type(L, idx) == LUA_TNUMBER) {
    lua_Number d = lua_tonumber(L, idx);
    if (!(d >= 0 && d <= 9007199254740992.0) || d != (lua_Number)(uint64_t)d) return -1;
    *out = (uint64_t)d;
    return 0;
  }
  if (lua_type(L, idx) != LUA_TSTRING) return -1;
  if (!c_string(L, idx)) return -1;
  return ljm_recorder_parse_bytes(lua_tostring(L, idx), out) ? -1 : 0;
}

/* Reads the options table at index 2 (absent or nil: none). Returns
** NULL or the misuse message. Only raw accesses: no Lua code runs. */
static const char *read_options(lua_State *L, LjmRecOptions *opt, int *given,
                                char *buf, size_t len)
{
  memset(opt, 0, sizeof(*opt));
  *given = 0;
  if (lua_isnoneornil(L, 2)) return NULL;
  if (!lua_istable(L, 2)) return "options must be a table";
  *given = 1;
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    /* a key with a NUL byte names no option */
    const char *k = lua_type(L, -2) == LUA_TSTRING ? c_string(L, -2) : NULL;
    if (k && !strcmp(k, "stacks")) {
      if (!lua_isboolean(L, -1)) {
        lua_pop(L, 2);
        return "option 'stacks' must be a boolean";
      }
      opt->stacks = lua_toboolean(L, -1);
    } else if (k && !strcmp(k, "time")) {
      if (!lua_isboolean(L, -1)) {
        lua_pop(L, 2);
        return "option 'time' must be a boolean";
      }
      opt->time = lua_toboolean(L, -1);
    } else if (k && !strcmp(k, "depth")) {
      lua_Number d = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
      if (!(d >= 1 && d <= 65535) || d != (lua_Number)(unsigned)d) {
        lua_pop(L, 2);
        return "option 'depth' must be an integer 1..65535";
      }
      opt->stack_depth = (unsigned)d;
    } else if (k && !strcmp(k, "sample")) {
      uint64_t v;
      if (ljm_rec_parse_bytes(L, -1, &v) || v < 1 || v > (1u << 30)) {
        lua_pop(L, 2);
        return "option 'sample' must be bytes, 1..1G (a number, or a string like \"512k\")";
      }
      opt->sample = v;
    } else if (k && !strcmp(k, "seed")) {
      lua_Number d = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
      if (!(d >= 1 && d <= 9007199254740992.0) || d != (lua_Number)(uint64_t)d) {
        lua_pop(L, 2);
        return "option 'seed' must be an integer 1..2^53";
      }
      opt->seed = (uint64_t)d;
    } else if (k && !strcmp(k, "write_timeout")) {
      lua_Number t = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
      if (!(t == 0 || (t >= 0.001 && t <= 86400))) {
        lua_pop(L, 2);
        return "option 'write_timeout' must be seconds, 0.001..86400, or 0 (wait for ever)";
      }
      opt->write_timeout_ms = t == 0 ? LJM_REC_WAIT_FOREVER : (unsigned)(t * 1000 + 0.5);
    } else if (k && !strcmp(k, "flush")) {
      lua_Number t = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
      if (!(t >= 0.001 && t <= 86400)) {
        lua_pop(L, 2);
        return "option 'flush' must be seconds, 0.001..86400";
      }
      opt->flush_ms = (unsigned)(t * 1000 + 0.5);
    } else {
      if (k) snprintf(buf, len, "unknown option '%s'", k);
      else snprintf(buf, len, "unknown option (a %s key)", luaL_typename(L, -2));
      lua_pop(L, 2);
      return buf;
    }
    lua_pop(L, 1);
  }
  if (opt->stack_depth && !opt->stacks) return "option 'depth' needs stacks = true";
  if (opt->seed && !opt->sample) return "option 'seed' needs sample";
  return NULL;
}

static int rec_start(lua_State *L)
{
  const char *path = path_arg(L, 1);
  LjmRecError err;
  LjmRecOptions opt;
  char buf[128];
  int given;
  const char *bad = read_options(L, &opt, &given, buf, sizeof(buf));
  ModRec *m;
  LjmRecorder *r;
  if (!path) return 3;
  if (bad) return push_fail(L, bad, EINVAL);
  m = modrec(L);
  if (m->r && !ljm_recorder_is_running(m->r)) {
    /* Ended by a write error nobody collected. */
    if (ljm_recorder_stop(m->r, &err) == EDEADLK) return push_fail(L, err.msg, err.code);
    m->r = NULL;
  }
  if (m->r) return push_fail(L, "profiler is running already", EINVAL);
  r = ljm_recorder_start_path_ex(L, path, given ? &opt : NULL, &err);
  if (!r) return push_fail(L, err.msg, err.code);
  if (m->r) {  /* a finalizer run by the start's Lua calls started one meanwhile */
    ljm_recorder_stop(r, NULL);
    return push_fail(L, "profiler is running already", EINVAL);
  }
  m->r = r;
  ljm_recorder_report_at_exit(m->r, REPORT_PREFIX);
  lua_pushboolean(L, 1);
  return 1;
}

static int rec_stop(lua_State *L)
{
  LjmRecError err;
  ModRec *m = modrec(L);
  LjmRecorder *r = m->r;
  if (!r) return push_fail(L, "profiler is not running", EINVAL);
  m->r = NULL;
  if (ljm_recorder_stop(r, &err)) {
    if (err.code == EDEADLK) m->r = r;  /* refused: still ours, still recording */
    return push_fail(L, err.msg, err.code);
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int rec_is_running(lua_State *L)
{
  ModRec *m = modrec(L);
  lua_pushboolean(L, m->r && ljm_recorder_is_running(m->r));
  return 1;
}

/* Writes a heap snapshot: true, or nil, message, errno. */
static int rec_snapshot(lua_State *L)
{
  const char *path = path_arg(L, 1);
  LjmRecError err;
  if (!path) return 3;
  if (ljm_recorder_snapshot(L, path, &err)) return push_fail(L, err.msg, err.code);
  lua_pushboolean(L, 1);
  return 1;
}

/* label(key, value): sets (value nil: removes) a label of the running
** coroutine. true; false and the reason when no recording keeps labels
** (nothing kept); a Lua error for a key or value of another type, an
** empty key, a 17th label. */
static int rec_label(lua_State *L)
{
  size_t kl = 0, vl = 0;
  const char *k, *v = NULL;
  LjmRecError err;
  int e;
  if (lua_type(L, 1) != LUA_TSTRING) return luaL_typerror(L, 1, "string");
  if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TSTRING)
    return luaL_typerror(L, 2, "string or nil");
  k = lua_tolstring(L, 1, &kl);
  if (!lua_isnoneornil(L, 2)) v = lua_tolstring(L, 2, &vl);
  e = ljm_recorder_label(L, k, kl, v, vl, &err);
  if (e == ENOENT) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, err.msg);
    return 2;
  }
  if (e) return luaL_error(L, REPORT_PREFIX "%s", err.msg);
  lua_pushboolean(L, 1);
  return 1;
}

static void push_label(void *ud, const char *k, size_t kl, const char *v, size_t vl)
{
  lua_State *L = ud;
  lua_pushlstring(L, k, kl);
  lua_pushlstring(L, v, vl);
  lua_rawset(L, -3);
}

/* labels(): the running coroutine's labels, a table key -> value. */
static int rec_labels(lua_State *L)
{
  lua_newtable(L);
  ljm_recorder_labels(L, push_label, L);
  return 1;
}

/* with_labels' first half: push(t) adds t's labels to the running
** coroutine in one change and returns what pop gives back (when no
** recording keeps labels nothing is kept, and pop gives none). A Lua error
** for a key or value that is no string, an empty key, or more than 16
** labels, recording or not; the labels are then as before. Neither makes a Lua object: what they made
** would count for the labels of the function with_labels runs. */
/* An error of with_labels, where its caller called it (level 0 is push,
** 1 with_labels, 2 its caller). */
static int with_labels_error(lua_State *L, const char *msg)
{
  luaL_where(L, 2);
  lua_pushstring(L, msg);
  lua_concat(L, 2);
  return lua_error(L);
}

static int rec_labels_push(lua_State *L)
{
  LjmRecLabel l[16];
  size_t n = 0;
  uint64_t saved;
  LjmRecError err;
  int e;
  if (lua_type(L, 1) != LUA_TTABLE) {
    lua_pushfstring(L, "bad argument #1 to 'with_labels' (table expected, got %s)",
                    luaL_typename(L, 1));
    return with_labels_error(L, lua_tostring(L, -1));
  }
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING ||
        lua_objlen(L, -2) == 0)
      return with_labels_error(L, "bad argument #1 to 'with_labels' (non-empty string keys, "
                                  "string values)");
    if (n == 16) return with_labels_error(L, REPORT_PREFIX "at most 16 labels per coroutine");
    l[n].key = lua_tolstring(L, -2, &l[n].klen);  /* t holds the strings */
    l[n].value = lua_tolstring(L, -1, &l[n].vlen);
    n++;
    lua_pop(L, 1);
  }
  e = ljm_recorder_labels_push(L, l, n, &saved, &err);
  /* No recording keeps labels, so the coroutine has none: pop gives it
  ** none (undoing labels fn sets under a recording it starts itself). */
  if (e == ENOENT) {
    saved = 0;
  } else if (e) {
    lua_pushfstring(L, REPORT_PREFIX "%s", err.msg);
    return with_labels_error(L, lua_tostring(L, -1));
  }
  lua_pushnumber(L, (lua_Number)saved);  /* below 2^53: a generation and a set id */
  return 1;
}

/* with_labels' second half: pop(saved) gives the coroutine back its labels. */
static int rec_labels_pop(lua_State *L)
{
  LjmRecError err;
  if (lua_type(L, 1) == LUA_TNUMBER)
    ljm_recorder_labels_pop(L, (uint64_t)lua_tonumber(L, 1), &err);
  return 0;
}

/* with_labels(t, fn, ...): fn(...) with t's labels added, and the
** coroutine's labels as they were before afterwards (those fn set too),
** also when fn errors (the error goes on) or when t holds a 17th label.
** In Lua, so that fn may yield (an nginx request's cosockets); named, so
** that stacks show the frame as with_labels. */
static const char with_labels_lua[] =
    "local push, pop, pcall, error = ...\n"
    "local function finish(saved, ok, ...)\n"
    "  pop(saved)\n"
    "  if not ok then error((...), 0) end\n"
    "  return ...\n"
    "end\n"
    "local function with_labels(t, fn, ...)\n"
    "  return finish(push(t), pcall(fn, ...))\n"
    "end\n"
    "return with_labels\n";

/* The LuaJIT build this VM matches, or nil and the reason none does. */
static int rec_build(lua_State *L)
{
  const char *b = ljm_recorder_build(L);
  LjmRecError err;
  if (b) {
    lua_pushstring(L, b);
    return 1;
  }
  ljm_recorder_check(L, &err);
  return push_fail(L, err.msg, err.code);
}

/* Every LuaJIT build compiled in, a list of labels. */
static int rec_builds(lua_State *L)
{
  const char *b;
  size_t i;
  lua_newtable(L);
  for (i = 0; (b = ljm_recorder_builds(i)) != NULL; i++) {
    lua_pushstring(L, b);
    lua_rawseti(L, -2, (int)i + 1);
  }
  return 1;
}

int ljm_recorder_open(lua_State *L)
{
  static const luaL_Reg funcs[] = {
    {"start", rec_start},
    {"stop", rec_stop},
    {"is_running", rec_is_running},
    {"build", rec_build},
    {"builds", rec_builds},
    {"snapshot", rec_snapshot},
    {"label", rec_label},
    {"labels", rec_labels},
    {NULL, NULL}
  };
  lua_createtable(L, 0, 9);
  luaL_register(L, NULL, funcs);
  if (luaL_loadbuffer(L, with_labels_lua, sizeof(with_labels_lua) - 1, "=ljm.recorder") == 0) {
    lua_pushcfunction(L, rec_labels_push);
    lua_pushcfunction(L, rec_labels_pop);
    lua_getglobal(L, "pcall");
    lua_getglobal(L, "error");
    lua_call(L, 4, 1);
    lua_setfield(L, -2, "with_labels");
  } else {
    lua_pop(L, 1);
  }
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
