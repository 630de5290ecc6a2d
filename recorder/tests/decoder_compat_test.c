/* decoder_compat_test.c -- streams of the recorder read by the project's
** decoder (decoder/ljm_decoder.h): complete streams decode as LJM_OK with
** every event and the announced prototypes; a stream cut by a write error
** decodes as LJM_TRUNCATED with the events before the cut. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "decoder/ljm_decoder.h"
#include "recorder/ljm_recorder.h"

static int failures;

#define CHECK(cond, what) \
  do { if (!(cond)) { printf("FAIL %s (line %d)\n", what, __LINE__); failures++; } } while (0)

typedef struct Mem {
  unsigned char *buf;
  size_t len;
  int fail_after;  /* calls accepted before ENOSPC, -1: all */
  int calls;
} Mem;

static int mem_write(void *ud, const void *d, size_t n)
{
  Mem *m = ud;
  if (m->fail_after >= 0 && m->calls >= m->fail_after) return ENOSPC;
  m->calls++;
  m->buf = realloc(m->buf, m->len + n);
  memcpy(m->buf + m->len, d, n);
  m->len += n;
  return 0;
}

typedef struct Count {
  uint64_t events, line3, protos_in_events, cfuncs;
  int ljs, ljm;
} Count;

static void on_versions(void *ud, int ljs, int ljm)
{
  Count *c = ud;
  c->ljs = ljs;
  c->ljm = ljm;
}

static void on_proto(void *ud, uint64_t addr, const char *chunk, size_t len,
                     uint64_t firstline, int in_events)
{
  Count *c = ud;
  (void)addr;
  (void)firstline;
  if (in_events && len == 6 && !memcmp(chunk, "=probe", 6)) c->protos_in_events++;
}

static void on_cfunc(void *ud, uint64_t addr, const char *name, size_t len, int in_events)
{
  Count *c = ud;
  (void)addr;
  (void)name;
  (void)len;
  if (!in_events) c->cfuncs++;
}

static void on_event(void *ud, const LjmRawEvent *ev)
{
  Count *c = ud;
  c->events++;
  if (ev->kind == LJM_RAW_ALLOC && ev->loc.source == LJM_SRC_LUA && ev->loc.line == 3) c->line3++;
}

static LjmStatus decode(const Mem *m, Count *c)
{
  LjmCallbacks cb;
  LjmInput *in = ljm_input_mem(m->buf, m->len);
  LjmDiag diag;
  LjmStatus st;
  memset(&cb, 0, sizeof(cb));  /* the decoder may grow more callbacks */
  cb.on_versions = on_versions;
  cb.on_proto = on_proto;
  cb.on_cfunc = on_cfunc;
  cb.on_event = on_event;
  memset(c, 0, sizeof(*c));
  st = ljm_decode(in, &cb, c, &diag, NULL, NULL);
  ljm_input_close(in);
  return st;
}

static const char PROBE[] =
    "local t = {}\n"
    "for i = 1, N do\n"
    "  t[i % 64] = {i}\n"  /* line 3 */
    "end\n";

static void record(lua_State *L, Mem *m, int n)
{
  LjmRecError err;
  LjmRecorder *r = ljm_recorder_start_writer(L, mem_write, m, &err);
  CHECK(r != NULL, err.msg);
  lua_pushinteger(L, n);
  lua_setglobal(L, "N");
  if (luaL_loadbuffer(L, PROBE, sizeof(PROBE) - 1, "=probe") || lua_pcall(L, 0, 0, 0))
    CHECK(0, lua_tostring(L, -1));
  ljm_recorder_stop(r, &err);
}

int main(void)
{
  lua_State *L = luaL_newstate();
  Mem ok = {NULL, 0, -1, 0}, cut = {NULL, 0, 1, 0};
  Count c;
  luaL_openlibs(L);
  luaL_dostring(L, "jit.off()");

  record(L, &ok, 1000);
  CHECK(decode(&ok, &c) == LJM_OK, "complete stream decodes as LJM_OK");
  CHECK(c.ljs == 3 && c.ljm == 3, "ljs v3 + ljm v3");
  CHECK(c.line3 >= 1000, "1000 allocations at =probe:3");
  CHECK(c.protos_in_events == 1, "the new chunk announced once (0x08)");
  CHECK(c.cfuncs > 100, "C symbols in the leading symtab");

  record(L, &cut, 1000000);  /* > 8 MiB: the second buffer fails */
  CHECK(cut.calls == 1, "one buffer accepted");
  CHECK(decode(&cut, &c) == LJM_TRUNCATED, "cut stream decodes as LJM_TRUNCATED");
  CHECK(c.line3 > 100000, "events before the cut delivered");

  lua_close(L);
  free(ok.buf);
  free(cut.buf);
  printf("%s\n", failures ? "decoder_compat_test: FAILED" : "decoder_compat_test: ok");
  return failures ? 1 : 0;
}
