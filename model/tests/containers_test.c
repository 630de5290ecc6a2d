/* containers_test.c -- string interning, copies, the C-symbol table and the live
** block map, each against a brute-force or hand-worked answer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/tests/check.h"
#include "model/ljm_addrmap.h"
#include "model/ljm_csyms.h"
#include "model/ljm_strtab.h"

static void test_strtab(void)
{
  LjmStrtab t;
  CHECK(ljm_strtab_init(&t) == 0);
  uint32_t a = ljm_strtab_intern(&t, "@test.lua", 9);
  uint32_t b = ljm_strtab_intern(&t, "@test.lua", 9);
  uint32_t c = ljm_strtab_intern(&t, "@test.lu", 8);
  uint32_t z = ljm_strtab_intern(&t, "a\0b", 3);
  uint32_t z2 = ljm_strtab_intern(&t, "a\0c", 3);
  CHECK(a == b && a != c && z != z2);
  CHECK(ljm_strtab_get(&t, z)->len == 3 && memcmp(ljm_strtab_get(&t, z)->s, "a\0b", 3) == 0);
  const char *stable = ljm_strtab_get(&t, a)->s;
  /* Many strings, some longer than an arena block: ids stay distinct and
  ** old pointers stay valid. */
  char *big = malloc(100000);
  memset(big, 'x', 100000);
  uint32_t bigid = ljm_strtab_intern(&t, big, 100000);
  char key[32];
  uint32_t first = 0;
  for (int i = 0; i < 50000; i++) {
    int n = snprintf(key, sizeof(key), "sym_%d", i);
    uint32_t id = ljm_strtab_intern(&t, key, (size_t)n);
    if (i == 0) first = id;
  }
  CHECK(ljm_strtab_intern(&t, "sym_0", 5) == first);
  CHECK(ljm_strtab_intern(&t, "sym_49999", 9) == first + 49999);
  CHECK(ljm_strtab_intern(&t, big, 100000) == bigid);
  CHECK(ljm_strtab_get(&t, a)->s == stable && strcmp(stable, "@test.lua") == 0);
  CHECK(ljm_strtab_get(&t, bigid)->s[99999] == 'x' && ljm_strtab_get(&t, bigid)->s[100000] == 0);
  /* Copies: NUL-terminated, stable, and not interned (a copy of an interned
  ** string is another string, and adds no id). */
  uint32_t n = t.n;
  const char *c1 = ljm_strtab_copy(&t, "@test.lua", 9);
  const char *c2 = ljm_strtab_copy(&t, big, 100000);
  CHECK(c1 && c1 != stable && strcmp(c1, "@test.lua") == 0);
  CHECK(c2 && memcmp(c2, big, 100000) == 0 && c2[100000] == 0);
  for (int i = 0; i < 20000; i++) ljm_strtab_copy(&t, "padding", 7);
  CHECK(t.n == n && strcmp(c1, "@test.lua") == 0 && c2[99999] == 'x');
  free(big);
  ljm_strtab_free(&t);
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 7;
  rnd_state ^= rnd_state << 17;
  return rnd_state;
}

static void test_csyms(void)
{
  LjmCsyms s;
  ljm_csyms_init(&s);
  int added;
  CHECK(ljm_csyms_floor(&s, 100) == NULL);
  LjmCsym *e = ljm_csyms_put(&s, 0x400000, &added);
  CHECK(e && added && e->addr == 0x400000 && e->name == NULL);
  e->name = "main";
  CHECK(ljm_csyms_put(&s, 0x401000, &added) && added);
  e = ljm_csyms_put(&s, 0x400000, &added);
  CHECK(e && !added && strcmp(e->name, "main") == 0);  /* the same entry */
  CHECK(ljm_csyms_floor(&s, 0x3fffff) == NULL);                        /* below all */
  CHECK(ljm_csyms_floor(&s, 0x400000)->addr == 0x400000);              /* exact */
  CHECK(strcmp(ljm_csyms_floor(&s, 0x400fff)->name, "main") == 0);     /* inside */
  CHECK(ljm_csyms_floor(&s, UINT64_MAX)->addr == 0x401000);            /* above all */
  ljm_csyms_free(&s);

  /* Random inserts (with repeats, and descending runs that hit block 0)
  ** against a brute-force floor; each entry keeps the name it was given. */
  enum { N = 20000 };
  uint64_t *keys = malloc(N * sizeof(uint64_t));
  char (*names)[24] = malloc(N * sizeof(*names));
  size_t nk = 0;
  ljm_csyms_init(&s);
  for (int i = 0; i < N; i++) {
    uint64_t k = i % 5 == 0 ? (uint64_t)(N - i) : rnd() % 1000000;
    e = ljm_csyms_put(&s, k, &added);
    int known = 0;
    for (size_t j = 0; j < nk; j++) known |= keys[j] == k;
    CHECK(e && e->addr == k && added == !known);
    if (!known) {
      snprintf(names[nk], sizeof(names[nk]), "f%llu", (unsigned long long)k);
      e->name = names[nk];
      keys[nk++] = k;
    }
  }
  CHECK(s.count == nk);
  for (int q = 0; q < 3000; q++) {
    uint64_t x = rnd() % 1100000, best = 0;
    int have = 0;
    for (size_t j = 0; j < nk; j++)
      if (keys[j] <= x && (!have || keys[j] > best)) {
        best = keys[j];
        have = 1;
      }
    const LjmCsym *f = ljm_csyms_floor(&s, x);
    char want[24];
    snprintf(want, sizeof(want), "f%llu", (unsigned long long)best);
    CHECK((f != NULL) == have && (!have || (f->addr == best && strcmp(f->name, want) == 0)));
  }
  free(names);
  free(keys);
  ljm_csyms_free(&s);
}

