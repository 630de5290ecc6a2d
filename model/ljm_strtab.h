/* ljm_strtab.h -- interned byte strings with stable addresses. */
#ifndef LJM_STRTAB_H
#define LJM_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct LjmStrEntry {
  const char *s;   /* NUL-terminated copy, never moves */
  size_t len;
  uint64_t hash;
} LjmStrEntry;

typedef struct LjmStrtab {
  LjmStrEntry *ents;
  uint32_t n, cap;
  uint32_t *slots;  /* open addressing over ents; UINT32_MAX = empty */
  uint32_t mask;
  char *block;      /* current arena block */
  size_t used, size;
  char **blocks;    /* all blocks, for freeing */
  size_t nblocks, capblocks;
} LjmStrtab;

/* Initialises an empty table. Returns 0 or -1 (out of memory). */
int ljm_strtab_init(LjmStrtab *t);
/* Frees everything. */
void ljm_strtab_free(LjmStrtab *t);
/* Id of the string, adding it when new; UINT32_MAX when out of memory. */
uint32_t ljm_strtab_intern(LjmStrtab *t, const char *s, size_t len);
/* A NUL-terminated copy of s in the table's arena, not interned (no id): it
** lives as long as the table. NULL when out of memory. */
const char *ljm_strtab_copy(LjmStrtab *t, const char *s, size_t len);
/* Hash used by the table (exposed for tests). */
uint64_t ljm_strtab_hash(const char *s, size_t len);

static inline const LjmStrEntry *ljm_strtab_get(const LjmStrtab *t, uint32_t id)
{
  return &t->ents[id];
}

#endif
