/* ht_events.c -- '+' and '-' lines and their allocation infos (rules in ht_events.h). */
#include "exporters/heaptrack/ht_events.h"

#include <stdlib.h>
#include <string.h>

struct HtInfo {
  uint64_t size;
  uint32_t trace;
  uint32_t idx1;      /* index + 1; 0: empty slot */
};

/* A trace node tends to allocate the same size again: one entry per node. */
struct HtTraceCache {
  uint64_t size;
  uint64_t idx1;      /* index + 1; 0: none */
};

static const char FREE0[] = "- 0\n";
#define FREE0_LEN (sizeof(FREE0) - 1)

static uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

void ht_events_init(HtEvents *e, HtText *t)
{
  memset(e, 0, sizeof(*e));
  e->text = t;
}

void ht_events_free(HtEvents *e)
{
  free(e->info);
  free(e->cache);
  e->info = NULL;
  e->cache = NULL;
}

/* -- Allocation infos ----------------------------------------------------- */

static size_t slot_of(const HtEvents *e, uint64_t size, uint32_t trace)
{
  return mix(size ^ (uint64_t)trace << 40) & (e->capinfo - 1);
}

static int info_grow(HtEvents *e)
{
  size_t nc = e->capinfo ? e->capinfo * 2 : 64;
  HtInfo *n = calloc(nc, sizeof(*n)), *old = e->info;
  size_t oc = e->capinfo;
  if (!n) return -1;
  e->info = n;
  e->capinfo = nc;
  for (size_t i = 0; i < oc; i++) {
    if (!old[i].idx1) continue;
    size_t j = slot_of(e, old[i].size, old[i].trace);
    while (n[j].idx1) j = (j + 1) & (nc - 1);
    n[j] = old[i];
  }
  free(old);
  return 0;
}

/* Index + 1 of (size, trace) in the map, or 0. */
static uint64_t info_find(const HtEvents *e, uint64_t size, uint32_t trace)
{
  if (!e->capinfo) return 0;
  for (size_t j = slot_of(e, size, trace); e->info[j].idx1; j = (j + 1) & (e->capinfo - 1))
    if (e->info[j].size == size && e->info[j].trace == trace) return e->info[j].idx1;
  return 0;
}

/* Writes the 'a' record of a new info; 'mapped': findable by later lines. */
static uint64_t info_new(HtEvents *e, uint64_t size, uint32_t trace, int mapped)
{
  if (mapped) {
    if ((e->ninfo + 1) * 2 >= e->capinfo && info_grow(e) != 0) return e->oom = 1, 0;
    size_t j = slot_of(e, size, trace);
    while (e->info[j].idx1) j = (j + 1) & (e->capinfo - 1);
    e->info[j] = (HtInfo){ size, trace, (uint32_t)(e->ninfo + 1) };
  }
  uint64_t a[2] = { size, trace };
  ht_text_rec(e->text, 'a', 2, a);
  return e->ninfo++;
}

static void cache_put(HtEvents *e, uint32_t trace, uint64_t size, uint64_t idx)
{
  if (trace >= e->capcache) {
    size_t nc = e->capcache ? e->capcache : 256;
    while (nc <= trace) nc *= 2;
    HtTraceCache *n = realloc(e->cache, nc * sizeof(*n));
    if (!n) return;  /* the cache is only a shortcut */
    memset(n + e->capcache, 0, (nc - e->capcache) * sizeof(*n));
    e->cache = n;
    e->capcache = nc;
  }
  e->cache[trace] = (HtTraceCache){ size, idx + 1 };
}

/* index_known when the trace's cache entry is for another size. */
static __attribute__((noinline)) uint64_t index_lookup(HtEvents *e, uint64_t size, uint32_t trace)
{
  uint64_t i1 = info_find(e, size, trace);
  if (i1) cache_put(e, trace, size, i1 - 1);
  return i1;
}

