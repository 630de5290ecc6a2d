/* session.h -- the capture layer's shared state: sessions and the VM they record.
**
** One VM at a time is recorded (its global_State is remembered); any
** number of sessions may write streams of it. The allocator wrapper
** (alloc_wrapper.c) computes the location once per allocator call, before
** the real allocator runs (so the frames it reads are all still valid),
** and appends the event to every live stream. A stream whose sink fails
** (sinks.c) stops receiving events; the wrapper is removed when the last
** session stops (sessions.c). lua_close(), exit() and forks end the
** recordings without a stop (host_events.c).
**
** Extended streams (call stacks, time, RSS: stream/extension.h) take the
** stack of each allocator call from the walker (vm/stack_walk.h), which
** runs once per call while at least one of them is live, whatever the
** number of streams.
**
** The public functions of ljm_recorder.h are api/c_api.c's: they find the
** flavour whose layouts the VM has and call its table (flavour_unit.c).
** These files are part of that unit: what they share is static (vm/unit.h).
*/
#ifndef REC_SESSION_H
#define REC_SESSION_H

#include "recorder/vm/unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "recorder/base/compress.h"
#include "recorder/base/fd_out.h"
#include "recorder/base/fork_mark.h"
#include "recorder/capture/flavour.h"
#include "recorder/capture/sampler.h"
#include "recorder/ljm_recorder.h"
#include "recorder/stream/extension.h"
#include "recorder/stream/standard.h"

/* This flavour's table (flavour_unit.c). */
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
  RecFdOut fo;           /* fd's writes, bounded in time (base/fd_out.h) */
  uint32_t wtimeout_ms;  /* the write timeout (REC_FDOUT_FOREVER: none) */
  LjmRecWriteFn write;   /* callback sink */
  void *wud;             /* its argument */
  char *name;            /* path or "<fd N>" for messages */
  dev_t dev;             /* file identity, to refuse a second stream */
  ino_t ino;             /* into the same file (both 0 if unknown) */
  int ext;               /* a stream with stacks (and time marks, RSS) */
  int timed;             /* a stream with time marks and RSS samples: with
                            stacks, sampled or asked for (st.ext set) */
  uint32_t flush_ms;     /* flush interval (files), 0: when a buffer fills */
  uint32_t depth;        /* its stack depth limit */
  uint64_t sample;       /* sampled recording: its rate, else 0 */
  uint64_t seed;
  LjmRecorder *next;     /* next session of the VM */
};

typedef struct RecState {
  global_State *g;       /* the recorded VM, NULL if none */
  lua_Alloc orig;        /* its allocator before wrapping */
  void *orig_ud;
  int wrapped;           /* our wrapper is installed */
  LjmRecorder *list;     /* sessions of g (live or ended) */
  int nlive;             /* live sessions */
  LjmRecorder *one;      /* the live session if there is exactly one */
  int atexit_done;       /* atexit handler registered */
  int nstacks;           /* live sessions with stacks */
  int next;              /* live extended sessions: with stacks or time
                            marks (the exact wrapper's slow path) */
  int stacks_dirty;      /* nstacks or their limits changed */
  LjmRecorder *sampled;  /* the live sampled session (then the only one) */
  int sampled_ext;       /* ... and it records stacks */
  uint32_t gen;          /* the fork generation R is of (base/fork_mark.h) */
} RecState;

static RecState R;

/* The sampled session's gaps and blocks (alloc_wrapper.c). */
static RecSampler sampler;
static LjmRecorder *sampler_owner;
static int thread_new;

/* Guards R against lua_States of other threads: a start, a stop, lua_close
** and exit() take it. The allocator wrapper does not: only the recorded
** VM's thread runs it, and that thread changes R only under the lock. */
static pthread_mutex_t R_mu;
/* The thread that holds R_mu (sessions.c). */
static _Atomic uintptr_t R_owner;

/* sessions.c: errors, the lock, stream endings. */
REC_API int set_err(LjmRecError *err, int code, const char *fmt, const char *arg);
REC_API int R_held(void);
REC_API int R_lock(LjmRecError *err);
REC_API void R_unlock(void);
REC_API void stream_end(LjmRecorder *r);
REC_API void end_all(void);

/* alloc_wrapper.c: the wrapper, put on and taken off the VM. */
REC_API void live_changed(void);
REC_API void session_kill(LjmRecorder *r);
REC_API void stacks_update(void);
REC_API void wrap(lua_State *L, int sampled);
REC_API void unwrap(lua_State *L);

/* sinks.c: where a stream's bytes go. */
REC_API int is_stream_file(const LjmRecorder *r, int fd);
REC_API void failure_text(const LjmRecorder *r, int e, char *buf, size_t len);
REC_API int fd_write(void *ud, const void *data, size_t len);
REC_API void note_fd(LjmRecorder *r);
REC_API int fd_sink(void *ud, const void *data, size_t len);
REC_API int cb_sink(void *ud, const void *data, size_t len);

/* host_events.c: lua_close(), exit() and forks. */
REC_API void forked_child(uint32_t gen, int in_handler);
REC_API void rec_atexit(void);
REC_API void rec_atfork_child(void);
REC_API void sentinel_ensure(lua_State *L);

/* options.c */
REC_API int take_options(LjmRecorder *r, const LjmRecOptions *opt, LjmRecError *err);
REC_API int check_options(const LjmRecOptions *opt, LjmRecError *err);

/* targets.c: outputs that are not a new output's to take; snapshots. */
REC_API int busy_target(lua_State *L, const char *path, const char *what, LjmRecError *err);
REC_API int snapshot(lua_State *L, const char *path, LjmRecError *err);

/* own_memory.c */
REC_API uint64_t own_bytes(uint64_t *resident);

/* The fork check of an API call (base/fork_mark.h). */
static inline void fork_check(void)
{
  uint32_t g = rec_fork_gen();
  if (__builtin_expect(g != R.gen, 0)) forked_child(g, 0);
}

#endif
