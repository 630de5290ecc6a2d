/* rec_core.c -- recording sessions and the allocator wrapper.
**
** One VM at a time is recorded (its global_State is remembered); any
** number of sessions may write streams of it. The wrapper computes the
** location once per allocator call, before the real allocator runs (so
** the frames it reads are all still valid), and appends the event to
** every live stream. A stream whose sink fails stops receiving events;
** the wrapper is removed when the last session stops. lua_close() is
** noticed through a finalizer anchored in the registry, exit() through
** atexit(): both end every live stream with its epilogue.
**
** Extended streams (call stacks, time, RSS: rec_ext.h) take the stack
** of each allocator call from the walker (rec_stack.h), which runs once
** per call while at least one of them is live, whatever the number of
** streams.
**
** The public functions of ljm_recorder.h are rec_api.c's: they find the
** flavour whose layouts the VM has and call its table (end of file).
*/
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#include <lauxlib.h>
#include <luajit.h>

#include "ljm_flavour.h"
#include "ljm_recorder.h"
#include "rec_attr.h"
#include "rec_check.h"
#include "rec_cname.h"
#include "rec_ext.h"
#include "rec_fdout.h"
#include "rec_fork.h"
#include "rec_flavour.h"
#include "rec_outfile.h"
#include "rec_sample.h"
#include "rec_sig.h"
#include "rec_snap.h"
#include "rec_stack.h"
#include "rec_stream.h"
#include "rec_zout.h"

#define REC_FLUSH_MS_MAX (24u * 3600u * 1000u)

/* This flavour's table (end of file). */
extern const RecFlavour LJM_FLAVOUR_SYM;

struct LjmRecorder {
  RecHandle h;           /* first: the public API finds the flavour here */
  RecStream st;          /* the stream */
  int live;              /* events go to this stream */
  int ended;             /* epilogue written (or the stream abandoned) */
  int fd;                /* file sink, or -1 */
  RecZout z;             /* a path's compression (.gz, .zst), on the fd */
  int own_fd;            /* close fd at stop */
  dev_t fd_dev;          /* what fd referred to at the start: checked */
  ino_t fd_ino;          /* before each write (fd_write) */
  int fd_known;
  RecFdOut fo;           /* fd's writes, bounded in time (rec_fdout.h) */
  uint32_t wtimeout_ms;  /* the write timeout (REC_FDOUT_FOREVER: none) */
  LjmRecWriteFn write;   /* callback sink */
  void *wud;             /* its argument */
  char *name;            /* path or "<fd N>" for messages */
  dev_t dev;             /* file identity, to refuse a second stream */
  ino_t ino;             /* into the same file (both 0 if unknown) */
  int ext;               /* extended stream (stacks, time, RSS) */
  uint32_t flush_ms;     /* flush interval (files), 0: when a buffer fills */
  uint32_t depth;        /* its stack depth limit */
  uint64_t sample;       /* sampled recording: its rate, else 0 */
  uint64_t seed;
  LjmRecorder *next;     /* next session of the VM */
};

static struct {
  global_State *g;       /* the recorded VM, NULL if none */
  lua_Alloc orig;        /* its allocator before wrapping */
  void *orig_ud;
  int wrapped;           /* our wrapper is installed */
  LjmRecorder *list;     /* sessions of g (live or ended) */
  int nlive;             /* live sessions */
  LjmRecorder *one;      /* the live session if there is exactly one */
  int atexit_done;       /* atexit handler registered */
  int nstacks;           /* live extended sessions */
  int stacks_dirty;      /* nstacks or their limits changed */
  LjmRecorder *sampled;  /* the live sampled session (then the only one) */
  int sampled_ext;       /* ... and it records stacks */
  uint32_t gen;          /* the fork generation R is of (rec_fork.h) */
} R;

/* The sampled session's gaps and blocks: static, so the wrapper's fast path
** reads it without following a pointer. Only one sampled session is live at
** a time; the sampler stays with the last one started until it is freed.
** While none is live, its countdown is off and its filter full: the
** wrapper sends every call to rec_alloc_slow (exact recordings too). */
static RecSampler sampler = {.gap = REC_SAMPLE_OFF,
                             .filter = {[0 ... REC_SAMPLE_FILTER - 1] = REC_SAMPLE_ALL}};
static LjmRecorder *sampler_owner;

/* A sampled recording with stacks made a thread with the last allocation:
** the walker notes it at the next one (its stack). The sampler's held
** countdown sends that one to rec_alloc_slow (rec_sample_hold). */
static int thread_new;

/* Guards R against lua_States of other threads: a start, a stop, lua_close
** and exit() take it. The allocator wrapper does not: only the recorded
** VM's thread runs it, and that thread changes R only under the lock. */
static pthread_mutex_t R_mu = PTHREAD_MUTEX_INITIALIZER;

static const char SENTINEL_KEY[] = "ljm.recorder.closer";

/* -- Errors -------------------------------------------------------------- */

static int set_err(LjmRecError *err, int code, const char *fmt, const char *arg)
{
  if (err) {
    err->code = code;
    snprintf(err->msg, sizeof(err->msg), fmt, arg);
  }
  return code;
}

