/* capi_host.c -- a host program exercising the recorder's C API.
**
** capi_host OUTDIR writes one stream per scenario into OUTDIR; the test
** driver (capi_test.py) decodes them and checks the attribution. The
** program itself checks return codes and prints "FAIL ..." lines.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "ljm_recorder.h"

static int failures;
static char outdir[4096];

#define CHECK(cond, what) \
  do { if (!(cond)) { printf("FAIL %s (line %d)\n", what, __LINE__); failures++; } } while (0)

static const char *out(const char *name)
{
  static char buf[8192];
  snprintf(buf, sizeof(buf), "%s/%s", outdir, name);
  return buf;
}

static lua_State *newvm(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_dostring(L, "jit.off()");
  return L;
}

/* Runs a chunk with a given name; the chunk's source lines are the
** locations the driver expects. */
static void run(lua_State *L, const char *src, const char *name)
{
  if (luaL_loadbuffer(L, src, strlen(src), name) || lua_pcall(L, 0, 0, 0)) {
    printf("FAIL lua error: %s\n", lua_tostring(L, -1));
    failures++;
    lua_pop(L, 1);
  }
}

/* -- Coroutines resumed from C ----------------------------------------- */

static const char CO_SRC[] =
    "local n = ...\n"                                   /* line 1 */
    "for i = 1, n do\n"                                 /* line 2 */
    "  local t = {i, i + 1}\n"                          /* line 3 */
    "  coroutine.yield(t)\n"                            /* line 4 */
    "end\n";

static void scenario_cresume(void)
{
  lua_State *L = newvm(), *co;
  LjmRecError err;
  LjmRecorder *r = ljm_recorder_start_path(L, out("cresume.ljm"), &err);
  int i, st;
  CHECK(r, err.msg);
  co = lua_newthread(L);
  if (luaL_loadbuffer(co, CO_SRC, sizeof(CO_SRC) - 1, "=cbody")) {
    CHECK(0, "load coroutine body");
    return;
  }
  lua_pushinteger(co, 300);
  for (i = 0, st = lua_resume(co, 1); st == LUA_YIELD; st = lua_resume(co, 0), i++) {
    /* Between resumes the host allocates on the main thread, outside the
    ** VM: that is not the coroutine's doing. */
    lua_pop(co, lua_gettop(co));
    lua_createtable(L, 0, 8);
    lua_pop(L, 1);
  }
  CHECK(st == 0, "coroutine finished");
  CHECK(i == 300, "300 yields");
  /* Lua code resuming a coroutine from a C function it calls. */
  run(L,
      "local co = coroutine.create(function()\n"   /* line 1 */
      "  for i = 1, 100 do\n"                      /* line 2 */
      "    coroutine.yield({i})\n"                 /* line 3 */
      "  end\n"
      "end)\n"
      "for i = 1, 100 do coroutine.resume(co) end\n", /* line 6 */
      "=lresume");
  CHECK(ljm_recorder_stop(r, &err) == 0, err.msg);
  lua_close(L);
}

/* A C function that resumes a coroutine with lua_resume() and then
** allocates itself: the later allocations belong to the C function. */
static int c_driver(lua_State *L)
{
  lua_State *co = lua_tothread(L, 1);
  int k;
  for (k = 0; k < 50; k++) {
    int st = lua_resume(co, 0);
    if (st != LUA_YIELD) break;
    lua_pop(co, lua_gettop(co));
    lua_createtable(L, 4, 0);  /* charged to c_driver */
    lua_pop(L, 1);
  }
  return 0;
}

static void scenario_cfunc_resume(void)
{
  lua_State *L = newvm();
  LjmRecError err;
  LjmRecorder *r = ljm_recorder_start_path(L, out("cfunc_resume.ljm"), &err);
  CHECK(r, err.msg);
  lua_pushcfunction(L, c_driver);
  lua_setglobal(L, "c_driver");
  run(L,
      "local co = coroutine.create(function()\n"   /* line 1 */
      "  while true do\n"                          /* line 2 */
      "    coroutine.yield(('x'):rep(100))\n"      /* line 3 */
      "  end\n"
      "end)\n"
      "c_driver(co)\n",                            /* line 6 */
      "=cfres");
  CHECK(ljm_recorder_stop(r, &err) == 0, err.msg);
  lua_close(L);
}

/* -- Sinks and life cycle ------------------------------------------------ */

typedef struct Mem {
  char *buf;
  size_t len, cap;
  int calls;
  int fail_after;  /* fail calls after this many (-1: never) */
} Mem;

