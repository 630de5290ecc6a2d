/* ljm_addrmap.h -- live blocks by address: the model's replay of the heap. */
#ifndef LJM_ADDRMAP_H
#define LJM_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "ljm_hmap.h"

#define LJM_ADDRMAP_EMPTY UINT32_MAX

typedef struct LjmBlock {
  uint64_t addr;
  uint64_t size;
  uint32_t site;  /* owner; LJM_ADDRMAP_EMPTY marks a free slot */
} LjmBlock;

typedef struct LjmAddrmap {
  LjmBlock *slots;
  size_t mask, count;
} LjmAddrmap;

/* Initialises an empty map. Returns 0 or -1. */
int ljm_addrmap_init(LjmAddrmap *m);
/* Frees the map. */
void ljm_addrmap_free(LjmAddrmap *m);
/* Removes the block at addr into *out; returns 1, or 0 if absent. */
int ljm_addrmap_take(LjmAddrmap *m, uint64_t addr, LjmBlock *out);
/* Stores a block, returning any block it replaced in *old (1) or 0.
** Returns -1 when out of memory. */
int ljm_addrmap_put(LjmAddrmap *m, uint64_t addr, uint64_t size, uint32_t site,
                    LjmBlock *old);

/* Hint that addr will be looked up soon (hides the cache miss). */
static inline void ljm_addrmap_prefetch(const LjmAddrmap *m, uint64_t addr)
{
  __builtin_prefetch(&m->slots[ljm_hash64(addr) & m->mask]);
}

#endif
