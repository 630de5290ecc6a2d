/* ljm_live.c -- rows of a model still being built, refresh by refresh
** (ljm_live.h). */
#include <stdlib.h>
#include <string.h>

#include "decoder/ljm_decoder.h"
#include "model/ljm_hmap.h"
#include "model/ljm_live.h"

/* What a row had at the last refresh and at the first. */
typedef struct Prev {
  uint64_t alloc, free;
  int64_t inuse, start;
} Prev;

/* Figures of one id now. */
typedef struct Now {
  uint64_t alloc, free, inuse, inuse_count;
} Now;

/* A view's rows, and what each id with figures had before: found by id
** (most stack nodes never have figures, so nothing is kept per node). */
typedef struct View {
  LjmHmap prev_of;  Prev *prev;  uint32_t nprev, capprev;
  LjmLiveRow *rows;  uint32_t nrows, caprows;
} View;

struct LjmLive {
  char *key;                 /* label key, or NULL */
  View view[3];
  LjmLiveTotals t;
  Prev all;                  /* the whole heap's */
  uint64_t hist_inuse[LJM_LIVE_HISTORY], hist_rss[LJM_LIVE_HISTORY];
  size_t hist_n, hist_head;
  /* label values: text per id, the id of each set (NONE: not resolved) */
  char **values;  uint32_t nvalues, capvalues;
  LjmHmap value_by_hash;
  uint32_t *set_value;       /* LJM_MODEL_SETS */
  Now *vnow;  uint32_t capvnow;
  double dt;                 /* seconds since the last refresh */
  int oom;
};

#define NONE UINT32_MAX

LjmLive *ljm_live_new(const char *label_key)
{
  LjmLive *l = calloc(1, sizeof(*l));
  if (!l) return NULL;
  int bad = ljm_hmap_init(&l->value_by_hash) != 0;
  bad |= !(l->set_value = malloc(LJM_MODEL_SETS * sizeof(*l->set_value)));
  for (int v = 0; v < 3; v++) bad |= ljm_hmap_init(&l->view[v].prev_of) != 0;
  if (bad || (label_key && !(l->key = strdup(label_key)))) {
    ljm_live_free(l);
    return NULL;
  }
  for (uint32_t i = 0; i < LJM_MODEL_SETS; i++) l->set_value[i] = NONE;
  return l;
}

void ljm_live_free(LjmLive *l)
{
  if (!l) return;
  for (int v = 0; v < 3; v++) {
    ljm_hmap_free(&l->view[v].prev_of);
    free(l->view[v].prev);
    free(l->view[v].rows);
  }
  for (uint32_t i = 0; i < l->nvalues; i++) free(l->values[i]);
  free(l->values);
  free(l->vnow);
  free(l->set_value);
  ljm_hmap_free(&l->value_by_hash);
  free(l->key);
  free(l);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
  if (need <= *cap) return 0;
  uint32_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * elem);
  if (!q) return -1;
  memset((char *)q + (size_t)*cap * elem, 0, (size_t)(c - *cap) * elem);
  *p = q;
  *cap = c;
  return 0;
}

/* The id of a value's text, made on first use; NONE when out of memory. */
static uint32_t value_id(LjmLive *l, const char *s, size_t len)
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  for (;; h = ljm_hash64(h + 1)) {  /* another hash on a collision */
    uint32_t id = ljm_hmap_get(&l->value_by_hash, h);
    if (id == LJM_HMAP_NONE) break;
    if (strlen(l->values[id]) == len && memcmp(l->values[id], s, len) == 0) return id;
  }
  if (grow((void **)&l->values, &l->capvalues, l->nvalues + 1, sizeof(char *))) return NONE;
  char *c = malloc(len + 1);
  if (!c) return NONE;
  memcpy(c, s, len);
  c[len] = 0;
  if (ljm_hmap_put(&l->value_by_hash, h, l->nvalues) != 0) {
    free(c);
    return NONE;
  }
  l->values[l->nvalues] = c;
  return l->nvalues++;
}

/* A row from an id's figures now and before; updates before. An id
** first seen after the first refresh started from nothing (start 0). */
static void row_of(const LjmLive *l, LjmLiveRow *r, uint32_t id, const Now *n, Prev *p, int first)
{
  if (first) p->start = (int64_t)n->inuse;
  r->id = id;
  r->inuse_bytes = n->inuse;
  r->inuse_count = n->inuse_count;
  double alloc = (double)(n->alloc - p->alloc), grew = (double)((int64_t)n->inuse - p->inuse);
  r->alloc_rate = l->dt > 0 ? alloc / l->dt : 0;
  /* freed: of the blocks the row allocated, wherever the free was made */
  r->free_rate = l->dt > 0 && alloc > grew ? (alloc - grew) / l->dt : 0;
  r->grown = (int64_t)n->inuse - p->start;
  r->grown_last = first ? 0 : (int64_t)n->inuse - p->inuse;
  p->alloc = n->alloc;
  p->free = n->free;
  p->inuse = (int64_t)n->inuse;
}

