/* ljm_model.c -- decoder callbacks into the model: locations, sites, the
** live-heap replay and its peak, and the public accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_model_int.h"

#define MAX_IDS (1u << 31)  /* locs and groups are packed into 31 bits */

void *ljm_model_grow(LjmModel *m, void *arr, uint32_t *cap, size_t elem)
{
  uint32_t n = *cap ? *cap * 2 : 64;
  if (*cap >= MAX_IDS / 2) {
    m->oom = 1;
    return NULL;
  }
  void *p = realloc(arr, (size_t)n * elem);
  if (!p) {
    m->oom = 1;
    return NULL;
  }
  *cap = n;
  return p;
}

void *ljm_model_cover(LjmModel *m, void *arr, uint32_t *cap, uint32_t i, size_t elem,
                      uint32_t first, int fill)
{
  uint64_t n = *cap ? *cap : first;
  while (n <= i) n *= 2;
  void *p = n > UINT32_MAX ? NULL : realloc(arr, (size_t)n * elem);
  if (!p) {
    m->oom = 1;
    return NULL;
  }
  memset((char *)p + (size_t)*cap * elem, fill, (size_t)(n - *cap) * elem);
  *cap = (uint32_t)n;
  return p;
}

uint32_t ljm_model_intern(LjmModel *m, const char *s, size_t len)
{
  uint32_t id = ljm_strtab_intern(&m->str, s, len);
  if (id == NONE) m->oom = 1;
  return id;
}

const char *ljm_model_shown(const char *s, size_t *len, char *cut)
{
  if (*len <= LJM_NAME_SHOWN_MAX) return s;
  memcpy(cut, s, LJM_NAME_SHOWN_MAX);
  memcpy(cut + LJM_NAME_SHOWN_MAX, "...", 3);
  *len = LJM_NAME_SHOWN_MAX + 3;
  return cut;
}

uint32_t ljm_model_intern_shown(LjmModel *m, const char *s, size_t len)
{
  char cut[LJM_NAME_SHOWN_MAX + 3];
  s = ljm_model_shown(s, &len, cut);
  return ljm_model_intern(m, s, len);
}

LjmModel *ljm_model_new(void)
{
  LjmModel *m = calloc(1, sizeof(*m));
  if (!m) return NULL;
  int bad = ljm_strtab_init(&m->str);
  bad |= ljm_hmap_init(&m->proto_by_addr) | ljm_hmap_init(&m->trace_by_no);
  bad |= ljm_hmap_init(&m->alias_by_chunk);
  bad |= ljm_hmap_init(&m->site_by_key) | ljm_hmap_init(&m->prim_by_key);
  bad |= ljm_addrmap_init(&m->blocks) | ljm_hmap_init(&m->src_by_chunk);
  bad |= ljm_hmap_init(&m->ctx_by_key) | ljm_hmap_init(&m->leaf_by_key) |
         ljm_hmap_init(&m->ctx_by_label);
  bad |= ljm_hmap_init(&m->fn_by_text);
  ljm_csyms_init(&m->csyms);
  m->loc_mask = 255;
  m->loc_slots = malloc((m->loc_mask + 1) * sizeof(uint32_t));
  if (bad || !m->loc_slots) {
    ljm_model_free(m);
    return NULL;
  }
  memset(m->loc_slots, 0xff, (m->loc_mask + 1) * sizeof(uint32_t));
  memset(m->loc_cache, 0xff, sizeof(m->loc_cache));
  m->last_leaf = NONE;
  m->gen = 1;
  return m;
}

void ljm_model_free(LjmModel *m)
{
  if (!m) return;
  ljm_strtab_free(&m->str);
  ljm_hmap_free(&m->proto_by_addr);
  ljm_hmap_free(&m->trace_by_no);
  ljm_hmap_free(&m->alias_by_chunk);
  ljm_hmap_free(&m->site_by_key);
  ljm_hmap_free(&m->fn_by_text);
  free(m->fnids);
  ljm_hmap_free(&m->prim_by_key);
  ljm_hmap_free(&m->src_by_chunk);
  ljm_sources_free(m);
  ljm_stacks_free(m);
  ljm_labels_free(m);
  ljm_filter_free(m);
  ljm_group_free(m);
  free(m->site_time);
  ljm_addrmap_free(&m->blocks);
  ljm_csyms_free(&m->csyms);
  free(m->protos);
  free(m->traces);
  free(m->aliases);
  free(m->locs);
  free(m->loc_slots);
  free(m->sites);
  free(m->sitex);
  for (int s = 0; s < 3; s++) {
    free(m->groups[s]);
    free(m->rows[s]);
  }
  free(m->prims);
  free(m->override_names);
  free(m->heap);
  free((char *)m->info.path);
  free(m);
}

/* -- Locations ---------------------------------------------------------- */

static uint32_t loc_find(LjmModel *m, uint64_t addr, uint64_t line, uint64_t traceno)
    __attribute__((noinline));

static uint64_t loc_hash(uint64_t addr, uint64_t line, uint64_t traceno)
{
  return ljm_hash64(addr ^ ljm_hash64(line ^ (traceno * 0x9e3779b97f4a7c15ull)));
}

static int loc_rehash(LjmModel *m)
{
  uint32_t mask = m->loc_mask * 2 + 1;
  uint32_t *slots = malloc(((size_t)mask + 1) * sizeof(uint32_t));
  if (!slots) return -1;
  memset(slots, 0xff, ((size_t)mask + 1) * sizeof(uint32_t));
  for (uint32_t i = 0; i < m->nlocs; i++) {
    const Loc *L = &m->locs[i];
    uint32_t j = (uint32_t)loc_hash(L->addr, L->line, L->traceno) & mask;
    while (slots[j] != NONE) j = (j + 1) & mask;
    slots[j] = i;
  }
  free(m->loc_slots);
  m->loc_slots = slots;
  m->loc_mask = mask;
  return 0;
}

