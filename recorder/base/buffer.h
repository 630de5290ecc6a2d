/* buffer.h -- fixed-size output buffer of the recorder.
**
** Events are appended into one large buffer that is handed to the sink in
** a single call when it fills up (and at the end), like the reference's
** 8 MiB buffered writer. The buffer never comes from the Lua allocator.
** After the first sink error the buffer turns into a sink hole: appends
** are discarded, and the error is kept for ljm_recorder_stop().
**
** With a background writer (rec_buf_async) there are two buffers: a full
** one goes to a writer thread while the VM fills the other, so the copy
** into the kernel overlaps with the program instead of adding to it. The
** sink is then called from that thread, one buffer at a time, in order.
** A forked child has no such thread: every hand-over checks for a fork
** first (base/fork_mark.h) and the child's buffer fails with ECHILD instead.
**
** A flush interval (rec_buf_interval) bounds how long events may wait in a
** buffer that does not fill: the writer thread wakes up every interval and
** raises 'due'; the next event hands the buffer over (the VM's thread is
** the only one that touches the buffer being filled). A synchronous
** buffer has no thread to wake it: its owner calls rec_buf_clock now and
** then, which reads the clock. A VM that makes no events (an idle server)
** has no next event: rec_buf_clock also hands an asynchronous buffer over
** once 'due' is raised, if it holds anything.
*/
#ifndef REC_BUF_H
#define REC_BUF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Writes all of data[0..len); returns 0 or an errno value. */
typedef int (*RecSinkFn)(void *ud, const void *data, size_t len);

typedef struct RecBuf {
  uint8_t *p;        /* next free byte */
  uint8_t *end;      /* end of the buffer */
  uint8_t *buf;      /* start of the buffer */
  RecSinkFn sink;    /* where full buffers go */
  void *ud;          /* sink argument */
  int err;           /* first sink error (errno), 0 while healthy */
  uint64_t written;  /* bytes accepted by the sink */
  /* Background writer (all below only used when async is set). */
  int async;         /* a writer thread owns 'spare' while it writes */
  uint8_t *spare;    /* the other buffer */
  pthread_t th;      /* writer thread */
  pthread_mutex_t mu;  /* guards the fields below */
  pthread_cond_t cv;   /* signals job handed over / job done */
  const uint8_t *job;  /* buffer being written, NULL when idle */
  size_t joblen;
  int werr;          /* writer's first error */
  uint64_t wdone;    /* bytes the writer got through */
  int quit;          /* writer should exit when idle */
  uint32_t interval_ms;  /* flush interval, 0: none */
  atomic_int due;    /* the interval has passed: flush at the next event */
  uint64_t last_ns;  /* synchronous: the last hand-over (rec_buf_clock) */
  uint32_t gen;      /* the fork generation it was made in (base/fork_mark.h) */
} RecBuf;

/* Largest event without strings: header, loc (2 ULEBs), 4 ULEBs. */
#define REC_EVENT_MAX 64
/* Default buffer size, the same as the reference writer's. */
#define REC_BUF_SIZE (8u << 20)
/* A sampled recording's: its events are few (mapping 2 x 8 MiB of buffers
** would cost more than the events of a short run). */
#define REC_BUF_SIZE_SAMPLED (256u << 10)

