/* ljm_growth.h -- in-use bytes over time, per site and per stack, and which
** of them grow steadily (ljm growth).
**
** Fed from a model listener (ljm_model_set_listener): every event moves
** bytes into or out of its site and stack, every time mark advances the
** clock. Each key keeps the least it had in use during each of at most
** LJM_GROWTH_BUCKETS equal stretches of time (the lower envelope: garbage
** a collection frees drops out of it, a leak stays); when the recording
** outgrows them, neighbours merge and the stretches double, so memory is
** bounded by the keys, whatever the duration.
**
** A key grows steadily when, over the points after the skipped start, or
** their second half, or their last quarter (a leak that started late), all
** of these hold (its slope is the longest such stretch's, or a later one's
** that is LJM_GROWTH_FASTER times as steep):
**   - it gained at least the minimum (exact: LJM_GROWTH_MIN_EXACT bytes;
**     sampled: LJM_GROWTH_MIN_SAMPLES sampling intervals),
**   - its Theil-Sen slope (the median of the slopes between every pair of
**     points: a single spike moves it little) is positive, and the slope
**     of the second half is at least half of it (it still grows at the end),
**   - the least it held in the last quarter is more than the most it held
**     in the first half (memory that grew and levelled off fails here),
**   - at least half of up to LJM_GROWTH_STRETCHES equal stretches grew,
**   - over all the points, it never fell by more than LJM_GROWTH_MAX_FALL
**     of what it gained: the temporaries of a line fall at every
**     collection, even where the heap a leak grows makes the collector's
**     cycles, and so the garbage left between them, longer and longer.
*/
#ifndef LJM_GROWTH_H
#define LJM_GROWTH_H

#include <stddef.h>
#include <stdint.h>

#include "model/ljm_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LJM_GROWTH_BUCKETS 32          /* points kept per key, at most */
#define LJM_GROWTH_BUCKET_US 100000u   /* the first stretch: 0.1 s */
#define LJM_GROWTH_MIN_POINTS 8        /* fewer after --skip: too short */
#define LJM_GROWTH_STRETCHES 10
#define LJM_GROWTH_MIN_EXACT 1024u     /* bytes */
#define LJM_GROWTH_MIN_SAMPLES 4u
#define LJM_GROWTH_MAX_FALL 0.25
#define LJM_GROWTH_FASTER 1.5         /* a later window's slope that wins */

typedef struct LjmGrowth LjmGrowth;

/* One key that grows steadily. */
typedef struct LjmGrowthRow {
  uint32_t key;        /* site id, or node id (stacks) */
  double slope;        /* bytes per second */
  double steady;       /* share of the stretches that grew, 0..1 */
  int64_t in_use;      /* bytes in use at the end */
  int64_t grown;       /* bytes gained since since_us */
  uint64_t since_us;   /* the time its steady growth is measured from: the
                          analysed time's start, or a later one for growth
                          that started late (usec) */
} LjmGrowthRow;

typedef struct LjmGrowthResult {
  uint64_t from_us, to_us;   /* the analysed time */
  uint64_t bucket_us;        /* the time between points */
  uint32_t points;           /* points per key */
  int64_t min_growth;        /* bytes a key had to gain */
  LjmGrowthRow *sites;       /* steepest first */
  size_t nsites;
  LjmGrowthRow *stacks;      /* steepest first; none in a stream without stacks */
  size_t nstacks;
} LjmGrowthResult;

/* A new, empty series; NULL when out of memory. */
LjmGrowth *ljm_growth_new(void);
/* Moves the bytes of one event (a listener's on_event). */
void ljm_growth_event(LjmGrowth *g, const LjmLiveEvent *ev);
/* A time mark, usec since the stream began (a listener's on_time). */
void ljm_growth_time(LjmGrowth *g, uint64_t usec);
/* Whether the stream had time marks, and whether memory ran out. */
int ljm_growth_timed(const LjmGrowth *g);
int ljm_growth_oom(const LjmGrowth *g);
/* The time of the last mark or event (usec). */
uint64_t ljm_growth_end(const LjmGrowth *g);
/* Finds what grows steadily after skip_us; m gives the stream's facts
** (stacks, sampling rate). Returns 0, or -1 when the analysed time holds
** fewer than LJM_GROWTH_MIN_POINTS points (r->points says how many) or
** memory ran out (ljm_growth_oom). Free r with ljm_growth_result_free. */
int ljm_growth_analyse(LjmGrowth *g, const LjmModel *m, uint64_t skip_us, LjmGrowthResult *r);
void ljm_growth_result_free(LjmGrowthResult *r);
void ljm_growth_free(LjmGrowth *g);

#ifdef __cplusplus
}
#endif

#endif