/* Most events repeat a few locations: a small direct-mapped cache first. */
static inline uint32_t loc_of(LjmModel *m, uint64_t addr, uint64_t line, uint64_t traceno)
{
  uint32_t ci = (uint32_t)(addr ^ (addr >> 12) ^ (line * 7) ^ traceno) & (LOC_CACHE - 1);
  uint32_t c = m->loc_cache[ci];
  if (__builtin_expect(c < m->nlocs, 1)) {
    const Loc *L = &m->locs[c];
    if (__builtin_expect(L->addr == addr && L->line == line && L->traceno == traceno, 1))
      return c;
  }
  uint32_t i = loc_find(m, addr, line, traceno);
  if (i != NONE) m->loc_cache[ci] = i;
  return i;
}

uint32_t ljm_model_loc(LjmModel *m, uint64_t addr, uint64_t line, uint64_t traceno)
{
  return loc_of(m, addr, line, traceno);
}

static uint32_t loc_find(LjmModel *m, uint64_t addr, uint64_t line, uint64_t traceno)
{
  uint32_t j = (uint32_t)loc_hash(addr, line, traceno) & m->loc_mask;
  for (uint32_t i; (i = m->loc_slots[j]) != NONE; j = (j + 1) & m->loc_mask) {
    const Loc *L = &m->locs[i];
    if (L->addr == addr && L->line == line && L->traceno == traceno) return i;
  }
  if (m->nlocs == m->caplocs) {
    Loc *l = ljm_model_grow(m, m->locs, &m->caplocs, sizeof(*l));
    if (!l) return NONE;
    m->locs = l;
  }
  uint32_t i = m->nlocs++;
  m->locs[i] = (Loc){ addr, line, traceno, 0, NONE, NONE, { NONE, NONE, NONE } };
  m->loc_slots[j] = i;
  if ((uint64_t)m->nlocs * 2 > m->loc_mask && loc_rehash(m) != 0) {
    m->oom = 1;
    return NONE;
  }
  return i;
}

/* -- Live heap ------------------------------------------------------------ */

/* Before a site's live figures change, keep what they were at the last peak. */
static inline void site_touch(LjmModel *m, uint32_t si)
{
  peak_touch(&m->sitex[si].snap, m->epoch, &m->sites[si].fig);
}

/* The same for a node (extended streams): one an event ended at, so it
** has figures. */
static inline LjmFigures *node_touch(LjmModel *m, uint32_t n)
{
  NodeFig *f = &m->figs[m->node_fig[n]];
  peak_touch(&f->snap, m->epoch, &f->self);
  return &f->self;
}

/* A block's owner is its site, or in an extended stream its ctx (site and
** stack). */
static inline uint32_t owner_site(const LjmModel *m, uint32_t owner)
{
  return m->ctx_owners ? m->ctxs[owner].site : owner;
}

static inline uint32_t owner_node(const LjmModel *m, uint32_t owner)
{
  return m->ctx_owners ? m->ctxs[owner].node : owner;  /* node i is site i */
}

/* A block of owner's freed, 'size' bytes as the model knew it: a
** temporary allocation when the line before it was its stack's new block
** of that size (LjmFigures.temp_count): 1, else 0. Either way the next free
** is not. */
static inline unsigned temp_free(LjmModel *m, uint32_t owner, uint64_t size)
{
  uint32_t node = owner_node(m, owner);
  unsigned temp = m->tmp_plus && m->tmp_node == node && m->tmp_size == size;
  if (temp) {
    m->sites[owner_site(m, owner)].fig.temp_count++;
    if (m->stacks) m->figs[m->node_fig[node]].self.temp_count++;
    if (__builtin_expect(m->label_fig != NULL, 0) && m->ctxs[owner].labels) {
      m->label_fig[m->ctxs[owner].labels].temp_count++;
      LjmFigures *cf = ljm_labels_ctx_fig(m, owner);
      if (cf) cf->temp_count++;
    }
  }
  m->tmp_plus = 0;
  return temp;
}

/* Starts a new slice where event 'index' at time 'time' leaves the last. */
static inline void slice_at(LjmModel *m, uint64_t index, uint64_t time)
{
  uint64_t no = index / m->slice_events;
  if (m->slice && no == m->slice_no && time == m->slice_time) return;
  m->slice++;
  m->slice_no = no;
  m->slice_time = time;
}

static inline __attribute__((always_inline)) void live_add(LjmModel *m, uint32_t owner,
                                                            uint64_t count, uint64_t size)
{
  uint32_t si = owner_site(m, owner);
  site_touch(m, si);
  m->sites[si].fig.inuse_count += count;
  m->sites[si].fig.inuse_bytes += size;
  if (m->stacks) {
    LjmFigures *nf = node_touch(m, m->ctxs[owner].node);
    nf->inuse_count += count;
    nf->inuse_bytes += size;
  }
  if (__builtin_expect(m->label_fig != NULL, 0) && m->ctxs[owner].labels) {
    LjmFigures *lf = &m->label_fig[m->ctxs[owner].labels];
    lf->inuse_count += count;
    lf->inuse_bytes += size;
    if ((lf = ljm_labels_ctx_fig(m, owner))) {
      lf->inuse_count += count;
      lf->inuse_bytes += size;
    }
  }
  m->live_count += count;
  m->live_bytes += size;
}

