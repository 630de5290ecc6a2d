/* ljm_live.h -- a model read while it is still being built (ljm top).
**
** At each refresh, ljm_live_sample takes the figures of every line, call
** stack and label value from the model as it stands between two events,
** and keeps what the next refresh compares with: so each row has its
** figures now, its allocation and free rates since the last refresh and
** its growth since the first and since the last. The totals keep a history
** of the bytes in use and of RSS, one point per refresh.
**
** Rates are per second of the stream's own time when it has time marks
** (a recorder that flushes once a second does not make a burst a rate),
** else per second of the caller's clock. Memory: a few figures per site,
** per node with figures and per label value, as the model has them.
*/
#ifndef LJM_LIVE_H
#define LJM_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "model/ljm_model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LjmLive LjmLive;

typedef enum LjmLiveView {
  LJM_LIVE_LINES = 0,   /* a row per site (ljm_model_site) */
  LJM_LIVE_STACKS,      /* a row per node events end at (ljm_model_node) */
  LJM_LIVE_LABELS       /* a row per value of the label key (ljm_live_value) */
} LjmLiveView;

typedef enum LjmLiveSort {
  LJM_LIVE_BY_INUSE = 0,  /* bytes in use */
  LJM_LIVE_BY_RATE,       /* bytes allocated per second since the last refresh */
  LJM_LIVE_BY_GROWTH      /* in-use bytes grown since the first refresh */
} LjmLiveSort;

typedef struct LjmLiveRow {
  uint32_t id;                  /* site, node or value id, as the view says */
  uint64_t inuse_bytes, inuse_count;
  double alloc_rate, free_rate; /* bytes per second since the last refresh: allocated
                                   here, and freed of what was allocated here */
  int64_t grown, grown_last;    /* in-use bytes since the first refresh, the last */
} LjmLiveRow;

typedef struct LjmLiveTotals {
  LjmLiveRow all;          /* the whole heap, as a row */
  uint64_t peak_bytes;     /* the stream's peak so far */
  uint64_t rss;            /* the last RSS sample, 0 if none */
  uint64_t at_us;          /* the stream's time (or the clock's) of this refresh */
  uint64_t since_us;       /* since the first refresh */
  uint64_t events;         /* allocation events so far */
  uint32_t refreshes;      /* ljm_live_sample calls */
} LjmLiveTotals;

/* A reader that groups label values by key (NULL: no labels view). */
LjmLive *ljm_live_new(const char *label_key);
void ljm_live_free(LjmLive *l);
/* Takes the model's figures now; now_us is the caller's clock, used when
** the stream has no time marks. 0, or -1 when out of memory. */
int ljm_live_sample(LjmLive *l, const LjmModel *m, uint64_t now_us);
/* Takes the figures the next sample compares with, as a sample does,
** without a point of history. */
int ljm_live_mark(LjmLive *l, const LjmModel *m, uint64_t now_us);
/* Forgets every row's past, keeping the history: the next sample or mark
** is a first one again (ljm top with a filter by fate reads the recording
** anew each refresh and marks the first and the last refresh's places). */
void ljm_live_restart(LjmLive *l);
/* The rows of view v with figures, sorted by s, largest first (ties: id). */
size_t ljm_live_rows(LjmLive *l, LjmLiveView v, LjmLiveSort s, const LjmLiveRow **rows);
const LjmLiveTotals *ljm_live_totals(const LjmLive *l);
/* The last n points of the in-use and RSS history, oldest first (n at
** most max, and at most LJM_LIVE_HISTORY). */
size_t ljm_live_history(const LjmLive *l, uint64_t *inuse, uint64_t *rss, size_t max);
#define LJM_LIVE_HISTORY 512
/* A label value's text ("auth", "(none)", "(other)"). */
const char *ljm_live_value(const LjmLive *l, uint32_t id);
/* The label key, or NULL. */
const char *ljm_live_key(const LjmLive *l);

#ifdef __cplusplus
}
#endif

#endif
