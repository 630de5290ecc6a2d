/* top_state.h -- ljm top's state and the parts its two ways of reading share
** (top_state.c): following a stream (cmd_top.c) and reading it anew at each
** refresh for a filter by fate (top_reread.c). Internal to the CLI. */
#ifndef LJM_CLI_TOP_STATE_H
#define LJM_CLI_TOP_STATE_H

#include <stdint.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "exporters/top/top.h"
#include "model/ljm_live.h"

typedef struct Top {
  const char *path;
  LjmModel *m;
  LjmLive *live;
  LjmInput *in;
  LjmTopShow show;
  int screen;            /* drawing on the terminal */
  int once;
  uint64_t t0;           /* the clock at start (usec) */
  uint64_t interval;     /* usec */
  uint64_t next;         /* when the next refresh is due */
  int64_t initial;       /* the file's size at start: read it all before refreshing */
  int reached;           /* the reads passed that size: caught up at the next tick */
  int caught_up;
  int quit;              /* q, or a signal */
  int oom;
  const char *ended;     /* why following stopped, for the last screen */
  struct stat st;        /* the file followed */
  int has_st;
  char status[160];
  /* with a filter by fate: the filter, the stream bytes read at the last
  ** refresh, the events the filters saw then and at the first, and the
  ** clocks of both (reread) */
  const LjmCliFilter *filter;
  uint64_t read_bytes, first_at, last_at, first_us, last_us;
  int refreshed;         /* refreshes with figures so far */
  LjmDiag diag;          /* the last reading's end */
  const char *by;        /* --by KEY */
} Top;

/* Keys on the screen; returns 1 when something changed. */
int ljm_top_key(Top *t, int c);
/* Draws the last refresh (on the screen only). */
void ljm_top_draw(Top *t);
/* A refresh: the model's figures now, drawn or printed (stdout gone, or
** out of memory: t->quit, t->oom). */
void ljm_top_refresh(Top *t);
/* After the input ended on the screen: the last figures until q. */
void ljm_top_hold(Top *t, const char *why);
/* The clock (usec), and since t started. */
uint64_t ljm_top_clock_us(void);
uint64_t ljm_top_now_us(const Top *t);
/* The file followed was replaced or removed (t->ended says so). */
int ljm_top_replaced(Top *t);
/* SIGINT, SIGTERM or SIGHUP came (ljm_top_signals set them up). */
int ljm_top_signalled(void);
void ljm_top_signals(void);
/* ljm top with --lifetime, --lived or --site-leaked, from the options on
** (top_reread.c): the exit status. */
int ljm_top_reread(Top *t, const LjmCliFilter *filter);

#endif