static inline __attribute__((always_inline)) void live_sub(LjmModel *m, uint32_t owner,
                                                            uint64_t count, uint64_t size)
{
  uint32_t si = owner_site(m, owner);
  site_touch(m, si);
  m->sites[si].fig.inuse_count -= count;
  m->sites[si].fig.inuse_bytes -= size;
  if (m->stacks) {
    LjmFigures *nf = node_touch(m, m->ctxs[owner].node);
    nf->inuse_count -= count;
    nf->inuse_bytes -= size;
  }
  if (__builtin_expect(m->label_fig != NULL, 0) && m->ctxs[owner].labels) {
    LjmFigures *lf = &m->label_fig[m->ctxs[owner].labels];
    lf->inuse_count -= count;
    lf->inuse_bytes -= size;
    if ((lf = ljm_labels_ctx_fig(m, owner))) {
      lf->inuse_count -= count;
      lf->inuse_bytes -= size;
    }
  }
  m->live_count -= count;
  m->live_bytes -= size;
}

/* What a block of the live map (its stored size) stands for: itself, or in
** a sampled stream its estimate; the block's real size. */
static inline uint64_t block_weight(const LjmModel *m, uint64_t stored, uint64_t *count,
                                    uint64_t *bytes)
{
  if (__builtin_expect(m->rate == 0, 1)) {
    *count = 1;
    *bytes = stored;
    return stored;
  }
  uint64_t size = stored & ~LJM_SAMPLE_UP;
  ljm_sample_weight(m->rate, size, (stored & LJM_SAMPLE_UP) != 0, count, bytes);
  return size;
}

/* Refuses an event: decoding stops there (ljm_model_load reports it). */
static void refuse(LjmModel *m, const LjmRawEvent *ev, const char *what, uint64_t v)
{
  m->bad = 1;
  m->bad_diag.offset = ev->offset;
  snprintf(m->bad_diag.msg, sizeof(m->bad_diag.msg), what, (unsigned long long)v);
}

/* Sizes no address space holds, or byte totals past what the views keep
** exact (LJM_SIZE_MAX, LJM_TOTAL_MAX). */
static inline __attribute__((always_inline)) int impossible(LjmModel *m, const LjmRawEvent *ev)
{
  if (ev->kind != LJM_RAW_ALLOC) {
    if (ev->osize > LJM_SIZE_MAX) {
      refuse(m, ev, "impossible block size %llu (above 2^56 bytes)", ev->osize);
      return 1;
    }
    m->sum_free += m->rate ? 0 : ev->osize;  /* sampled: the estimates are summed */
    if (m->sum_free > LJM_TOTAL_MAX) {
      refuse(m, ev, "freed bytes add up to %llu, above 2^62: impossible", m->sum_free);
      return 1;
    }
  }
  if (ev->kind != LJM_RAW_FREE) {
    if (ev->nsize > LJM_SIZE_MAX) {
      refuse(m, ev, "impossible block size %llu (above 2^56 bytes)", ev->nsize);
      return 1;
    }
    m->sum_alloc += m->rate ? 0 : ev->nsize;
    if (m->sum_alloc > LJM_TOTAL_MAX) {
      refuse(m, ev, "allocated bytes add up to %llu, above 2^62: impossible", m->sum_alloc);
      return 1;
    }
  }
  return 0;
}

/* impossible() for an exact stream: one test in the usual case, the same
** refusals (by impossible itself) otherwise. The reference report's path
** takes it; apply keeps the branches, which cost less where the rate may
** be set (pprof and heaptrack count 18 more an event with this one). */
static inline int impossible_exact(LjmModel *m, const LjmRawEvent *ev)
{
  uint64_t os = ev->kind != LJM_RAW_ALLOC ? ev->osize : 0;
  uint64_t ns = ev->kind != LJM_RAW_FREE ? ev->nsize : 0;
  uint64_t sf = m->sum_free + os, sa = m->sum_alloc + ns;
  if (__builtin_expect((os | ns) <= LJM_SIZE_MAX && (sf | sa) <= LJM_TOTAL_MAX, 1)) {
    m->sum_free = sf;
    m->sum_alloc = sa;
    return 0;
  }
  return impossible(m, ev);
}

/* The site of an event's location, its location in *li; NONE when the
** event is refused, memory ran out, or the model stopped taking events.
** exact: the stream is exact (impossible_exact). */
static inline __attribute__((always_inline)) uint32_t event_site(LjmModel *m, const LjmRawEvent *ev,
                                                                uint32_t *li, int exact)
{
  if (m->oom || m->bad || (exact ? impossible_exact(m, ev) : impossible(m, ev))) return NONE;
  *li = loc_of(m, ev->loc.addr, ev->loc.line, ev->loc.traceno);
  if (*li == NONE) return NONE;
  return m->locs[*li].name_gen == m->gen ? m->locs[*li].site : ljm_names_site_of(m, *li);
}

/* A sampled stream's estimates stay below the same limits as exact figures. */
static int impossible_estimate(LjmModel *m, const LjmRawEvent *ev, const LjmWeights *w)
{
  m->sum_count += w->nc + w->oc;
  if (m->sum_count > LJM_TOTAL_MAX) {
    refuse(m, ev, "estimated events add up to %llu, above 2^62: impossible", m->sum_count);
    return 1;
  }
  m->sum_alloc += w->nb;
  m->sum_free += w->ob;
  if (m->sum_alloc > LJM_TOTAL_MAX || m->sum_free > LJM_TOTAL_MAX) {
    refuse(m, ev, "estimated bytes add up to %llu, above 2^62: impossible",
           m->sum_alloc > m->sum_free ? m->sum_alloc : m->sum_free);
    return 1;
  }
  return 0;
}

/* A stream with time marks and no stacks: site si's first and last event
** times (ljm_model_node_times). 0, or -1 when out of memory. */
static __attribute__((noinline)) int site_time(LjmModel *m, uint32_t si, uint64_t t)
{
  if (si >= m->capsite_time) {  /* two times a site, LJM_NO_TIME_US: all ones */
    uint64_t *p = ljm_model_cover(m, m->site_time, &m->capsite_time, si, 2 * sizeof(*p), 256, 0xff);
    if (!p) return -1;
    m->site_time = p;
  }
  if (m->site_time[2 * si] == LJM_NO_TIME_US) m->site_time[2 * si] = t;
  m->site_time[2 * si + 1] = t;
  return 0;
}

