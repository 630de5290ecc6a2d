/* ljm_addrmap.c -- segmented linear probing with backward-shift deletion (no
** tombstones, so millions of alloc/free pairs never degrade the table). */
#include <stdlib.h>

#include "model/ljm_addrmap.h"

#define SEG_INIT 64  /* slots of segment 0; segment k starts with SEG_INIT + k */

static LjmSlot *alloc_slots(size_t n)
{
  LjmSlot *s = malloc(n * sizeof(*s));
  if (s)
    for (size_t i = 0; i < n; i++) s[i].site = LJM_SLOT_EMPTY;
  return s;
}

int ljm_addrmap_init(LjmAddrmap *m)
{
  *m = (LjmAddrmap){ .freebig = UINT32_MAX };
  for (int i = 0; i < LJM_ADDRMAP_SEGS; i++) {
    m->seg[i].cap = SEG_INIT + (uint32_t)i;
    if (!(m->seg[i].slots = alloc_slots(m->seg[i].cap))) {
      ljm_addrmap_free(m);
      return -1;
    }
  }
  return 0;
}

void ljm_addrmap_free(LjmAddrmap *m)
{
  for (int i = 0; i < LJM_ADDRMAP_SEGS; i++) free(m->seg[i].slots);
  free(m->big);
  *m = (LjmAddrmap){ .freebig = UINT32_MAX };
}

/* -- Sizes of 4 GiB and more -------------------------------------------- */

int ljm_addrmap_set_big(LjmAddrmap *m, LjmSlot *s, uint64_t size, uint32_t site)
{
  uint32_t i = m->freebig;
  if (i != UINT32_MAX) {
    m->freebig = (uint32_t)m->big[i];
  } else {
    if (m->nbig == m->capbig) {
      uint32_t cap = m->capbig ? m->capbig * 2 : 16;
      uint64_t *b = realloc(m->big, (size_t)cap * sizeof(*b));
      if (!b) return -1;
      m->big = b;
      m->capbig = cap;
    }
    i = m->nbig++;
  }
  m->big[i] = size;
  s->size = i;
  s->site = site | LJM_SLOT_BIG;
  return 0;
}

/* -- Table ---------------------------------------------------------------- */

int ljm_addrmap_grow(LjmSegment *g)
{
  if (g->cap > UINT32_MAX / 3) return -1;
  uint32_t cap = g->cap + g->cap / 4;
  LjmSlot *slots = alloc_slots(cap);
  if (!slots) return -1;
  for (uint32_t i = 0; i < g->cap; i++) {
    if (g->slots[i].site == LJM_SLOT_EMPTY) continue;
    uint32_t j = ljm_addrmap_home(ljm_hash64(g->slots[i].addr), cap);
    while (slots[j].site != LJM_SLOT_EMPTY) j = ljm_addrmap_next(j, cap);
    slots[j] = g->slots[i];
  }
  free(g->slots);
  g->slots = slots;
  g->cap = cap;
  return 0;
}

