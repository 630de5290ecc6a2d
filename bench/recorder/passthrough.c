/* passthrough.c -- the floor of any allocator wrapper (sampling_cost.py).
**
** require "ljm_bench_pass": on() wraps the VM's allocator with a function
** that only calls it (what every lua_setallocf-based recorder pays before
** it decides anything), off() puts the allocator back; thread() starts a
** thread that blocks every signal and waits forever (what a process pays
** for not being single-threaded: nginx_bench.py). Not part of ljmkit.
*/
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static lua_Alloc orig;
static void *orig_ud;

static void *pass(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud;
  return orig(orig_ud, ptr, osize, nsize);
}

static int pass_on(lua_State *L)
{
  if (!orig) {
    orig = lua_getallocf(L, &orig_ud);
    lua_setallocf(L, pass, NULL);
  }
  return 0;
}

static int pass_off(lua_State *L)
{
  if (orig) {
    lua_setallocf(L, orig, orig_ud);
    orig = NULL;
  }
  return 0;
}

static void *idle(void *arg)
{
  (void)arg;
  for (;;) pause();
  return NULL;
}

static int pass_thread(lua_State *L)
{
  pthread_t th;
  sigset_t all, old;
  int e;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  e = pthread_create(&th, NULL, idle, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!e) pthread_detach(th);
  lua_pushboolean(L, e == 0);
  return 1;
}

int luaopen_ljm_bench_pass(lua_State *L);
int luaopen_ljm_bench_pass(lua_State *L)
{
  lua_newtable(L);
  lua_pushcfunction(L, pass_on);
  lua_setfield(L, -2, "on");
  lua_pushcfunction(L, pass_off);
  lua_setfield(L, -2, "off");
  lua_pushcfunction(L, pass_thread);
  lua_setfield(L, -2, "thread");
  return 1;
}