/* One event; okey and nkey are the map keys of its freed and new blocks
** (ljm_addrmap_key), computed ahead by on_events. grouped: a constant of
** each copy, the tree grouped by a label (ljm_group.c); the plain copy
** has no trace of it. win: a constant too, WIN_NONE without a time window
** (ljm_window.c); WIN_BEFORE for an event before it, which only changes the
** blocks in use; WIN_INSIDE for one in it, its time counted from its start. */
enum { WIN_NONE = 0, WIN_BEFORE, WIN_INSIDE };

/* An event's time as the model gives it: counted from a window's start.
** Read where it is used (a variable at the top of apply, live through it,
** cost the plain path 1% per event). */
#define EVENT_TIME(m, ev, win)                                                   \
  ((win) == WIN_INSIDE && (ev)->time != LJM_NO_TIME ? (ev)->time - (m)->win_from \
                                                    : (ev)->time)
static inline __attribute__((always_inline)) void apply(LjmModel *m, const LjmRawEvent *ev,
                                                        uint64_t okey, uint64_t nkey,
                                                        const int grouped, const int win)
{
  const int before = win == WIN_BEFORE;
  uint32_t li, si = event_site(m, ev, &li, 0);
  if (si == NONE) return;
  uint32_t node = si, owner = si;  /* standard stream: a site is its own node */
  LjmFigures *nf = NULL;
  if (m->slice_events && !before) slice_at(m, m->totals.events, EVENT_TIME(m, ev, win));
  if (m->stacks) {
    node = ljm_stacks_event_node(m, ev->stack, si);
    if (grouped && node != NONE) node = ljm_group_node(m, node, ljm_group_set(m, ev, okey));
    owner = ljm_stacks_ctx(m, si, node, ljm_event_labels(m, ev));
    if (node == NONE || owner == NONE) return;
    NodeFig *nd = ljm_stacks_fig(m, node);
    if (!nd) return;
    nf = &nd->self;
    if (ev->time != LJM_NO_TIME && !before) {
      uint64_t t = EVENT_TIME(m, ev, win);
      if (nd->first_time == LJM_NO_TIME_US) nd->first_time = t;
      nd->last_time = t;
    }
  } else {
    if (m->ctx_owners && (owner = ljm_stacks_ctx(m, si, si, ljm_event_labels(m, ev))) == NONE)
      return;
    if (ev->time != LJM_NO_TIME && !before && site_time(m, si, EVENT_TIME(m, ev, win))) return;
  }
  /* Only now: a grouped tree's new root adds a site (the array may move). */
  LjmFigures *f = &m->sites[si].fig;
  LjmBlock old, dropped;
  int had_old = 0, had_dropped = 0;
  /* In an exact stream an event counts once, with its sizes. */
  LjmWeights w = { 1, ev->nsize, 1, ev->osize, 0 };
  int made = ev->kind != LJM_RAW_FREE && !ev->nosample;
  uint64_t dc = 1, db = 0;  /* what a dropped block stood for */
  uint64_t stored = ev->nsize;  /* the new block's size in the live map */

  if (ev->kind != LJM_RAW_ALLOC) {  /* the freed half */
    if ((had_old = ljm_addrmap_take_key(&m->blocks, ev->oaddr, okey, &old))) {
      old.size = block_weight(m, old.size, &w.oc, &w.obb);
      live_sub(m, old.site, w.oc, w.obb);
    } else {
      m->totals.unattributed_frees += !before;
    }
  }
  if (__builtin_expect(m->rate != 0, 0)) {
    /* Only blocks of the sample count: an unknown old block was not in it. */
    if (!had_old) w.oc = w.obb = 0;
    w.ob = w.obb;
    if (made) {
      /* the index the event has without a label filter: the same coin */
      int up = ljm_sample_coin(m->rate, ev->nsize, ev->naddr,
                               m->totals.events + m->ldropped + m->win_before);
      ljm_sample_weight(m->rate, ev->nsize, up, &w.nc, &w.nb);
      stored = ev->nsize | (up ? LJM_SAMPLE_UP : 0);
    } else {
      w.nc = w.nb = 0;
    }
    if (impossible_estimate(m, ev, &w)) return;
  }
  /* Label sets' figures, as the sites' (set 0's are the rest: made at the
  ** end); a reallocation stays with the labels its block was allocated under. */
  LjmFigures *lf = NULL, *cf = NULL;
  if (__builtin_expect(m->label_fig != NULL, 0)) {
    uint32_t ol = had_old ? m->ctxs[old.site].labels : 0;
    if (had_old && ev->type && m->typed)  /* a reallocation's own type: its typed set */
      ol = ljm_labels_typed(m, ol % LJM_TYPED_SET, ev->type);
    if (had_old && ev->kind == LJM_RAW_REALLOC && ol != m->ctxs[owner].labels &&
        (owner = ljm_stacks_ctx(m, si, node, ol)) == NONE)
      return;
    if (before) {
    } else if (ev->kind == LJM_RAW_FREE) {
      if (ol) {
        m->label_fig[ol].free_count += w.oc;
        m->label_fig[ol].free_bytes += w.ob;
        if ((cf = ljm_labels_ctx_fig(m, old.site))) {
          cf->free_count += w.oc;
          cf->free_bytes += w.ob;
        }
      }
    } else if (m->ctxs[owner].labels) {
      lf = &m->label_fig[m->ctxs[owner].labels];
      if (!(cf = ljm_labels_ctx_fig(m, owner))) return;
    }
  }
  if (before) {
  } else if (ev->kind == LJM_RAW_FREE) {
    f->free_count += w.oc;
    f->free_bytes += w.ob;
    if (nf) {
      nf->free_count += w.oc;
      nf->free_bytes += w.ob;
    }
    m->totals.frees++;
  } else {  /* the allocated half */
    f->alloc_count += w.nc;
    f->alloc_bytes += w.nb;
    if (lf) {
      lf->alloc_count += w.nc;
      lf->alloc_bytes += w.nb;
      cf->alloc_count += w.nc;
      cf->alloc_bytes += w.nb;
    }
    if (nf) {
      nf->alloc_count += w.nc;
      nf->alloc_bytes += w.nb;
    }
    if (ev->kind == LJM_RAW_ALLOC) m->totals.allocs++;
    else m->totals.reallocs++;
  }
  if (made) {
    int r = ljm_addrmap_put_key(&m->blocks, ev->naddr, nkey, stored, owner, &dropped);
    if (r < 0) {
      m->oom = 1;
      return;
    }
    /* r == 1: the stream never freed the block that lived here. */
    if ((had_dropped = r == 1)) {
      dropped.size = block_weight(m, dropped.size, &dc, &db);
      live_sub(m, dropped.site, dc, db);
    }
    live_add(m, owner, w.nc, w.nb);
  }
  if (before) {
    m->win_before++;
    return;
  }
  unsigned temp = 0;
  if (!m->rate) {  /* heaptrack's lines: - old, - dropped, + new */
    if (had_old) temp = temp_free(m, old.site, w.obb) * LJM_TEMP_OLD;
    if (had_dropped) temp |= temp_free(m, dropped.site, db) * LJM_TEMP_DROPPED;
    if (made) {
      m->tmp_plus = 1;
      m->tmp_node = node;
      m->tmp_size = w.nb;
    }
  }
  LjmBlock old_by_site = old;  /* the reference view knows sites only */
  if (had_old) old_by_site.site = owner_site(m, old.site);
  ljm_refagg_event(m, ev, li, &old_by_site, had_old, &w);
  uint64_t index = m->totals.events++;
  if (m->live_bytes > m->totals.fig.peak_bytes) {
    m->totals.fig.peak_bytes = m->live_bytes;
    m->totals.fig.peak_count = m->live_count;
    m->totals.peak_event = index;
    m->epoch++;
  }
  if (m->listener) {
    /* Every field set once, no memset first: this runs for every event. */
    int freed = ev->kind != LJM_RAW_ALLOC;
    LjmLiveEvent le = {
      /* a reallocation whose new block left the sample frees the old one */
      .kind = ev->nosample ? LJM_EV_FREE : (LjmEventKind)ev->kind,
      .index = index,
      .offset = ev->offset,
      .site = si,
      .old_site = had_old ? owner_site(m, old.site) : LJM_NO_SITE,
      .old_addr = freed ? ev->oaddr : 0,
      .old_size = !freed ? 0 : had_old ? w.obb : w.ob,
      .new_addr = made ? ev->naddr : 0,
      .new_size = made ? w.nb : 0,
      .dropped_site = had_dropped ? owner_site(m, dropped.site) : LJM_NO_SITE,
      .dropped_size = had_dropped ? db : 0,
      .old_count = freed ? w.oc : 0,
      .new_count = made ? w.nc : 0,
      .dropped_count = had_dropped ? dc : 0,
      .node = node,
      .old_node = had_old ? owner_node(m, old.site) : LJM_NO_NODE,
      .dropped_node = had_dropped ? owner_node(m, dropped.site) : LJM_NO_NODE,
      .time = ev->time == LJM_NO_TIME ? LJM_NO_TIME_US : EVENT_TIME(m, ev, win),
      .owner = made ? owner : LJM_NO_OWNER,
      .old_owner = had_old ? old.site : LJM_NO_OWNER,
      .dropped_owner = had_dropped ? dropped.site : LJM_NO_OWNER,
      .slice = m->slice,
      .temp = temp,
    };
    m->listener->on_event(m->listener_ud, m, &le);
  }
}