/* The thread that holds R_mu (0: none). A start or a stop calls the Lua
** API (pushes, the registry), which may run a GC step, whose finalizers
** may start or stop a recording: that call is refused (EDEADLK) instead of
** waiting for ever on the lock its own thread holds. Only the holder
** writes its id here, so a thread finds its own id only if it holds the
** lock. (No thread-local variable: that would tie the module to ld.so's
** TLS.) */
static _Atomic uintptr_t R_owner;

static void forked_child(uint32_t gen, int in_handler);

/* The fork check of an API call (rec_fork.h). */
static inline void fork_check(void)
{
  uint32_t g = rec_fork_gen();
  if (__builtin_expect(g != R.gen, 0)) forked_child(g, 0);
}

static int R_held(void)
{
  return atomic_load_explicit(&R_owner, memory_order_relaxed) == (uintptr_t)pthread_self();
}

static int R_lock(LjmRecError *err)
{
  fork_check();
  if (R_held())
    return set_err(err, EDEADLK, "%s", "the recorder is busy: called from a finalizer that ran "
                                       "inside a start or stop of a recording");
  pthread_mutex_lock(&R_mu);
  atomic_store_explicit(&R_owner, (uintptr_t)pthread_self(), memory_order_relaxed);
  return 0;
}

static void R_unlock(void)
{
  atomic_store_explicit(&R_owner, 0, memory_order_relaxed);
  pthread_mutex_unlock(&R_mu);
}

/* -- Allocator wrapper --------------------------------------------------- */

/* Recomputes R.one after a session went live or stopped being live. */
static void live_changed(void)
{
  LjmRecorder *r;
  R.one = NULL;
  if (R.nlive != 1) return;
  for (r = R.list; r; r = r->next)
    if (r->live) {
      R.one = r;
      break;
    }
}

static void session_kill(LjmRecorder *r)
{
  if (r->live) {
    r->live = 0;
    R.nlive--;
    if (R.sampled == r) {
      rec_sample_fill(&sampler);
      thread_new = 0;
      R.sampled = NULL;
      R.sampled_ext = 0;
    }
    if (r->ext) {
      R.nstacks--;
      R.stacks_dirty = 1;  /* the walker adapts outside the event */
    }
    live_changed();
  }
}

/* The walker follows the live extended sessions: the largest depth
** limit, or nothing at all. Not called while an event is written. */
static void stacks_update(void)
{
  LjmRecorder *r;
  uint32_t depth = 0;
  if (!R.stacks_dirty) return;
  R.stacks_dirty = 0;
  for (r = R.list; r; r = r->next)
    if (r->live && r->ext && r->depth > depth) depth = r->depth;
  if (!R.nstacks) rec_stack_stop();
  else if (depth != rec_walk.depth) rec_stack_depth(depth);
}

/* Everything the wrapper reads of the VM for an event, it reads before
** the real allocator runs: the allocator call may free or move what a
** frame, a trace or the location names (the trace array grows under
** trace_findfree at a trace exit, jit.flush frees traces, a stack moves).
** So the location's and the stack's announcements are written first, the
** selection and the event after the call. */

/* The allocator wrapper while extended sessions are live. */
static __attribute__((noinline)) void *
rec_alloc_ext(void *ptr, size_t osize, size_t nsize, const RecLoc *loc)
{
  LjmRecorder *r;
  void *res;
  int ev;
  rec_stack_event(R.g, loc, ptr, osize, nsize);
  r = R.one;
  if (__builtin_expect(r != NULL, 1)) {
    rec_ext_pre(&r->st, R.g, &rec_walk);
    rec_stream_announce(&r->st, R.g, loc);
  } else {
    for (r = R.list; r; r = r->next) {
      if (!r->live) continue;
      if (r->ext) rec_ext_pre(&r->st, R.g, &rec_walk);
      rec_stream_announce(&r->st, R.g, loc);
    }
  }
  res = R.orig(R.orig_ud, ptr, osize, nsize);
  if (nsize == 0) {
    ev = REC_EV_FREE;
  } else if (__builtin_expect(!res, 0)) {
    rec_stack_forget();  /* failed: nothing happened, no event written */
    return res;
  } else {
    ev = ptr ? REC_EV_REALLOC : REC_EV_ALLOC;
  }
  r = R.one;
  if (__builtin_expect(r != NULL, 1)) {
    rec_ext_select(&r->st);
    rec_stream_event(&r->st, loc, ev, ptr, osize, res, nsize);
    rec_buf_tick(&r->st.out);
    if (__builtin_expect(r->st.out.err != 0, 0)) session_kill(r);
  } else {
    for (r = R.list; r; r = r->next) {
      if (!r->live) continue;
      if (r->ext) rec_ext_select(&r->st);
      rec_stream_event_out(&r->st, loc, ev, ptr, osize, res, nsize);
      rec_buf_tick(&r->st.out);
      if (r->st.out.err) session_kill(r);
    }
  }
  if (__builtin_expect(R.stacks_dirty, 0)) stacks_update();
  return res;
}

