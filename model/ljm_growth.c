/* ljm_growth.c -- in-use bytes over time per site and stack, and steady growth. */
#include "model/ljm_growth.h"

#include <stdlib.h>
#include <string.h>

#define NB LJM_GROWTH_BUCKETS
#define NO_SLOT UINT32_MAX

/* One site's or stack's series: bucket j holds the least it had in use
** during bucket j (the lower envelope: a collection that frees garbage
** shows in it, a leak does not); 'at' is its last event's bucket, whose
** minimum is still running, and 'cur' what it holds now. */
typedef struct Key {
  int64_t cur;
  uint32_t slot;     /* its buckets: pool[slot * NB ...], NO_SLOT before its first event */
  uint32_t at;
} Key;

typedef struct Keys {
  Key *k;
  size_t n, cap;
} Keys;

struct LjmGrowth {
  Keys site, node;
  float *pool;       /* NB buckets per key that had an event */
  size_t nslots, capslots;
  uint64_t width;    /* usec per bucket */
  uint64_t now;      /* the latest time seen */
  int timed, oom;
};

LjmGrowth *ljm_growth_new(void)
{
  LjmGrowth *g = calloc(1, sizeof(*g));
  if (g) g->width = LJM_GROWTH_BUCKET_US;
  return g;
}

static void keys_free(Keys *k) { free(k->k); }

void ljm_growth_free(LjmGrowth *g)
{
  if (!g) return;
  keys_free(&g->site);
  keys_free(&g->node);
  free(g->pool);
  free(g);
}

int ljm_growth_timed(const LjmGrowth *g) { return g->timed; }
int ljm_growth_oom(const LjmGrowth *g) { return g->oom; }
uint64_t ljm_growth_end(const LjmGrowth *g) { return g->now; }

/* Neighbouring buckets merge (the lesser minimum) and the buckets double:
** the series keeps its length bound. */
static void compact_keys(LjmGrowth *g, Keys *ks)
{
  for (size_t i = 0; i < ks->n; i++) {
    Key *k = &ks->k[i];
    if (k->slot == NO_SLOT) continue;
    float *v = g->pool + (size_t)k->slot * NB;
    for (uint32_t j = 0; 2 * j <= k->at; j++) {
      uint32_t hi = 2 * j + 1 <= k->at ? 2 * j + 1 : 2 * j;
      v[j] = v[2 * j] < v[hi] ? v[2 * j] : v[hi];
    }
    k->at /= 2;
  }
}

static void advance(LjmGrowth *g, uint64_t t)
{
  if (t <= g->now) return;
  g->now = t;
  while (g->now / g->width >= NB) {
    compact_keys(g, &g->site);
    compact_keys(g, &g->node);
    g->width *= 2;
  }
}

void ljm_growth_time(LjmGrowth *g, uint64_t usec)
{
  g->timed = 1;
  advance(g, usec);
}

static Key *key_of(LjmGrowth *g, Keys *ks, uint32_t id)
{
  if (id >= ks->n) {
    if (id >= ks->cap) {
      size_t cap = ks->cap ? ks->cap : 256;
      while (cap <= id) cap *= 2;
      Key *k = realloc(ks->k, cap * sizeof(*k));
      if (!k) {
        g->oom = 1;
        return NULL;
      }
      ks->k = k;
      ks->cap = cap;
    }
    for (size_t i = ks->n; i <= id; i++) ks->k[i] = (Key){0, NO_SLOT, 0};
    ks->n = (size_t)id + 1;
  }
  Key *k = &ks->k[id];
  if (k->slot == NO_SLOT) {
    if (g->nslots == g->capslots) {
      size_t cap = g->capslots ? g->capslots * 2 : 256;
      float *p = realloc(g->pool, cap * NB * sizeof(*p));
      if (!p) {
        g->oom = 1;
        return NULL;
      }
      g->pool = p;
      g->capslots = cap;
    }
    k->slot = (uint32_t)g->nslots++;
    /* Nothing in use before its first event. */
    k->at = (uint32_t)(g->now / g->width);
    memset(g->pool + (size_t)k->slot * NB, 0, ((size_t)k->at + 1) * sizeof(float));
  }
  return k;
}

/* Buckets after the key's last event's, up to b, held what it holds now. */
static void fill(LjmGrowth *g, Key *k, uint32_t b)
{
  float *v = g->pool + (size_t)k->slot * NB;
  for (uint32_t j = k->at + 1; j <= b; j++) v[j] = (float)k->cur;
  if (b > k->at) k->at = b;
}

static void move(LjmGrowth *g, Keys *ks, uint32_t id, int64_t delta)
{
  if (g->oom) return;
  Key *k = key_of(g, ks, id);
  if (!k) return;
  fill(g, k, (uint32_t)(g->now / g->width));
  k->cur += delta;
  float *v = g->pool + (size_t)k->slot * NB + k->at;
  if ((float)k->cur < *v) *v = (float)k->cur;
}

