/* buffer.c -- fixed-size output buffer of the recorder. */
#include "recorder/base/buffer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "recorder/base/clock.h"
#include "recorder/base/fork_mark.h"
#include "recorder/base/thread.h"

int rec_buf_init(RecBuf *b, size_t size, RecSinkFn sink, void *ud)
{
  memset(b, 0, sizeof(*b));
  rec_fork_arm();
  b->gen = rec_fork_gen();
  if (size < 4 * REC_EVENT_MAX) size = 4 * REC_EVENT_MAX;
  b->buf = malloc(size);
  if (!b->buf) return ENOMEM;
  b->p = b->buf;
  b->end = b->buf + size;
  b->sink = sink;
  b->ud = ud;
  return 0;
}

void rec_buf_interval(RecBuf *b, uint32_t ms)
{
  b->interval_ms = ms;
  b->last_ns = rec_time_now_ns();
}

void rec_buf_clock(RecBuf *b)
{
  uint64_t now;
  if (b->async) {  /* the writer thread raised 'due': what waits goes now */
    if (b->p != b->buf) rec_buf_tick(b);
    return;
  }
  if (!b->interval_ms) return;
  now = rec_time_now_ns();
  if (now - b->last_ns >= (uint64_t)b->interval_ms * 1000000u) {
    b->last_ns = now;
    rec_buf_flush(b);
  }
}

/* -- Background writer --------------------------------------------------- */

/* Waits for a job or quit; with a flush interval, raises 'due' each time
** one passes meanwhile. Called with the mutex held. */
static void writer_wait(RecBuf *b, struct timespec *next)
{
  while (!b->job && !b->quit) {
    if (!b->interval_ms) {
      pthread_cond_wait(&b->cv, &b->mu);
      continue;
    }
    if (pthread_cond_timedwait(&b->cv, &b->mu, next) == ETIMEDOUT) {
      atomic_store_explicit(&b->due, 1, memory_order_relaxed);
      rec_time_add_us(next, (uint64_t)b->interval_ms * 1000u);
    }
  }
}

/* Maps the pages of [p, p+len) writable without touching their contents
** (safe while the VM's thread writes into them), so that the VM's thread
** does not take a page fault for every 4 KiB of a fresh buffer. Only a
** hint: ignored where unsupported. */
static void prefault(uint8_t *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
  long pg = sysconf(_SC_PAGESIZE);
  uintptr_t a, e;
  if (pg <= 0) return;
  a = ((uintptr_t)p + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
  e = ((uintptr_t)p + len) & ~((uintptr_t)pg - 1);
  if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)len;
#endif
}

static void *writer_main(void *arg)
{
  RecBuf *b = arg;
  pthread_mutex_lock(&b->mu);
  {  /* both buffers, off the VM's thread */
    uint8_t *cur = b->buf, *spare = b->spare;
    size_t size = (size_t)(b->end - b->buf);
    pthread_mutex_unlock(&b->mu);
    prefault(cur, size);
    prefault(spare, size);
    pthread_mutex_lock(&b->mu);
  }
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  rec_time_add_us(&next, (uint64_t)b->interval_ms * 1000u);
  for (;;) {
    const uint8_t *job;
    size_t len;
    int e;
    writer_wait(b, &next);
    if (!b->job) break;  /* quit and idle */
    job = b->job;
    len = b->joblen;
    pthread_mutex_unlock(&b->mu);
    e = b->werr ? 0 : b->sink(b->ud, job, len);  /* werr: only we write it */
    pthread_mutex_lock(&b->mu);
    if (e) b->werr = e;
    else if (!b->werr) b->wdone += len;
    b->job = NULL;
    pthread_cond_broadcast(&b->cv);
  }
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

int rec_buf_async(RecBuf *b)
{
  size_t size = (size_t)(b->end - b->buf);
  int e;
  b->spare = malloc(size);
  if (!b->spare) return ENOMEM;
  pthread_mutex_init(&b->mu, NULL);
  {  /* timed waits on the monotonic clock: a clock change is no flush */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cv, &ca);
    pthread_condattr_destroy(&ca);
  }
  e = rec_thread_start(&b->th, writer_main, b);  /* no SIGPIPE, SIGXFSZ here */
  if (e) {
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b->spare);
    b->spare = NULL;
    return e;
  }
  b->async = 1;
  return 0;
}