/* A sampled recording with stacks: an allocation of sizeof(lua_State)
** may have made a thread, whose stack is the next allocation; the walker
** notes it then (the held countdown sends that call to rec_alloc_slow). */
static inline void note_thread(const void *ptr, size_t nsize)
{
  if (!ptr && nsize == sizeof(lua_State)) {
    thread_new = 1;
    rec_sample_hold(&sampler);
  }
}

/* The written events of a sampled session (alone on the VM): a hit (an
** allocation or reallocation holding the next sampled byte), or a free or
** reallocation of a sampled block; rec_alloc_slow has decided which. */
static __attribute__((noinline)) void *
rec_alloc_sampled(LjmRecorder *r, void *ptr, size_t osize, size_t nsize, int hit, int tracked)
{
  RecSampler *sp = &sampler;
  RecLoc loc;
  void *res;
  int ev;
  if (hit) rec_sample_redraw(sp);
  /* Frees of prototypes go unseen here: the map's identity check, not the
  ** last prototype, decides whether this one was announced. */
  r->st.last_pt = NULL;
  rec_attr(R.g, ptr, &loc);
  if (r->ext) {
    rec_stack_resync();  /* frames may have gone and come back unseen */
    rec_stack_event(R.g, &loc, ptr, osize, nsize);
    rec_ext_pre(&r->st, R.g, &rec_walk);
  }
  rec_stream_announce(&r->st, R.g, &loc);
  res = R.orig(R.orig_ud, ptr, osize, nsize);
  if (nsize == 0) {
    ev = REC_EV_FREE;
  } else if (__builtin_expect(!res, 0)) {
    if (r->ext) rec_stack_forget();  /* failed: the old block stays */
    rec_buf_clock(&r->st.out);       /* as after an event */
    return res;
  } else {
    ev = ptr ? REC_EV_REALLOC : REC_EV_ALLOC;
  }
  if (r->ext) note_thread(ptr, nsize);
  if (tracked) rec_sample_del(sp, ptr);
  if (hit && rec_sample_add(sp, res)) r->st.out.err = ENOMEM;
  if (r->ext) rec_ext_select(&r->st);
  if (ev == REC_EV_REALLOC && !hit) {  /* the old block leaves the sample */
    rec_buf_need(&r->st.out, 1);
    rec_buf_byte(&r->st.out, REC_IT_UNSAMPLED);
  }
  rec_stream_event(&r->st, &loc, ev, ptr, osize, res, nsize);
  rec_buf_clock(&r->st.out);
  if (__builtin_expect(r->st.out.err != 0, 0)) session_kill(r);
  if (__builtin_expect(R.stacks_dirty, 0)) stacks_update();
  return res;
}

/* The wrapper of exact recordings (rec_alloc_slow's other half). */
static __attribute__((noinline)) void *rec_alloc_exact(void *ptr, size_t osize, size_t nsize)
{
  RecLoc loc;
  LjmRecorder *r;
  void *res;
  int ev;
  if (__builtin_expect(!R.nlive, 0)) return R.orig(R.orig_ud, ptr, osize, nsize);
  rec_attr(R.g, ptr, &loc);
  if (__builtin_expect(R.nstacks != 0, 0)) return rec_alloc_ext(ptr, osize, nsize, &loc);
  r = R.one;
  if (__builtin_expect(r != NULL, 1)) {
    /* One stream (the usual case): the event writer inline, no loop. */
    rec_stream_announce(&r->st, R.g, &loc);
    res = R.orig(R.orig_ud, ptr, osize, nsize);
    if (nsize == 0) ev = REC_EV_FREE;
    else if (__builtin_expect(!res, 0)) return res;  /* failed: nothing happened */
    else ev = ptr ? REC_EV_REALLOC : REC_EV_ALLOC;
    rec_stream_event(&r->st, &loc, ev, ptr, osize, res, nsize);
    rec_buf_tick(&r->st.out);
    if (__builtin_expect(r->st.out.err != 0, 0)) session_kill(r);
    return res;
  }
  for (r = R.list; r; r = r->next)
    if (r->live) rec_stream_announce(&r->st, R.g, &loc);
  res = R.orig(R.orig_ud, ptr, osize, nsize);
  if (nsize == 0) ev = REC_EV_FREE;
  else if (!res) return res;
  else ev = ptr ? REC_EV_REALLOC : REC_EV_ALLOC;
  for (r = R.list; r; r = r->next) {
    if (!r->live) continue;
    rec_stream_event_out(&r->st, &loc, ev, ptr, osize, res, nsize);
    rec_buf_tick(&r->st.out);
    if (r->st.out.err) session_kill(r);
  }
  return res;
}