/* One view's rows from the figures of ids 0..n-1 (NULL: none there). */
static int view_sample(LjmLive *l, View *v, uint32_t n, const Now *(*get)(void *, uint32_t, Now *),
                       void *ud, int first)
{
  v->nrows = 0;
  for (uint32_t id = 0; id < n; id++) {
    Now buf;
    const Now *f = get(ud, id, &buf);
    if (!f || (!f->alloc && !f->free && !f->inuse)) continue;  /* never had any */
    uint32_t at = ljm_hmap_get(&v->prev_of, id);
    if (at == LJM_HMAP_NONE) {
      if (grow((void **)&v->prev, &v->capprev, v->nprev + 1, sizeof(Prev)) ||
          ljm_hmap_put(&v->prev_of, id, v->nprev) != 0)
        return -1;
      at = v->nprev++;
      v->prev[at] = (Prev){ 0, 0, 0, 0 };  /* a slot of a reading before a restart */
    }
    if (grow((void **)&v->rows, &v->caprows, v->nrows + 1, sizeof(LjmLiveRow))) return -1;
    row_of(l, &v->rows[v->nrows++], id, f, &v->prev[at], first);
  }
  return 0;
}

static const Now *site_now(void *ud, uint32_t id, Now *buf)
{
  const LjmFigures *f = &ljm_model_site(ud, id)->fig;
  *buf = (Now){ f->alloc_bytes, f->free_bytes, f->inuse_bytes, f->inuse_count };
  return buf;
}

static const Now *node_now(void *ud, uint32_t id, Now *buf)
{
  const LjmFigures *f = ljm_model_node_self(ud, id);
  *buf = (Now){ f->alloc_bytes, f->free_bytes, f->inuse_bytes, f->inuse_count };
  return buf;
}

static const Now *value_now(void *ud, uint32_t id, Now *buf)
{
  (void)buf;
  return &((LjmLive *)ud)->vnow[id];
}

/* Sums the label sets' figures per value of the key; the blocks of no
** set, and of sets without the key, are "(none)". */
static int label_sample(LjmLive *l, const LjmModel *m, const Now *all)
{
  uint32_t none = value_id(l, "(none)", 6);
  if (none == NONE) return -1;
  for (uint32_t s = 1; s < LJM_MODEL_SETS; s++) {
    if (l->set_value[s] != NONE || !ljm_model_label_defined(m, s)) continue;
    LjmStr v;
    uint32_t id = ljm_model_label_value(m, s, l->key, strlen(l->key), &v) ? value_id(l, v.s, v.len)
                  : ljm_model_label_other(m, s)                           ? value_id(l, "(other)", 7)
                                                                           : none;
    if (id == NONE) return -1;
    l->set_value[s] = id;
  }
  if (grow((void **)&l->vnow, &l->capvnow, l->nvalues, sizeof(Now))) return -1;
  memset(l->vnow, 0, (size_t)l->nvalues * sizeof(Now));
  Now rest = *all;
  for (uint32_t s = 1; s < LJM_MODEL_SETS; s++) {
    const LjmFigures *f = l->set_value[s] != NONE ? ljm_model_label_figures(m, s) : NULL;
    if (!f) continue;
    Now *n = &l->vnow[l->set_value[s]];
    n->alloc += f->alloc_bytes;
    n->free += f->free_bytes;
    n->inuse += f->inuse_bytes;
    n->inuse_count += f->inuse_count;
    rest.alloc -= f->alloc_bytes;
    rest.free -= f->free_bytes;
    rest.inuse -= f->inuse_bytes;
    rest.inuse_count -= f->inuse_count;
  }
  Now *n = &l->vnow[none];
  n->alloc += rest.alloc;
  n->free += rest.free;
  n->inuse += rest.inuse;
  n->inuse_count += rest.inuse_count;
  return 0;
}

static int sample(LjmLive *l, const LjmModel *m, uint64_t now_us, int point);

int ljm_live_sample(LjmLive *l, const LjmModel *m, uint64_t now_us)
{
  return sample(l, m, now_us, 1);
}

int ljm_live_mark(LjmLive *l, const LjmModel *m, uint64_t now_us)
{
  return sample(l, m, now_us, 0);
}