/* The reference report's event (ljm_model_set_reference_only) in an exact
** stream whose blocks are owned by sites: the live map and the report's
** rows only, the same refusals as apply. */
static inline __attribute__((always_inline)) void apply_reference(LjmModel *m,
                                                                  const LjmRawEvent *ev,
                                                                  uint64_t okey, uint64_t nkey)
{
  uint32_t li, si = event_site(m, ev, &li, 1);
  if (si == NONE) return;
  LjmBlock old;
  int had_old = 0;
  LjmWeights w = { 1, ev->nsize, 1, ev->osize, 0 };
  if (ev->kind != LJM_RAW_ALLOC) {
    if ((had_old = ljm_addrmap_take_key(&m->blocks, ev->oaddr, okey, &old))) w.obb = old.size;
    else m->totals.unattributed_frees++;
  }
  if (ev->kind != LJM_RAW_FREE) {
    LjmBlock dropped;
    if (ljm_addrmap_put_key(&m->blocks, ev->naddr, nkey, ev->nsize, si, &dropped) < 0) {
      m->oom = 1;
      return;
    }
  }
  m->totals.frees += ev->kind == LJM_RAW_FREE;
  m->totals.allocs += ev->kind == LJM_RAW_ALLOC;
  m->totals.reallocs += ev->kind == LJM_RAW_REALLOC;
  ljm_refagg_event(m, ev, li, &old, had_old, &w);
  m->totals.events++;
}

/* An event of a stream with a time window: before it (the live blocks
** only), in it (its time counted from the window's start), or after it. */
static inline __attribute__((always_inline)) void apply_window(LjmModel *m, const LjmRawEvent *ev,
                                                               uint64_t okey, uint64_t nkey,
                                                               const int grouped)
{
  uint64_t t = ev->time == LJM_NO_TIME ? 0 : ev->time;
  if (t >= m->win_to) return;
  if (t < m->win_from) {
    apply(m, ev, okey, nkey, grouped, WIN_BEFORE);
    return;
  }
  if (!m->win_in) ljm_window_start(m);
  apply(m, ev, okey, nkey, grouped, WIN_INSIDE);
}