/* The calls rec_alloc does not pass through: every call of an exact
** recording, the written events of a sampled one, and its unwritten calls
** that the stack walker's caches must see or that end a countdown short
** of the sampled byte (a stop: the flush interval's clock). Allocations
** have taken their bytes from the gap, except those of sizeof(lua_State). */
static __attribute__((noinline)) void *rec_alloc_slow(void *ptr, size_t osize, size_t nsize)
{
  LjmRecorder *r = R.sampled;
  RecSampler *sp = &sampler;
  void *res;
  int hit, tracked, stop;
  uint32_t g = rec_fork_gen_cheap();
  if (__builtin_expect(g != R.gen, 0)) {  /* a fork no handler saw: not ours to record */
    forked_child(g, 0);
    return R.orig(R.orig_ud, ptr, osize, nsize);
  }
  if (!r) {  /* the countdown is off; again, if exit() on another thread raced a subtraction */
    sp->gap = REC_SAMPLE_OFF;
    return rec_alloc_exact(ptr, osize, nsize);
  }
  if (thread_new) {
    thread_new = 0;
    rec_stack_thread_new(R.g);
  }
  tracked = ptr && rec_sample_has(sp, ptr);
  if (nsize && (ptr || nsize == sizeof(lua_State))) sp->gap -= (int64_t)nsize;
  stop = nsize && sp->gap <= 0 && sp->rest && rec_sample_stop(sp);
  hit = nsize && sp->gap <= 0;
  if (hit || tracked) return rec_alloc_sampled(r, ptr, osize, nsize, hit, tracked);
  if (R.sampled_ext) {
    if (ptr) rec_stack_skipped(R.g, ptr, osize, nsize);  /* a moved stack, a freed thread */
    else note_thread(ptr, nsize);
  }
  res = R.orig(R.orig_ud, ptr, osize, nsize);
  if (stop) {  /* hand the buffer over if the flush interval passed */
    rec_buf_clock(&r->st.out);
    if (__builtin_expect(r->st.out.err != 0, 0)) {
      session_kill(r);
      if (R.stacks_dirty) stacks_update();
    }
  }
  return res;
}

/* The wrapper. A sampled recording's unwritten calls pass straight
** through: an allocation costs a compare and a subtraction from the gap,
** a free two compares and a load from the sampler's filter. Everything
** else, exact recordings included, goes to rec_alloc_slow. Only tail
** calls: no stack frame (-momit-leaf-frame-pointer, BUILD). */
static void *rec_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  RecSampler *sp = &sampler;
  (void)ud;
  if (!ptr) {
    if (nsize != sizeof(lua_State) && __builtin_expect((sp->gap -= (int64_t)nsize) > 0, 1))
      return R.orig(R.orig_ud, ptr, osize, nsize);
  } else if (!nsize && osize != sizeof(lua_State) && !rec_sample_maybe(sp, ptr)) {
    return R.orig(R.orig_ud, ptr, osize, nsize);
  }
  return rec_alloc_slow(ptr, osize, nsize);
}

/* Writes the epilogue, and a compressed file's trailer once the writer
** thread is idle (rec_stream_end waits for it). */
static void stream_end(LjmRecorder *r)
{
  rec_stream_end(&r->st);
  if (r->z.kind != REC_Z_NONE && !r->st.out.err) {
    int e = rec_zout_end(&r->z);
    if (e) r->st.out.err = e;
  }
}

/* Ends every live stream; the wrapper stays but passes through. */
static void end_all(void)
{
  LjmRecorder *r;
  for (r = R.list; r; r = r->next) {
    if (r->live) {
      session_kill(r);
      stream_end(r);
      r->ended = 1;
      if (r->own_fd && r->fd >= 0) {
        close(r->fd);
        r->fd = -1;
      }
    }
  }
  stacks_update();
}

static void unwrap(lua_State *L)
{
  void *ud;
  if (R.wrapped && lua_getallocf(L, &ud) == rec_alloc) {
    lua_setallocf(L, R.orig, R.orig_ud);
    R.wrapped = 0;
  }
  /* Else someone wrapped our wrapper: it must stay, as a pass-through. */
}

/* "<name>: <why the stream failed>" for a message. */
static void failure_text(const LjmRecorder *r, int e, char *buf, size_t len)
{
  if (e == ECHILD)
    snprintf(buf, len, "%s: the recording stayed with the parent process (fork)", r->name);
  else if (e == ETIMEDOUT && r->fo.timed_out)
    snprintf(buf, len, "%s: the reader took no data for %.3g s (the write timeout): recording stopped",
             r->name, r->wtimeout_ms / 1000.0);
  else
    snprintf(buf, len, "%s: %s", r->name, strerror(e));
}

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

static void rec_atexit(void)
{
  int held = R_held();  /* exit() from a finalizer inside a start or stop: the lock is ours */
  if (!held) R_lock(NULL);
  end_all();
  report_failed();
  if (!held) R_unlock();
}

/* Whether fd is the file r's stream went to at its start (fd_known). */
static int is_stream_file(const LjmRecorder *r, int fd)
{
  struct stat st;
  return r->fd_known && !fstat(fd, &st) && st.st_dev == r->fd_dev && st.st_ino == r->fd_ino;
}

/* In a forked child (rec_fork.h): the recordings are the parent's. The
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

static void forked_child(uint32_t gen, int in_handler)
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
  R.stacks_dirty = 0;
  if (R.g) {
    unwrap(mainthread(R.g));
    if (!R.wrapped) R.g = NULL;  /* else a host's wrapper still calls ours */
  }
  R.gen = gen;
  atomic_flag_clear_explicit(&fork_busy, memory_order_release);
}

