/* sampler.h -- sampling over allocated bytes, and the sampled blocks.
**
** A sampled recording (LjmRecOptions.sample) writes an allocation only
** when it holds the next sampled byte: the bytes between two sampled ones
** are drawn from an exponential distribution of mean 'rate' (a Poisson
** process over bytes, as Go's MemProfileRate), so an allocation of s
** bytes is written with probability 1 - exp(-s / rate) whatever came
** before it. A block that was written is remembered by address until it
** is freed or moved, so that its free or reallocation is written too.
**
** The gap is drawn as ceil(-rate * ln U) with U uniform in (0, 1]: for a
** whole number of bytes s, P(gap <= s) is exactly 1 - exp(-s / rate), the
** probability readers weight with (decoder/EXTENSION.md, "Sampling").
**
** Stops: a recording with no thread of its own (a sampled one to a file
** with a flush interval) must look at the clock now and then while nothing
** is sampled. With 'stop' set, the wrapper's countdown runs at most 'stop'
** bytes at a time and the rest of the gap waits in 'rest': an allocation
** that ends a countdown short of the sampled byte is a stop (the recorder
** reads the clock), not a hit. The sampled bytes are the same.
**
** The countdown is also the wrapper's only flag: a recorder that must see
** the next allocation holds the countdown (rec_sample_hold: it moves to
** 'rest', so that allocation ends a countdown as a stop does), and while
** no sampled recording is live it is off (REC_SAMPLE_OFF: every
** allocation ends it).
*/
#ifndef REC_SAMPLE_H
#define REC_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#define REC_SAMPLE_MAX (1ull << 30)   /* largest rate: 1 GiB */
#define REC_SAMPLE_FILTER 4096        /* counters of the frees' filter */
#define REC_SAMPLE_ALL 255            /* a saturated counter: stays */
#define REC_SAMPLE_STOP (64 << 10)    /* countdown between stops, if any */
#define REC_SAMPLE_OFF (INT64_MIN / 4) /* no sampling: no allocation gets
                                          this countdown back above 0 */

typedef struct RecSampler {
  int64_t gap;         /* bytes left before the next sampled byte or stop */
  int64_t rest;        /* bytes from the next stop to the sampled byte */
  int64_t stop;        /* longest countdown, 0: no stops */
  double rate;         /* mean gap in bytes */
  uint64_t rng;        /* xorshift64* state, never 0 */
  uintptr_t *set;      /* addresses of sampled blocks: open addressing,
                          0 = empty, a power of two slots (NULL: none yet) */
  size_t mask, n;
  /* A counting filter in front of the set: how many sampled blocks have
  ** each address slot (rec_sample_fslot). A free whose counter is 0 is not
  ** of a sampled block, so most frees cost one load; the set decides the
  ** others. A saturated counter (REC_SAMPLE_ALL) is never decremented. */
  uint8_t filter[REC_SAMPLE_FILTER];
} RecSampler;

/* Starts sampling every 'rate' bytes on average (1..REC_SAMPLE_MAX);
** seed 0 takes one from the clock and the process id; 'stop' 0 or the
** longest countdown between stops (REC_SAMPLE_STOP). */
void rec_sample_init(RecSampler *s, uint64_t rate, uint64_t seed, int64_t stop);
void rec_sample_free(RecSampler *s);
/* Saturates the filter and turns the countdown off: every address may be
** a sampled block and every allocation ends the countdown, so the wrapper
** sends every call to its slow path (no sampled recording is live;
** rec_sample_free does it too). */
void rec_sample_fill(RecSampler *s);
/* Draws the gap to the next sampled byte, after a hit: an allocation of
** n bytes holds the next sampled byte when gap - n <= 0 (the wrapper's one
** subtraction and branch, capture/alloc_wrapper.c). */
void rec_sample_redraw(RecSampler *s);

/* Splits 'total' bytes to the sampled byte into the countdown (at most
** 'stop' bytes, if set) and 'rest'. */
static inline void rec_sample_split(RecSampler *s, int64_t total)
{
  s->gap = s->stop && total > s->stop ? s->stop : total;
  s->rest = total - s->gap;
}

/* After a countdown reached 0 or below (gap <= 0) with bytes left in
** 'rest': 1 if it was a stop (the countdown goes on, gap > 0), 0 if the
** allocation holds the sampled byte after all (gap <= 0: a hit). */
static inline int rec_sample_stop(RecSampler *s)
{
  int64_t total = s->gap + s->rest;
  if (total <= 0) {
    s->gap = total;
    s->rest = 0;
    return 0;
  }
  rec_sample_split(s, total);
  return 1;
}

/* Sends the next allocation to the wrapper's slow path with the same bytes
** sampled: the countdown waits in 'rest' and the next allocation ends it at
** 0, where rec_sample_stop takes it back. */
static inline void rec_sample_hold(RecSampler *s)
{
  s->rest += s->gap;
  s->gap = 0;
}

/* Remembers a sampled block; 0 or ENOMEM. */
int rec_sample_add(RecSampler *s, const void *p);
/* Forgets p if it is a sampled block; 1 if it was. */
int rec_sample_del(RecSampler *s, const void *p);

/* Blocks are 16-byte aligned and spread: the address bits above make a
** good enough slot (no multiply on every free). */
static inline size_t rec_sample_slot(const RecSampler *s, uintptr_t p)
{
  return (size_t)(p >> 4 ^ p >> 14) & s->mask;
}

static inline size_t rec_sample_fslot(uintptr_t p)
{
  return (size_t)(p >> 4) & (REC_SAMPLE_FILTER - 1);
}

/* May p be a sampled block? One load: every free asks. */
static inline int rec_sample_maybe(const RecSampler *s, const void *p)
{
  return s->filter[rec_sample_fslot((uintptr_t)p)] != 0;
}

/* Is p a sampled block? */
static inline __attribute__((always_inline)) int rec_sample_has(const RecSampler *s,
                                                                const void *p)
{
  uintptr_t k = (uintptr_t)p, *t = s->set;
  size_t i;
  if (!s->n) return 0;
  for (i = rec_sample_slot(s, k);; i = (i + 1) & s->mask) {
    if (t[i] == k) return 1;
    if (!t[i]) return 0;
  }
}

#endif