void ljm_live_restart(LjmLive *l)
{
  for (int v = 0; v < 3; v++) {
    View *w = &l->view[v];
    ljm_hmap_clear(&w->prev_of);
    w->nprev = w->nrows = 0;
  }
  l->all = (Prev){ 0, 0, 0, 0 };
  l->t.refreshes = 0;
}

static int sample(LjmLive *l, const LjmModel *m, uint64_t now_us, int point)
{
  const LjmStreamInfo *si = ljm_model_stream(m);
  uint64_t at = (si->ext_flags & 2) && si->duration != LJM_NO_TIME_US ? si->duration : now_us;
  int first = l->t.refreshes == 0;
  l->dt = first || at <= l->t.at_us ? 0 : (double)(at - l->t.at_us) / 1e6;
  if (first) l->t.since_us = 0;
  else if (at > l->t.at_us) l->t.since_us += at - l->t.at_us;
  l->t.at_us = at;
  l->t.refreshes++;
  /* The whole heap: the sites' sums (the model sums its totals at the end). */
  Now all = { 0, 0, 0, 0 };
  for (uint32_t i = 0; i < ljm_model_nsites(m); i++) {
    const LjmFigures *f = &ljm_model_site(m, i)->fig;
    all.alloc += f->alloc_bytes;
    all.free += f->free_bytes;
    all.inuse += f->inuse_bytes;
    all.inuse_count += f->inuse_count;
  }
  row_of(l, &l->t.all, 0, &all, &l->all, first);
  l->t.peak_bytes = ljm_model_totals(m)->fig.peak_bytes;
  l->t.events = ljm_model_totals(m)->events;
  const LjmRssSample *rss;
  size_t nrss = ljm_model_rss(m, &rss);
  l->t.rss = nrss ? rss[nrss - 1].bytes : 0;
  if (point) {
    size_t at_hist = (l->hist_head + l->hist_n) % LJM_LIVE_HISTORY;
    l->hist_inuse[at_hist] = all.inuse;
    l->hist_rss[at_hist] = l->t.rss;
    if (l->hist_n < LJM_LIVE_HISTORY) l->hist_n++;
    else l->hist_head = (l->hist_head + 1) % LJM_LIVE_HISTORY;
  }

  if (view_sample(l, &l->view[LJM_LIVE_LINES], (uint32_t)ljm_model_nsites(m), site_now, (void *)m,
                  first) ||
      view_sample(l, &l->view[LJM_LIVE_STACKS], (uint32_t)ljm_model_nnodes(m), node_now,
                  (void *)m, first))
    return -1;
  if (l->key && ljm_model_stream(m)->label_sets) {
    if (label_sample(l, m, &all) ||
        view_sample(l, &l->view[LJM_LIVE_LABELS], l->nvalues, value_now, l, first))
      return -1;
  }
  return 0;
}

static LjmLiveSort sort_key;

static int row_order(const void *a, const void *b)
{
  const LjmLiveRow *x = a, *y = b;
  double u, v;
  switch (sort_key) {
  case LJM_LIVE_BY_RATE: u = x->alloc_rate; v = y->alloc_rate; break;
  case LJM_LIVE_BY_GROWTH: u = (double)x->grown; v = (double)y->grown; break;
  default: u = (double)x->inuse_bytes; v = (double)y->inuse_bytes; break;
  }
  if (u != v) return u > v ? -1 : 1;
  if (x->inuse_bytes != y->inuse_bytes) return x->inuse_bytes > y->inuse_bytes ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

size_t ljm_live_rows(LjmLive *l, LjmLiveView v, LjmLiveSort s, const LjmLiveRow **rows)
{
  View *w = &l->view[v];
  sort_key = s;
  if (w->nrows) qsort(w->rows, w->nrows, sizeof(*w->rows), row_order);
  *rows = w->rows;
  return w->nrows;
}

const LjmLiveTotals *ljm_live_totals(const LjmLive *l) { return &l->t; }

size_t ljm_live_history(const LjmLive *l, uint64_t *inuse, uint64_t *rss, size_t max)
{
  size_t n = l->hist_n < max ? l->hist_n : max;
  for (size_t i = 0; i < n; i++) {
    size_t at = (l->hist_head + l->hist_n - n + i) % LJM_LIVE_HISTORY;
    if (inuse) inuse[i] = l->hist_inuse[at];
    if (rss) rss[i] = l->hist_rss[at];
  }
  return n;
}

const char *ljm_live_value(const LjmLive *l, uint32_t id)
{
  return id < l->nvalues ? l->values[id] : "";
}

const char *ljm_live_key(const LjmLive *l) { return l->key; }
