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

#include "ljm_hmap.h"

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
/* Removes the block at addr into *out; returns 1, or 0 if absent. */
int ljm_addrmap_take(LjmAddrmap *m, uint64_t addr, LjmBlock *out);
/* Stores a block (site < 2^31), returning any block it replaced in *old (1)
** or 0. Returns -1 when out of memory. */
int ljm_addrmap_put(LjmAddrmap *m, uint64_t addr, uint64_t size, uint32_t site,
                    LjmBlock *old);

/* Hint that addr will be looked up soon (hides the cache miss). */
static inline void ljm_addrmap_prefetch(const LjmAddrmap *m, uint64_t addr)
{
  uint64_t h = ljm_hash64(addr);
  const LjmSegment *s = &m->seg[h >> 58];
  __builtin_prefetch(&s->slots[ljm_addrmap_home(h, s->cap)]);
}

#endif
