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
  /* What a user can act on: the running VM, the builds, the command. */
  CHECK(strstr(err.msg, "this LuaJIT is not one the recorder was built for: LuaJIT 2.1.") == err.msg,
        "names the running VM's version");
  CHECK(strstr(err.msg, ", GC64, in /") != NULL && strstr(err.msg, "libluajit-5.1.so") != NULL,
        "says GC64 and the library");
  CHECK(strstr(err.msg, "; built for: Debian 12 luajit ") != NULL, "lists the builds");
  CHECK(strstr(err.msg, "bazel build --repo_env=LJM_EXTRA_TREE=/path/to/its/source //:ljm "
                        "//recorder:ljm/recorder.so") != NULL,
        "gives the command");
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