/* Which copy events take, decided at the first event and kept (an
** extended stream's blocks are owned by ctxs in apply, by sites in
** apply_reference): PATH_REFERENCE for exact streams, stacks or not,
** without slices or a listener; PATH_GROUPED for a grouped tree (with
** stacks, or a stream made a tree: on_flags); PATH_WINDOW* for a time
** window, grouped or not; PATH_FILTERED under any filter (filtered_event). */
enum { PATH_REFERENCE = 1, PATH_FULL, PATH_GROUPED, PATH_WINDOW, PATH_WINDOW_GROUPED,
       PATH_FILTERED };
static inline int event_path(LjmModel *m)
{
  if (__builtin_expect(!m->path, 0))
    m->path = m->filtering ? PATH_FILTERED
              : m->win ? (m->gkey && m->stacks ? PATH_WINDOW_GROUPED : PATH_WINDOW)
              : m->gkey && m->stacks ? PATH_GROUPED
              : m->reference_only && !m->rate && !m->slice_events && !m->listener && !m->filtering
                  ? PATH_REFERENCE
                  : PATH_FULL;
  return m->path;
}

/* A time window's event: a function of its own, so the window's copies of
** apply stay out of the common paths' code (inlined there, they cost the
** plain path 1% per event: bench/budget_test). */
static __attribute__((noinline)) void window_event(LjmModel *m, const LjmRawEvent *ev,
                                                   uint64_t okey, uint64_t nkey, int grouped)
{
  if (grouped) apply_window(m, ev, okey, nkey, 1);
  else apply_window(m, ev, okey, nkey, 0);
}

/* An event under filters (ljm_filter.c): a function of its own, so the
** filter's copy of an event stays out of the common paths' code. Events
** after a time window are not seen; the others are in stream order. */
static __attribute__((noinline)) void filtered_event(LjmModel *m, const LjmRawEvent *ev,
                                                     uint64_t okey, uint64_t nkey)
{
  if (m->win && (ev->time == LJM_NO_TIME ? 0 : ev->time) >= m->win_to) return;
  uint32_t li, si = event_site(m, ev, &li, 0);
  if (si == NONE) return;
  LjmRawEvent copy;
  if (!(ev = ljm_filter_event(m, ev, si, okey, nkey, &copy))) return;
  int grouped = m->gkey && m->stacks;
  if (m->win) window_event(m, ev, okey, nkey, grouped);
  else if (grouped) apply(m, ev, okey, nkey, 1, WIN_NONE);
  else apply(m, ev, okey, nkey, 0, WIN_NONE);
}

static void on_event(void *ud, const LjmRawEvent *ev)
{
  LjmModel *m = ud;
  uint64_t okey = ljm_addrmap_key(ev->oaddr), nkey = ljm_addrmap_key(ev->naddr);
  switch (event_path(m)) {
  case PATH_REFERENCE: apply_reference(m, ev, okey, nkey); break;
  case PATH_GROUPED: apply(m, ev, okey, nkey, 1, WIN_NONE); break;
  case PATH_WINDOW: window_event(m, ev, okey, nkey, 0); break;
  case PATH_WINDOW_GROUPED: window_event(m, ev, okey, nkey, 1); break;
  case PATH_FILTERED: filtered_event(m, ev, okey, nkey); break;
  default: apply(m, ev, okey, nkey, 0, WIN_NONE); break;
  }
}

/* Prefetches the map buckets event i of a batch will use. */
static inline void prefetch_event(const LjmModel *m, const LjmRawEvent *e, uint64_t okey,
                                  uint64_t nkey)
{
  ljm_addrmap_prefetch(&m->blocks, e->kind == LJM_RAW_ALLOC ? nkey : okey);
  if (e->kind == LJM_RAW_REALLOC) ljm_addrmap_prefetch(&m->blocks, nkey);
}

/* The live map is larger than the caches: each event's buckets are fetched
** AHEAD events before it is applied, so the misses overlap (not all of a
** batch at once: the fetches beyond what the core tracks would be lost). */
#define AHEAD 12
static inline __attribute__((always_inline)) void apply_batch(LjmModel *m, const LjmRawEvent *evs,
                                                              size_t n, const int path)
{
  uint64_t okey[64], nkey[64];
  while (n > 0) {
    size_t k = n < 64 ? n : 64;
    for (size_t i = 0; i < k; i++) {
      okey[i] = ljm_addrmap_key(evs[i].oaddr);
      nkey[i] = ljm_addrmap_key(evs[i].naddr);
    }
    for (size_t i = 0; i < k && i < AHEAD; i++) prefetch_event(m, &evs[i], okey[i], nkey[i]);
    for (size_t i = 0; i < k; i++) {
      if (i + AHEAD < k) prefetch_event(m, &evs[i + AHEAD], okey[i + AHEAD], nkey[i + AHEAD]);
      if (path == PATH_REFERENCE) apply_reference(m, &evs[i], okey[i], nkey[i]);
      else if (path == PATH_FILTERED) filtered_event(m, &evs[i], okey[i], nkey[i]);
      else if (path == PATH_WINDOW || path == PATH_WINDOW_GROUPED)
        apply_window(m, &evs[i], okey[i], nkey[i], path == PATH_WINDOW_GROUPED);
      else apply(m, &evs[i], okey[i], nkey[i], path == PATH_GROUPED, WIN_NONE);
    }
    evs += k;
    n -= k;
  }
}

