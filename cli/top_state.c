/* top_state.c -- what ljm top's two ways of reading share (top_state.h):
** signals, the clock, keys, drawing and the last screen. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/top_state.h"

static volatile sig_atomic_t signalled;

static void on_signal(int sig)
{
  (void)sig;
  signalled = 1;
}

int ljm_top_signalled(void) { return signalled != 0; }

uint64_t ljm_top_clock_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t ljm_top_now_us(const Top *t) { return ljm_top_clock_us() - t->t0; }

/* Keys on the screen; returns 1 when something changed. */
int ljm_top_key(Top *t, int c)
{
  LjmTopShow *o = &t->show;
  switch (c) {
  case 'q': case 'Q': t->quit = 1; return 0;
  case 'i': o->sort = LJM_LIVE_BY_INUSE; return 1;
  case 'a': o->sort = LJM_LIVE_BY_RATE; return 1;
  case 'g': o->sort = LJM_LIVE_BY_GROWTH; return 1;
  case 'p': o->paused = !o->paused; return 1;
  case 'v': case 's':
    o->view = o->view == LJM_LIVE_LINES ? LJM_LIVE_STACKS
              : o->view == LJM_LIVE_STACKS && ljm_live_key(t->live) ? LJM_LIVE_LABELS
                                                                    : LJM_LIVE_LINES;
    return 1;
  default: return c == LJM_TOP_KEY_REDRAW;
  }
}

/* Draws the last refresh, or where catching up stands. */
void ljm_top_draw(Top *t)
{
  if (!t->screen) return;
  t->show.status = t->status[0] ? t->status : NULL;
  ljm_top_screen_draw(t->live, t->m, &t->show);
}

/* A refresh: the model's figures now, drawn or printed. */
void ljm_top_refresh(Top *t)
{
  if (ljm_live_sample(t->live, t->m, ljm_top_now_us(t)) != 0) {
    t->oom = t->quit = 1;
    return;
  }
  if (t->screen) {
    ljm_top_draw(t);
  } else {
    t->show.status = t->status[0] ? t->status : NULL;
    if (ljm_top_table(stdout, t->live, t->m, &t->show) != 0) t->quit = 1;  /* stdout went away */
  }
}

/* The file is still the one being followed: not replaced by another. */
int ljm_top_replaced(Top *t)
{
  struct stat now;
  if (!t->has_st) return 0;
  if (stat(t->path, &now) != 0 || now.st_ino != t->st.st_ino || now.st_dev != t->st.st_dev) {
    t->ended = "was replaced or removed";
    return 1;
  }
  return 0;
}

/* After the input ended on the screen: the last figures until q. */
void ljm_top_hold(Top *t, const char *why)
{
  snprintf(t->status, sizeof(t->status), "%s: press q", why);
  /* the events since the last refresh, if any: a new sample would make
  ** the rates of a stream that stopped 0 */
  if (ljm_live_totals(t->live)->events != ljm_model_totals(t->m)->events ||
      !ljm_live_totals(t->live)->refreshes)
    ljm_top_refresh(t);
  else
    ljm_top_draw(t);
  while (!t->quit && !signalled) {
    int c = ljm_top_screen_key(200);
    if (c >= 0 && ljm_top_key(t, c)) ljm_top_draw(t);
  }
}

void ljm_top_signals(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
}
