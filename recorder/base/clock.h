/* clock.h -- the clock of an extended stream: a ticker thread.
**
** An extended stream carries time marks such that every event happened
** less than 10 ms after the mark before it (decoder/EXTENSION.md). The
** event path of an exact recording never reads the clock itself: a ticker
** thread per recording raises a flag every REC_TICK_US, and the next event
** that sees it writes a mark (reading the clock once). The ticker also
** reads the resident set size from /proc/self/statm, so the event path
** only copies the latest value after a mark. A sampled recording writes
** few events and has no ticker: each event reads the clock (stream/extension.c),
** which costs less than a thread waking 200 times a second (at a rate of
** a few KiB and less, nearly every allocation is an event and pays a
** clock read: such rates are for tests). So does an exact recording whose
** ticker could not start.
*/
#ifndef REC_TIME_H
#define REC_TIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* Tick period: half the promised 10 ms, so that a ticker woken up to
** 5 ms late still keeps the promise. */
#define REC_TICK_US 5000u

typedef struct RecTicker {
  atomic_int tick;        /* set by the ticker, cleared by the mark */
  _Atomic uint64_t rss;   /* latest resident set size in bytes (0: none) */
  pthread_t th;
  pthread_mutex_t mu;     /* guards quit */
  pthread_cond_t cv;      /* wakes the ticker to quit */
  int quit;
  int running;            /* the thread exists and must be joined */
  int fd;                 /* /proc/self/statm, or -1 */
} RecTicker;

/* Monotonic clock in nanoseconds. */
uint64_t rec_time_now_ns(void);
/* Moves ts forward by us microseconds. */
void rec_time_add_us(struct timespec *ts, uint64_t us);
/* Opens /proc/self/statm for rec_time_rss: a descriptor or -1. */
int rec_time_statm(void);
/* Resident set size of the process now (bytes), 0 if unknown. */
uint64_t rec_time_rss(int fd);

/* Opens statm and starts the thread; 0 or an errno value (the ticker
** then does not run; statm stays open for rec_time_rss, -1 if it failed,
** and rec_ticker_stop closes it). */
int rec_ticker_start(RecTicker *t);
/* Stops and joins the thread; idempotent. */
void rec_ticker_stop(RecTicker *t);
/* In a fork()ed child: the thread stayed in the parent; forget it
** without touching its mutex (it may have been held at the fork).
** close_fd: also close statm's descriptor (only where the child cannot
** have reused its number yet: the pthread_atfork handler). */
void rec_ticker_forked(RecTicker *t, int close_fd);

#endif
