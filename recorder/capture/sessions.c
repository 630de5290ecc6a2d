/* sessions.c -- recording sessions: start, stop, the lock that guards them. */
#include "recorder/capture/session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/base/out_file.h"
#include "recorder/base/path_pattern.h"
#include "recorder/vm/attribution.h"
#include "recorder/vm/cfunc_names.h"

static pthread_mutex_t R_mu = PTHREAD_MUTEX_INITIALIZER;

/* -- Errors -------------------------------------------------------------- */

REC_API int set_err(LjmRecError *err, int code, const char *fmt, const char *arg)
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

REC_API int R_held(void)
{
  return atomic_load_explicit(&R_owner, memory_order_relaxed) == (uintptr_t)pthread_self();
}

REC_API int R_lock(LjmRecError *err)
{
  fork_check();
  if (R_held())
    return set_err(err, EDEADLK, "%s", "the recorder is busy: called from a finalizer that ran "
                                       "inside a start or stop of a recording");
  pthread_mutex_lock(&R_mu);
  atomic_store_explicit(&R_owner, (uintptr_t)pthread_self(), memory_order_relaxed);
  return 0;
}

REC_API void R_unlock(void)
{
  atomic_store_explicit(&R_owner, 0, memory_order_relaxed);
  pthread_mutex_unlock(&R_mu);
}

/* Writes the epilogue, and a compressed file's trailer once the writer
** thread is idle (rec_stream_end waits for it). */
REC_API void stream_end(LjmRecorder *r)
{
  rec_stream_end(&r->st);
  if (r->z.kind != REC_Z_NONE && !r->st.out.err) {
    int e = rec_zout_end(&r->z);
    if (e) r->st.out.err = e;
  }
}

/* Ends every live stream; the wrapper stays but passes through. */
REC_API void end_all(void)
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

/* -- Life cycle ---------------------------------------------------------- */

static LjmRecorder *session_new(const char *name)
{
  LjmRecorder *r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  rec_fork_arm();  /* from here on a fork of this process is told (base/fork_mark.h) */
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

/* Checks that come before touching the sink (api/c_api.c has checked the
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
      (r->timed && rec_ext_init(&r->st, r->ext ? r->depth : 0))) {
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
  wrap(L, r->sample != 0);
  R.g = g;
  r->live = 1;
  R.nlive++;
  if (r->ext) R.nstacks++;
  if (r->timed) {
    labels_gc();  /* a past recording's, before this one keeps new ones */
    R.next++;
  }
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

/* -- This flavour's entry points (RecFlavour) ------------------------------ */

static LjmRecorder *start_path_locked(lua_State *L, const char *pattern,
                                      const LjmRecOptions *opt, LjmRecError *err)
{
  LjmRecorder *r;
  char path[PATH_MAX];
  const char *why;
  int pe;
  if (pre_start(L, err) || check_options(opt, err)) return NULL;
  if (!pattern || !*pattern) {
    set_err(err, EINVAL, "%s", "empty path");
    return NULL;
  }
  if ((pe = rec_path_expand(pattern, path, sizeof(path), &why))) {  /* %p, %t, %e */
    if (err) {
      err->code = pe;
      snprintf(err->msg, sizeof(err->msg), "%s: %s", pattern, why);
    }
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

REC_API LjmRecorder *start_path(lua_State *L, const char *path, const LjmRecOptions *opt,
                               LjmRecError *err)
{
  LjmRecorder *r;
  if (R_lock(err)) return NULL;
  r = start_path_locked(L, path, opt, err);
  R_unlock();
  return r;
}

REC_API LjmRecorder *start_fd(lua_State *L, int fd, const LjmRecOptions *opt,
                             LjmRecError *err)
{
  LjmRecorder *r;
  if (R_lock(err)) return NULL;
  r = start_fd_locked(L, fd, opt, err);
  R_unlock();
  return r;
}

REC_API LjmRecorder *start_writer(lua_State *L, LjmRecWriteFn write, void *ud,
                                 const LjmRecOptions *opt, LjmRecError *err)
{
  LjmRecorder *r;
  if (R_lock(err)) return NULL;
  r = start_writer_locked(L, write, ud, opt, err);
  R_unlock();
  return r;
}

REC_API int stop(LjmRecorder *r, LjmRecError *err)
{
  int e;
  if ((e = R_lock(err)) != 0) return e;
  e = stop_locked(r, err);
  R_unlock();
  return e;
}

/* Also false once the writer thread failed, before the next hand-over
** notices it, so a host that polls learns of a full disk at once. A
** recording with a flush interval hands its buffer over here too once the
** interval has passed: a host that polls (the nginx example, every 0.5 s)
** keeps the interval in time while it allocates little (sampled) or
** nothing (idle). A stream with time marks gets one here when one is due,
** so that an idle host's stream ends at its last poll, not at its last
** event: "the last 30 s" of it (--from -30s) are the last 30 s. */
REC_API int is_running(const LjmRecorder *r)
{
  fork_check();
  if (r && r->live) {
    LjmRecorder *w = (LjmRecorder *)r;  /* the VM's thread: the buffer is ours */
    if (w->timed) {
      if (type_block) types_settle();  /* the last event's type before a mark */
      rec_ext_tick(&w->st);
    }
    rec_buf_clock(&w->st.out);
  }
  return r && r->live && !rec_buf_failed((RecBuf *)&r->st.out);
}

REC_API uint64_t bytes(const LjmRecorder *r)
{
  return r ? r->st.out.written : 0;
}
