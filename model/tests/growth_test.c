/* growth_test.c -- model/ljm_growth.h on hand-made event series whose
** answer is known: a steady leak (its slope exact, across the buckets'
** doublings), memory that levels off, a sawtooth of garbage under a
** growing heap, a single spike, a reallocation that moves a block within
** its site (no dip), a leak on a stack, and a recording too short. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decoder/tests/check.h"
#include "model/ljm_growth.h"
#include "model/ljm_model_load.h"

static LjmLiveEvent alloc_ev(uint32_t site, uint64_t size, uint64_t usec)
{
  LjmLiveEvent ev;
  memset(&ev, 0, sizeof(ev));
  ev.kind = LJM_EV_ALLOC;
  ev.site = site;
  ev.old_site = ev.dropped_site = LJM_NO_SITE;
  ev.node = ev.old_node = ev.dropped_node = LJM_NO_NODE;
  ev.new_size = size;
  ev.time = usec;
  return ev;
}

static LjmLiveEvent free_ev(uint32_t site, uint64_t size, uint64_t usec)
{
  LjmLiveEvent ev = alloc_ev(LJM_NO_SITE, 0, usec);
  ev.kind = LJM_EV_FREE;
  ev.old_site = site;
  ev.old_size = size;
  return ev;
}

/* The steadily growing rows of g after skip_us, sites only. */
static int analyse(LjmGrowth *g, uint64_t skip_us, LjmGrowthResult *r)
{
  LjmModel *m = ljm_model_new();
  int rc = ljm_growth_analyse(g, m, skip_us, r);
  ljm_model_free(m);
  return rc;
}

static int listed(const LjmGrowthResult *r, uint32_t site)
{
  for (size_t i = 0; i < r->nsites; i++)
    if (r->sites[i].key == site) return 1;
  return 0;
}

