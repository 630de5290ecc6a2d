/* torture_host.c -- runs a script in a VM whose every block comes from
** malloc, recorded with call stacks.
**
** LuaJIT's own allocator keeps freed blocks to itself, so a read of a
** freed trace, prototype or stack goes unseen; with malloc under
** AddressSanitizer (bazel test --config=asan) any such read by the
** recorder is reported at once. torture_test.py runs it many times.
**
** usage: torture_host OUT.ljm SCRIPT [ARGS...]
** LJM_TORTURE_SAMPLE=BYTES makes it a sampled recording.
** Exit status: 0, 1 if the script failed, 2 if the recording did.
*/
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lualib.h>

#include "ljm_recorder.h"

static void *malloc_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

int main(int argc, char **argv)
{
  LjmRecOptions opt = {.stacks = 1};
  LjmRecError err;
  LjmRecorder *r;
  lua_State *L;
  int i, status = 0;
  if (argc < 3) {
    fprintf(stderr, "usage: torture_host OUT.ljm SCRIPT [ARGS...]\n");
    return 2;
  }
  if (getenv("LJM_TORTURE_SAMPLE") &&
      ljm_recorder_parse_bytes(getenv("LJM_TORTURE_SAMPLE"), &opt.sample)) {
    fprintf(stderr, "torture_host: bad LJM_TORTURE_SAMPLE\n");
    return 2;
  }
  L = lua_newstate(malloc_alloc, NULL);
  if (!L) {
    fprintf(stderr, "torture_host: lua_newstate failed\n");
    return 2;
  }
  luaL_openlibs(L);
  lua_createtable(L, argc - 3, 1);
  for (i = 2; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 2);
  }
  lua_setglobal(L, "arg");
  r = ljm_recorder_start_path_ex(L, argv[1], &opt, &err);
  if (!r) {
    fprintf(stderr, "torture_host: %s\n", err.msg);
    return 2;
  }
  if (luaL_loadfile(L, argv[2]) || lua_pcall(L, 0, 0, 0)) {
    fprintf(stderr, "torture_host: %s\n", lua_tostring(L, -1));
    status = 1;
  }
  if (ljm_recorder_stop(r, &err)) {
    fprintf(stderr, "torture_host: %s\n", err.msg);
    status = 2;
  }
  lua_close(L);
  return status;
}