/* A time window's batch, apart for the same reason (window_event). */
static __attribute__((noinline)) void window_batch(LjmModel *m, const LjmRawEvent *evs, size_t n,
                                                   int grouped)
{
  if (grouped) apply_batch(m, evs, n, PATH_WINDOW_GROUPED);
  else apply_batch(m, evs, n, PATH_WINDOW);
}

static void on_events(void *ud, const LjmRawEvent *evs, size_t n)
{
  LjmModel *m = ud;
  switch (event_path(m)) {
  case PATH_REFERENCE: apply_batch(m, evs, n, PATH_REFERENCE); break;
  case PATH_GROUPED: apply_batch(m, evs, n, PATH_GROUPED); break;
  case PATH_WINDOW: window_batch(m, evs, n, 0); break;
  case PATH_WINDOW_GROUPED: window_batch(m, evs, n, 1); break;
  case PATH_FILTERED: apply_batch(m, evs, n, PATH_FILTERED); break;
  default: apply_batch(m, evs, n, PATH_FULL); break;
  }
}

/* -- Decoder wiring ------------------------------------------------------- */

static void on_versions(void *ud, int ljs, int ljm)
{
  LjmModel *m = ud;
  m->info.ljs_version = ljs;
  m->info.ljm_version = ljm;
}

static void on_proto(void *ud, uint64_t addr, const char *chunk, size_t len,
                     uint64_t firstline, int in_events)
{
  LjmModel *m = ud;
  if (in_events) m->totals.symtab_events++;
  if (!m->oom) ljm_sym_proto(m, addr, chunk, len, firstline);
}

static void on_cfunc(void *ud, uint64_t addr, const char *name, size_t len, int in_events)
{
  LjmModel *m = ud;
  if (in_events) m->totals.symtab_events++;
  if (!m->oom) ljm_sym_cfunc(m, addr, name, len);
}

static void on_trace(void *ud, uint64_t traceno, uint64_t proto, uint64_t line,
                     int in_events)
{
  LjmModel *m = ud;
  if (in_events) m->totals.symtab_events++;
  if (!m->oom) ljm_sym_trace(m, traceno, proto, line);
}

/* Extended streams may carry labels (0x26): their blocks are owned by
** ctxs, which say the label set. */
static void on_flags(void *ud, unsigned flags)
{
  LjmModel *m = ud;
  m->info.ext_flags = flags;
  m->stacks = (flags & LJM_EXT_STACKS) || m->gkey;  /* grouped: a tree of any stream */
  m->ctx_owners = m->stacks || m->slice_events || flags != 0;
  /* every block in a typed set (ljm_model.h, "Labels") */
  if ((flags & LJM_EXT_TYPES) && ljm_labels_init(m) == 0)
    m->typed = m->info.types = 1;
}

static void on_label_set(void *ud, uint32_t id, const LjmLabel *l, unsigned n)
{
  LjmModel *m = ud;
  if (!m->oom && !m->bad) ljm_labels_on_set(m, id, l, n);
}

static void on_labels_folded(void *ud, uint64_t folded)
{
  LjmModel *m = ud;
  m->info.labels_folded = folded;
}

static void on_stack_node(void *ud, uint32_t id, uint32_t parent, const LjmRawFrame *f)
{
  LjmModel *m = ud;
  if (!m->oom && !m->bad) ljm_stacks_on_node(m, id, parent, f);
}

static void on_time(void *ud, uint64_t usec)
{
  LjmModel *m = ud;
  m->info.recorded = usec;
  if (m->win) {  /* only the window's marks, counted from its start */
    if (usec < m->win_from || usec >= m->win_to) return;
    if (!m->win_in && !m->oom && !m->bad) ljm_window_start(m);
    usec -= m->win_from;
  }
  m->info.duration = usec;
  if (m->listener && m->listener->on_time && !m->oom && !m->bad)
    m->listener->on_time(m->listener_ud, m, usec);
}

/* Names that older recordings gave frames from their calling instruction
** do not name functions: a function is named where it is defined (0x25). */
static void on_node_name(void *ud, uint32_t id, unsigned what, const char *name, size_t len)
{
  (void)ud, (void)id, (void)what, (void)name, (void)len;
}

static void on_proto_name(void *ud, uint64_t addr, const char *name, size_t len)
{
  LjmModel *m = ud;
  if (!m->oom && !m->bad) ljm_sym_proto_name(m, addr, name, len);
}

static void on_long_string(void *ud, uint64_t offset, uint64_t len)
{
  LjmModel *m = ud;
  if (!m->info.names_cut++) {
    m->info.name_cut_at = offset;
    m->info.name_cut_len = len;
  }
}

static void on_rss(void *ud, uint64_t time, uint64_t bytes)
{
  LjmModel *m = ud;
  if (m->win) {
    if (time < m->win_from || time >= m->win_to) return;
    time -= m->win_from;
  }
  if (!m->oom && !m->bad) ljm_stacks_on_rss(m, time, bytes);
}

static void on_sample_rate(void *ud, uint64_t rate)
{
  LjmModel *m = ud;
  m->info.sample_rate = rate;
  m->rate = (double)rate;
}

static int stopped(void *ud)
{
  const LjmModel *m = ud;
  return m->oom || m->bad;
}

static void on_progress(void *ud, uint64_t offset)
{
  LjmModel *m = ud;
  if (m->progress) m->progress(m->progress_ud, offset, m->totals.events);
}

static const LjmCallbacks model_callbacks = {
  on_versions, on_proto, on_cfunc, on_trace, on_event, on_events, stopped, on_progress,
  on_flags, on_stack_node, on_rss, on_time, on_node_name, on_long_string, on_sample_rate,
  on_proto_name, on_label_set, on_labels_folded
};

void ljm_model_set_progress(LjmModel *m, LjmProgressFn fn, void *ud)
{
  m->progress = fn;
  m->progress_ud = ud;
}