static void rec_atfork_child(void)
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

static void sentinel_ensure(lua_State *L)
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

/* -- Sinks --------------------------------------------------------------- */

/* Also called on the host's thread (a compressed file's trailer at stop
** or exit): SIGPIPE and SIGXFSZ are held off, so EPIPE and EFBIG come
** back as errors (rec_sig.h). */
static int fd_write(void *ud, const void *data, size_t len)
{
  LjmRecorder *r = ud;
  const char *p = data;
  RecSigGuard sg;
  int e;
  /* A host that closed the descriptor (a daemon closing every fd) may
  ** have opened a file of its own under the same number: never write
  ** into it. */
  if (r->fd_known && !is_stream_file(r, r->fd)) return EBADF;
  rec_sig_block(&sg);
  e = rec_fdout_write(&r->fo, p, len);
  rec_sig_restore(&sg);
  return e;
}

/* Notes what r->fd refers to, for fd_write's check, and how to write it. */
static void note_fd(LjmRecorder *r)
{
  struct stat st;
  rec_fdout_init(&r->fo, r->fd, r->wtimeout_ms);
  r->fd_known = !fstat(r->fd, &st);
  if (r->fd_known) {
    r->fd_dev = st.st_dev;
    r->fd_ino = st.st_ino;
  }
}

/* The stream's bytes, compressed first when the path asked for it. */
static int fd_sink(void *ud, const void *data, size_t len)
{
  LjmRecorder *r = ud;
  return r->z.kind != REC_Z_NONE ? rec_zout_write(&r->z, data, len) : fd_write(r, data, len);
}

static int cb_sink(void *ud, const void *data, size_t len)
{
  LjmRecorder *r = ud;
  int e = r->write(r->wud, data, len);
  return e;
}

/* -- Life cycle ---------------------------------------------------------- */

static LjmRecorder *session_new(const char *name)
{
  LjmRecorder *r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  rec_fork_arm();  /* from here on a fork of this process is told (rec_fork.h) */
  r->h.fl = &LJM_FLAVOUR_SYM;
  r->fd = -1;
  r->name = strdup(name);
  if (!r->name) {
    free(r);
    return NULL;
  }
  return r;
}

static void session_free(LjmRecorder *r)
{
  if (sampler_owner == r) {
    rec_sample_free(&sampler);
    sampler_owner = NULL;
  }
  rec_stream_free(&r->st);
  rec_zout_free(&r->z);
  rec_fdout_close(&r->fo);
  free(r->name);
  free(r);
}

/* Checks that come before touching the sink (rec_api.c has checked the
** VM's layout). */
static int pre_start(lua_State *L, LjmRecError *err)
{
  if (!L) return set_err(err, EINVAL, "%s", "no lua_State");
  if (R.g && R.g != G(L))
    return set_err(err, EBUSY, "%s", "another Lua state in this process is recording");
  if (R.sampled)
    return set_err(err, EBUSY, "%s", "a sampled recording of this Lua state is running");
  return 0;
}

/* Largest depth limit of the live extended sessions and of r. */
static uint32_t walk_depth(const LjmRecorder *r)
{
  const LjmRecorder *o;
  uint32_t d = r->depth;
  for (o = R.list; o; o = o->next)
    if (o->live && o->ext && o->depth > d) d = o->depth;
  return d;
}

/* Common part once the sink exists: buffer, symtab, wrapper. */
static LjmRecorder *start_session(lua_State *L, LjmRecorder *r, LjmRecError *err)
{
  global_State *g = G(L);
  stacks_update();
  if (rec_stream_init(&r->st, r->sample ? REC_BUF_SIZE_SAMPLED : REC_BUF_SIZE, r->write ? cb_sink : fd_sink, r) ||
      (r->ext && rec_ext_init(&r->st, r->depth))) {
    rec_stream_free(&r->st);
    set_err(err, ENOMEM, "%s", "out of memory");
    return NULL;
  }
  r->st.sample_rate = r->sample;
  if (r->ext) {
    if ((R.g && R.g != g) || rec_stack_start(L, walk_depth(r))) {
      rec_stream_free(&r->st);
      set_err(err, ENOMEM, "%s", "out of memory");
      R.stacks_dirty = 1;
      stacks_update();
      return NULL;
    }
  }
  /* Files get a background writer; a callback stays on the VM's thread
  ** (a host's writer need not be thread safe). So does a sampled stream:
  ** its bytes are few, and a process with a second thread pays for it in
  ** every system call and malloc (README, "Sampled recording"); the
  ** sampler's stops read the clock for its flush interval. */
  if (!r->write) {
    rec_buf_interval(&r->st.out, r->flush_ms);
    if (!r->sample) rec_buf_async(&r->st.out);
  }
  if (r->own_fd) {  /* truncate only now that nothing can fail any more */
    struct stat stt;
    if (!fstat(r->fd, &stt) && S_ISREG(stt.st_mode) && ftruncate(r->fd, 0)) {
      int e = errno;
      if (err) {
        err->code = e;
        snprintf(err->msg, sizeof(err->msg), "%s: %s", r->name, strerror(e));
      }
      rec_stream_free(&r->st);
      R.stacks_dirty = 1;
      stacks_update();
      return NULL;
    }
  }
  sentinel_ensure(L);
  rec_cname_scan(L);
  rec_attr_start(L);
  if (!R.atexit_done && atexit(rec_atexit) == 0) {
    pthread_atfork(NULL, NULL, rec_atfork_child);
    R.atexit_done = 1;
  }
  rec_stream_begin(&r->st, g);
  if (!R.wrapped) {
    void *ud;
    lua_Alloc cur = lua_getallocf(L, &ud);
    /* Our own wrapper, put back by a host that kept it from an earlier
    ** recording: it still wraps R.orig; wrapping it again would recurse. */
    if (cur != rec_alloc) {
      R.orig = cur;
      R.orig_ud = ud;
      lua_setallocf(L, rec_alloc, NULL);
    }
    R.wrapped = 1;
  }
  R.g = g;
  r->live = 1;
  R.nlive++;
  if (r->ext) R.nstacks++;
  if (r->sample) {  /* nothing can fail any more: the sampler is its */
    if (sampler_owner) rec_sample_free(&sampler);  /* a stopped session's, not freed yet */
    rec_sample_init(&sampler, r->sample, r->seed, !r->write && r->flush_ms ? REC_SAMPLE_STOP : 0);
    sampler_owner = r;
    R.sampled = r;
    R.sampled_ext = r->ext;
    thread_new = 0;
  }
  r->next = R.list;
  R.list = r;
  live_changed();
  if (r->st.out.err) session_kill(r);  /* the symtab did not fit the sink */
  stacks_update();
  return r;
}

