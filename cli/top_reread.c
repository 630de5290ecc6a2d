/* top_reread.c -- ljm top with a filter by fate: the file read anew at
** each refresh.
**
** --lifetime, --lived and --site-leaked judge a block by what became of
** it, and in a recording still being written that changes: a block in use
** now may be freed before the next refresh. So each refresh reads the file
** from its start up to where its data ends, twice as report does (the
** fates first, then the view, both of the same bytes: ljm_input_limit),
** and judges every block as of that end. The rows' figures are taken at
** the first refresh's place in the stream, the last one's and the end
** (ljm_model_set_mark), so rates and growth compare figures judged alike.
** The readings take at most half the time: a refresh waits at least as
** long as it read. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/top_state.h"

/* Keys and signals while a reading runs: q stops it where it is. */
static void reread_progress(void *ud, uint64_t offset, uint64_t events)
{
  Top *t = ud;
  (void)offset, (void)events;
  if (ljm_top_signalled()) t->quit = 1;
  if (t->screen) {
    int c = ljm_top_screen_key(0);
    if (c >= 0) ljm_top_key(t, c);
  }
  if (t->quit && t->in) ljm_input_limit(t->in, ljm_input_decoded(t->in) + 1);
}

static void mark_last(void *ud, LjmModel *m)
{
  Top *t = ud;
  if (ljm_live_mark(t->live, m, t->last_us)) t->oom = 1;
}

static void mark_first(void *ud, LjmModel *m)
{
  Top *t = ud;
  if (ljm_live_mark(t->live, m, t->first_us)) t->oom = 1;
  if (t->last_at > t->first_at) ljm_model_set_mark(m, t->last_at, mark_last, t);
}

/* reread's status when the file holds no stream bytes yet (too short to
** tell plain from gzip or zstd, or a compressed start that decodes to
** nothing): the watch waits, as it does without a filter by fate. */
#define REREAD_WAIT (-2)

/* One refresh's two readings into a new model (t->m on success); the
** status of the second, REREAD_WAIT, or -1 when out of memory, the first
** failed (*rc: its exit status) or the file shrank (t->ended). */
static int reread(Top *t, int *rc)
{
  LjmDiag d;
  struct stat fst;
  if (!t->once && !t->read_bytes && stat(t->path, &fst) == 0 && fst.st_size < 4)
    return REREAD_WAIT;
  LjmInput *in = ljm_input_open(t->path, &d);
  LjmModel *m = ljm_model_new();
  if (!in || !m) {
    if (!in) fprintf(stderr, "%s: cannot open: %s\n", t->path, d.msg);
    else fprintf(stderr, "ljm: out of memory\n");
    ljm_input_close(in);
    ljm_model_free(m);
    *rc = LJM_EXIT_BAD_INPUT;
    return -1;
  }
  t->in = in;
  *rc = ljm_cli_fates_read(m, t->filter, NULL, in, t->path, "top", reread_progress, t);
  uint64_t bytes = ljm_input_decoded(in);
  t->in = NULL;
  ljm_input_close(in);
  in = NULL;
  if (!*rc && !t->quit && bytes < t->read_bytes) {
    t->ended = "shrank (truncated or rewritten)";
    ljm_model_free(m);
    return -1;
  }
  if (!*rc && !t->quit && !t->once && !bytes) {
    ljm_model_free(m);
    return REREAD_WAIT;
  }
  if (!*rc && !t->quit) {
    in = ljm_input_open(t->path, &d);
    if (!in) {
      fprintf(stderr, "%s: cannot open: %s\n", t->path, d.msg);
      *rc = LJM_EXIT_BAD_INPUT;
    } else if ((t->filter->nregex && ljm_model_set_sources(m, NULL, 0)) ||
               ljm_cli_filter_apply(m, t->filter)) {
      fprintf(stderr, "ljm: out of memory\n");
      *rc = LJM_EXIT_BAD_INPUT;
    }
  }
  if (*rc || t->quit) {
    ljm_input_close(in);
    ljm_model_free(m);
    return -1;
  }
  ljm_input_limit(in, bytes ? bytes : 1);
  ljm_live_restart(t->live);
  if (t->once) {  /* rates over the whole recording, as --once without the filter */
    t->first_at = t->last_at = 0;
    t->first_us = t->last_us = 0;
    ljm_model_set_mark(m, 0, mark_first, t);
  } else if (t->refreshed) {
    ljm_model_set_mark(m, t->first_at, mark_first, t);
  }
  t->in = in;
  ljm_model_set_progress(m, reread_progress, t);
  LjmStatus st = ljm_model_load(m, in, t->path, &t->diag);
  t->in = NULL;
  ljm_input_close(in);
  ljm_model_marks_due(m);
  ljm_model_free(t->m);
  t->m = m;
  t->read_bytes = bytes;
  return (int)st;
}

/* The screen's line while nothing is shown yet. */
static void say(Top *t, const char *what)
{
  snprintf(t->status, sizeof(t->status), "%s", what);
  if (t->screen)
    ljm_top_screen_draw(t->live, t->m, &(LjmTopShow){ .path = t->path, .view = t->show.view,
                                                       .sort = t->show.sort,
                                                       .status = t->status });
}

