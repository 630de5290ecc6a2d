/* top.h -- ljm top's views of a model still being built (model/ljm_live.h):
** a plain table per refresh (logs, CI, a pipe) and the terminal screen.
**
** Both show the same refresh: the bytes in use and RSS, the peak, then a
** row per line, call stack or label value with its bytes and blocks in use,
** what it allocated and freed per second since the last refresh, and how
** much its bytes in use grew since the first refresh and the last. */
#ifndef LJM_TOP_H
#define LJM_TOP_H

#include <stdint.h>
#include <stdio.h>

#include "model/ljm_live.h"
#include "model/ljm_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the user chose: the view, the order, the rows, and for the titles
** the profile's name and where the reading stands. */
typedef struct LjmTopShow {
  const char *path;
  LjmLiveView view;
  LjmLiveSort sort;
  unsigned top;          /* rows of a plain table (the screen fills itself) */
  int paused;            /* the screen keeps its figures until unpaused */
  const char *status;    /* a line about the input ("waiting for data"), or NULL */
} LjmTopShow;

/* Names of views and orders, as the keys and --sort say them. */
const char *ljm_top_view_name(LjmLiveView v);
const char *ljm_top_sort_name(LjmLiveSort s);

/* One refresh as plain text: a header line, the column titles and the top
** rows, then a blank line. Returns 0, or -1 when a write failed. */
int ljm_top_table(FILE *f, LjmLive *l, const LjmModel *m, const LjmTopShow *o);

/* The terminal screen (ncurses on the terminal of stdin and stdout). */
int ljm_top_screen_open(void);
/* Redraws the last refresh (l) with the choices o. */
void ljm_top_screen_draw(LjmLive *l, const LjmModel *m, const LjmTopShow *o);
/* Waits up to ms milliseconds for a key: it, -1 for none, or
** LJM_TOP_KEY_REDRAW when the terminal was resized. */
int ljm_top_screen_key(int ms);
#define LJM_TOP_KEY_REDRAW 0x10000
/* Puts the terminal back as it was; safe to call twice. */
void ljm_top_screen_close(void);

#ifdef __cplusplus
}
#endif

#endif
