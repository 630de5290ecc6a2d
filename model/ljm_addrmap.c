/* ljm_addrmap.c -- the rare paths of the live-block map (ljm_addrmap.h):
** growing a segment, displacing blocks when both buckets are full, the
** stash, and sizes of 4 GiB and more. */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_addrmap.h"

#define SEG_INIT 16    /* buckets of segment 0; segment k starts with SEG_INIT + k / 4 */
#define MAX_KICKS 64   /* blocks displaced for one insertion before the stash */

static LjmBucket *alloc_buckets(uint32_t nb)
{
  LjmBucket *b = aligned_alloc(sizeof(LjmBucket), (size_t)nb * sizeof(LjmBucket));
  if (b)
    for (uint32_t i = 0; i < nb; i++)
      for (int j = 0; j < 4; j++) {
        b[i].key[j] = LJM_KEY_FREE;
        b[i].size[j] = 0;
        b[i].site[j] = LJM_SLOT_EMPTY;
      }
  return b;
}

int ljm_addrmap_init(LjmAddrmap *m)
{
  *m = (LjmAddrmap){ .freebig = UINT32_MAX };
  for (int i = 0; i < LJM_ADDRMAP_SEGS; i++) {
    m->seg[i].nb = SEG_INIT + (uint32_t)i / 4;
    if (!(m->seg[i].b = alloc_buckets(m->seg[i].nb))) {
      ljm_addrmap_free(m);
      return -1;
    }
  }
  return 0;
}

void ljm_addrmap_free(LjmAddrmap *m)
{
  for (int i = 0; i < LJM_ADDRMAP_SEGS; i++) {
    free(m->seg[i].b);
    free(m->seg[i].stash);
  }
  free(m->big);
  *m = (LjmAddrmap){ .freebig = UINT32_MAX };
}

/* -- Sizes of 4 GiB and more -------------------------------------------- */

int ljm_addrmap_set_big(LjmAddrmap *m, uint32_t *size_field, uint32_t *site_field,
                        uint64_t size, uint32_t site)
{
  uint32_t i = m->freebig;
  if (i != UINT32_MAX) {
    m->freebig = (uint32_t)m->big[i];
  } else {
    if (m->nbig == m->capbig) {
      uint32_t cap = m->capbig ? m->capbig * 2 : 16;
      uint64_t *b = realloc(m->big, (size_t)cap * sizeof(*b));
      if (!b) return -1;
      m->big = b;
      m->capbig = cap;
    }
    i = m->nbig++;
  }
  m->big[i] = size;
  *size_field = i;
  *site_field = site | LJM_SLOT_BIG;
  return 0;
}

/* A slot's size and owner (size may take a side-table entry); 0 or -1. */
static int set_size(LjmAddrmap *m, uint32_t *size_field, uint32_t *site_field, uint64_t size,
                    uint32_t site)
{
  if (size >= UINT32_MAX) return ljm_addrmap_set_big(m, size_field, site_field, size, site);
  *size_field = (uint32_t)size;
  *site_field = site;
  return 0;
}

/* -- Placing and finding ------------------------------------------------- */

static int stash_add(LjmSegment *g, LjmSlot e)
{
  if (g->nstash == g->capstash) {
    uint32_t cap = g->capstash ? g->capstash * 2 : 4;
    LjmSlot *p = realloc(g->stash, (size_t)cap * sizeof(*p));
    if (!p) return -1;
    g->stash = p;
    g->capstash = cap;
  }
  g->stash[g->nstash++] = e;
  return 0;
}

static int place_in(LjmBucket *b, LjmSlot e)
{
  unsigned f = ljm_addrmap_empty(b);
  if (!f) return 0;
  unsigned j = (unsigned)__builtin_ctz(f);
  b->key[j] = e.key;
  b->size[j] = e.size;
  b->site[j] = e.site;
  return 1;
}