static int mem_write(void *ud, const void *data, size_t len)
{
  Mem *m = ud;
  if (m->fail_after >= 0 && m->calls >= m->fail_after) return ENOSPC;
  m->calls++;
  if (m->len + len > m->cap) {
    size_t nc = (m->len + len) * 2;
    char *nb = realloc(m->buf, nc);
    if (!nb) return ENOMEM;
    m->buf = nb;
    m->cap = nc;
  }
  memcpy(m->buf + m->len, data, len);
  m->len += len;
  return 0;
}

static void save(const char *name, const Mem *m)
{
  FILE *f = fopen(out(name), "wb");
  if (!f || fwrite(m->buf, 1, m->len, f) != m->len) CHECK(0, "save");
  if (f) fclose(f);
}

static const char CHURN[] =
    "local t = {}\n"
    "for i = 1, 1000000 do t[i % 1000] = {i} end\n";  /* line 2: ~2e6 events, 3 buffers */

static void scenario_sinks(void)
{
  lua_State *L = newvm();
  LjmRecError err;
  Mem ok = {NULL, 0, 0, 0, -1}, bad = {NULL, 0, 0, 0, 1};
  LjmRecorder *a, *b, *c;
  int fd = open(out("fd.ljm"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0, "open fd.ljm");
  /* Three recordings at once: a writer, a failing writer, a descriptor. */
  a = ljm_recorder_start_writer(L, mem_write, &ok, &err);
  CHECK(a, err.msg);
  b = ljm_recorder_start_writer(L, mem_write, &bad, &err);
  CHECK(b, err.msg);
  c = ljm_recorder_start_fd(L, fd, &err);
  CHECK(c, err.msg);
  run(L, CHURN, "=churn");
  CHECK(ljm_recorder_is_running(a), "writer still running");
  CHECK(!ljm_recorder_is_running(b), "failing writer stopped");
  CHECK(ljm_recorder_stop(b, &err) == ENOSPC, "failing writer: ENOSPC at stop");
  CHECK(strstr(err.msg, "No space left on device") != NULL, "ENOSPC message");
  CHECK(ljm_recorder_stop(a, &err) == 0, err.msg);
  CHECK(ljm_recorder_stop(c, &err) == 0, err.msg);
  CHECK(fcntl(fd, F_GETFD) != -1, "fd left open");
  close(fd);
  CHECK(ok.calls >= 2, "8 MiB buffers: several writes");
  save("writer.ljm", &ok);
  save("writer_failed.ljm", &bad);  /* the first buffer only: truncated */
  free(ok.buf);
  free(bad.buf);

  /* Misuse. */
  CHECK(ljm_recorder_stop(NULL, &err) == EINVAL, "stop(NULL)");
  CHECK(ljm_recorder_start_writer(L, NULL, NULL, &err) == NULL && err.code == EINVAL,
        "no writer");
  CHECK(ljm_recorder_start_path(L, "/nonexistent-dir/x.ljm", &err) == NULL &&
            err.code == ENOENT,
        "bad path");
  CHECK(ljm_recorder_check(L, &err) == 0, err.msg);

  /* Several recordings one after another in one process. */
  {
    int k;
    for (k = 0; k < 5; k++) {
      char name[32];
      snprintf(name, sizeof(name), "again%d.ljm", k);
      a = ljm_recorder_start_path(L, out(name), &err);
      CHECK(a, err.msg);
      run(L, "local t = {} for i = 1, 100 do t[i] = {} end\n", "=again");
      CHECK(ljm_recorder_stop(a, &err) == 0, err.msg);
    }
  }
  {
    void *ud;
    CHECK(lua_getallocf(L, &ud) != NULL, "allocator");
  }
  lua_close(L);
}

/* -- Extended streams (call stacks) -------------------------------------- */

/* Resumes the coroutine it is given until it finishes: a resumer in C. */
static int c_resumer(lua_State *L)
{
  lua_State *co = lua_tothread(L, 1);
  int k;
  for (k = 0; k < 1000; k++) {
    int st = lua_resume(co, 0);
    if (st != LUA_YIELD) break;
    lua_pop(co, lua_gettop(co));
  }
  return 0;
}

static void scenario_stacks(void)
{
  lua_State *L = newvm(), *co;
  LjmRecError err;
  LjmRecOptions nostacks = {.stack_depth = 5}, toodeep = {.stacks = 1, .stack_depth = 70000},
                deep = {.stacks = 1}, shallow = {.stacks = 1, .stack_depth = 3};
  LjmRecorder *a, *b, *c;
  int st, n = 0;
  Mem m = {NULL, 0, 0, 0, -1};
  CHECK(!ljm_recorder_start_path_ex(L, out("bad.ljm"), &nostacks, &err) && err.code == EINVAL,
        "a stack depth without stacks is refused");
  CHECK(!ljm_recorder_start_path_ex(L, out("bad.ljm"), &toodeep, &err) && err.code == EINVAL,
        "a stack depth above 65535 is refused");
  CHECK(!ljm_recorder_start_writer_ex(L, mem_write, &m, &toodeep, &err) && err.code == EINVAL,
        "bad options refused for a writer too");
  CHECK(access(out("bad.ljm"), F_OK) != 0, "refused options create no file");
  /* Three recordings at once: stacks, stacks cut at 3 frames, standard. */
  a = ljm_recorder_start_path_ex(L, out("stacks.ljm"), &deep, &err);
  CHECK(a, err.msg);
  b = ljm_recorder_start_writer_ex(L, mem_write, &m, &shallow, &err);
  CHECK(b, err.msg);
  c = ljm_recorder_start_path_ex(L, out("stacks_std.ljm"), NULL, &err);
  CHECK(c, err.msg);
  lua_pushcfunction(L, c_resumer);
  lua_setglobal(L, "c_resumer");
  run(L,
      "local co = coroutine.create(function()\n"   /* line 1 */
      "  for i = 1, 100 do\n"                      /* line 2 */
      "    coroutine.yield({i})\n"                 /* line 3 */
      "  end\n"
      "end)\n"
      "local function drive() c_resumer(co) end\n" /* line 6 */
      "drive()\n",                                 /* line 7 */
      "=cstk");
  /* A coroutine the host resumes, outside the VM: no resumer to show. */
  co = lua_newthread(L);
  if (luaL_loadbuffer(co, CO_SRC, sizeof(CO_SRC) - 1, "=hbody")) {
    CHECK(0, "load coroutine body");
    return;
  }
  lua_pushinteger(co, 50);
  for (st = lua_resume(co, 1); st == LUA_YIELD; st = lua_resume(co, 0), n++)
    lua_pop(co, lua_gettop(co));
  CHECK(st == 0 && n == 50, "host resumes: 50 yields");
  CHECK(ljm_recorder_stop(a, &err) == 0, err.msg);
  CHECK(ljm_recorder_stop(b, &err) == 0, err.msg);
  CHECK(ljm_recorder_stop(c, &err) == 0, err.msg);
  save("stacks3.ljm", &m);
  free(m.buf);
  lua_close(L);
}

/* Sampled recordings: bad options refused, and one runs alone. */
static void scenario_sampled(void)
{
  lua_State *L = newvm();
  LjmRecError err;
  LjmRecOptions big = {.sample = (1ull << 30) + 1}, seed_only = {.seed = 7},
                samp = {.stacks = 1, .sample = 4096, .seed = 3};
  LjmRecorder *r, *o;
  uint64_t b = 0;
  CHECK(!ljm_recorder_start_path_ex(L, out("bad.ljm"), &big, &err) && err.code == EINVAL,
        "a rate above 2^30 is refused");
  CHECK(!ljm_recorder_start_path_ex(L, out("bad.ljm"), &seed_only, &err) && err.code == EINVAL,
        "a seed without sampling is refused");
  CHECK(ljm_recorder_parse_bytes("512k", &b) == 0 && b == 512 * 1024, "parse 512k");
  CHECK(ljm_recorder_parse_bytes("3M", &b) == 0 && b == 3u << 20, "parse 3M");
  CHECK(ljm_recorder_parse_bytes("k", &b) == EINVAL && ljm_recorder_parse_bytes("5x", &b) == EINVAL &&
        ljm_recorder_parse_bytes("99999999999999999999", &b) == EINVAL, "parse refusals");
  /* Beside a running recording, a sampled one is refused, and the reverse. */
  o = ljm_recorder_start_path(L, out("plain_first.ljm"), &err);
  CHECK(o, err.msg);
  CHECK(!ljm_recorder_start_path_ex(L, out("bad.ljm"), &samp, &err) && err.code == EBUSY,
        "a sampled recording beside another is refused");
  CHECK(ljm_recorder_stop(o, &err) == 0, err.msg);
  r = ljm_recorder_start_path_ex(L, out("sampled.ljm"), &samp, &err);
  CHECK(r, err.msg);
  CHECK(!ljm_recorder_start_path(L, out("bad.ljm"), &err) && err.code == EBUSY,
        "another recording beside a sampled one is refused");
  run(L, "S = {} for i = 1, 100000 do S[i] = {i} end S = nil collectgarbage()\n", "=samp");
  CHECK(ljm_recorder_is_running(r), "the sampled recording runs");
  CHECK(ljm_recorder_stop(r, &err) == 0, err.msg);
  lua_close(L);
}

/* lua_close() without stop: the stream must still be complete. */
static void scenario_close(void)
{
  lua_State *L = newvm();
  LjmRecError err;
  LjmRecorder *r = ljm_recorder_start_path(L, out("close.ljm"), &err);
  CHECK(r, err.msg);
  run(L, "X = {} for i = 1, 100 do X[i] = {i} end\n", "=closing");
  lua_close(L);
  CHECK(!ljm_recorder_is_running(r), "not running after lua_close");
  CHECK(ljm_recorder_stop(r, &err) == 0, err.msg);
  /* A new VM can be recorded afterwards. */
  L = newvm();
  r = ljm_recorder_start_path(L, out("after_close.ljm"), &err);
  CHECK(r, err.msg);
  run(L, "Y = {1, 2, 3}\n", "=after");
  CHECK(ljm_recorder_stop(r, &err) == 0, err.msg);
  lua_close(L);
}

static void collect_label(void *ud, const char *k, size_t kl, const char *v, size_t vl)
{
  char *buf = ud;
  size_t n = strlen(buf);
  snprintf(buf + n, 256 - n, "%.*s=%.*s;", (int)kl, k, (int)vl, v);
}

/* L's labels as "k=v;k=v;" in key order. */
static const char *labels_of(lua_State *L)
{
  static char buf[256];
  buf[0] = 0;
  ljm_recorder_labels(L, collect_label, buf);
  return buf;
}

/* Labels through the C API: on a coroutine the host made, kept only while
** a recording with time marks runs, push and pop as with_labels does them;
** the stream carries them on the allocations (capi_test.py). */
static void scenario_labels(void)
{
  lua_State *L = newvm(), *co;
  LjmRecError err;
  LjmRecOptions timed = {.time = 1};
  LjmRecLabel two[2] = {{"plugin", "auth", 6, 4}, {"route", "/x", 5, 2}};
  LjmRecLabel bad[1] = {{"", "v", 0, 1}};
  LjmRecLabel many[17];
  char keys[17][8];
  uint64_t saved = 1;
  LjmRecorder *r;
  int i;
  CHECK(ljm_recorder_label(L, "k", 1, "v", 1, &err) == ENOENT, "no recording: nothing kept");
  CHECK(ljm_recorder_label(L, "", 0, "v", 1, &err) == EINVAL, "an empty key is refused");
  CHECK(ljm_recorder_labels_push(L, two, 2, &saved, &err) == ENOENT && saved == 0,
        "no recording: push keeps nothing");
  r = ljm_recorder_start_path_ex(L, out("labels.ljm"), &timed, &err);
  CHECK(r, err.msg);
  /* A push while nothing kept labels (saved 0), then a recording started
  ** and a label set: the pop gives back none. */
  CHECK(ljm_recorder_label(L, "inner", 5, "i", 1, &err) == 0, err.msg);
  CHECK(ljm_recorder_labels_pop(L, 0, &err) == 0 && !strcmp(labels_of(L), ""),
        "pop of a push made with no recording: no labels");
  co = lua_newthread(L);
  CHECK(ljm_recorder_label(co, "plugin", 6, "c", 1, &err) == 0, err.msg);
  run(co, "C = {} for i = 1, 200 do C[i] = {i} end\n", "=clabels");
  CHECK(!strcmp(labels_of(co), "plugin=c;") && !strcmp(labels_of(L), ""),
        "the coroutine's labels, not the main thread's");
  CHECK(ljm_recorder_labels_push(L, two, 2, &saved, &err) == 0, err.msg);
  CHECK(!strcmp(labels_of(L), "plugin=auth;route=/x;"), "push adds both labels");
  run(L, "A = {} for i = 1, 300 do A[i] = {i} end\n", "=plabels");
  CHECK(ljm_recorder_labels_pop(L, saved, &err) == 0 && !strcmp(labels_of(L), ""),
        "pop gives the labels back");
  for (i = 0; i < 17; i++) {
    snprintf(keys[i], sizeof(keys[i]), "k%02d", i);
    many[i] = (LjmRecLabel){keys[i], "v", 3, 1};
  }
  CHECK(ljm_recorder_labels_push(L, many, 17, &saved, &err) == E2BIG && !strcmp(labels_of(L), ""),
        "a 17th label is refused and changes nothing");
  CHECK(ljm_recorder_labels_push(L, bad, 1, &saved, &err) == EINVAL, "an empty key in push");
  CHECK(ljm_recorder_stop(r, &err) == 0, err.msg);
  CHECK(ljm_recorder_label(co, "plugin", 6, "d", 1, &err) == ENOENT && !strcmp(labels_of(co), ""),
        "after the stop the labels are gone");
  lua_close(L);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: capi_host OUTDIR\n");
    return 2;
  }
  snprintf(outdir, sizeof(outdir), "%s", argv[1]);
  scenario_cresume();
  scenario_cfunc_resume();
  scenario_stacks();
  scenario_sinks();
  scenario_close();
  scenario_sampled();
  scenario_labels();
  printf("%s\n", failures ? "capi_host: FAILED" : "capi_host: ok");
  return failures ? 1 : 0;
}
