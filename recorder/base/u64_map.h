/* u64_map.h -- address-keyed hash map of the recorder (malloc-backed).
**
** Remembers which prototypes, traces and C addresses a stream has already
** announced. Keys are non-zero addresses; each entry carries one value.
*/
#ifndef REC_MAP_H
#define REC_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct RecMapEntry {
  uint64_t key;      /* 0 = empty slot */
  uint64_t val;      /* caller's value */
} RecMapEntry;

typedef struct RecMap {
  RecMapEntry *e;    /* slots, a power of two */
  size_t mask;       /* number of slots - 1 */
  size_t n;          /* used slots */
} RecMap;

/* Empty map; allocates lazily. */
void rec_map_init(RecMap *m);
void rec_map_free(RecMap *m);
/* Entry for key or NULL. */
RecMapEntry *rec_map_get(const RecMap *m, uint64_t key);
/* Sets key to val; returns 0 or ENOMEM (the map is unchanged then). */
int rec_map_put(RecMap *m, uint64_t key, uint64_t val);
/* Removes key; returns 1 if it was there. Entry pointers obtained before
** are invalid afterwards. */
int rec_map_del(RecMap *m, uint64_t key);
/* Forgets every entry, keeping the allocation. */
void rec_map_clear(RecMap *m);

#endif