/* Index + 1 of (size, trace) as a '-' finds it, 0 when it is index 0 alone.
** Inline: every line asks, and the cache answers almost always. */
static inline __attribute__((always_inline)) uint64_t index_known(HtEvents *e, uint64_t size,
                                                                  uint32_t trace)
{
  if (trace < e->capcache && e->cache[trace].idx1 && e->cache[trace].size == size)
    return e->cache[trace].idx1;
  return index_lookup(e, size, trace);
}

/* -- Lines ---------------------------------------------------------------- */

/* Returns the text's new length: read back from memory right after this
** store, it would stall (a wider load cannot take a narrower store's value). */
static size_t put(HtEvents *e, char mode, uint64_t idx)
{
  HtText *t = e->text;
  char *p = ht_text_room(t, 20), *s = p;
  *p++ = mode;
  *p++ = ' ';
  p = ht_put_hex(p, idx);
  *p++ = '\n';
  return t->len += (size_t)(p - s);
}

/* Writes the held-back '- 0' here. */
static void release(HtEvents *e)
{
  if (e->prev_mode != '+' || e->prev_idx == 0) e->misplaced++;
  put(e, '-', 0);
  e->live -= e->size0;
  e->prev_mode = '-';
  e->prev_idx = 0;
  e->pending = 0;
  e->spot.ok = 0;  /* the '+' before is followed by this free now */
}

/* Moves the free of the first block back to the latest spot, if that is
** still in the buffer. */
static int move_back(HtEvents *e)
{
  HtText *t = e->text;
  HtSpot *s = &e->spot;
  if (!s->ok || s->flushes != t->flushes || t->len + FREE0_LEN > HT_SINK_CHUNK)
    return 0;
  memmove(t->buf + s->end + FREE0_LEN, t->buf + s->end, t->len - s->end);
  memcpy(t->buf + s->end, FREE0, FREE0_LEN);
  t->len += FREE0_LEN;
  e->live -= e->size0;
  e->pending = 0;
  s->ok = 0;
  e->spot_before.ok = 0;
  return 1;
}

void ht_events_plus(HtEvents *e, uint64_t size, uint32_t trace)
{
  uint64_t idx;
  if (e->oom) return;
  if (e->pending) {
    if (e->prev_mode == '+') release(e);  /* right after the last '+' */
    else if (e->live + size > e->max && !move_back(e)) release(e);
  }
  if (!e->have0) {  /* index 0: this line only, never mapped */
    e->have0 = 1;
    e->size0 = size;
    e->trace0 = trace;
    idx = info_new(e, size, trace, 0);
  } else {
    uint64_t i1 = index_known(e, size, trace);
    idx = i1 ? i1 - 1 : info_new(e, size, trace, 1);
    if (e->oom) return;
    if (!i1) cache_put(e, trace, size, idx);
  }
  size_t end = put(e, '+', idx);
  e->live += size;
  /* Spots before a '+' that raises the peak cannot be used any more. */
  e->spot_before = e->live > e->max ? (HtSpot){ 0, 0, 0 } : e->spot;
  e->spot = (HtSpot){ end, e->text->flushes, idx != 0 };
  if (e->live > e->max) e->max = e->live;
  e->prev_mode = '+';
  e->prev_idx = idx;
}

void ht_events_minus(HtEvents *e, uint64_t size, uint32_t trace)
{
  if (e->oom) return;
  uint64_t i1 = index_known(e, size, trace);
  if (e->pending && e->prev_mode == '+' && i1 != e->prev_idx + 1) release(e);
  if (!i1) {
    /* The first block: no other index has its (size, trace) yet. */
    if (!e->have0 || size != e->size0 || trace != e->trace0) {
      e->bad = 1;  /* a free of a block that was never allocated here */
      return;
    }
    if (e->prev_mode != '+') {
      if (!move_back(e)) e->pending = 1;
      return;
    }
    i1 = 1;
  }
  /* A '+' followed by its own free is no place to move a '- 0' to. */
  if (e->prev_mode == '+' && i1 - 1 == e->prev_idx) e->spot = e->spot_before;
  put(e, '-', i1 - 1);
  e->live -= size;
  e->prev_mode = '-';
  e->prev_idx = i1 - 1;
}

void ht_events_finish(HtEvents *e)
{
  if (e->pending && !e->oom) release(e);
}