/* Peak figures per site and whole-profile sums, once decoding is over. */
static void finish_figures(LjmModel *m)
{
  LjmFigures *t = &m->totals.fig;
  uint64_t peak_bytes = t->peak_bytes, peak_count = t->peak_count;
  memset(t, 0, sizeof(*t));
  t->peak_bytes = peak_bytes;
  t->peak_count = peak_count;
  for (uint32_t i = 0; i < m->nsites; i++) {
    LjmFigures *f = &m->sites[i].fig;
    peak_finish(&m->sitex[i].snap, m->epoch, f);
    t->alloc_count += f->alloc_count;
    t->alloc_bytes += f->alloc_bytes;
    t->free_count += f->free_count;
    t->free_bytes += f->free_bytes;
    t->inuse_count += f->inuse_count;
    t->inuse_bytes += f->inuse_bytes;
    t->temp_count += f->temp_count;
  }
  if (m->label_fig) {  /* set 0, no labels: what the sets do not hold */
    LjmFigures *z = &m->label_fig[0];
    *z = *t;
    z->peak_count = z->peak_bytes = 0;
    for (uint32_t s = 1; s < LJM_MODEL_SETS; s++) {
      const LjmFigures *f = &m->label_fig[s];
      z->alloc_count -= f->alloc_count;
      z->alloc_bytes -= f->alloc_bytes;
      z->free_count -= f->free_count;
      z->free_bytes -= f->free_bytes;
      z->inuse_count -= f->inuse_count;
      z->inuse_bytes -= f->inuse_bytes;
      z->temp_count -= f->temp_count;
    }
  }
}

const LjmCallbacks *ljm_model_callbacks(void) { return &model_callbacks; }

void ljm_model_begin(LjmModel *m, const char *path)
{
  free((char *)m->info.path);
  m->info.path = strdup(path ? path : "");
  m->info.duration = LJM_NO_TIME_US;
  m->info.recorded = LJM_NO_TIME_US;
}

LjmStatus ljm_model_end(LjmModel *m, LjmStatus st, LjmDiag *diag)
{
  if (m->bad && !m->oom) {  /* the event refused is where decoding stopped */
    *diag = m->bad_diag;
    st = LJM_ERROR;
    m->info.bytes = diag->offset;
  } else if (st == LJM_TRUNCATED) {
    m->info.truncated = 1;
    m->info.truncated_at = diag->offset;
  }
  if (m->win) {  /* a window the stream never reached starts at its end */
    if (!m->win_in && !m->oom && !m->bad) ljm_window_start(m);
    /* It ends at the last mark if that comes first; it is empty if it
    ** starts after (or there are no marks): [from, from]. */
    uint64_t end = m->info.recorded == LJM_NO_TIME_US ? m->win_from : m->info.recorded;
    if (end > m->win_to) end = m->win_to;
    if (end < m->win_from) end = m->win_from;
    m->info.window_to = end;
    if (m->info.recorded != LJM_NO_TIME_US) m->info.duration = end - m->win_from;
  }
  finish_figures(m);
  /* Temporaries need every event of the stream, each through apply. */
  m->totals.temporaries = !m->rate && !m->info.snapshot &&
                          (m->path ? m->path != PATH_REFERENCE : !m->reference_only);
  ljm_names_finish(m);
  ljm_stacks_finish(m);
  if (ljm_refagg_finish(m) != 0) m->oom = 1;
  if (m->oom || !m->info.path) {
    diag->offset = m->info.bytes;
    snprintf(diag->msg, sizeof(diag->msg), "out of memory while building the model");
    return LJM_ERROR;
  }
  return st;
}

LjmStatus ljm_model_load(LjmModel *m, LjmInput *in, const char *path, LjmDiag *diag)
{
  LjmDiag scratch;
  if (!diag) diag = &scratch;
  ljm_model_begin(m, path);
  LjmStatus st = ljm_decode(in, &model_callbacks, m, diag, &m->info.bytes, &m->info.trailing);
  m->info.gzip = ljm_input_is_gzip(in);
  m->info.zstd = ljm_input_is_zstd(in);
  return ljm_model_end(m, st, diag);
}

/* -- Accessors ------------------------------------------------------------ */

size_t ljm_model_nsites(const LjmModel *m) { return m->nsites; }

size_t ljm_model_nnodes(const LjmModel *m) { return m->nnodes; }

const LjmNode *ljm_model_node(const LjmModel *m, uint32_t id) { return &m->nodes[id]; }

size_t ljm_model_rss(const LjmModel *m, const LjmRssSample **samples)
{
  *samples = m->rss;
  return m->nrss;
}

const LjmSite *ljm_model_site(const LjmModel *m, uint32_t id) { return &m->sites[id]; }

const LjmTotals *ljm_model_totals(const LjmModel *m) { return &m->totals; }

const LjmStreamInfo *ljm_model_stream(const LjmModel *m) { return &m->info; }

void ljm_model_set_slices(LjmModel *m, uint32_t events)
{
  m->slice_events = events;
  m->ctx_owners = m->stacks || events || m->info.ext_flags;
}

void ljm_model_set_reference_only(LjmModel *m) { m->reference_only = 1; }

void ljm_model_set_listener(LjmModel *m, const LjmListener *l, void *ud)
{
  if (l) m->listener_copy = *l;
  m->listener = l && l->on_event ? &m->listener_copy : NULL;
  m->listener_ud = ud;
}

size_t ljm_model_rows(const LjmModel *m, LjmSection sec, const LjmRow **rows)
{
  *rows = m->rows[sec];
  return m->ngroups[sec];
}

size_t ljm_model_heap_summary(const LjmModel *m, const LjmHeapLine **lines)
{
  *lines = m->heap;
  return m->nheap;
}

size_t ljm_model_aliases(const LjmModel *m, const LjmAlias **aliases)
{
  *aliases = m->aliases;
  return m->naliases;
}