/* Options: 0, or EINVAL with the reason. */
static int take_options(LjmRecorder *r, const LjmRecOptions *opt, LjmRecError *err)
{
  r->wtimeout_ms = LJM_REC_WRITE_TIMEOUT_MS;
  if (!opt) return 0;
  if (opt->write_timeout_ms == LJM_REC_WAIT_FOREVER)
    r->wtimeout_ms = REC_FDOUT_FOREVER;
  else if (opt->write_timeout_ms > REC_FLUSH_MS_MAX)
    return set_err(err, EINVAL, "write timeout must be at most %s (or LJM_REC_WAIT_FOREVER)", "1 day");
  else if (opt->write_timeout_ms)
    r->wtimeout_ms = opt->write_timeout_ms;
  if (opt->flush_ms > REC_FLUSH_MS_MAX)
    return set_err(err, EINVAL, "flush interval must be at most %s", "1 day");
  r->flush_ms = opt->flush_ms;
  if (opt->sample > REC_SAMPLE_MAX)
    return set_err(err, EINVAL, "sampling rate must be 1..%s bytes", "2^30");
  if (opt->seed && !opt->sample)
    return set_err(err, EINVAL, "%s", "a seed needs sampling");
  if (opt->sample && R.nlive)
    return set_err(err, EBUSY, "%s", "a sampled recording runs alone: another recording of this Lua state is running");
  r->sample = opt->sample;
  r->seed = opt->seed;
  if (!opt->stacks) {
    if (opt->stack_depth)
      return set_err(err, EINVAL, "%s", "a stack depth needs stacks");
    return 0;
  }
  if (opt->stack_depth > REC_STACK_DEPTH_MAX)
    return set_err(err, EINVAL, "stack depth must be 1..%s", "65535");
  r->ext = 1;
  r->depth = opt->stack_depth ? opt->stack_depth : REC_STACK_DEPTH_DEFAULT;
  return 0;
}

static int check_options(const LjmRecOptions *opt, LjmRecError *err)
{
  LjmRecorder tmp;
  memset(&tmp, 0, sizeof(tmp));
  return take_options(&tmp, opt, err);
}

/* -- Targets that are not a new output's to take --------------------------- */

/* Whether path is (after its links) the file a live recording writes,
** or the source of a Lua function running on L's stack (the script being
** run); EBUSY with err filled in, else 0. what: "snapshot", "recording".
** Called with R held. */
static int busy_target(lua_State *L, const char *path, const char *what, LjmRecError *err)
{
  struct stat st, ss;
  const LjmRecorder *r;
  lua_Debug ar;
  int level;
  if (stat(path, &st)) return 0;  /* created new: nothing to collide with */
  for (r = R.list; r; r = r->next) {
    int same = r->live && r->fd_known && r->fd_dev == st.st_dev && r->fd_ino == st.st_ino;
    if (same && S_ISREG(st.st_mode)) {
      if (err && !strcmp(what, "recording"))
        set_err(err, EBUSY, "%s: file is already being recorded to", path);
      else if (err) {
        err->code = EBUSY;
        snprintf(err->msg, sizeof(err->msg), "%s: is the file the recording %s writes: no %s into it",
                 path, r->name, what);
      }
      return EBUSY;
    }
  }
  if (!L || !S_ISREG(st.st_mode)) return 0;
  /* L's frames, then the main thread's (L may be a coroutine it resumed).
  ** Relative chunk names are taken in today's directory. */
  for (int t = 0; t < 2; t++) {
    lua_State *T = t ? mainthread(G(L)) : L;
    if (t && T == L) break;
    for (level = 0; level < 256 && lua_getstack(T, level, &ar); level++) {
      if (!lua_getinfo(T, "S", &ar) || !ar.source || ar.source[0] != '@') continue;
      if (!stat(ar.source + 1, &ss) && ss.st_dev == st.st_dev && ss.st_ino == st.st_ino) {
        if (err) {
          err->code = EBUSY;
          snprintf(err->msg, sizeof(err->msg), "%s: is the Lua source being run (%s): no %s into it",
                   path, ar.source + 1, what);
        }
        return EBUSY;
      }
    }
  }
  return 0;
}