/* Refreshes until q, a signal, the stream's end or an error; the last
** reading's status, or -1 (*rc: the exit status of a failure said). */
static int run_reread(Top *t, int *rc)
{
  int st = -1;
  const char *opt = ljm_cli_fate_named(t->filter);
  char line[160];
  snprintf(line, sizeof(line), "reading %s anew (%s judges each block as of now)", t->path, opt);
  say(t, line);
  while (!t->quit && !ljm_top_signalled()) {
    uint64_t start = ljm_top_now_us(t), took = 0;
    if (!(t->show.paused && t->refreshed)) {  /* paused: the figures stay, nothing is read */
      st = reread(t, rc);
      if (st == -1 || st == LJM_ERROR || t->quit || t->oom || t->ended) break;
      took = ljm_top_now_us(t) - start;
      if (st == REREAD_WAIT || (!t->once && st == LJM_TRUNCATED && !ljm_model_events_seen(t->m))) {
        snprintf(line, sizeof(line), "waiting for %s's first events", t->path);
        say(t, line);
      } else {
        /* --once: rates over the reading's time without time marks, as without the filter */
        uint64_t at = t->once ? ljm_top_now_us(t) : start;
        if (ljm_live_sample(t->live, t->m, at)) {
          t->oom = 1;
          break;
        }
        t->last_at = ljm_model_events_seen(t->m);
        t->last_us = at;
        if (!t->refreshed++ && !t->once) {
          t->first_at = t->last_at;
          t->first_us = at;
        }
        if (st == LJM_OK || t->once) break;
        t->status[0] = 0;
        if (2 * took > t->interval)
          snprintf(t->status, sizeof(t->status), "a refresh every %.1f s: %s reads the "
                   "recording twice each time", 2.0 * (double)took / 1e6, opt);
        t->show.status = t->status[0] ? t->status : NULL;
        if (t->screen) ljm_top_draw(t);
        else if (ljm_top_table(stdout, t->live, t->m, &t->show) != 0) break;
      }
    }
    uint64_t wait = 2 * took > t->interval ? 2 * took : t->interval;
    while (!t->quit && !ljm_top_signalled() && ljm_top_now_us(t) < start + wait) {
      if (ljm_top_replaced(t)) return st;
      if (t->screen) {
        int c = ljm_top_screen_key(100);
        if (c >= 0 && ljm_top_key(t, c) && t->refreshed) ljm_top_draw(t);
      } else {
        usleep(100000);
      }
    }
  }
  return st;
}

/* The end of a run with a filter by fate: a complete stream's (or
** --once's) last figures, or one line saying why it stopped. */
static int reread_end(Top *t)
{
  int rc = 0;
  int st = run_reread(t, &rc);
  char line[512] = "";
  if (t->oom) {
    snprintf(line, sizeof(line), "ljm top: out of memory");
    rc = 1;
  } else if (t->quit || ljm_top_signalled() || rc) {
    /* q, a signal, or a failure already said */
  } else if (st == LJM_ERROR) {
    ljm_diag_format(&t->diag, t->path, line, sizeof(line));
    rc = 1;
  } else if (t->ended) {
    snprintf(line, sizeof(line), "%s: the file %s while it was followed", t->path, t->ended);
    rc = 1;
  } else if (st == LJM_OK && !t->once) {
    snprintf(t->status, sizeof(t->status), "the recording ended (a complete stream)");
    t->show.status = t->status;
    if (t->screen) ljm_top_hold(t, "the recording ended (a complete stream)");
    else if (ljm_top_table(stdout, t->live, t->m, &t->show) != 0) rc = 1;
  } else if (t->once) {
    t->show.status = NULL;
    if (ljm_top_table(stdout, t->live, t->m, &t->show) != 0) rc = 1;
    else if (st == LJM_TRUNCATED)
      snprintf(line, sizeof(line), "%s: byte %llu: warning: %s (the table is what came before)",
               t->path, (unsigned long long)t->diag.offset, t->diag.msg);
  }
  /* a stream cut short by bad bytes: what came before, then why */
  if (rc && !t->screen && !t->oom && st == LJM_ERROR && ljm_model_totals(t->m)->events &&
      ljm_live_sample(t->live, t->m, ljm_top_now_us(t)) == 0)
    ljm_top_table(stdout, t->live, t->m, &t->show);
  if (t->screen) ljm_top_screen_close();
  if (line[0]) fprintf(stderr, "%s\n", line);
  return rc;
}

int ljm_top_reread(Top *t, const LjmCliFilter *filter)
{
  t->filter = filter;
  t->m = ljm_model_new();
  t->live = ljm_live_new(t->by);
  if (!t->m || !t->live) {
    fprintf(stderr, "ljm: out of memory\n");
    ljm_model_free(t->m);
    ljm_live_free(t->live);
    return LJM_EXIT_BAD_INPUT;
  }
  if (stat(t->path, &t->st) == 0) t->has_st = 1;
  t->t0 = ljm_top_clock_us();
  t->screen = !t->once && isatty(0) && isatty(1);
  ljm_top_signals();
  if (t->screen && ljm_top_screen_open() != 0) t->screen = 0;
  int rc = reread_end(t);
  ljm_live_free(t->live);
  ljm_model_free(t->m);
  if (!rc && ljm_cli_close_output(stdout, "stdout")) rc = 1;
  return rc;
}