/* Moves a block of a full bucket to its other bucket, if that one has room,
** freeing a slot for e. The eight candidates' buckets are fetched at once:
** their cache misses overlap. */
static int place_by_moving(LjmSegment *g, uint32_t bx, uint32_t by, LjmSlot e)
{
  uint32_t home[8], alt[8];
  for (int k = 0; k < 8; k++) {
    home[k] = k < 4 ? bx : by;
    uint64_t key = g->b[home[k]].key[k & 3];
    uint32_t a1 = ljm_addrmap_bucket1(key, g->nb);
    alt[k] = a1 == home[k] ? ljm_addrmap_bucket2(key, g->nb) : a1;
    __builtin_prefetch(&g->b[alt[k]]);
  }
  for (int k = 0; k < 8; k++) {
    LjmBucket *a = &g->b[alt[k]], *h = &g->b[home[k]];
    unsigned f = ljm_addrmap_empty(a);
    if (!f || alt[k] == home[k]) continue;
    unsigned j = (unsigned)__builtin_ctz(f), i = (unsigned)k & 3;
    a->key[j] = h->key[i];
    a->size[j] = h->size[i];
    a->site[j] = h->site[i];
    h->key[i] = e.key;
    h->size[i] = e.size;
    h->site[i] = e.site;
    return 1;
  }
  return 0;
}

/* Stores a block the segment does not hold: in its first bucket, else its
** second, else a block there moves to its other bucket; failing that, blocks
** are displaced in a chain, and one still homeless after MAX_KICKS goes to
** the stash. */
static int place(LjmSegment *g, LjmSlot e)
{
  uint32_t b1 = ljm_addrmap_bucket1(e.key, g->nb), bkt = ljm_addrmap_bucket2(e.key, g->nb);
  if (place_in(&g->b[b1], e) || place_in(&g->b[bkt], e) || place_by_moving(g, b1, bkt, e))
    return 0;
  for (uint32_t kick = 0; kick < MAX_KICKS; kick++) {
    LjmBucket *b = &g->b[bkt];
    unsigned j = (kick + (uint32_t)(e.key >> 40)) & 3;
    LjmSlot t = { b->key[j], b->size[j], b->site[j] };
    b->key[j] = e.key;
    b->size[j] = e.size;
    b->site[j] = e.site;
    e = t;
    uint32_t c1 = ljm_addrmap_bucket1(e.key, g->nb);
    bkt = c1 == bkt ? ljm_addrmap_bucket2(e.key, g->nb) : c1;
    if (place_in(&g->b[bkt], e)) return 0;
  }
  return stash_add(g, e);
}

/* Where a live block with this key is: a bucket slot (*b, *j), or the stash
** (*b NULL, *j its index). Returns 0 when there is none. */
static int find(LjmSegment *g, uint64_t key, LjmBucket **b, unsigned *j)
{
  LjmBucket *c[2] = { &g->b[ljm_addrmap_bucket1(key, g->nb)],
                      &g->b[ljm_addrmap_bucket2(key, g->nb)] };
  for (int k = 0; k < 2; k++) {
    unsigned f = ljm_addrmap_match(c[k], key) & ~ljm_addrmap_empty(c[k]);
    if (f) {
      *b = c[k];
      *j = (unsigned)__builtin_ctz(f);
      return 1;
    }
  }
  for (uint32_t i = 0; i < g->nstash; i++)
    if (g->stash[i].key == key) {
      *b = NULL;
      *j = i;
      return 1;
    }
  return 0;
}

