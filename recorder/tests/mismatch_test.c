/* mismatch_test.c -- the recorder refuses a LuaJIT it was not built for.
**
** This test compiles the recorder against the same headers configured
** for another build (LUAJIT_DISABLE_GC64: 32-bit GC references), and
** runs it on the installed GC64 VM: every start must fail with ENOTSUP
** and a clear message, before any file is created or truncated. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "recorder/ljm_recorder.h"

static int failures;

#define CHECK(cond, what) \
  do { if (!(cond)) { printf("FAIL %s (line %d)\n", what, __LINE__); failures++; } } while (0)

static int nowrite(void *ud, const void *d, size_t n)
{
  (void)ud;
  (void)d;
  (void)n;
  return 0;
}

int main(void)
{
  lua_State *L = luaL_newstate();
  LjmRecError err;
  char path[4096];
  const char *tmp = getenv("TEST_TMPDIR");
  FILE *f;
  luaL_openlibs(L);
  snprintf(path, sizeof(path), "%s/keep.ljm", tmp ? tmp : "/tmp");
  f = fopen(path, "w");
  fputs("precious", f);
  fclose(f);

  CHECK(ljm_recorder_check(L, &err) == ENOTSUP, "check fails");
  printf("message: %s\n", err.msg);
  CHECK(strstr(err.msg, "does not match") != NULL, "clear message");
  CHECK(ljm_recorder_start_path(L, path, &err) == NULL && err.code == ENOTSUP, "start_path refused");
  CHECK(ljm_recorder_start_fd(L, 1, &err) == NULL && err.code == ENOTSUP, "start_fd refused");
  CHECK(ljm_recorder_start_writer(L, nowrite, NULL, &err) == NULL && err.code == ENOTSUP,
        "start_writer refused");
  f = fopen(path, "r");
  {
    char buf[16] = {0};
    CHECK(f && fread(buf, 1, sizeof(buf) - 1, f) == 8 && !strcmp(buf, "precious"),
          "file left alone");
    if (f) fclose(f);
  }
  lua_close(L);
  printf("%s\n", failures ? "mismatch_test: FAILED" : "mismatch_test: ok");
  return failures ? 1 : 0;
}
