/* clock.c -- the clock of an extended stream: a ticker thread. */
#include "recorder/base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/base/thread.h"

uint64_t rec_time_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rec_time_rss(int fd)
{
  char buf[128];
  ssize_t n;
  char *p, *end;
  unsigned long long pages;
  long pg = sysconf(_SC_PAGESIZE);
  if (fd < 0 || pg <= 0) return 0;
  n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return 0;
  buf[n] = 0;
  /* "size resident shared text lib data dt", in pages */
  p = strchr(buf, ' ');
  if (!p) return 0;
  pages = strtoull(p + 1, &end, 10);
  if (end == p + 1) return 0;
  return (uint64_t)pages * (uint64_t)pg;
}

int rec_time_statm(void)
{
  return open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
}

void rec_time_add_us(struct timespec *ts, uint64_t us)
{
  ts->tv_sec += (time_t)(us / 1000000u);
  ts->tv_nsec += (long)(us % 1000000u) * 1000;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_nsec -= 1000000000L;
    ts->tv_sec++;
  }
}

static void *ticker_main(void *arg)
{
  RecTicker *t = arg;
  struct timespec next, now;
  clock_gettime(CLOCK_MONOTONIC, &next);
  pthread_mutex_lock(&t->mu);
  while (!t->quit) {
    rec_time_add_us(&next, REC_TICK_US);
    while (!t->quit && pthread_cond_timedwait(&t->cv, &t->mu, &next) != ETIMEDOUT) {
    }
    if (t->quit) break;
    pthread_mutex_unlock(&t->mu);
    atomic_store_explicit(&t->rss, rec_time_rss(t->fd), memory_order_relaxed);
    atomic_store_explicit(&t->tick, 1, memory_order_relaxed);
    clock_gettime(CLOCK_MONOTONIC, &now);
    /* Woken late (a busy machine): tick from now on, no catching up. */
    if (now.tv_sec > next.tv_sec + 1 ||
        (now.tv_sec - next.tv_sec) * 1000000000L + (now.tv_nsec - next.tv_nsec) >
            (long)REC_TICK_US * 1000)
      next = now;
    pthread_mutex_lock(&t->mu);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

int rec_ticker_start(RecTicker *t)
{
  pthread_condattr_t ca;
  int e;
  atomic_init(&t->tick, 0);
  t->quit = 0;
  t->running = 0;
  t->fd = rec_time_statm();
  atomic_init(&t->rss, rec_time_rss(t->fd));
  pthread_mutex_init(&t->mu, NULL);
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&t->cv, &ca);
  pthread_condattr_destroy(&ca);
  /* The ticker takes no signals: they stay with the program's threads. */
  e = rec_thread_start(&t->th, ticker_main, t);
  if (e) {
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    return e;
  }
  t->running = 1;
  return 0;
}

void rec_ticker_stop(RecTicker *t)
{
  if (t->running) {
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->th, NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    t->running = 0;
  }
  if (t->fd >= 0) {
    close(t->fd);
    t->fd = -1;
  }
}

void rec_ticker_forked(RecTicker *t, int close_fd)
{
  t->running = 0;
  if (close_fd && t->fd >= 0) close(t->fd);
  t->fd = -1;
}