int ljm_addrmap_grow(LjmSegment *g)
{
  if (g->nb > UINT32_MAX / 8) return -1;
  uint32_t nb = g->nb + g->nb / 2 + 1;
  LjmSegment n = { alloc_buckets(nb), nb, g->count, NULL, 0, 0 };
  if (!n.b) return -1;
  int bad = 0;
  for (uint32_t i = 0; i < g->nb; i++)
    for (int j = 0; j < 4; j++)
      if (g->b[i].site[j] != LJM_SLOT_EMPTY)
        bad |= place(&n, (LjmSlot){ g->b[i].key[j], g->b[i].size[j], g->b[i].site[j] });
  for (uint32_t i = 0; i < g->nstash; i++) bad |= place(&n, g->stash[i]);
  if (bad) {
    free(n.b);
    free(n.stash);
    return -1;
  }
  free(g->b);
  free(g->stash);
  *g = n;
  return 0;
}

/* -- The rare cases of take and put --------------------------------------- */

/* Empties a found slot, handing its block over. */
static LjmBlock remove_at(LjmAddrmap *m, LjmSegment *g, LjmBucket *b, unsigned j, uint64_t addr)
{
  uint32_t size, site;
  if (b) {
    size = b->size[j];
    site = b->site[j];
    b->key[j] = LJM_KEY_FREE;
    b->site[j] = LJM_SLOT_EMPTY;
  } else {
    size = g->stash[j].size;
    site = g->stash[j].site;
    g->stash[j] = g->stash[--g->nstash];
  }
  LjmBlock out = { addr, ljm_addrmap_size_of(m, size, site), site & ~LJM_SLOT_BIG };
  ljm_addrmap_release(m, size, site);
  g->count--;
  m->count--;
  return out;
}

int ljm_addrmap_owner(const LjmAddrmap *m, uint64_t key, uint32_t *site)
{
  LjmSegment *g = ljm_addrmap_seg(m, key);
  LjmBucket *b;
  unsigned j;
  if (!find(g, key, &b, &j)) return 0;
  *site = (b ? b->site[j] : g->stash[j].site) & ~LJM_SLOT_BIG;
  return 1;
}

void ljm_addrmap_each(const LjmAddrmap *m,
                      void (*fn)(void *ud, uint64_t key, uint64_t size, uint32_t owner), void *ud)
{
  for (int i = 0; i < LJM_ADDRMAP_SEGS; i++) {
    const LjmSegment *g = &m->seg[i];
    for (uint32_t k = 0; k < g->nb; k++)
      for (unsigned j = 0; j < 4; j++) {
        uint32_t site = g->b[k].site[j];
        if (site != LJM_SLOT_EMPTY)
          fn(ud, g->b[k].key[j], ljm_addrmap_size_of(m, g->b[k].size[j], site), site & ~LJM_SLOT_BIG);
      }
    for (uint32_t j = 0; j < g->nstash; j++)
      fn(ud, g->stash[j].key, ljm_addrmap_size_of(m, g->stash[j].size, g->stash[j].site),
         g->stash[j].site & ~LJM_SLOT_BIG);
  }
}

int ljm_addrmap_take_slow(LjmAddrmap *m, uint64_t addr, uint64_t key, LjmBlock *out)
{
  LjmSegment *g = ljm_addrmap_seg(m, key);
  LjmBucket *b;
  unsigned j;
  if (!find(g, key, &b, &j)) return 0;
  *out = remove_at(m, g, b, j, addr);
  return 1;
}

int ljm_addrmap_put_slow(LjmAddrmap *m, uint64_t addr, uint64_t key, uint64_t size,
                         uint32_t site, LjmBlock *old)
{
  LjmSegment *g = ljm_addrmap_seg(m, key);
  LjmBucket *b;
  unsigned j;
  int replaced = find(g, key, &b, &j);
  if (replaced) *old = remove_at(m, g, b, j, addr);  /* a block the stream never freed */
  LjmSlot e = { key, 0, LJM_SLOT_EMPTY };
  if (set_size(m, &e.size, &e.site, size, site) != 0) return -1;
  if (place(g, e) != 0) {
    ljm_addrmap_release(m, e.size, e.site);
    return -1;
  }
  g->count++;
  m->count++;
  if (ljm_addrmap_full(g) && ljm_addrmap_grow(g) != 0) return -1;
  return replaced;
}
