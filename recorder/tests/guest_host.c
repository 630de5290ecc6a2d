/* guest_host.c -- a host that forks and spawns while it records (the
** recorder as a guest: guest_test.py).
**
** guest_host OUTDIR SCENARIO [MODE] runs one scenario, writes its streams
** into OUTDIR and prints "FAIL ..." lines for what it checks itself; the
** driver decodes the streams. MODE: exact (default), stacks or sampled.
**
**   rawfork   the child of a fork no pthread_atfork handler sees
**             (syscall(SYS_fork), or SYS_clone without CLONE_VM) allocates
**             as much as the parent: it must neither hang nor write into
**             the parent's file; its handle reports ECHILD and a new
**             lua_State of the child records a stream of its own
**   rawfork-start  50 raw forks each right after a start, while the
**             recorder's threads are new: the child starts a recording
**             of its own (threads that need the allocator) and ends
**   fork      the same after glibc's fork()
**   clonevm   a vfork()-style child (clone, CLONE_VM | CLONE_VFORK) runs Lua
**             on the parent's VM: its allocations are the parent's heap's
**             and stay in the parent's stream
**   spawn     posix_spawn() of /bin/true between allocations
*/
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "ljm_recorder.h"

extern char **environ;

static int failures;
static char outdir[4096];
static LjmRecOptions opts;

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

/* n allocations, each a table at line 2 of a chunk named name. */
static void allocate(lua_State *L, const char *name, int n)
{
  static const char SRC[] =
      "local n, t = ..., {}\n"
      "for i = 1, n do t[i % 1000 + 1] = {i} end\n";
  if (luaL_loadbuffer(L, SRC, sizeof(SRC) - 1, name)) {
    printf("FAIL load %s\n", name);
    failures++;
    return;
  }
  lua_pushinteger(L, n);
  if (lua_pcall(L, 1, 0, 0)) {
    printf("FAIL %s: %s\n", name, lua_tostring(L, -1));
    failures++;
    lua_pop(L, 1);
  }
}

static LjmRecorder *start(lua_State *L, const char *name)
{
  LjmRecError err;
  LjmRecorder *r = ljm_recorder_start_path_ex(L, out(name), &opts, &err);
  if (!r) {
    printf("FAIL start %s: %s\n", name, err.msg);
    failures++;
  }
  return r;
}

static void stop(LjmRecorder *r, const char *name)
{
  LjmRecError err;
  if (r && ljm_recorder_stop(r, &err)) {
    printf("FAIL stop %s: %s\n", name, err.msg);
    failures++;
  }
}

/* The child of a fork: its copy of the parent's recording is not its own
** (is_running false, stop ECHILD), it allocates as much as the parent
** (which filled a buffer and blocked for ever before), and a new VM of
** its own records a complete stream. Exits with the failures as status. */
static void child(lua_State *L, LjmRecorder *r, int n)
{
  LjmRecError err;
  lua_State *L2;
  LjmRecorder *r2;
  allocate(L, "=child", n);
  CHECK(!ljm_recorder_is_running(r), "child: the parent's recording is not running");
  CHECK(ljm_recorder_stop(r, &err) == ECHILD, "child: stop of the parent's recording: ECHILD");
  L2 = newvm();
  r2 = ljm_recorder_start_path_ex(L2, out("child2.ljm"), &opts, &err);
  CHECK(r2 != NULL, "child: a new lua_State starts a recording of its own");
  if (!r2) printf("  (%s)\n", err.msg);
  allocate(L2, "=child2", 1000);
  stop(r2, "child2.ljm");
  lua_close(L2);
  fflush(stdout);
  _exit(failures ? 1 : 0);
}

static void wait_child(pid_t pid, const char *what)
{
  int st = 0;
  if (pid < 0) {
    printf("FAIL %s: %s\n", what, strerror(errno));
    failures++;
    return;
  }
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    printf("FAIL %s: child status %#x\n", what, st);
    failures++;
  }
}