/* Adds d to key id's net change among the n keys of one event; returns n. */
static int add_net(uint32_t *ids, int64_t *net, int n, uint32_t id, int64_t d)
{
  for (int i = 0; i < n; i++)
    if (ids[i] == id) {
      net[i] += d;
      return n;
    }
  ids[n] = id;
  net[n] = d;
  return n + 1;
}

void ljm_growth_event(LjmGrowth *g, const LjmLiveEvent *ev)
{
  if (ev->time != LJM_NO_TIME_US) {
    g->timed = 1;
    advance(g, ev->time);
  }
  /* Up to three blocks change hands (freed, dropped, allocated); each site
  ** and stack gets its net change at once, so that a reallocation makes no
  ** dip in its minimum. Sizes stay far below 2^63: the decoder bounds them. */
  uint32_t sites[3], nodes[3];
  int64_t sd[3], nd[3];
  int ns = 0, nn = 0;
  if (ev->kind != LJM_EV_ALLOC) {
    if (ev->old_site != LJM_NO_SITE) ns = add_net(sites, sd, ns, ev->old_site, -(int64_t)ev->old_size);
    if (ev->old_node != LJM_NO_NODE) nn = add_net(nodes, nd, nn, ev->old_node, -(int64_t)ev->old_size);
  }
  if (ev->kind != LJM_EV_FREE) {
    if (ev->dropped_site != LJM_NO_SITE)
      ns = add_net(sites, sd, ns, ev->dropped_site, -(int64_t)ev->dropped_size);
    if (ev->dropped_node != LJM_NO_NODE)
      nn = add_net(nodes, nd, nn, ev->dropped_node, -(int64_t)ev->dropped_size);
    if (ev->site != LJM_NO_SITE) ns = add_net(sites, sd, ns, ev->site, (int64_t)ev->new_size);
    if (ev->node != LJM_NO_NODE) nn = add_net(nodes, nd, nn, ev->node, (int64_t)ev->new_size);
  }
  for (int i = 0; i < ns; i++) move(g, &g->site, sites[i], sd[i]);
  for (int i = 0; i < nn; i++) move(g, &g->node, nodes[i], nd[i]);
}

/* -- Analysis ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of the slopes between every pair of points (Theil-Sen);
** scratch holds n * (n - 1) / 2 doubles. */
static double theil_sen(const double *t, const double *v, uint32_t n, double *scratch)
{
  size_t m = 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++)
      if (t[j] > t[i]) scratch[m++] = (v[j] - v[i]) / (t[j] - t[i]);
  if (!m) return 0;
  qsort(scratch, m, sizeof(*scratch), cmp_double);
  return m % 2 ? scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2;
}

typedef struct Window {
  uint32_t first, n;      /* buckets first .. first + n - 1 */
  uint64_t width;         /* usec per bucket */
  uint64_t from_us;       /* the analysed time's start */
  double t[NB];           /* each point's time, seconds */
  int64_t min_growth;
  double scratch[NB * (NB - 1) / 2];
} Window;

/* The rules on v[0..n) at times t, but the fall: whether it grows steadily. */
static int steady_in(const double *t, const double *v, uint32_t n, int64_t min_growth,
                     LjmGrowthRow *row, double *scratch)
{
  uint32_t half = n / 2, q = n - n / 4;
  double first_max = v[0], last_min = v[q];
  if (v[n - 1] - v[0] < (double)min_growth) return 0;
  for (uint32_t i = 1; i < half; i++)
    if (v[i] > first_max) first_max = v[i];
  for (uint32_t i = q + 1; i < n; i++)
    if (v[i] < last_min) last_min = v[i];
  if (last_min <= first_max) return 0;
  uint32_t stretches = n - 1 < LJM_GROWTH_STRETCHES ? n - 1 : LJM_GROWTH_STRETCHES, grew = 0;
  for (uint32_t s = 0; s < stretches; s++) {
    uint32_t a = s * (n - 1) / stretches, b = (s + 1) * (n - 1) / stretches;
    grew += v[b] > v[a];
  }
  if (2 * grew < stretches) return 0;
  double slope = theil_sen(t, v, n, scratch);
  if (slope <= 0) return 0;
  double late = theil_sen(t + half, v + half, n - half, scratch);
  if (late < slope / 2) return 0;
  row->slope = slope;
  row->steady = (double)grew / stretches;
  row->grown = (int64_t)(v[n - 1] - v[0]);
  return 1;
}