/* Waits for the writer to be idle and takes over its results. Called
** with the mutex held. */
static void wait_idle(RecBuf *b)
{
  while (b->job) pthread_cond_wait(&b->cv, &b->mu);
  if (b->werr && !b->err) b->err = b->werr;
  b->written = b->wdone;
}

/* Made in another process than this one (a parent), whose threads are not here. */
static inline int buf_forked(const RecBuf *b)
{
  return rec_fork_gen() != b->gen;
}

void rec_buf_forked(RecBuf *b, int drop)
{
  b->async = 0;
  b->job = NULL;
  if (!b->err) b->err = ECHILD;
  b->p = b->buf;
  if (drop) {
    free(b->buf);
    free(b->spare);
    b->buf = b->p = b->end = b->spare = NULL;
  }
}

int rec_buf_failed(RecBuf *b)
{
  int e;
  if (__builtin_expect(buf_forked(b), 0)) rec_buf_forked(b, 0);
  e = b->err;
  if (!e && b->async) {
    pthread_mutex_lock(&b->mu);
    e = b->werr;
    pthread_mutex_unlock(&b->mu);
  }
  return e != 0;
}

void rec_buf_free(RecBuf *b)
{
  if (b->async && buf_forked(b)) rec_buf_forked(b, 0);
  if (b->async) {
    pthread_mutex_lock(&b->mu);
    wait_idle(b);
    b->quit = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->th, NULL);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    b->async = 0;
  }
  free(b->buf);
  free(b->spare);
  b->buf = b->p = b->end = b->spare = NULL;
}

int rec_buf_flush(RecBuf *b)
{
  size_t n;
  if (__builtin_expect(buf_forked(b), 0)) {
    rec_buf_forked(b, 0);
    return b->err;
  }
  n = (size_t)(b->p - b->buf);
  if (b->async) {
    uint8_t *full = b->buf;
    size_t size = (size_t)(b->end - b->buf);
    pthread_mutex_lock(&b->mu);
    wait_idle(b);  /* the spare buffer is free again */
    if (n && !b->err) {
      b->job = full;
      b->joblen = n;
      pthread_cond_broadcast(&b->cv);
      b->buf = b->spare;  /* fill the other one meanwhile */
      b->spare = full;
      b->end = b->buf + size;
    }
    pthread_mutex_unlock(&b->mu);
  } else if (n && !b->err) {
    int e = b->sink(b->ud, b->buf, n);
    if (e) b->err = e;
    else b->written += n;
  }
  b->p = b->buf;  /* after an error everything is dropped */
  return b->err;
}

int rec_buf_sync(RecBuf *b)
{
  rec_buf_flush(b);  /* a forked child's: async is 0 from here on */
  if (b->async) {
    pthread_mutex_lock(&b->mu);
    wait_idle(b);
    pthread_mutex_unlock(&b->mu);
  }
  return b->err;
}

void rec_buf_str(RecBuf *b, const char *s, size_t len)
{
  rec_buf_need(b, 10);
  rec_buf_uleb(b, len);
  rec_buf_raw(b, s, len);
}

void rec_buf_raw(RecBuf *b, const char *s, size_t len)
{
  while (len) {
    size_t room = (size_t)(b->end - b->p), n;
    if (!room) {
      rec_buf_flush(b);
      room = (size_t)(b->end - b->p);
    }
    n = len < room ? len : room;
    memcpy(b->p, s, n);
    b->p += n;
    s += n;
    len -= n;
  }
}