REC_API int rec_core_busy_target(lua_State *L, const char *path, LjmRecError *err)
{
  int e, held = R_held();
  if (!held && R_lock(err)) return err ? err->code : EDEADLK;
  e = busy_target(L, path, "snapshot", err);
  if (!held) R_unlock();
  return e;
}

/* -- This flavour's entry points (RecFlavour) ------------------------------ */

static LjmRecorder *start_path_locked(lua_State *L, const char *path,
                                      const LjmRecOptions *opt, LjmRecError *err)
{
  LjmRecorder *r;
  if (pre_start(L, err) || check_options(opt, err)) return NULL;
  if (!path || !*path) {
    set_err(err, EINVAL, "%s", "empty path");
    return NULL;
  }
  if (busy_target(L, path, "recording", err)) return NULL;
  r = session_new(path);
  if (!r) {
    set_err(err, ENOMEM, "%s", "out of memory");
    return NULL;
  }
  take_options(r, opt, NULL);
  /* No O_TRUNC here: a start that fails must leave an existing file alone. */
  r->fd = rec_fd_off_std(rec_fdout_open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644, r->wtimeout_ms));
  if (r->fd < 0) {
    int e = errno;
    if (err) {
      err->code = e;
      if (e == ETIMEDOUT)
        snprintf(err->msg, sizeof(err->msg), "%s: a FIFO no reader opened within %.3g s (the write timeout)",
                 path, r->wtimeout_ms / 1000.0);
      else
        snprintf(err->msg, sizeof(err->msg), "%s: %s", path, strerror(e));
    }
    session_free(r);
    return NULL;
  }
  r->own_fd = 1;
  note_fd(r);
  {
    struct stat stt;
    LjmRecorder *o;
    if (!fstat(r->fd, &stt) && S_ISREG(stt.st_mode)) {
      r->dev = stt.st_dev;
      r->ino = stt.st_ino;
      for (o = R.list; o; o = o->next)
        if (o->live && o->ino == r->ino && o->dev == r->dev) {
          set_err(err, EBUSY, "%s: file is already being recorded to", path);
          close(r->fd);
          session_free(r);
          return NULL;
        }
    }
  }
  if (rec_zout_init(&r->z, rec_zout_kind(path), fd_write, r)) {
    set_err(err, ENOMEM, "%s", "out of memory");
    close(r->fd);
    session_free(r);
    return NULL;
  }
  if (!start_session(L, r, err)) {
    close(r->fd);
    session_free(r);
    return NULL;
  }
  return r;
}

static LjmRecorder *start_fd_locked(lua_State *L, int fd, const LjmRecOptions *opt,
                                    LjmRecError *err)
{
  LjmRecorder *r;
  char name[32];
  if (pre_start(L, err) || check_options(opt, err)) return NULL;
  if (fd < 0) {
    set_err(err, EBADF, "%s", "bad file descriptor");
    return NULL;
  }
  snprintf(name, sizeof(name), "<fd %d>", fd);
  r = session_new(name);
  if (!r) {
    set_err(err, ENOMEM, "%s", "out of memory");
    return NULL;
  }
  r->fd = fd;
  take_options(r, opt, NULL);
  note_fd(r);
  if (!start_session(L, r, err)) {
    session_free(r);
    return NULL;
  }
  return r;
}

static LjmRecorder *start_writer_locked(lua_State *L, LjmRecWriteFn write, void *ud,
                                        const LjmRecOptions *opt, LjmRecError *err)
{
  LjmRecorder *r;
  if (pre_start(L, err) || check_options(opt, err)) return NULL;
  if (!write) {
    set_err(err, EINVAL, "%s", "no writer");
    return NULL;
  }
  r = session_new("<writer>");
  if (!r) {
    set_err(err, ENOMEM, "%s", "out of memory");
    return NULL;
  }
  r->write = write;
  r->wud = ud;
  take_options(r, opt, NULL);
  if (!start_session(L, r, err)) {
    session_free(r);
    return NULL;
  }
  return r;
}

