/* ljm_recorder.h -- record ljm memory profiles of a stock LuaJIT 2.1 VM
** (any tree the recorder is built for, doc/luajit.md: the build that
** matches the VM's layouts is chosen when a recording starts).
**
** The recorder wraps the VM's allocator (lua_setallocf) and writes the
** standard stream ("ljs" v3 symbol table, then "ljm" v3 events) that
** Tarantool's misc.memprof writes, with each allocation charged to the
** Lua line, C function, trace or VM-internal work that caused it. See
** doc/recording.md for the rules.
**
** Usage from a host program:
**
**   LjmRecError err;
**   LjmRecorder *r = ljm_recorder_start_path(L, "out.ljm", &err);
**   if (!r) fprintf(stderr, "%s\n", err.msg);
**   ... run Lua code ...
**   if (ljm_recorder_stop(r, &err)) fprintf(stderr, "%s\n", err.msg);
**
** With options (the _ex functions), a recording can write the extended
** stream of decoder/EXTENSION.md instead: the same events, plus the call
** stack of each event, time marks and RSS samples.
**
**   LjmRecOptions opt = {.stacks = 1};   (default depth)
**   LjmRecorder *r = ljm_recorder_start_path_ex(L, "out.ljm", &opt, &err);
**
** {.time = 1} writes time marks and RSS samples without stacks: what
** ljm growth needs, without the cost of walking stacks.
**
** A sampled recording (opt.sample = 512 * 1024) writes about one
** allocation per 512 KiB allocated, and the frees and reallocations of
** those blocks only: cheap enough to leave on, and every reader scales
** its figures back to estimates. Its stream has time marks.
**
** Several recordings may run at once on the same VM (each stream gets
** every event); only one VM per process can be recorded at a time: a
** start on another lua_State fails with EBUSY ("another Lua state in this
** process is recording"), from any thread. Call a handle's functions from
** the thread that runs its VM. In a forked child (any fork: glibc's, a
** raw system call) the parent's recordings are dropped: their handles
** report ECHILD at stop and any lua_State may start anew. lua_close() and
** exit() end every running recording with a complete stream; the handle
** must still be passed to ljm_recorder_stop() to free it.
*/
#ifndef LJM_RECORDER_H
#define LJM_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LjmRecorder LjmRecorder;

/* Error report: an errno value and a one-line message. */
typedef struct LjmRecError {
  int code;          /* errno value (EINVAL for misuse, ENOTSUP for a
                        LuaJIT build the recorder does not match) */
  char msg[1024];     /* e.g. "out.ljm: Permission denied" */
} LjmRecError;

/* Caller-supplied sink: must take all of data[0..len) and return 0, or
** return an errno value, which stops the recording. Called with whole
** buffers (8 MiB) and at stop. */
typedef int (*LjmRecWriteFn)(void *ud, const void *data, size_t len);

/* What a recording writes (all zero: the standard stream). */
typedef struct LjmRecOptions {
  int stacks;             /* nonzero: the extended stream (call stacks,
                             time marks, RSS samples) */
  unsigned stack_depth;   /* innermost frames kept per stack, 1..65535;
                             0: LJM_REC_STACK_DEPTH (needs stacks) */
  unsigned flush_ms;      /* file output: hand the buffer to the writer at
                             the first event after each interval of this
                             many ms (at most a day), so a killed process
                             loses at most that much; 0: when the buffer
                             fills (8 MiB; sampled: 256 KiB, see sample) */
  uint64_t sample;        /* nonzero: a sampled recording, one allocated
                             byte in this many (1..2^30) on average picks
                             the allocation that holds it (decoder/
                             EXTENSION.md, "Sampling"); it runs alone on
                             its VM (EBUSY beside another recording) and
                             makes no thread: its file is written on the
                             VM's thread, flush_ms at the first event, 64
                             KiB allocated or ljm_recorder_is_running
                             after the interval */
  uint64_t seed;          /* sampled: seeds the random gaps, so the same
                             run samples the same allocations; 0: a seed
                             from the clock */
  unsigned write_timeout_ms;  /* a pipe, FIFO, socket or terminal whose
                             reader takes no byte for this long stops the
                             recording (ETIMEDOUT), so a stalled reader
                             never stalls the host; opening a FIFO waits
                             as long for its reader. 0:
                             LJM_REC_WRITE_TIMEOUT_MS; at most a day, or
                             LJM_REC_WAIT_FOREVER. Regular files: none */
  int time;               /* nonzero: time marks and RSS samples without
                             stacks (an extended stream, flag TIME), for
                             ljm growth; stacks and sample imply them */
} LjmRecOptions;

#define LJM_REC_STACK_DEPTH 256
#define LJM_REC_WRITE_TIMEOUT_MS 10000u
#define LJM_REC_WAIT_FOREVER 0xffffffffu

/* Starts recording L's VM into a file (created with mode 0644). The file
** is truncated only once the start has succeeded. A path ending in ".gz"
** or ".zst" is compressed on the writer thread (a sampled recording's on
** the VM's thread), each buffer ending in a
** flush point (base/compress.h). A file being recorded to, or the source of
** a Lua function running on L, is refused (EBUSY). NULL on failure. */
LjmRecorder *ljm_recorder_start_path(lua_State *L, const char *path,
                                     LjmRecError *err);
/* Starts recording into an open file descriptor (not closed at stop). */
LjmRecorder *ljm_recorder_start_fd(lua_State *L, int fd, LjmRecError *err);
/* Starts recording into a writer callback. */
LjmRecorder *ljm_recorder_start_writer(lua_State *L, LjmRecWriteFn write,
                                       void *ud, LjmRecError *err);