/* Allocates the buffer (malloc); returns 0 or ENOMEM. */
int rec_buf_init(RecBuf *b, size_t size, RecSinkFn sink, void *ud);
/* Adds the second buffer and the writer thread; 0 or an errno value
** (the buffer then stays synchronous). */
int rec_buf_async(RecBuf *b);
/* Sets the flush interval (before rec_buf_async; 0: flush only when a
** buffer fills). */
void rec_buf_interval(RecBuf *b, uint32_t ms);
/* A buffer with a flush interval: hands what it holds over if the
** interval has passed since the last time it did (a synchronous buffer
** reads the clock; an asynchronous one looks at 'due'). On the VM's thread. */
void rec_buf_clock(RecBuf *b);
/* Stops the writer thread (after the pending write) and releases the
** buffers; does not flush. */
void rec_buf_free(RecBuf *b);
/* In a forked child (base/fork_mark.h): forgets the writer thread, which stayed
** in the parent, without touching its mutex (it may have been held at the
** fork), and makes the buffer a sink hole failed with ECHILD. drop: also
** frees the child's copies of the buffers (only where nothing writes into
** them any more). rec_buf_flush, _sync, _failed and _free call it
** themselves when they find the process forked. */
void rec_buf_forked(RecBuf *b, int drop);
/* Hands the buffered bytes to the sink; returns the sticky error (as far
** as known: an asynchronous write may still fail later). */
int rec_buf_flush(RecBuf *b);
/* Flushes and waits until everything has been written; returns the
** sticky error. */
int rec_buf_sync(RecBuf *b);
/* Nonzero once a write failed, also one of the writer thread that the
** VM's thread has not taken over yet. */
int rec_buf_failed(RecBuf *b);
/* After an event: hands the buffer over if the flush interval has passed. */
static inline void rec_buf_tick(RecBuf *b)
{
  if (__builtin_expect(atomic_load_explicit(&b->due, memory_order_relaxed), 0)) {
    atomic_store_explicit(&b->due, 0, memory_order_relaxed);
    rec_buf_flush(b);
  }
}
/* Appends a length-prefixed string, flushing as often as needed. */
void rec_buf_str(RecBuf *b, const char *s, size_t len);
/* Appends len bytes as they are, flushing as often as needed. */
void rec_buf_raw(RecBuf *b, const char *s, size_t len);

/* Makes room for n (<= REC_EVENT_MAX) bytes. */
static inline void rec_buf_need(RecBuf *b, size_t n)
{
  if (__builtin_expect((size_t)(b->end - b->p) < n, 0)) rec_buf_flush(b);
}

static inline void rec_buf_byte(RecBuf *b, uint8_t v)
{
  *b->p++ = v;
}

/* ULEB128 of 0 < v < 2^56 at p, in 1 to 8 bytes, without a branch: the
** 7-bit groups spread over bytes in three halving steps, the continuation
** bits of all but the last used byte set, 8 bytes stored (little-endian)
** and n of them kept. The caller made room for 8 bytes. */
static inline uint8_t *rec_uleb_put56(uint8_t *p, uint64_t v)
{
  static const uint8_t nbytes[64] = {  /* by leading zeros of v */
    10, 9, 9, 9, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7,
    6, 6, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4,
    3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1};
  uint64_t x = v;
  unsigned n = nbytes[__builtin_clzll(v)];
  x = (x & 0x000000000fffffffull) | ((x & 0x00fffffff0000000ull) << 4);
  x = (x & 0x00003fff00003fffull) | ((x & 0x0fffc0000fffc000ull) << 2);
  x = (x & 0x007f007f007f007full) | ((x & 0x3f803f803f803f80ull) << 1);
  x |= 0x0080808080808080ull >> (8 * (8 - n));  /* n - 1 bits: a shift of 0 to 56 */
  memcpy(p, &x, 8);
  return p + n;
}

/* Minimal ULEB128 at p, at most 10 bytes; returns the end. The caller
** made room; the fast path stores 8 bytes at once (REC_EVENT_MAX leaves
** room for that). */
static inline uint8_t *rec_uleb_put(uint8_t *p, uint64_t v)
{
  if (v < 0x80) {
    *p = (uint8_t)v;
    return p + 1;
  }
  if (v < 0x4000) {  /* sizes and lines: two bytes */
    p[0] = (uint8_t)(v | 0x80);
    p[1] = (uint8_t)(v >> 7);
    return p + 2;
  }
  if (v < ((uint64_t)1 << 56)) return rec_uleb_put56(p, v);
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

/* The same for an address: any user-space pointer (0 < v < 2^56) takes
** one path, whatever part of the address space a VM's allocator uses. */
static inline uint8_t *rec_uleb_put_addr(uint8_t *p, uint64_t v)
{
  if (__builtin_expect(v - 1 < ((uint64_t)1 << 56) - 1, 1)) return rec_uleb_put56(p, v);
  return rec_uleb_put(p, v);
}

static inline void rec_buf_uleb(RecBuf *b, uint64_t v)
{
  b->p = rec_uleb_put(b->p, v);
}

#endif
