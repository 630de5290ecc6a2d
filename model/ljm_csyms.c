/* ljm_csyms.c -- blocked sorted array: binary search over block heads. */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_csyms.h"

void ljm_csyms_init(LjmCsyms *s) { memset(s, 0, sizeof(*s)); }

void ljm_csyms_free(LjmCsyms *s)
{
  for (size_t i = 0; i < s->nblocks; i++) free(s->blocks[i]);
  free(s->blocks);
  memset(s, 0, sizeof(*s));
}

/* Index of the last block whose first address <= x, or (size_t)-1. */
static size_t find_block(const LjmCsyms *s, uint64_t x)
{
  size_t lo = 0, hi = s->nblocks;  /* answer in [lo-1, hi-1] */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->blocks[mid]->e[0].addr <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/* Number of entries with address <= x in block b. */
static uint32_t upper(const LjmCsymBlock *b, uint64_t x)
{
  uint32_t lo = 0, hi = b->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (b->e[mid].addr <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const LjmCsym *ljm_csyms_floor(const LjmCsyms *s, uint64_t x)
{
  size_t bi = find_block(s, x);
  if (bi == (size_t)-1) return NULL;
  const LjmCsymBlock *b = s->blocks[bi];
  return &b->e[upper(b, x) - 1];  /* e[0].addr <= x, so upper() >= 1 */
}

static int add_block(LjmCsyms *s, size_t at, LjmCsymBlock *b)
{
  if (s->nblocks == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    LjmCsymBlock **bl = realloc(s->blocks, cap * sizeof(*bl));
    if (!bl) return -1;
    s->blocks = bl;
    s->cap = cap;
  }
  memmove(s->blocks + at + 1, s->blocks + at, (s->nblocks - at) * sizeof(*s->blocks));
  s->blocks[at] = b;
  s->nblocks++;
  return 0;
}

LjmCsym *ljm_csyms_put(LjmCsyms *s, uint64_t addr, int *added)
{
  *added = 0;
  size_t bi = find_block(s, addr);
  if (bi == (size_t)-1) {  /* below every address: goes to the front of block 0 */
    if (s->nblocks == 0) {
      LjmCsymBlock *b = malloc(sizeof(*b));
      if (!b || add_block(s, 0, b) != 0) {
        free(b);
        return NULL;
      }
      b->n = 0;
    }
    bi = 0;
  }
  LjmCsymBlock *b = s->blocks[bi];
  uint32_t pos = upper(b, addr);
  if (pos > 0 && b->e[pos - 1].addr == addr) return &b->e[pos - 1];
  if (b->n == LJM_CSYMS_BLOCK) {  /* split in halves, then insert */
    LjmCsymBlock *nb = malloc(sizeof(*nb));
    if (!nb || add_block(s, bi + 1, nb) != 0) {
      free(nb);
      return NULL;
    }
    uint32_t half = LJM_CSYMS_BLOCK / 2;
    nb->n = b->n - half;
    memcpy(nb->e, b->e + half, nb->n * sizeof(LjmCsym));
    b->n = half;
    if (pos > half) {
      b = nb;
      pos -= half;
    }
  }
  memmove(b->e + pos + 1, b->e + pos, (b->n - pos) * sizeof(LjmCsym));
  b->e[pos] = (LjmCsym){ addr, NULL, 0 };
  b->n++;
  s->count++;
  *added = 1;
  return &b->e[pos];
}
