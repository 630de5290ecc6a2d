/* ljm_addrset.c -- blocked sorted array: binary search over block heads. */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_addrset.h"

void ljm_addrset_init(LjmAddrset *s) { memset(s, 0, sizeof(*s)); }

void ljm_addrset_free(LjmAddrset *s)
{
  for (size_t i = 0; i < s->nblocks; i++) free(s->blocks[i]);
  free(s->blocks);
  memset(s, 0, sizeof(*s));
}

/* Index of the last block whose first key <= x, or (size_t)-1. */
static size_t find_block(const LjmAddrset *s, uint64_t x)
{
  size_t lo = 0, hi = s->nblocks;  /* answer in [lo-1, hi-1] */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->blocks[mid]->keys[0] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/* Number of keys <= x in block b. */
static uint32_t upper(const LjmAddrBlock *b, uint64_t x)
{
  uint32_t lo = 0, hi = b->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (b->keys[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int ljm_addrset_floor(const LjmAddrset *s, uint64_t x, uint64_t *out)
{
  size_t bi = find_block(s, x);
  if (bi == (size_t)-1) return 0;
  const LjmAddrBlock *b = s->blocks[bi];
  *out = b->keys[upper(b, x) - 1];  /* keys[0] <= x, so upper() >= 1 */
  return 1;
}

static int add_block(LjmAddrset *s, size_t at, LjmAddrBlock *b)
{
  if (s->nblocks == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    LjmAddrBlock **bl = realloc(s->blocks, cap * sizeof(*bl));
    if (!bl) return -1;
    s->blocks = bl;
    s->cap = cap;
  }
  memmove(s->blocks + at + 1, s->blocks + at, (s->nblocks - at) * sizeof(*s->blocks));
  s->blocks[at] = b;
  s->nblocks++;
  return 0;
}

int ljm_addrset_insert(LjmAddrset *s, uint64_t key)
{
  size_t bi = find_block(s, key);
  if (bi == (size_t)-1) {  /* below every key: goes to the front of block 0 */
    if (s->nblocks == 0) {
      LjmAddrBlock *b = malloc(sizeof(*b));
      if (!b || add_block(s, 0, b) != 0) {
        free(b);
        return -1;
      }
      b->n = 0;
    }
    bi = 0;
  }
  LjmAddrBlock *b = s->blocks[bi];
  uint32_t pos = upper(b, key);
  if (pos > 0 && b->keys[pos - 1] == key) return 0;
  if (b->n == LJM_ADDRSET_BLOCK) {  /* split in halves, then insert */
    LjmAddrBlock *nb = malloc(sizeof(*nb));
    if (!nb || add_block(s, bi + 1, nb) != 0) {
      free(nb);
      return -1;
    }
    uint32_t half = LJM_ADDRSET_BLOCK / 2;
    nb->n = b->n - half;
    memcpy(nb->keys, b->keys + half, nb->n * sizeof(uint64_t));
    b->n = half;
    if (pos > half) {
      b = nb;
      pos -= half;
    }
  }
  memmove(b->keys + pos + 1, b->keys + pos, (b->n - pos) * sizeof(uint64_t));
  b->keys[pos] = key;
  b->n++;
  s->count++;
  return 1;
}
