/* progress.c -- a progress line on stderr while a long profile decodes. */
#include "cli/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define FIRST_AFTER 0.5   /* seconds before anything is shown */
#define EVERY 0.2         /* seconds between two updates */

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "1.23 GiB" and the like. */
static void fmt_bytes(char *buf, size_t len, double v)
{
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, u++;
  snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

void ljm_progress_format(char *buf, size_t len, const char *name, uint64_t done,
                         int64_t total, uint64_t events, double secs)
{
  char a[32], b[32];
  double rate = secs > 0 ? events / secs : 0;
  fmt_bytes(a, sizeof(a), (double)done);
  if (total >= 0) {
    fmt_bytes(b, sizeof(b), (double)total);
    int pct = total > 0 ? (int)(100.0 * (double)done / (double)total) : 100;
    if (pct > 100) pct = 100;
    snprintf(buf, len, "%s: %s of %s (%d%%), %.1f M events/s", name, a, b, pct, rate / 1e6);
  } else {
    snprintf(buf, len, "%s: %s read, %.1f M events/s", name, a, rate / 1e6);
  }
}

void ljm_progress_start(LjmProgressLine *p, const LjmInput *in, const char *name, int quiet)
{
  p->on = !quiet && isatty(2);
  p->in = in;
  p->name = name;
  p->start = p->last = now();
  p->shown = 0;
}

void ljm_progress_update(void *ud, uint64_t offset, uint64_t events)
{
  LjmProgressLine *p = ud;
  (void)offset;  /* the input's own position also counts compressed bytes */
  if (!p->on) return;
  double t = now();
  if (t - p->start < FIRST_AFTER || t - p->last < EVERY) return;
  char line[512];
  ljm_progress_format(line, sizeof(line), p->name, ljm_input_position(p->in),
                      ljm_input_size(p->in), events, t - p->start);
  /* Back to the start of the line, the text, then erase what is left. */
  fprintf(stderr, "\r%s\033[K", line);
  fflush(stderr);
  p->last = t;
  p->shown = 1;
}

void ljm_progress_end(LjmProgressLine *p)
{
  if (!p->shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->shown = 0;
}
