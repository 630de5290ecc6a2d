/* uniq.c -- unique serialized items (uniq.h). */
#include "exporters/common/uniq.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *p, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
  return h;
}

static int uniq_rehash(LjmUniq *t)
{
  size_t cap = t->nslots ? t->nslots * 2 : 256;
  uint32_t *s = calloc(cap, sizeof(*s));
  if (!s) return -1;
  for (size_t i = 0; i < t->n; i++) {
    size_t j = fnv1a(t->b.p + t->off[i], t->off[i + 1] - t->off[i]) & (cap - 1);
    while (s[j]) j = (j + 1) & (cap - 1);
    s[j] = (uint32_t)i + 1;
  }
  free(t->slots);
  t->slots = s;
  t->nslots = cap;
  return 0;
}

uint32_t ljm_uniq_add(LjmUniq *t, size_t start)
{
  if (t->b.oom || t->n >= LJM_UNIQ_NONE - 1) return LJM_UNIQ_NONE;
  const char *p = t->b.p ? t->b.p + start : "";
  size_t len = t->b.len - start;
  if ((t->n + 1) * 2 > t->nslots && uniq_rehash(t) != 0) return LJM_UNIQ_NONE;
  size_t j = fnv1a(p, len) & (t->nslots - 1);
  for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
    uint32_t k = t->slots[j] - 1;
    if (t->off[k + 1] - t->off[k] == len && memcmp(t->b.p + t->off[k], p, len) == 0) {
      t->b.len = start;
      return k;
    }
  }
  if (t->n + 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    size_t *o = realloc(t->off, cap * sizeof(*o));
    if (!o) return LJM_UNIQ_NONE;
    t->off = o;
    t->cap = cap;
  }
  if (t->n == 0) t->off[0] = start;
  t->off[t->n + 1] = t->b.len;
  t->slots[j] = (uint32_t)t->n + 1;
  return (uint32_t)t->n++;
}

const char *ljm_uniq_item(const LjmUniq *t, uint32_t i, size_t *len)
{
  *len = t->off[i + 1] - t->off[i];
  return t->b.p + t->off[i];
}

void ljm_uniq_free(LjmUniq *t)
{
  ljm_buf_free(&t->b);
  free(t->off);
  free(t->slots);
  memset(t, 0, sizeof(*t));
}
