/* ljm_strtab.c -- string interning: an arena plus an open-addressing index. */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_strtab.h"

#define EMPTY UINT32_MAX
#define BLOCK_SIZE (64u << 10)

uint64_t ljm_strtab_hash(const char *s, size_t len)
{
  uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  for (; i < len; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
  h ^= h >> 29;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 32);
}

int ljm_strtab_init(LjmStrtab *t)
{
  memset(t, 0, sizeof(*t));
  t->mask = 255;
  t->slots = malloc((t->mask + 1) * sizeof(uint32_t));
  if (!t->slots) return -1;
  memset(t->slots, 0xff, (t->mask + 1) * sizeof(uint32_t));
  return 0;
}

void ljm_strtab_free(LjmStrtab *t)
{
  for (size_t i = 0; i < t->nblocks; i++) free(t->blocks[i]);
  free(t->blocks);
  free(t->ents);
  free(t->slots);
  memset(t, 0, sizeof(*t));
}

static int grow_index(LjmStrtab *t)
{
  uint32_t mask = t->mask * 2 + 1;
  uint32_t *slots = malloc(((size_t)mask + 1) * sizeof(uint32_t));
  if (!slots) return -1;
  memset(slots, 0xff, ((size_t)mask + 1) * sizeof(uint32_t));
  for (uint32_t i = 0; i < t->n; i++) {
    uint32_t j = (uint32_t)t->ents[i].hash & mask;
    while (slots[j] != EMPTY) j = (j + 1) & mask;
    slots[j] = i;
  }
  free(t->slots);
  t->slots = slots;
  t->mask = mask;
  return 0;
}

/* Copies bytes into the arena; big strings get a block of their own. */
static char *arena_copy(LjmStrtab *t, const char *s, size_t len)
{
  size_t need = len + 1;
  if (!t->block || t->size - t->used < need) {
    size_t size = need > BLOCK_SIZE / 4 ? need : BLOCK_SIZE;
    char *b = malloc(size);
    if (!b) return NULL;
    if (t->nblocks == t->capblocks) {
      size_t cap = t->capblocks ? t->capblocks * 2 : 16;
      char **bl = realloc(t->blocks, cap * sizeof(char *));
      if (!bl) {
        free(b);
        return NULL;
      }
      t->blocks = bl;
      t->capblocks = cap;
    }
    t->blocks[t->nblocks++] = b;
    if (size != BLOCK_SIZE) {  /* private block: keep filling the current one */
      memcpy(b, s, len);
      b[len] = '\0';
      return b;
    }
    t->block = b;
    t->size = size;
    t->used = 0;
  }
  char *d = t->block + t->used;
  memcpy(d, s, len);
  d[len] = '\0';
  t->used += need;
  return d;
}

const char *ljm_strtab_copy(LjmStrtab *t, const char *s, size_t len)
{
  return arena_copy(t, s, len);
}

uint32_t ljm_strtab_intern(LjmStrtab *t, const char *s, size_t len)
{
  uint64_t h = ljm_strtab_hash(s, len);
  uint32_t j = (uint32_t)h & t->mask;
  for (uint32_t id; (id = t->slots[j]) != EMPTY; j = (j + 1) & t->mask) {
    const LjmStrEntry *e = &t->ents[id];
    if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) return id;
  }
  if (t->n == UINT32_MAX - 1) return EMPTY;
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    LjmStrEntry *ents = realloc(t->ents, (size_t)cap * sizeof(*ents));
    if (!ents) return EMPTY;
    t->ents = ents;
    t->cap = cap;
  }
  char *copy = arena_copy(t, s, len);
  if (!copy) return EMPTY;
  uint32_t id = t->n++;
  t->ents[id] = (LjmStrEntry){ copy, len, h };
  t->slots[j] = id;
  if ((uint64_t)t->n * 2 > t->mask && grow_index(t) != 0) return EMPTY;
  return id;
}
