/* sampler.c -- the sampler's random gaps and its set of sampled blocks. */
#include "recorder/capture/sampler.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t next_u64(RecSampler *s)
{
  uint64_t x = s->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  s->rng = x;
  return x * 0x2545F4914F6CDD1Dull;
}

void rec_sample_init(RecSampler *s, uint64_t rate, uint64_t seed, int64_t stop)
{
  s->rate = (double)(rate ? rate : 1);
  s->stop = stop > 0 ? stop : 0;
  if (!seed) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    seed = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)getpid() << 16 ^
           (uint64_t)(uintptr_t)s;
  }
  /* splitmix64 of the seed: neighbouring seeds give unrelated streams */
  seed += 0x9E3779B97F4A7C15ull;
  seed = (seed ^ (seed >> 30)) * 0xBF58476D1CE4E5B9ull;
  seed = (seed ^ (seed >> 27)) * 0x94D049BB133111EBull;
  seed ^= seed >> 31;
  s->rng = seed ? seed : 1;
  s->set = NULL;
  s->mask = s->n = 0;
  memset(s->filter, 0, sizeof(s->filter));
  rec_sample_redraw(s);  /* the first gap is drawn too, as Go does */
}

void rec_sample_free(RecSampler *s)
{
  free(s->set);
  s->set = NULL;
  s->mask = s->n = 0;
  rec_sample_fill(s);
}

void rec_sample_fill(RecSampler *s)
{
  memset(s->filter, REC_SAMPLE_ALL, sizeof(s->filter));
  s->gap = REC_SAMPLE_OFF;
  s->rest = 0;
}

void rec_sample_redraw(RecSampler *s)
{
  /* U in (0, 1]: 53 random bits, never 0 */
  double u = (double)((next_u64(s) >> 11) + 1) * (1.0 / 9007199254740992.0);
  double g = ceil(-s->rate * log(u));
  rec_sample_split(s, g < 1.0 ? 1 : (int64_t)g);  /* at most 37 * 2^30 */
}

static int grow(RecSampler *s)
{
  size_t cap = s->set ? (s->mask + 1) * 2 : 256, i;
  uintptr_t *t = calloc(cap, sizeof(*t)), *old = s->set;
  size_t omask = s->mask;
  if (!t) return ENOMEM;
  s->set = t;
  s->mask = cap - 1;
  if (old) {
    for (i = 0; i <= omask; i++) {
      size_t j;
      if (!old[i]) continue;
      for (j = rec_sample_slot(s, old[i]); t[j]; j = (j + 1) & s->mask) {}
      t[j] = old[i];
    }
    free(old);
  }
  return 0;
}

int rec_sample_add(RecSampler *s, const void *p)
{
  uintptr_t k = (uintptr_t)p;
  size_t i;
  if (!k) return 0;
  if ((!s->set || (s->n + 1) * 2 > s->mask + 1) && grow(s)) return ENOMEM;
  for (i = rec_sample_slot(s, k); s->set[i]; i = (i + 1) & s->mask)
    if (s->set[i] == k) return 0;
  s->set[i] = k;
  s->n++;
  i = rec_sample_fslot(k);
  if (s->filter[i] != REC_SAMPLE_ALL) s->filter[i]++;
  return 0;
}

int rec_sample_del(RecSampler *s, const void *p)
{
  uintptr_t k = (uintptr_t)p, *t = s->set;
  size_t i, j;
  if (!s->n) return 0;
  for (i = rec_sample_slot(s, k); t[i] != k; i = (i + 1) & s->mask)
    if (!t[i]) return 0;
  /* Backward shift: move later entries of the run into the hole, so that
  ** no lookup stops early (no tombstones). */
  for (j = i;;) {
    size_t h;
    j = (j + 1) & s->mask;
    if (!t[j]) break;
    h = rec_sample_slot(s, t[j]);
    /* t[j] may move to i unless its home lies cyclically in (i, j] */
    if (i <= j ? (i < h && h <= j) : (i < h || h <= j)) continue;
    t[i] = t[j];
    i = j;
  }
  t[i] = 0;
  s->n--;
  i = rec_sample_fslot(k);
  if (s->filter[i] != REC_SAMPLE_ALL) s->filter[i]--;
  return 1;
}
