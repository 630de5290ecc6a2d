/* threads_host.c -- two lua_States recording from two threads.
**
** One recording per process: while one state records, a start on the
** other is refused with EBUSY, and the other's stop() or is_running()
** never touch the first's recording. Phase 1 checks that in lock step;
** phase 2 has both threads start, allocate and stop ITERS times at once
** (under ThreadSanitizer in threads_host_tsan). Streams go to OUTDIR as
** a.ljm (phase 1) and t<thread>-<i>.ljm; threads_test.py decodes them.
** Prints "FAIL ..." lines and "started N refused M"; exit 1 on failure.
**
** usage: threads_host OUTDIR ITERS
*/
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "recorder/api/lua_module.h"

#define REFUSED "another Lua state in this process is recording"

static const char *outdir;
static int iters;
static int failures;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int step;  /* phase 1's lock step */

static void fail(const char *what, const char *detail)
{
  pthread_mutex_lock(&mu);
  printf("FAIL %s: %s\n", what, detail ? detail : "");
  failures++;
  pthread_mutex_unlock(&mu);
}

static void wait_step(int s)
{
  pthread_mutex_lock(&mu);
  while (step < s) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}

static void set_step(int s)
{
  pthread_mutex_lock(&mu);
  step = s;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static lua_State *newvm(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, ljm_recorder_open);
  lua_setfield(L, -2, "ljm.recorder");
  lua_pop(L, 2);
  return L;
}

/* Runs src with the given string arguments; its results stay on the
** stack. NULL, or the error message. */
static const char *run(lua_State *L, const char *src, const char *a1, const char *a2)
{
  lua_settop(L, 0);
  if (luaL_loadstring(L, src)) return lua_tostring(L, -1);
  lua_pushstring(L, a1 ? a1 : "");
  lua_pushstring(L, a2 ? a2 : "");
  if (lua_pcall(L, 2, LUA_MULTRET, 0)) return lua_tostring(L, -1);
  return NULL;
}

/* Returns "true", or "nil|message|errno" and the like, of rec.<fn>(path). */
static const char CALL[] =
    "local fn, path = ...\n"
    "local rec = require 'ljm.recorder'\n"
    "local r = {rec[fn](path ~= '' and path or nil)}\n"
    "for i = 1, 3 do r[i] = tostring(r[i]) end\n"
    "return table.concat(r, '|', 1, r[1] == 'nil' and 3 or 1)\n";

static const char ALLOC[] =
    "local n = tonumber((...))\n"
    "local t = {}\n"
    "for i = 1, n do t[i] = {i} end\n"  /* line 3: the events */
    "return #t\n";

static void expect(lua_State *L, const char *fn, const char *path, const char *want,
                   const char *what)
{
  const char *e = run(L, CALL, fn, path);
  const char *got = e ? e : lua_tostring(L, -1);
  if (e || strcmp(got, want)) {
    char d[512];
    snprintf(d, sizeof(d), "rec.%s: got %s, want %s", fn, got, want);
    fail(what, d);
  }
}

static void alloc(lua_State *L, const char *n)
{
  const char *e = run(L, ALLOC, n, NULL);
  if (e) fail("alloc", e);
}

/* Phase 1, thread A: records while B is refused and calls stop(). */
static void *phase1_a(void *arg)
{
  lua_State *L = newvm();
  char path[4096];
  (void)arg;
  snprintf(path, sizeof(path), "%s/a.ljm", outdir);
  expect(L, "start", path, "true", "A starts");
  alloc(L, "1000");
  set_step(1);
  wait_step(2);  /* B was refused and called stop() */
  expect(L, "is_running", NULL, "true", "A still records after B's stop()");
  alloc(L, "1000");
  expect(L, "stop", NULL, "true", "A stops");
  set_step(3);
  lua_close(L);
  return NULL;
}

static void *phase1_b(void *arg)
{
  lua_State *L = newvm();
  char path[4096];
  (void)arg;
  snprintf(path, sizeof(path), "%s/b.ljm", outdir);
  wait_step(1);
  expect(L, "start", path, "nil|" REFUSED "|16", "B refused while A records");
  if (access(path, F_OK) == 0) fail("B refused", "left a file");
  expect(L, "is_running", NULL, "false", "B is not running");
  expect(L, "stop", NULL, "nil|profiler is not running|22", "B's stop()");
  set_step(2);
  wait_step(3);  /* A stopped: B may record now */
  expect(L, "start", path, "true", "B starts once A stopped");
  alloc(L, "500");
  expect(L, "stop", NULL, "true", "B stops");
  lua_close(L);
  return NULL;
}

/* Phase 2: both at once, many times. */
static int started[2], refused[2];

static void *phase2(void *arg)
{
  int id = (int)(intptr_t)arg, i;
  lua_State *L = newvm();
  char path[4096];
  for (i = 0; i < iters; i++) {
    const char *e, *got;
    snprintf(path, sizeof(path), "%s/t%d-%d.ljm", outdir, id, i);
    e = run(L, CALL, "start", path);
    got = e ? e : lua_tostring(L, -1);
    if (!strcmp(got, "true")) {
      started[id]++;
      alloc(L, "300");
      expect(L, "is_running", NULL, "true", "running until its own stop");
      expect(L, "stop", NULL, "true", "stop");
    } else if (!strcmp(got, "nil|" REFUSED "|16")) {
      refused[id]++;
      expect(L, "stop", NULL, "nil|profiler is not running|22", "stop after refusal");
      alloc(L, "300");
    } else {
      fail("start", got);
    }
  }
  lua_close(L);
  return NULL;
}

int main(int argc, char **argv)
{
  pthread_t a, b;
  if (argc != 3) {
    fprintf(stderr, "usage: threads_host OUTDIR ITERS\n");
    return 2;
  }
  outdir = argv[1];
  iters = atoi(argv[2]);
  pthread_create(&a, NULL, phase1_a, NULL);
  pthread_create(&b, NULL, phase1_b, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_create(&a, NULL, phase2, (void *)(intptr_t)0);
  pthread_create(&b, NULL, phase2, (void *)(intptr_t)1);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("started %d %d refused %d %d\n", started[0], started[1], refused[0], refused[1]);
  return failures ? 1 : 0;
}