int main(void)
{
  LjmGrowthResult r;
  LjmLiveEvent ev;

  /* 100 s, an event every 10 ms. Site 0 leaks 1000 B/s; site 1 grows to
  ** 50 kB in 10 s and stays; site 2 makes garbage freed every second, more
  ** of it each time (a heap the leak makes grow); site 3 holds 10 kB
  ** except for one spike of 1 MB; site 4 reallocates one block bigger
  ** and bigger (its own realloc: a steady leak with no dip). */
  LjmGrowth *g = ljm_growth_new();
  uint64_t garbage = 0, block = 0;
  for (uint64_t t = 0; t <= 100000000; t += 10000) {
    ev = alloc_ev(0, 10, t);
    ljm_growth_event(g, &ev);
    if (t < 10000000) {
      ev = alloc_ev(1, 50, t);
      ljm_growth_event(g, &ev);
    }
    ev = alloc_ev(2, 40 + t / 1000000, t);
    ljm_growth_event(g, &ev);
    garbage += 40 + t / 1000000;
    if (t % 1000000 == 0) {
      ev = free_ev(2, garbage, t);
      ljm_growth_event(g, &ev);
      garbage = 0;
    }
    if (t == 0) {
      ev = alloc_ev(3, 10000, t);
      ljm_growth_event(g, &ev);
    }
    if (t == 50000000) {
      ev = alloc_ev(3, 1000000, t);
      ljm_growth_event(g, &ev);
    } else if (t == 50010000) {
      ev = free_ev(3, 1000000, t);
      ljm_growth_event(g, &ev);
    }
    ev = alloc_ev(4, block + 10, t);
    ev.kind = LJM_EV_REALLOC;
    ev.old_site = 4;
    ev.old_size = block;
    block += 10;
    ljm_growth_event(g, &ev);
  }
  CHECKF(ljm_growth_timed(g) && !ljm_growth_oom(g), "timed, memory enough");
  CHECKF(analyse(g, 0, &r) == 0, "analysed");
  CHECKF(r.points >= LJM_GROWTH_BUCKETS / 2 && r.points <= LJM_GROWTH_BUCKETS,
        "points within the bound after the doublings: %u", r.points);
  CHECKF(r.bucket_us * r.points >= 100000000 && r.to_us == 100000000, "the whole time: %llu x %u",
        (unsigned long long)r.bucket_us, r.points);
  CHECKF(listed(&r, 0) && listed(&r, 4), "the leak and the growing block listed");
  CHECKF(!listed(&r, 1), "levels off: not listed");
  CHECKF(!listed(&r, 2), "garbage freed at each collection: not listed");
  CHECKF(!listed(&r, 3), "a spike: not listed");
  for (size_t i = 0; i < r.nsites; i++) {
    const LjmGrowthRow *row = &r.sites[i];
    if (row->key == 0)
      CHECKF(fabs(row->slope - 1000) < 10 && row->steady == 1 && row->in_use == 100010,
            "site 0: 1000 B/s (%.1f), steady (%.2f), 100010 in use (%lld)", row->slope,
            row->steady, (long long)row->in_use);
    if (row->key == 4)
      CHECKF(fabs(row->slope - 1000) < 10, "site 4: 1000 B/s (%.1f)", row->slope);
  }
  CHECKF(r.nsites < 2 || r.sites[0].slope >= r.sites[1].slope, "steepest first");
  ljm_growth_result_free(&r);

  /* --skip past the level-off point: a line that only grew before it has
  ** nothing to show; past the end: too short. */
  CHECKF(analyse(g, 20000000, &r) == 0 && !listed(&r, 1) && listed(&r, 0), "skip 20 s");
  CHECKF(r.from_us == 20000000, "from the skipped time");
  ljm_growth_result_free(&r);
  CHECKF(analyse(g, 200000000, &r) == -1 && !ljm_growth_oom(g), "skip past the end: too short");
  ljm_growth_free(g);

  /* Less than LJM_GROWTH_MIN_POINTS buckets: too short. */
  g = ljm_growth_new();
  for (uint64_t t = 0; t <= 500000; t += 1000) {
    ev = alloc_ev(0, 100, t);
    ljm_growth_event(g, &ev);
  }
  CHECKF(analyse(g, 0, &r) == -1 && r.points < LJM_GROWTH_MIN_POINTS, "0.5 s: too short (%u)",
        r.points);
  ljm_growth_free(g);

  /* No time marks: events without time. */
  g = ljm_growth_new();
  ev = alloc_ev(0, 100, LJM_NO_TIME_US);
  ljm_growth_event(g, &ev);
  CHECKF(!ljm_growth_timed(g), "no time marks");
  ljm_growth_free(g);

  /* A leak that starts at 60% of the time: listed, at its own slope, since
  ** the second half; one that starts at 90% is not (it must span the last
  ** quarter). */
  for (int late = 0; late < 2; late++) {
    uint64_t start = late ? 90000000 : 60000000;
    g = ljm_growth_new();
    for (uint64_t t = 0; t <= 100000000; t += 10000) {
      ev = alloc_ev(0, t >= start ? 10 : 0, t);
      ljm_growth_event(g, &ev);
    }
    CHECKF(analyse(g, 0, &r) == 0, "late leak analysed");
    if (!late)
      CHECKF(r.nsites == 1 && fabs(r.sites[0].slope - 1000) < 10 && r.sites[0].since_us >= 50000000 &&
                 r.sites[0].since_us <= 60000000,
             "a leak from 60 s: 1000 B/s since the second half (%zu rows, %.1f, %llu)", r.nsites,
             r.nsites ? r.sites[0].slope : 0, r.nsites ? (unsigned long long)r.sites[0].since_us : 0);
    else
      CHECKF(r.nsites == 0, "a leak from 90 s: not listed");
    ljm_growth_result_free(&r);
    ljm_growth_free(g);
  }

  /* A leak too small to tell: below LJM_GROWTH_MIN_EXACT over the time. */
  g = ljm_growth_new();
  for (uint64_t t = 0; t <= 10000000; t += 100000) {
    ev = alloc_ev(0, 5, t);
    ljm_growth_event(g, &ev);
  }
  CHECKF(analyse(g, 0, &r) == 0 && r.nsites == 0, "500 bytes in 10 s: under the minimum");
  ljm_growth_free(g);

  return check_done("growth_test");
}
