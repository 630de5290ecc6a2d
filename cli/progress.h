/* progress.h -- a progress line on stderr while a long profile decodes.
**
** Shown only when stderr is a terminal and -q was not given, and only once
** decoding has taken longer than half a second; rewritten at most five
** times a second, and erased when decoding ends, so nothing of it is left
** in the terminal or in anything redirected.
*/
#ifndef LJM_PROGRESS_H
#define LJM_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "model/ljm_model_load.h"

typedef struct LjmProgressLine {
  int on;                 /* stderr is a terminal and not -q */
  const LjmInput *in;
  const char *name;       /* the profile's name, as given */
  double start, last;     /* monotonic seconds */
  int shown;              /* a line is on the screen */
} LjmProgressLine;

/* Starts watching the decoding of 'in' (quiet: never show anything). */
void ljm_progress_start(LjmProgressLine *p, const LjmInput *in, const char *name, int quiet);
/* The model's progress callback (LjmProgressFn); ud is the LjmProgressLine. */
void ljm_progress_update(void *ud, uint64_t offset, uint64_t events);
/* Erases the line, if one is shown. */
void ljm_progress_end(LjmProgressLine *p);

/* The text of a progress line (no control characters): "NAME: 1.2 GiB of
** 3.4 GiB (35%), 12.3 M events/s" or, with total < 0, "NAME: 1.2 GiB read,
** ...". Exposed for its unit test. */
void ljm_progress_format(char *buf, size_t len, const char *name, uint64_t done,
                         int64_t total, uint64_t events, double secs);

#endif
