/* host_events.c -- what ends recordings without a stop: lua_close() (a
** finalizer anchored in the registry), exit() (atexit) and forks. */
#include "recorder/capture/session.h"

#include <sched.h>
#include <stdio.h>

#include <lauxlib.h>

#include "recorder/vm/stack_walk.h"

static const char SENTINEL_KEY[] = "ljm.recorder.closer";

/* At exit nobody can collect a failed stream's error any more: those that
** asked for it (ljm_recorder_report_at_exit) say it on stderr, once. */
static void report_failed(void)
{
  LjmRecorder *r;
  for (r = R.list; r; r = r->next) {
    int e = r->st.out.err;
    char msg[512];
    if (!r->h.exit_report || !e || e == ECHILD) continue;
    failure_text(r, e, msg, sizeof(msg));
    fprintf(stderr, "%s%s\n", r->h.exit_report, msg);
    r->h.exit_report = NULL;
  }
  fflush(stderr);
}

REC_API void rec_atexit(void)
{
  int held = R_held();  /* exit() from a finalizer inside a start or stop: the lock is ours */
  if (!held) R_lock(NULL);
  end_all();
  report_failed();
  if (!held) R_unlock();
}

/* In a forked child (base/fork_mark.h): the recordings are the parent's. The
** child's copies are dropped without a word, and the process is left as if
** nothing had been recording: the sessions leave R.list (their handles
** stay valid; stop() frees them with ECHILD), the wrapper is taken off the
** VM and the stream files closed, so any lua_State of the child may start
** again. Runs from the pthread_atfork child handler (glibc's fork()) and,
** for forks that run no handler (a raw SYS_fork or clone), from the first
** allocator call or API call of the child's generation; there the child's
** code has run before, so a descriptor is closed only while it is still
** the stream's file (its number may have been reused). A spin lock, not
** R_mu (perhaps held at the fork), keeps two threads of the child from
** doing it twice. */
static atomic_flag fork_busy = ATOMIC_FLAG_INIT;

REC_API void forked_child(uint32_t gen, int in_handler)
{
  LjmRecorder *r, *next;
  while (atomic_flag_test_and_set_explicit(&fork_busy, memory_order_acquire)) sched_yield();
  if (R.gen == gen) {  /* another thread of the child did it */
    atomic_flag_clear_explicit(&fork_busy, memory_order_release);
    return;
  }
  pthread_mutex_init(&R_mu, NULL);  /* another thread may have held it */
  atomic_store_explicit(&R_owner, 0, memory_order_relaxed);
  for (r = R.list; r; r = next) {
    next = r->next;
    if (r->live) r->ended = 1;
    r->live = 0;
    rec_buf_forked(&r->st.out, 1);      /* the writer thread stayed in the parent */
    rec_ext_forked(&r->st, in_handler);  /* so did the ticker */
    if (r->own_fd && r->fd >= 0 && (in_handler || is_stream_file(r, r->fd))) close(r->fd);
    if (r->fo.own && !in_handler && !is_stream_file(r, r->fo.wfd))
      r->fo.own = 0;  /* its number taken by the child since: not ours to close */
    rec_fdout_close(&r->fo);
    r->fd = -1;
    r->own_fd = 0;
    r->next = NULL;
  }
  R.list = NULL;
  R.nlive = 0;
  R.one = NULL;
  rec_sample_fill(&sampler);
  thread_new = 0;
  R.sampled = NULL;
  R.sampled_ext = 0;
  if (R.nstacks) rec_stack_stop();
  R.nstacks = 0;
  R.next = 0;
  labels_clear();
  R.stacks_dirty = 0;
  if (R.g) {
    unwrap(mainthread(R.g));
    if (!R.wrapped) R.g = NULL;  /* else a host's wrapper still calls ours */
  }
  R.gen = gen;
  atomic_flag_clear_explicit(&fork_busy, memory_order_release);
}

REC_API void rec_atfork_child(void)
{
  forked_child(rec_fork_gen(), 1);
}

/* __gc of the registry sentinel: only lua_close() collects it. */
static int sentinel_gc(lua_State *L)
{
  if (R_lock(NULL)) return 0;  /* never: lua_close() inside a start or stop */
  if (R.g == G(L)) {  /* the VM goes away: so does any wrapper chain */
    end_all();
    unwrap(L);
    R.wrapped = 0;
    R.g = NULL;
  }
  R_unlock();
  return 0;
}

REC_API void sentinel_ensure(lua_State *L)
{
  lua_getfield(L, LUA_REGISTRYINDEX, SENTINEL_KEY);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newuserdata(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, sentinel_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, SENTINEL_KEY);
  } else {
    lua_pop(L, 1);
  }
}