/* The same three with options (opt NULL: as without). Bad options fail
** with EINVAL before anything is opened. */
LjmRecorder *ljm_recorder_start_path_ex(lua_State *L, const char *path,
                                        const LjmRecOptions *opt, LjmRecError *err);
LjmRecorder *ljm_recorder_start_fd_ex(lua_State *L, int fd, const LjmRecOptions *opt,
                                      LjmRecError *err);
LjmRecorder *ljm_recorder_start_writer_ex(lua_State *L, LjmRecWriteFn write, void *ud,
                                          const LjmRecOptions *opt, LjmRecError *err);

/* Ends the stream (final 0x80 byte), flushes, closes an owned file and
** frees r. Returns 0, or an errno value when a write failed at any time
** (the stream then stops where the failure happened). NULL r: EINVAL.
** Called from inside a start or stop on the same thread (a finalizer run by
** the GC step of one of their Lua calls), this and the start functions do
** nothing and fail with EDEADLK: r stays valid and recording. */
int ljm_recorder_stop(LjmRecorder *r, LjmRecError *err);

/* If the process exits (exit(), os.exit()) before r is stopped and its
** stream failed, the exit handler writes one line to stderr: prefix, then
** "<path>: <strerror>". prefix is kept, not copied; NULL: no report. */
void ljm_recorder_report_at_exit(LjmRecorder *r, const char *prefix);

/* 1 while events are being recorded; 0 after a write error, lua_close()
** or exit() ended the stream. A recording to a file with flush_ms also
** hands its buffered events over here once flush_ms has passed, so that a
** host that polls and allocates nothing (an idle server) keeps its file up
** to date, and a recording with time marks writes one here when one is due
** (its stream then ends at the last poll): call it on the VM's thread. */
int ljm_recorder_is_running(const LjmRecorder *r);

/* Bytes handed to the sink so far. */
uint64_t ljm_recorder_bytes(const LjmRecorder *r);

/* Checks that the VM of L matches the internals of one of the LuaJIT
** builds the recorder was compiled for (Debian's luajit and OpenResty's
** luajit2 by default); 0 if it does, else ENOTSUP with each one's reason. */
int ljm_recorder_check(lua_State *L, LjmRecError *err);

/* Writes a heap snapshot of L's VM to path (decoder/ljh_decoder.h): every
** object reachable from the roots with its type, size, label and
** references. Reads the heap only (no allocation through the VM, no GC
** step); works with or without recordings running. 0, or an errno value
** with err filled in; path is replaced only by a complete snapshot. A
** symbolic link is followed (its target is written); a path that is not a
** regular file (device, FIFO, directory, socket) is refused, and so is
** (EBUSY) the file of a running recording or the source of a Lua function
** running on L. */
int ljm_recorder_snapshot(lua_State *L, const char *path, LjmRecError *err);

/* The build that matches L's VM, e.g. "Debian 12 luajit2 2.1-20230119-1
** (LuaJIT 2.1.0-beta3, GC64)"; NULL if none does. */
const char *ljm_recorder_build(lua_State *L);

/* Labels (doc/labels.md): key=value pairs on a coroutine, carried by every
** allocation it makes into extended streams (stacks, time or sampled) while
** such a recording of its VM runs; a coroutine created while labels are
** set starts with a copy. Not kept while none runs; the last one's end
** forgets them. Sets key (1..63 bytes; longer is cut) on coroutine L to
** value (at most 127 bytes, cut; NULL removes the key). Returns 0, ENOENT
** when no recording of L's VM keeps labels (nothing kept), EINVAL for an
** empty key, E2BIG past 16 labels on L, ENOMEM. */
int ljm_recorder_label(lua_State *L, const char *key, size_t klen, const char *value,
                       size_t vlen, LjmRecError *err);
/* Calls fn with each label of coroutine L, in key order (on a copy: fn
** may call the recorder); returns how many. A write callback
** (LjmRecWriteFn) must not call the recorder. */
typedef void (*LjmRecLabelFn)(void *ud, const char *key, size_t klen, const char *value,
                              size_t vlen);
int ljm_recorder_labels(lua_State *L, LjmRecLabelFn fn, void *ud);
/* Adds n labels to coroutine L in one change (what rec.with_labels does
** around its function); *saved gets what ljm_recorder_labels_pop puts back.
** Returns as ljm_recorder_label does; on an error L's labels are as before. */
typedef struct LjmRecLabel {
  const char *key, *value;
  size_t klen, vlen;
} LjmRecLabel;
int ljm_recorder_labels_push(lua_State *L, const LjmRecLabel *l, size_t n, uint64_t *saved,
                             LjmRecError *err);
/* Gives coroutine L the labels it had before the push that gave saved
** (none when the recording that kept them has ended since). 0, ENOENT. */
int ljm_recorder_labels_pop(lua_State *L, uint64_t saved, LjmRecError *err);

/* Parses a byte count for LjmRecOptions.sample: digits with an optional
** suffix k/K (KiB), m/M (MiB) or g/G (GiB), e.g. "512k". 0, or EINVAL
** (not such a count, or above 2^53). */
int ljm_recorder_parse_bytes(const char *s, uint64_t *bytes);

/* The i-th LuaJIT build compiled in (from 0), in the order they are tried;
** NULL past the last. */
const char *ljm_recorder_builds(size_t i);

#ifdef __cplusplus
}
#endif

#endif