static void scenario_fork(int raw)
{
  lua_State *L = newvm();
  LjmRecorder *r = start(L, "parent.ljm");
  pid_t pid;
  allocate(L, "=before", 1000);
  fflush(stdout);
  if (raw) {
#ifdef SYS_fork
    pid = (pid_t)syscall(SYS_fork);
#else
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
  } else {
    pid = fork();
  }
  if (pid == 0) child(L, r, 1000000);
  allocate(L, "=parent", 1000000);
  wait_child(pid, raw ? "raw fork" : "fork");
  allocate(L, "=after", 1000);
  CHECK(ljm_recorder_is_running(r), "parent: still recording after the child");
  stop(r, "parent.ljm");
  lua_close(L);
}

/* A recording's threads are running when start returns: a raw fork right
** after it leaves the child no allocator lock of a thread's start-up. */
static void scenario_fork_at_start(void)
{
  int i;
  for (i = 0; i < 50; i++) {
    lua_State *L = newvm();
    LjmRecorder *r = start(L, "parent.ljm");
    pid_t pid;
    fflush(stdout);
#ifdef SYS_fork
    pid = (pid_t)syscall(SYS_fork);
#else
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
    if (pid == 0) {
      LjmRecError err;
      lua_State *L2 = newvm();
      LjmRecorder *r2 = ljm_recorder_start_path_ex(L2, out("child2.ljm"), &opts, &err);
      CHECK(r2 != NULL, "child: a new lua_State starts a recording of its own");
      allocate(L2, "=child2", 1000);
      stop(r2, "child2.ljm");
      lua_close(L2);
      fflush(stdout);
      _exit(failures ? 1 : 0);
    }
    wait_child(pid, "raw fork right after start");
    allocate(L, "=parent", 1000);
    stop(r, "parent.ljm");
    lua_close(L);
  }
}

/* -- vfork()-style clone: the child runs Lua on the parent's VM ----------- */

static int vm_child(void *arg)
{
  allocate(arg, "=vchild", 5000);
  return 0;
}

static void scenario_clonevm(void)
{
  lua_State *L = newvm();
  LjmRecorder *r = start(L, "parent.ljm");
  size_t size = 1 << 20;
  char *stack = malloc(size);
  pid_t pid;
  allocate(L, "=before", 1000);
  pid = clone(vm_child, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, L);
  wait_child(pid, "clone(CLONE_VM | CLONE_VFORK)");
  free(stack);
  allocate(L, "=after", 1000);
  CHECK(ljm_recorder_is_running(r), "parent: still recording after the vfork()-style child");
  stop(r, "parent.ljm");
  lua_close(L);
}

static void scenario_spawn(void)
{
  lua_State *L = newvm();
  LjmRecorder *r = start(L, "parent.ljm");
  char *argv[] = {"true", NULL};
  int i;
  for (i = 0; i < 20; i++) {
    pid_t pid;
    int e;
    allocate(L, "=parent", 1000);
    e = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
    if (e) errno = e;
    wait_child(e ? -1 : pid, "posix_spawn");
  }
  CHECK(ljm_recorder_is_running(r), "parent: still recording after posix_spawn");
  stop(r, "parent.ljm");
  lua_close(L);
}

int main(int argc, char **argv)
{
  const char *mode = argc > 3 ? argv[3] : "exact";
  if (argc < 3) {
    fprintf(stderr, "usage: guest_host OUTDIR rawfork|rawfork-start|fork|clonevm|spawn [exact|stacks|sampled]\n");
    return 2;
  }
  snprintf(outdir, sizeof(outdir), "%s", argv[1]);
  if (!strcmp(mode, "stacks")) opts.stacks = 1;
  else if (!strcmp(mode, "sampled")) opts.sample = 64, opts.seed = 7;
  if (!strcmp(argv[2], "rawfork")) scenario_fork(1);
  else if (!strcmp(argv[2], "rawfork-start")) scenario_fork_at_start();
  else if (!strcmp(argv[2], "fork")) scenario_fork(0);
  else if (!strcmp(argv[2], "clonevm")) scenario_clonevm();
  else if (!strcmp(argv[2], "spawn")) scenario_spawn();
  else return 2;
  printf("%s\n", failures ? "guest_host: FAILED" : "guest_host: ok");
  return failures ? 1 : 0;
}
