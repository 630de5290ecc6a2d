/* ljm_hmap.c -- linear probing map; no deletion (symbols are never removed). */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_hmap.h"

static LjmHmapSlot *alloc_slots(size_t n)
{
  LjmHmapSlot *s = malloc(n * sizeof(*s));
  if (s)
    for (size_t i = 0; i < n; i++) s[i].val = LJM_HMAP_NONE;
  return s;
}

int ljm_hmap_init(LjmHmap *m)
{
  m->mask = 63;
  m->count = 0;
  m->slots = alloc_slots(m->mask + 1);
  return m->slots ? 0 : -1;
}

void ljm_hmap_free(LjmHmap *m)
{
  free(m->slots);
  m->slots = NULL;
}

void ljm_hmap_clear(LjmHmap *m)
{
  for (size_t i = 0; i <= m->mask; i++) m->slots[i].val = LJM_HMAP_NONE;
  m->count = 0;
}

uint32_t ljm_hmap_get(const LjmHmap *m, uint64_t key)
{
  for (size_t i = ljm_hash64(key) & m->mask;; i = (i + 1) & m->mask) {
    const LjmHmapSlot *s = &m->slots[i];
    if (s->val == LJM_HMAP_NONE || s->key == key) return s->val;
  }
}

static int grow(LjmHmap *m)
{
  size_t mask = m->mask * 2 + 1;
  LjmHmapSlot *slots = alloc_slots(mask + 1);
  if (!slots) return -1;
  for (size_t i = 0; i <= m->mask; i++) {
    LjmHmapSlot *s = &m->slots[i];
    if (s->val == LJM_HMAP_NONE) continue;
    size_t j = ljm_hash64(s->key) & mask;
    while (slots[j].val != LJM_HMAP_NONE) j = (j + 1) & mask;
    slots[j] = *s;
  }
  free(m->slots);
  m->slots = slots;
  m->mask = mask;
  return 0;
}

int ljm_hmap_put(LjmHmap *m, uint64_t key, uint32_t val)
{
  size_t i = ljm_hash64(key) & m->mask;
  for (;; i = (i + 1) & m->mask) {
    LjmHmapSlot *s = &m->slots[i];
    if (s->val == LJM_HMAP_NONE) break;
    if (s->key == key) {
      s->val = val;
      return 0;
    }
  }
  m->slots[i].key = key;
  m->slots[i].val = val;
  if (++m->count * 2 > m->mask) return grow(m);
  return 0;
}