/* The address whose map key is k (ljm_addrmap_key inverted). */
static uint64_t addr_of_key(uint64_t k)
{
  k ^= k >> 33;
  k *= 0x9cb4b2f8129337dbull;
  k ^= k >> 33;
  k *= 0x4f74430c22a54005ull;
  return k ^ (k >> 33);
}

/* Blocks whose keys share a segment and both buckets: eight fit, the rest
** go to the stash, and all of them are found, replaced and taken. */
static void test_addrmap_collisions(void)
{
  enum { N = 64 };
  LjmAddrmap m;
  LjmBlock old;
  uint64_t addr[N];
  CHECK(ljm_addrmap_init(&m) == 0);
  for (uint64_t i = 0; i < N; i++) {
    uint64_t key = 0x2aull << 58 | 0x12345ull << 26 | i;
    addr[i] = addr_of_key(key);
    CHECK(ljm_addrmap_key(addr[i]) == key);
    CHECK(ljm_addrmap_put(&m, addr[i], 100 + i, (uint32_t)i, &old) == 0);
  }
  const LjmSegment *g = &m.seg[0x2a];
  CHECK(g->nstash == N - 8 && m.count == N);
  for (uint64_t i = 0; i < N; i += 3) {
    CHECK(ljm_addrmap_put(&m, addr[i], 1ull << 40, (uint32_t)i + 1000, &old) == 1);
    CHECK(old.size == 100 + i && old.site == i && old.addr == addr[i]);
  }
  CHECK(ljm_addrmap_put(&m, 12345, 7, 9, &old) == 0);  /* other keys still go in */
  for (uint64_t i = 0; i < N; i++) {
    int r = ljm_addrmap_take(&m, addr[i], &old);
    CHECK(r == 1 && old.size == (i % 3 ? 100 + i : 1ull << 40));
    CHECK(old.site == (i % 3 ? i : i + 1000));
    CHECK(ljm_addrmap_take(&m, addr[i], &old) == 0);
  }
  CHECK(g->nstash == 0 && m.count == 1);
  CHECK(ljm_addrmap_take(&m, 12345, &old) == 1 && old.size == 7 && old.site == 9);
  ljm_addrmap_free(&m);
}

static void test_addrmap(void)
{
  LjmAddrmap m;
  LjmBlock old;
  CHECK(ljm_addrmap_init(&m) == 0);
  CHECK(ljm_addrmap_put(&m, 0, 10, 1, &old) == 0);  /* address 0 is a key like any */
  CHECK(ljm_addrmap_put(&m, 0, 20, 2, &old) == 1 && old.size == 10 && old.site == 1);
  CHECK(ljm_addrmap_take(&m, 0, &old) == 1 && old.size == 20);
  CHECK(ljm_addrmap_take(&m, 0, &old) == 0);
  /* Sizes of 4 GiB and more go to the side table and come back intact. */
  CHECK(ljm_addrmap_put(&m, 8, 1ull << 40, 3, &old) == 0);
  CHECK(ljm_addrmap_put(&m, 16, UINT64_MAX, 4, &old) == 0);
  CHECK(ljm_addrmap_put(&m, 8, 0xffffffffull, 5, &old) == 1 && old.size == 1ull << 40 && old.site == 3);
  CHECK(ljm_addrmap_take(&m, 8, &old) == 1 && old.size == 0xffffffffull && old.site == 5);
  CHECK(ljm_addrmap_put(&m, 24, 1ull << 33, 6, &old) == 0);  /* reuses a freed side slot */
  CHECK(m.nbig == 2);
  CHECK(ljm_addrmap_take(&m, 16, &old) == 1 && old.size == UINT64_MAX && old.site == 4);
  CHECK(ljm_addrmap_take(&m, 24, &old) == 1 && old.size == 1ull << 33 && old.site == 6);
  /* Random churn against a shadow array: every key stays reachable through
  ** displacements and growth. Keys come from a small range so segments fill
  ** and grow. */
  enum { K = 4096 };
  static uint64_t shadow[K];  /* size+1, 0 = absent */
  for (int i = 0; i < 400000; i++) {
    uint64_t k = rnd() % K;
    if (rnd() % 3) {
      uint64_t size = rnd() % 7 ? rnd() % 1000 : (rnd() >> 20) + (1ull << 32);
      int r = ljm_addrmap_put(&m, k * 16, size, (uint32_t)k, &old);
      CHECK(r == (shadow[k] ? 1 : 0));
      shadow[k] = size + 1;
    } else {
      int r = ljm_addrmap_take(&m, k * 16, &old);
      CHECK(r == (shadow[k] ? 1 : 0));
      if (r) CHECK(old.size + 1 == shadow[k] && old.site == k);
      shadow[k] = 0;
    }
  }
  size_t live = 0;
  for (int k = 0; k < K; k++) live += shadow[k] != 0;
  CHECK(m.count == live);
  ljm_addrmap_free(&m);
}

int main(void)
{
  test_strtab();
  test_csyms();
  test_addrmap();
  test_addrmap_collisions();
  return check_done("containers_test");
}
