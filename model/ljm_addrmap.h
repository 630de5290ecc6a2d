/* ljm_addrmap.h -- live blocks by address: the model's replay of the heap.
**
** Memory must follow the number of live blocks, not jump with it: the table
** is split into segments of staggered sizes that grow by a quarter at different
** moments (a rehash holds one small segment twice, never the whole table),
** and a slot is 16 bytes (sizes of 4 GiB and more live in a side table). */
#ifndef LJM_ADDRMAP_H
#define LJM_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "model/ljm_hmap.h"

#define LJM_ADDRMAP_SEGS 64

typedef struct LjmBlock {
  uint64_t addr;
  uint64_t size;
  uint32_t site;
} LjmBlock;

typedef struct LjmSlot {
  uint64_t addr;
  uint32_t size;   /* the size, or an index into 'big' (see 'site') */
  uint32_t site;   /* owner | LJM_SLOT_BIG; LJM_SLOT_EMPTY = free slot */
} LjmSlot;

#define LJM_SLOT_EMPTY UINT32_MAX
#define LJM_SLOT_BIG 0x80000000u  /* size is an index into big[] */

typedef struct LjmSegment {
  LjmSlot *slots;
  uint32_t cap, count;  /* any capacity: slots are picked by multiply-shift */
} LjmSegment;

/* Home slot of a hash in a segment: the low 32 bits scaled to the capacity. */
static inline uint32_t ljm_addrmap_home(uint64_t h, uint32_t cap)
{
  return (uint32_t)(((h & 0xffffffffu) * cap) >> 32);
}

typedef struct LjmAddrmap {
  LjmSegment seg[LJM_ADDRMAP_SEGS];
  size_t count;
  uint64_t *big;          /* sizes that do not fit 32 bits */
  uint32_t nbig, capbig, freebig;  /* free list threads through big[] */
} LjmAddrmap;

/* Initialises an empty map. Returns 0 or -1. */
int ljm_addrmap_init(LjmAddrmap *m);
/* Frees the map. */
void ljm_addrmap_free(LjmAddrmap *m);

/* Hint that addr will be looked up soon (hides the cache miss). */
static inline void ljm_addrmap_prefetch(const LjmAddrmap *m, uint64_t addr)
{
  uint64_t h = ljm_hash64(addr);
  const LjmSegment *s = &m->seg[h >> 58];
  __builtin_prefetch(&s->slots[ljm_addrmap_home(h, s->cap)]);
}

/* Out of line, rare: a size of 4 GiB or more, and growing a segment. */
int ljm_addrmap_set_big(LjmAddrmap *m, LjmSlot *s, uint64_t size, uint32_t site);
int ljm_addrmap_grow(LjmSegment *g);

/* The two operations of every event are inline: the decoder's loop is
** bound by them. */
static inline uint32_t ljm_addrmap_next(uint32_t i, uint32_t cap) { return i + 1 == cap ? 0 : i + 1; }

/* Probe distance from slot a forward to slot b. */
static inline uint32_t ljm_addrmap_dist(uint32_t a, uint32_t b, uint32_t cap)
{
  return b >= a ? b - a : b + cap - a;
}

static inline uint64_t ljm_addrmap_slot_size(const LjmAddrmap *m, const LjmSlot *s)
{
  return (s->site & LJM_SLOT_BIG) ? m->big[s->size] : s->size;
}

static inline void ljm_addrmap_big_release(LjmAddrmap *m, const LjmSlot *s)
{
  if (!(s->site & LJM_SLOT_BIG)) return;
  m->big[s->size] = m->freebig;
  m->freebig = s->size;
}

static inline int ljm_addrmap_set_size(LjmAddrmap *m, LjmSlot *s, uint64_t size, uint32_t site)
{
  if (__builtin_expect(size >= UINT32_MAX, 0)) return ljm_addrmap_set_big(m, s, size, site);
  s->size = (uint32_t)size;
  s->site = site;
  return 0;
}

/* Removes the block at addr into *out; returns 1, or 0 if absent. */
static inline int ljm_addrmap_take(LjmAddrmap *m, uint64_t addr, LjmBlock *out)
{
  uint64_t h = ljm_hash64(addr);
  LjmSegment *g = &m->seg[h >> 58];
  uint32_t cap = g->cap, i = ljm_addrmap_home(h, cap);
  for (;; i = ljm_addrmap_next(i, cap)) {
    if (g->slots[i].site == LJM_SLOT_EMPTY) return 0;
    if (g->slots[i].addr == addr) break;
  }
  LjmSlot *s = &g->slots[i];
  *out = (LjmBlock){ addr, ljm_addrmap_slot_size(m, s), s->site & ~LJM_SLOT_BIG };
  ljm_addrmap_big_release(m, s);
  /* Shift later members of the cluster back into the hole. */
  for (uint32_t j = ljm_addrmap_next(i, cap);; j = ljm_addrmap_next(j, cap)) {
    LjmSlot *b = &g->slots[j];
    if (b->site == LJM_SLOT_EMPTY) break;
    uint32_t home = ljm_addrmap_home(ljm_hash64(b->addr), cap);
    /* b may move to i only if its home is not in (i, j]. */
    if (ljm_addrmap_dist(home, j, cap) >= ljm_addrmap_dist(i, j, cap)) {
      g->slots[i] = *b;
      i = j;
    }
  }
  g->slots[i].site = LJM_SLOT_EMPTY;
  g->count--;
  m->count--;
  return 1;
}

/* Stores a block (site < 2^31), returning any block it replaced in *old (1)
** or 0. Returns -1 when out of memory. */
static inline int ljm_addrmap_put(LjmAddrmap *m, uint64_t addr, uint64_t size, uint32_t site,
                    LjmBlock *old)
{
  uint64_t h = ljm_hash64(addr);
  LjmSegment *g = &m->seg[h >> 58];
  uint32_t i = ljm_addrmap_home(h, g->cap);
  for (;; i = ljm_addrmap_next(i, g->cap)) {
    LjmSlot *s = &g->slots[i];
    if (s->site == LJM_SLOT_EMPTY) break;
    if (s->addr == addr) {
      *old = (LjmBlock){ addr, ljm_addrmap_slot_size(m, s), s->site & ~LJM_SLOT_BIG };
      ljm_addrmap_big_release(m, s);
      return ljm_addrmap_set_size(m, s, size, site) == 0 ? 1 : -1;
    }
  }
  LjmSlot *s = &g->slots[i];
  s->addr = addr;
  if (ljm_addrmap_set_size(m, s, size, site) != 0) {
    s->site = LJM_SLOT_EMPTY;
    return -1;
  }
  g->count++;
  m->count++;
  if ((uint64_t)g->count * 4 > (uint64_t)g->cap * 3 && ljm_addrmap_grow(g) != 0) return -1;
  return 0;
}

#endif
