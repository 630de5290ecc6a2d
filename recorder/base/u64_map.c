/* u64_map.c -- address-keyed hash map of the recorder. */
#include "recorder/base/u64_map.h"

#include <errno.h>
#include <stdlib.h>

/* Addresses are 8- or 16-byte aligned: mix the bits before masking. */
static size_t map_hash(uint64_t k)
{
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return (size_t)k;
}

void rec_map_init(RecMap *m)
{
  m->e = NULL;
  m->mask = 0;
  m->n = 0;
}

void rec_map_free(RecMap *m)
{
  free(m->e);
  rec_map_init(m);
}

RecMapEntry *rec_map_get(const RecMap *m, uint64_t key)
{
  size_t i;
  if (!m->e) return NULL;
  for (i = map_hash(key) & m->mask;; i = (i + 1) & m->mask) {
    RecMapEntry *e = &m->e[i];
    if (e->key == key) return e;
    if (!e->key) return NULL;
  }
}

static void map_insert(RecMapEntry *tab, size_t mask, uint64_t key,
                       uint64_t val)
{
  size_t i = map_hash(key) & mask;
  while (tab[i].key && tab[i].key != key) i = (i + 1) & mask;
  tab[i].key = key;
  tab[i].val = val;
}

int rec_map_put(RecMap *m, uint64_t key, uint64_t val)
{
  RecMapEntry *e = rec_map_get(m, key);
  if (e) {
    e->val = val;
    return 0;
  }
  if (!m->e || (m->n + 1) * 4 > (m->mask + 1) * 3) {  /* keep load < 3/4 */
    size_t nsz = m->e ? (m->mask + 1) * 2 : 256, i;
    RecMapEntry *ne = calloc(nsz, sizeof(*ne));
    if (!ne) return ENOMEM;
    for (i = 0; m->e && i <= m->mask; i++)
      if (m->e[i].key) map_insert(ne, nsz - 1, m->e[i].key, m->e[i].val);
    free(m->e);
    m->e = ne;
    m->mask = nsz - 1;
  }
  map_insert(m->e, m->mask, key, val);
  m->n++;
  return 0;
}

int rec_map_del(RecMap *m, uint64_t key)
{
  size_t i, j;
  RecMapEntry *e = rec_map_get(m, key);
  if (!e) return 0;
  /* Linear probing: close the gap by moving later entries of the probe
  ** run back when their home slot allows it (no tombstones). */
  i = (size_t)(e - m->e);
  e->key = 0;
  m->n--;
  for (j = (i + 1) & m->mask; m->e[j].key; j = (j + 1) & m->mask) {
    size_t home = map_hash(m->e[j].key) & m->mask;
    /* Entry j may move to i if its home is not in (i, j] (cyclically). */
    int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays) continue;
    m->e[i] = m->e[j];
    m->e[j].key = 0;
    i = j;
  }
  return 1;
}

void rec_map_clear(RecMap *m)
{
  size_t i;
  for (i = 0; m->e && i <= m->mask; i++) m->e[i].key = 0;
  m->n = 0;
}
