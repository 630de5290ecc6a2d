/* ljm_hmap.h -- open-addressing map from 64-bit keys to 32-bit values. */
#ifndef LJM_HMAP_H
#define LJM_HMAP_H

#include <stddef.h>
#include <stdint.h>

#define LJM_HMAP_NONE UINT32_MAX  /* "no value"; cannot be stored */

typedef struct LjmHmapSlot {
  uint64_t key;
  uint32_t val;  /* LJM_HMAP_NONE marks an empty slot */
} LjmHmapSlot;

typedef struct LjmHmap {
  LjmHmapSlot *slots;
  size_t mask, count;
} LjmHmap;

/* Initialises an empty map. Returns 0 or -1. */
int ljm_hmap_init(LjmHmap *m);
/* Frees the map. */
void ljm_hmap_free(LjmHmap *m);
/* Empties the map, keeping its room. */
void ljm_hmap_clear(LjmHmap *m);
/* Value of key, or LJM_HMAP_NONE. */
uint32_t ljm_hmap_get(const LjmHmap *m, uint64_t key);
/* Sets key to val (val != LJM_HMAP_NONE). Returns 0 or -1 (out of memory). */
int ljm_hmap_put(LjmHmap *m, uint64_t key, uint32_t val);

/* Mixes a key into a well-spread hash. */
static inline uint64_t ljm_hash64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

#endif