static int stop_locked(LjmRecorder *r, LjmRecError *err)
{
  LjmRecorder **pp;
  int e;
  if (!r) return set_err(err, EINVAL, "%s", "profiler is not running");
  if (r->live) {
    session_kill(r);
    stream_end(r);
    r->ended = 1;
  }
  e = r->st.out.err;
  if (r->own_fd && r->fd >= 0) {
    if (close(r->fd) && !e) e = errno;
    r->fd = -1;
  }
  for (pp = &R.list; *pp; pp = &(*pp)->next)
    if (*pp == r) {
      *pp = r->next;
      break;
    }
  stacks_update();
  if (!R.list && R.g) {  /* last session: put the allocator back */
    unwrap(mainthread(R.g));
    if (!R.wrapped) R.g = NULL;
  }
  if (e && err) {
    err->code = e;
    failure_text(r, e, err->msg, sizeof(err->msg));
  }
  session_free(r);
  return e;
}

static LjmRecorder *start_path(lua_State *L, const char *path, const LjmRecOptions *opt,
                               LjmRecError *err)
{
  LjmRecorder *r;
  if (R_lock(err)) return NULL;
  r = start_path_locked(L, path, opt, err);
  R_unlock();
  return r;
}

static LjmRecorder *start_fd(lua_State *L, int fd, const LjmRecOptions *opt,
                             LjmRecError *err)
{
  LjmRecorder *r;
  if (R_lock(err)) return NULL;
  r = start_fd_locked(L, fd, opt, err);
  R_unlock();
  return r;
}

static LjmRecorder *start_writer(lua_State *L, LjmRecWriteFn write, void *ud,
                                 const LjmRecOptions *opt, LjmRecError *err)
{
  LjmRecorder *r;
  if (R_lock(err)) return NULL;
  r = start_writer_locked(L, write, ud, opt, err);
  R_unlock();
  return r;
}

static int stop(LjmRecorder *r, LjmRecError *err)
{
  int e;
  if ((e = R_lock(err)) != 0) return e;
  e = stop_locked(r, err);
  R_unlock();
  return e;
}

/* Also false once the writer thread failed, before the next hand-over
** notices it, so a host that polls learns of a full disk at once. A
** recording without a writer thread (a sampled one) hands its buffer over
** here too once the flush interval has passed: a host that polls (the
** nginx example, every 0.5 s) keeps the interval in time while it
** allocates little. */
static int is_running(const LjmRecorder *r)
{
  fork_check();
  if (r && r->live) rec_buf_clock((RecBuf *)&r->st.out);
  return r && r->live && !rec_buf_failed((RecBuf *)&r->st.out);
}

static uint64_t bytes(const LjmRecorder *r)
{
  return r ? r->st.out.written : 0;
}

#if LJ_GC64
#define REC_GC64 ", GC64"
#else
#define REC_GC64 ", not GC64"
#endif

static uint64_t map_bytes(const RecMap *m)
{
  return m->e ? (uint64_t)(m->mask + 1) * sizeof(*m->e) : 0;
}

/* Bytes of [p, p + len) in RAM (mincore), len when it cannot tell. */
static uint64_t resident_bytes(const uint8_t *p, size_t len)
{
  long pg = sysconf(_SC_PAGESIZE);
  uintptr_t a, e;
  uint64_t n = 0;
  unsigned char vec[1024];
  if (pg <= 0 || !len) return len;
  a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
  e = (uintptr_t)p + len;
  while (a < e) {
    size_t pages = (size_t)((e - a + (uintptr_t)pg - 1) / (uintptr_t)pg), i;
    if (pages > sizeof(vec)) pages = sizeof(vec);
    if (mincore((void *)a, pages * (size_t)pg, vec) != 0) return len;
    for (i = 0; i < pages; i++) n += (vec[i] & 1) ? (uint64_t)pg : 0;
    a += pages * (size_t)pg;
  }
  return n < len ? n : len;
}

REC_API uint64_t rec_core_own_bytes(uint64_t *resident)
{
  uint64_t n = 0, other = 0;
  int held = R_held();
  const LjmRecorder *r;
  if (!held) R_lock(NULL);
  *resident = 0;
  for (r = R.list; r; r = r->next) {
    const RecBuf *b = &r->st.out;
    const RecExt *x = r->st.ext;
    size_t len = b->buf ? (size_t)(b->end - b->buf) : 0;
    if (b->buf) *resident += resident_bytes(b->buf, len);
    if (b->spare) *resident += resident_bytes(b->spare, len);
    n += (uint64_t)len * (b->spare ? 2 : 1);
    other += map_bytes(&r->st.protos) + map_bytes(&r->st.traces) + map_bytes(&r->st.cfuncs);
    if (x)
      other += (x->tab ? (uint64_t)(x->mask + 1) * sizeof(*x->tab) : 0) +
               (uint64_t)x->nid_cap * sizeof(*x->nid) + map_bytes(&x->dnames);
  }
  other += rec_csym_bytes() + rec_cname_bytes();  /* their writers hold the lock too */
  if (!held) R_unlock();
  *resident += other;
  return n + other;
}

const RecFlavour LJM_FLAVOUR_SYM = {
  LJM_FLAVOUR_NAME,
  LJM_FLAVOUR_LABEL " (" LUAJIT_VERSION REC_GC64 ")",
  LJ_GC64,
  rec_check,
  start_path,
  start_fd,
  start_writer,
  stop,
  is_running,
  bytes,
  rec_snap_write,
};