/* Whether the series v (w->n points) grows steadily over the whole window,
** or over its second half, or its last quarter (a leak that started late);
** fills row's figures for the longest that does, or for a later one whose
** slope is LJM_GROWTH_FASTER times as steep (growth that started or sped up
** late). Over the whole window, the series never fell by more than
** LJM_GROWTH_MAX_FALL of the gain: a leak's minimum hardly falls, garbage's
** falls at each collection. */
static int steady(const Window *w, const double *v, LjmGrowthRow *row, double *scratch)
{
  uint32_t n = w->n;
  double peak = v[0], fall = 0;
  for (uint32_t i = 1; i < n; i++) {
    if (v[i] > peak) peak = v[i];
    else if (peak - v[i] > fall) fall = peak - v[i];
  }
  const uint32_t starts[3] = {0, n / 2, n - n / 4};
  int found = 0;
  for (int i = 0; i < 3; i++) {
    uint32_t s = starts[i];
    LjmGrowthRow r = *row;
    if (n - s < LJM_GROWTH_MIN_POINTS) break;
    if (fall > (v[n - 1] - v[s]) * LJM_GROWTH_MAX_FALL) continue;
    if (!steady_in(w->t + s, v + s, n - s, w->min_growth, &r, scratch)) continue;
    if (found && r.slope < row->slope * LJM_GROWTH_FASTER) continue;
    uint64_t since = (uint64_t)(w->first + s) * w->width;
    r.since_us = since > w->from_us ? since : w->from_us;
    *row = r;
    found = 1;
  }
  return found;
}

static int row_order(const void *a, const void *b)
{
  const LjmGrowthRow *x = a, *y = b;
  if (x->slope != y->slope) return x->slope > y->slope ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

/* The steadily growing keys of ks, steepest first. */
static int analyse_keys(LjmGrowth *g, Keys *ks, Window *w, LjmGrowthRow **rows, size_t *nrows)
{
  uint32_t last = (uint32_t)(g->now / g->width);
  double v[NB];
  size_t n = 0, cap = 0;
  *rows = NULL;
  *nrows = 0;
  for (size_t i = 0; i < ks->n; i++) {
    Key *k = &ks->k[i];
    if (k->slot == NO_SLOT) continue;
    fill(g, k, last);
    const float *p = g->pool + (size_t)k->slot * NB + w->first;
    for (uint32_t j = 0; j < w->n; j++) v[j] = p[j];
    LjmGrowthRow row = {(uint32_t)i, 0, 0, k->cur, 0, 0};
    if (!steady(w, v, &row, w->scratch)) continue;
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 16;
      LjmGrowthRow *r = realloc(*rows, nc * sizeof(*r));
      if (!r) {
        free(*rows);
        *rows = NULL;
        return -1;
      }
      *rows = r;
      cap = nc;
    }
    (*rows)[n++] = row;
  }
  if (n) qsort(*rows, n, sizeof(**rows), row_order);
  *nrows = n;
  return 0;
}

int ljm_growth_analyse(LjmGrowth *g, const LjmModel *m, uint64_t skip_us, LjmGrowthResult *r)
{
  const LjmStreamInfo *si = ljm_model_stream(m);
  memset(r, 0, sizeof(*r));
  if (g->oom) return -1;
  uint32_t last = (uint32_t)(g->now / g->width), first = 0;
  /* The first bucket that ends after the skipped time. */
  while (first < last && (uint64_t)(first + 1) * g->width <= skip_us) first++;
  r->from_us = skip_us < g->now ? skip_us : g->now;
  r->to_us = g->now;
  r->bucket_us = g->width;
  r->points = last - first + 1;
  if (skip_us >= g->now || r->points < LJM_GROWTH_MIN_POINTS) {
    if (skip_us >= g->now) r->points = 0;
    return -1;
  }
  Window *w = malloc(sizeof(*w));
  if (!w) {
    g->oom = 1;
    return -1;
  }
  w->first = first;
  w->n = r->points;
  w->width = g->width;
  w->from_us = r->from_us;
  for (uint32_t j = 0; j < w->n; j++) {  /* a bucket's end; the last one's is now */
    uint64_t k = (uint64_t)first + j + 1;
    uint64_t end = k > g->now / g->width ? g->now : k * g->width;
    w->t[j] = (double)end / 1e6;
  }
  w->min_growth = si->sample_rate ? (int64_t)(LJM_GROWTH_MIN_SAMPLES * si->sample_rate)
                                  : (int64_t)LJM_GROWTH_MIN_EXACT;
  r->min_growth = w->min_growth;
  int rc = analyse_keys(g, &g->site, w, &r->sites, &r->nsites);
  if (!rc && (si->ext_flags & 1u)) rc = analyse_keys(g, &g->node, w, &r->stacks, &r->nstacks);
  free(w);
  if (rc) {
    g->oom = 1;
    ljm_growth_result_free(r);
  }
  return rc;
}

void ljm_growth_result_free(LjmGrowthResult *r)
{
  free(r->sites);
  free(r->stacks);
  r->sites = r->stacks = NULL;
  r->nsites = r->nstacks = 0;
}
