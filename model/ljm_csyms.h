/* ljm_csyms.h -- C symbols by address, with floor lookup.
**
** Symbol tables carry C symbols by the ten thousand (every function of the
** host and its libraries) and may be re-dumped; a profile names the few its
** stacks reach, by the greatest symbol address <= a frame's address. Names
** stay bytes the caller owns (no interning); sorted blocks of at most
** LJM_CSYMS_BLOCK entries keep insertion and lookup cheap without a tree. */
#ifndef LJM_CSYMS_H
#define LJM_CSYMS_H

#include <stddef.h>
#include <stdint.h>

#define LJM_CSYMS_BLOCK 256

typedef struct LjmCsym {
  uint64_t addr;
  const char *name;  /* NUL-terminated, owned by the caller; NULL until set */
  size_t len;
} LjmCsym;

typedef struct LjmCsymBlock {
  uint32_t n;
  LjmCsym e[LJM_CSYMS_BLOCK];
} LjmCsymBlock;

typedef struct LjmCsyms {
  LjmCsymBlock **blocks;  /* ordered by address; every block non-empty */
  size_t nblocks, cap;
  size_t count;
} LjmCsyms;

/* Initialises an empty table. */
void ljm_csyms_init(LjmCsyms *s);
/* Frees the table (not the names). */
void ljm_csyms_free(LjmCsyms *s);
/* The entry for addr, added with a NULL name when new (*added = 1); NULL on
** out of memory. Valid until the next put. */
LjmCsym *ljm_csyms_put(LjmCsyms *s, uint64_t addr, int *added);
/* The entry with the greatest address <= x, or NULL when there is none. */
const LjmCsym *ljm_csyms_floor(const LjmCsyms *s, uint64_t x);

#endif
