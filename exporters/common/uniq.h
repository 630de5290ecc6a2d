/* uniq.h -- unique serialized items (byte strings), back to back in one buffer.
**
** Exporters that write a table of unique items (frames, file names) build
** each item at the end of the table's buffer, then intern it: an earlier
** equal item is found by hash and the new copy dropped, so every item is
** serialized once and referred to by its index.
*/
#ifndef LJM_EXPORTERS_UNIQ_H
#define LJM_EXPORTERS_UNIQ_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/common/buf.h"

#define LJM_UNIQ_NONE UINT32_MAX

/* Zero-initialize; item i is b.p[off[i] .. off[i + 1]). */
typedef struct LjmUniq {
  LjmBuf b;            /* items back to back (and the one being built) */
  size_t *off;
  size_t n, cap;
  uint32_t *slots;     /* open-addressing table of index + 1 (0: empty) */
  size_t nslots;
} LjmUniq;

/* Interns the bytes appended since b.len was start: returns the index of
** an earlier equal item (b.len goes back to start) or of the new one;
** LJM_UNIQ_NONE when out of memory (b.oom included). */
uint32_t ljm_uniq_add(LjmUniq *t, size_t start);
/* The bytes of item i; *len gets their length. */
const char *ljm_uniq_item(const LjmUniq *t, uint32_t i, size_t *len);
/* Frees the table's memory; the struct itself is the caller's. */
void ljm_uniq_free(LjmUniq *t);

#endif
