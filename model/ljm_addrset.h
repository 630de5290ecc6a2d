/* ljm_addrset.h -- an ordered set of addresses with floor lookup.
**
** C symbols arrive by the thousand and are re-dumped many times; lookups ask
** for the greatest address <= x. Sorted blocks of at most LJM_ADDRSET_BLOCK
** keys keep both insertion and lookup cheap without a tree. */
#ifndef LJM_ADDRSET_H
#define LJM_ADDRSET_H

#include <stddef.h>
#include <stdint.h>

#define LJM_ADDRSET_BLOCK 256

typedef struct LjmAddrBlock {
  uint32_t n;
  uint64_t keys[LJM_ADDRSET_BLOCK];
} LjmAddrBlock;

typedef struct LjmAddrset {
  LjmAddrBlock **blocks;  /* ordered; every block non-empty */
  size_t nblocks, cap;
  size_t count;
} LjmAddrset;

/* Initialises an empty set. */
void ljm_addrset_init(LjmAddrset *s);
/* Frees the set. */
void ljm_addrset_free(LjmAddrset *s);
/* Inserts a key. Returns 1 if added, 0 if present, -1 on out of memory. */
int ljm_addrset_insert(LjmAddrset *s, uint64_t key);
/* Greatest key <= x into *out: returns 1, or 0 when there is none. */
int ljm_addrset_floor(const LjmAddrset *s, uint64_t x, uint64_t *out);

#endif
