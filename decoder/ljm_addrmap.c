/* ljm_addrmap.c -- linear probing with backward-shift deletion (no tombstones,
** so a stream of millions of alloc/free pairs never degrades the table). */
#include <stdlib.h>

#include "ljm_addrmap.h"
#include "ljm_hmap.h"

static size_t slot_of(const LjmAddrmap *m, uint64_t addr)
{
  return (size_t)(ljm_hash64(addr) & m->mask);
}

static LjmBlock *alloc_slots(size_t n)
{
  LjmBlock *s = malloc(n * sizeof(*s));
  if (s)
    for (size_t i = 0; i < n; i++) s[i].site = LJM_ADDRMAP_EMPTY;
  return s;
}

int ljm_addrmap_init(LjmAddrmap *m)
{
  m->mask = 1023;
  m->count = 0;
  m->slots = alloc_slots(m->mask + 1);
  return m->slots ? 0 : -1;
}

void ljm_addrmap_free(LjmAddrmap *m)
{
  free(m->slots);
  m->slots = NULL;
}

int ljm_addrmap_take(LjmAddrmap *m, uint64_t addr, LjmBlock *out)
{
  size_t i = slot_of(m, addr);
  for (;; i = (i + 1) & m->mask) {
    if (m->slots[i].site == LJM_ADDRMAP_EMPTY) return 0;
    if (m->slots[i].addr == addr) break;
  }
  *out = m->slots[i];
  /* Shift later members of the cluster back into the hole. */
  for (size_t j = (i + 1) & m->mask;; j = (j + 1) & m->mask) {
    LjmBlock *b = &m->slots[j];
    if (b->site == LJM_ADDRMAP_EMPTY) break;
    size_t home = slot_of(m, b->addr);
    /* b may move to i only if its home is not in (i, j]. */
    if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
      m->slots[i] = *b;
      i = j;
    }
  }
  m->slots[i].site = LJM_ADDRMAP_EMPTY;
  m->count--;
  return 1;
}

static int grow(LjmAddrmap *m)
{
  size_t mask = m->mask * 2 + 1;
  LjmBlock *slots = alloc_slots(mask + 1);
  if (!slots) return -1;
  for (size_t i = 0; i <= m->mask; i++) {
    if (m->slots[i].site == LJM_ADDRMAP_EMPTY) continue;
    size_t j = (size_t)(ljm_hash64(m->slots[i].addr) & mask);
    while (slots[j].site != LJM_ADDRMAP_EMPTY) j = (j + 1) & mask;
    slots[j] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->mask = mask;
  return 0;
}

int ljm_addrmap_put(LjmAddrmap *m, uint64_t addr, uint64_t size, uint32_t site,
                    LjmBlock *old)
{
  size_t i = slot_of(m, addr);
  for (;; i = (i + 1) & m->mask) {
    LjmBlock *b = &m->slots[i];
    if (b->site == LJM_ADDRMAP_EMPTY) break;
    if (b->addr == addr) {
      *old = *b;
      b->size = size;
      b->site = site;
      return 1;
    }
  }
  m->slots[i] = (LjmBlock){ addr, size, site };
  m->count++;
  if (m->count * 10 > (m->mask + 1) * 7) return grow(m) == 0 ? 0 : -1;
  return 0;
}
