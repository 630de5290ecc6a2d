/* ljm_addrmap.c -- segmented linear probing with backward-shift deletion (no
** tombstones, so millions of alloc/free pairs never degrade the table). */
#include <stdlib.h>

#include "ljm_addrmap.h"

#define SEG_INIT 64  /* slots of segment 0; segment k starts with SEG_INIT + k */

static LjmSlot *alloc_slots(size_t n)
{
  LjmSlot *s = malloc(n * sizeof(*s));
  if (s)
    for (size_t i = 0; i < n; i++) s[i].site = LJM_SLOT_EMPTY;
  return s;
}

int ljm_addrmap_init(LjmAddrmap *m)
{
  *m = (LjmAddrmap){ .freebig = UINT32_MAX };
  for (int i = 0; i < LJM_ADDRMAP_SEGS; i++) {
    m->seg[i].cap = SEG_INIT + (uint32_t)i;
    if (!(m->seg[i].slots = alloc_slots(m->seg[i].cap))) {
      ljm_addrmap_free(m);
      return -1;
    }
  }
  return 0;
}

void ljm_addrmap_free(LjmAddrmap *m)
{
  for (int i = 0; i < LJM_ADDRMAP_SEGS; i++) free(m->seg[i].slots);
  free(m->big);
  *m = (LjmAddrmap){ .freebig = UINT32_MAX };
}

/* -- Sizes of 4 GiB and more -------------------------------------------- */

static uint64_t slot_size(const LjmAddrmap *m, const LjmSlot *s)
{
  return (s->site & LJM_SLOT_BIG) ? m->big[s->size] : s->size;
}

static void big_release(LjmAddrmap *m, const LjmSlot *s)
{
  if (!(s->site & LJM_SLOT_BIG)) return;
  m->big[s->size] = m->freebig;
  m->freebig = s->size;
}

/* Encodes size into the slot; returns -1 when out of memory. */
static int set_size(LjmAddrmap *m, LjmSlot *s, uint64_t size, uint32_t site)
{
  if (size < UINT32_MAX) {
    s->size = (uint32_t)size;
    s->site = site;
    return 0;
  }
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
  s->size = i;
  s->site = site | LJM_SLOT_BIG;
  return 0;
}

/* -- Table ---------------------------------------------------------------- */

static inline uint32_t next(uint32_t i, uint32_t cap) { return i + 1 == cap ? 0 : i + 1; }

/* Probe distance from slot a forward to slot b. */
static inline uint32_t dist(uint32_t a, uint32_t b, uint32_t cap)
{
  return b >= a ? b - a : b + cap - a;
}

int ljm_addrmap_take(LjmAddrmap *m, uint64_t addr, LjmBlock *out)
{
  uint64_t h = ljm_hash64(addr);
  LjmSegment *g = &m->seg[h >> 58];
  uint32_t cap = g->cap, i = ljm_addrmap_home(h, cap);
  for (;; i = next(i, cap)) {
    if (g->slots[i].site == LJM_SLOT_EMPTY) return 0;
    if (g->slots[i].addr == addr) break;
  }
  LjmSlot *s = &g->slots[i];
  *out = (LjmBlock){ addr, slot_size(m, s), s->site & ~LJM_SLOT_BIG };
  big_release(m, s);
  /* Shift later members of the cluster back into the hole. */
  for (uint32_t j = next(i, cap);; j = next(j, cap)) {
    LjmSlot *b = &g->slots[j];
    if (b->site == LJM_SLOT_EMPTY) break;
    uint32_t home = ljm_addrmap_home(ljm_hash64(b->addr), cap);
    /* b may move to i only if its home is not in (i, j]. */
    if (dist(home, j, cap) >= dist(i, j, cap)) {
      g->slots[i] = *b;
      i = j;
    }
  }
  g->slots[i].site = LJM_SLOT_EMPTY;
  g->count--;
  m->count--;
  return 1;
}

static int grow(LjmSegment *g)
{
  if (g->cap > UINT32_MAX / 3) return -1;
  uint32_t cap = g->cap + g->cap / 4;
  LjmSlot *slots = alloc_slots(cap);
  if (!slots) return -1;
  for (uint32_t i = 0; i < g->cap; i++) {
    if (g->slots[i].site == LJM_SLOT_EMPTY) continue;
    uint32_t j = ljm_addrmap_home(ljm_hash64(g->slots[i].addr), cap);
    while (slots[j].site != LJM_SLOT_EMPTY) j = next(j, cap);
    slots[j] = g->slots[i];
  }
  free(g->slots);
  g->slots = slots;
  g->cap = cap;
  return 0;
}

int ljm_addrmap_put(LjmAddrmap *m, uint64_t addr, uint64_t size, uint32_t site,
                    LjmBlock *old)
{
  uint64_t h = ljm_hash64(addr);
  LjmSegment *g = &m->seg[h >> 58];
  uint32_t i = ljm_addrmap_home(h, g->cap);
  for (;; i = next(i, g->cap)) {
    LjmSlot *s = &g->slots[i];
    if (s->site == LJM_SLOT_EMPTY) break;
    if (s->addr == addr) {
      *old = (LjmBlock){ addr, slot_size(m, s), s->site & ~LJM_SLOT_BIG };
      big_release(m, s);
      return set_size(m, s, size, site) == 0 ? 1 : -1;
    }
  }
  LjmSlot *s = &g->slots[i];
  s->addr = addr;
  if (set_size(m, s, size, site) != 0) {
    s->site = LJM_SLOT_EMPTY;
    return -1;
  }
  g->count++;
  m->count++;
  if ((uint64_t)g->count * 4 > (uint64_t)g->cap * 3 && grow(g) != 0) return -1;
  return 0;
}
