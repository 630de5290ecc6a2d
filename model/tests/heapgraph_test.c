/* heapgraph_test.c -- the heap graph's dominators, retained sizes and
** shortest paths against brute force, on random snapshots.
**
** Each case writes a random graph as an ljh snapshot (a root, objects with
** random sizes, random references, some weak), loads it, and checks for
** every object: its depth equals a plain BFS over strong references; its
** retained size equals its own size plus the sizes of every object that
** the root can no longer reach once it is removed (the definition of the
** dominator subtree); its immediate dominator dominates it. Then a few
** hand-made graphs whose answers are known. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_heapgraph.h"

static int failures, checks;

#define CHECK(c, ...)                          \
  do {                                         \
    checks++;                                  \
    if (!(c)) {                                \
      failures++;                              \
      printf("FAIL line %d: ", __LINE__);      \
      printf(__VA_ARGS__);                     \
      printf("\n");                            \
    }                                          \
  } while (0)

typedef struct Buf {
  unsigned char *p;
  size_t n, cap;
} Buf;

static void put(Buf *b, unsigned char c)
{
  if (b->n == b->cap) {
    b->cap = b->cap ? b->cap * 2 : 4096;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  b->p[b->n++] = c;
}

static void uleb(Buf *b, uint64_t v)
{
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    put(b, c | (v ? 0x80 : 0));
  } while (v);
}

static void str(Buf *b, const char *s)
{
  uleb(b, strlen(s));
  while (*s) put(b, (unsigned char)*s++);
}

/* A snapshot's header: the magic, a build name and gctotal. */
static void header(Buf *b, uint64_t gctotal)
{
  b->n = 0;
  for (const char *m = "ljh\x01"; *m; m++) put(b, (unsigned char)*m);
  str(b, "");
  uleb(b, gctotal);
}

static void obj_head(Buf *b, LjhType type, uint64_t addr, uint64_t size, const char *label,
                     uint64_t nedges)
{
  put(b, (unsigned char)type);
  uleb(b, addr);
  uleb(b, size);
  str(b, label);
  uleb(b, nedges);
}

#define MAXN 40

typedef struct Graph {
  int n;                       /* objects 1..n, the root is 0 */
  uint64_t size[MAXN + 1];
  int adj[MAXN + 1][MAXN + 1]; /* 1 strong, 2 weak */
} Graph;

/* Object i lives at address 16 * i (the root at 0). */
static void write_graph(const Graph *g, Buf *b)
{
  b->n = 0;
  for (const char *m = "ljh\x01"; *m; m++) put(b, (unsigned char)*m);
  str(b, "test build");
  uleb(b, 0);
  for (int v = 0; v <= g->n; v++) {
    int ne = 0;
    for (int w = 1; w <= g->n; w++) ne += g->adj[v][w] != 0;
    put(b, v == 0 ? LJH_ROOT : LJH_TAB);
    uleb(b, 16 * (uint64_t)v);
    uleb(b, v == 0 ? 0 : g->size[v]);
    str(b, "");
    uleb(b, (uint64_t)ne);
    for (int w = 1; w <= g->n; w++)
      if (g->adj[v][w]) {
        char name[16];
        put(b, (unsigned char)(LJH_EDGE_NAME | (g->adj[v][w] == 2 ? LJH_EDGE_WEAK : 0)));
        uleb(b, 16 * (uint64_t)w);
        /* From the root, "_G" (a penalty of 0) or another root (2). */
        if (v == 0 && w % 3 == 0) snprintf(name, sizeof(name), "_G");
        else snprintf(name, sizeof(name), "e%d", w);
        str(b, name);
      }
  }
  put(b, 0);
}

/* The graph as tables: the root's references named as in write_graph, the
** others table entries. v -> w is v.k<w>, or v[w] when 5 divides v * w, and
** also v.j<w> when 7 divides v + w (two keys, one target). The key strings
** k<w> and j<w> live at 16 * (KEYS + w) and 16 * (2 * KEYS + w). reversed:
** the objects after the root, and each table's entries, in the opposite
** order, as another run's hash order would list them. */
#define KEYS (MAXN + 1)
static void write_tables(const Graph *g, Buf *b, int reversed)
{
  header(b, 0);
  for (int j = 0; j <= g->n; j++) {
    int v = reversed && j ? g->n + 1 - j : j, ne = 0;
    for (int w = 1; w <= g->n; w++)
      if (g->adj[v][w]) ne += v && (v + w) % 7 == 0 ? 2 : 1;
    obj_head(b, v == 0 ? LJH_ROOT : LJH_TAB, 16 * (uint64_t)v, v == 0 ? 0 : g->size[v], "",
             (uint64_t)ne);
    for (int k = 1; k <= g->n; k++) {
      int w = v && reversed ? g->n + 1 - k : k;
      int weak = g->adj[v][w] == 2 ? LJH_EDGE_WEAK : 0;
      if (!g->adj[v][w]) continue;
      if (v == 0) {
        put(b, (unsigned char)(LJH_EDGE_NAME | weak));
        uleb(b, 16 * (uint64_t)w);
        str(b, w % 3 == 0 ? "_G" : "e");
        continue;
      }
      for (int twice = 0; twice < ((v + w) % 7 == 0 ? 2 : 1); twice++) {
        int index = !twice && (v * w) % 5 == 0;
        put(b, (unsigned char)((index ? LJH_EDGE_INDEX : LJH_EDGE_STRKEY) | weak));
        uleb(b, 16 * (uint64_t)w);
        uleb(b, index ? (uint64_t)w : 16 * (uint64_t)((twice ? 2 * KEYS : KEYS) + w));
      }
    }
  }
  for (int j = 1; j <= 2 * g->n; j++) {
    int w = reversed ? 2 * g->n + 1 - j : j, second = w > g->n;
    char label[16];
    if (second) w -= g->n;
    snprintf(label, sizeof(label), "%c%d", second ? 'j' : 'k', w);
    obj_head(b, LJH_STR, 16 * (uint64_t)((second ? 2 * KEYS : KEYS) + w), 24, label, 0);
  }
  put(b, 0);
}

/* Each object's path, and the reference it arrives by, do not depend on
** the order the snapshot lists the objects and the tables' entries in. */
static void check_order(const Graph *g, int seed)
{
  Buf b[2] = {{0}, {0}};
  LjmHeapGraph hg[2];
  char pa[512], pb[512];
  for (int r = 0; r < 2; r++) {
    write_tables(g, &b[r], r);
    LjmInput *in = ljm_input_mem(b[r].p, b[r].n);
    LjmDiag d;
    CHECK(ljm_heapgraph_load(&hg[r], in, &d) == LJM_OK, "seed %d: load (order %d): %s", seed, r,
          d.msg);
    ljm_input_close(in);
  }
  for (uint32_t i = 1; i < hg[0].nobj; i++) {
    uint32_t j = 1;
    while (j < hg[1].nobj && hg[1].obj[j].addr != hg[0].obj[i].addr) j++;
    CHECK(j < hg[1].nobj, "seed %d: object at %llu in both", seed, (unsigned long long)hg[0].obj[i].addr);
    if (j == hg[1].nobj) continue;
    ljm_heapgraph_path(&hg[0], i, pa, sizeof(pa));
    ljm_heapgraph_path(&hg[1], j, pb, sizeof(pb));
    uint32_t e0 = hg[0].obj[i].parent, e1 = hg[1].obj[j].parent;
    CHECK(!strcmp(pa, pb) && (e0 == LJM_HEAP_NONE) == (e1 == LJM_HEAP_NONE) &&
              (e0 == LJM_HEAP_NONE ||
               hg[0].obj[hg[0].ref[e0].from].addr == hg[1].obj[hg[1].ref[e1].from].addr),
          "seed %d: object at %llu: path %s, listed the other way round %s", seed,
          (unsigned long long)hg[0].obj[i].addr, pa, pb);
  }
  for (int r = 0; r < 2; r++) {
    ljm_heapgraph_free(&hg[r]);
    free(b[r].p);
  }
}

/* The best path's order of each reachable object: its penalty (2 for a
** root reference not named _G) times 1000 plus its length, by brute force
** (Bellman-Ford). */
static void best_keys(const Graph *g, const int *all, int *key)
{
  for (int v = 0; v <= g->n; v++) key[v] = v == 0 ? 0 : 1 << 30;
  for (int round = 0; round <= g->n; round++)
    for (int u = 0; u <= g->n; u++)
      for (int w = 1; w <= g->n; w++)
        if (g->adj[u][w] == 1 && all[u] && key[u] < 1 << 30) {
          int k = key[u] + 1 + (u == 0 && w % 3 != 0 ? 2000 : 0);
          if (k < key[w]) key[w] = k;
        }
}

/* Strong reachability from the root with object `without` removed. */
static void reach(const Graph *g, int without, int *seen, int *depth)
{
  int q[MAXN + 1], h = 0, t = 0;
  memset(seen, 0, sizeof(int) * (MAXN + 1));
  if (without == 0) return;
  seen[0] = 1;
  if (depth) depth[0] = 0;
  q[t++] = 0;
  while (h < t) {
    int v = q[h++];
    for (int w = 1; w <= g->n; w++)
      if (g->adj[v][w] == 1 && w != without && !seen[w]) {
        seen[w] = 1;
        if (depth) depth[w] = depth[v] + 1;
        q[t++] = w;
      }
  }
}

static void count_cb(void *ud, const char *path)
{
  (void)path;
  (*(int *)ud)++;
}

static void check_graph(const Graph *g, int seed)
{
  Buf b = {0};
  write_graph(g, &b);
  LjmInput *in = ljm_input_mem(b.p, b.n);
  LjmHeapGraph hg;
  LjmDiag d;
  LjmStatus st = ljm_heapgraph_load(&hg, in, &d);
  CHECK(st == LJM_OK, "seed %d: load: %s", seed, d.msg);
  CHECK(hg.nobj == (uint32_t)g->n + 1, "seed %d: %u objects", seed, hg.nobj);
  int all[MAXN + 1], without[MAXN + 1];
  LjmHeapPreds preds;
  CHECK(ljm_heapgraph_preds(&hg, &preds) == 0, "seed %d: predecessors", seed);
  reach(g, -1, all, NULL);
  int key[MAXN + 1];
  best_keys(g, all, key);
  for (uint32_t i = 1; i < hg.nobj; i++) {
    int v = (int)(hg.obj[i].addr / 16);
    if (!all[v]) {
      CHECK(hg.obj[i].parent == LJM_HEAP_NONE && hg.obj[i].idom == LJM_HEAP_NONE,
            "seed %d: object %d only weakly reachable", seed, v);
      continue;
    }
    CHECK(hg.obj[i].depth == (uint32_t)(key[v] % 1000) && hg.obj[i].cost == key[v] / 1000,
          "seed %d: object %d depth %u penalty %u, brute force %d", seed, v, hg.obj[i].depth,
          hg.obj[i].cost, key[v]);
    reach(g, v, without, NULL);
    uint64_t want = g->size[v];
    for (int w = 1; w <= g->n; w++)
      if (w != v && all[w] && !without[w]) want += g->size[w];
    CHECK(hg.obj[i].retained == want, "seed %d: object %d retains %llu, brute force %llu", seed, v,
          (unsigned long long)hg.obj[i].retained, (unsigned long long)want);
    /* The immediate dominator: removing it cuts v off (unless it is the root). */
    uint32_t id = hg.obj[i].idom;
    CHECK(id != LJM_HEAP_NONE, "seed %d: object %d has a dominator", seed, v);
    if (id != LJM_HEAP_NONE && id != 0) {
      reach(g, (int)(hg.obj[id].addr / 16), without, NULL);
      CHECK(!without[v], "seed %d: idom of %d does not dominate it", seed, v);
    }
    /* Every best path: those whose steps each keep the brute-force order. */
    uint64_t npaths[MAXN + 1] = {0};
    int byk[MAXN + 1], nk = 0;
    for (int w = 1; w <= g->n; w++)  /* reachable objects by key: insertion sort */
      if (all[w]) {
        int j = nk++;
        for (; j > 0 && key[byk[j - 1]] > key[w]; j--) byk[j] = byk[j - 1];
        byk[j] = w;
      }
    npaths[0] = 1;
    for (int j = 0; j < nk; j++) {
      int w = byk[j];
      for (int u = 0; u <= g->n; u++)
        if (g->adj[u][w] == 1 && all[u] && key[u] + 1 + (u == 0 && w % 3 != 0 ? 2000 : 0) == key[w])
          npaths[w] += npaths[u];
    }
    int got = 0;
    uint32_t total = ljm_heapgraph_all_paths(&hg, &preds, i, 100000, count_cb, &got);
    CHECK(npaths[v] > 100000 || (total == npaths[v] && (uint64_t)got == npaths[v]),
          "seed %d: object %d: %u best paths (%d shown), counted %llu", seed, v, total, got,
          (unsigned long long)npaths[v]);
  }
  ljm_heapgraph_preds_free(&preds);
  ljm_heapgraph_free(&hg);
  ljm_input_close(in);
  free(b.p);
}

/* -- Object keys: paths and growth ------------------------------------------ */

static void edge(Buf *b, LjhEdgeKind kind, uint64_t target)
{
  put(b, (unsigned char)kind);
  uleb(b, target);
}

/* _G.owners = {[K] = V}, K a table at kaddr, V holding nkids tables of
** 100 bytes: V retains 40 + 100 * nkids bytes, K 50. */
static void write_owners(Buf *b, uint64_t kaddr, int nkids)
{
  b->n = 0;
  for (const char *m = "ljh\x01"; *m; m++) put(b, (unsigned char)*m);
  str(b, "test build");
  uleb(b, 0);
  obj_head(b, LJH_ROOT, 0, 0, "", 1);
  edge(b, LJH_EDGE_NAME, 0x100);
  str(b, "_G");
  obj_head(b, LJH_TAB, 0x100, 64, "", 1);
  edge(b, LJH_EDGE_STRKEY, 0x300);
  uleb(b, 0x200);
  obj_head(b, LJH_STR, 0x200, 30, "owners", 0);
  obj_head(b, LJH_TAB, 0x300, 100, "", 2);
  edge(b, LJH_EDGE_OBJKEY, 0x400);
  uleb(b, kaddr);
  edge(b, LJH_EDGE_KEY, kaddr);
  obj_head(b, LJH_TAB, kaddr, 50, "", 0);
  obj_head(b, LJH_TAB, 0x400, 40, "", (uint64_t)nkids);
  for (int i = 0; i < nkids; i++) {
    edge(b, LJH_EDGE_INDEX, 0x1000 + 16 * (uint64_t)i);
    uleb(b, (uint64_t)i + 1);
  }
  for (int i = 0; i < nkids; i++) obj_head(b, LJH_TAB, 0x1000 + 16 * (uint64_t)i, 100, "", 0);
  put(b, 0);
}

static void load_owners(LjmHeapGraph *g, Buf *b, uint64_t kaddr, int nkids)
{
  write_owners(b, kaddr, nkids);
  LjmInput *in = ljm_input_mem(b->p, b->n);
  CHECK(ljm_heapgraph_load(g, in, NULL) == LJM_OK, "owners: loads");
  ljm_input_close(in);
}

/* The growth entry of a path, or NULL. */
static const LjmHeapGrowth *growth_of(const LjmHeapGrowth *gr, uint32_t n, const char *path)
{
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(gr[i].path, path)) return &gr[i];
  return NULL;
}

static void test_object_keys(void)
{
  Buf b1 = {0}, b2 = {0};
  LjmHeapGraph old, grown, moved;
  char path[128];
  load_owners(&old, &b1, 0x900, 1);
  load_owners(&grown, &b2, 0x900, 5);
  /* Objects 0 root, 1 _G, 2 "owners", 3 owners, 4 K, 5 V (file order). */
  CHECK(!strcmp(ljm_heapgraph_path(&grown, 5, path, sizeof(path)), "_G.owners[table: 0x900]"),
        "owners: the value's path %s", path);
  CHECK(!strcmp(ljm_heapgraph_path(&grown, 4, path, sizeof(path)), "_G.owners<key table: 0x900>"),
        "owners: the key's path %s", path);
  LjmHeapGrowth *gr;
  uint32_t n;
  CHECK(ljm_heapgraph_growth(&old, &grown, 100, &gr, &n) == 0, "owners: growth");
  const LjmHeapGrowth *v = growth_of(gr, n, "_G.owners[table: 0x900]");
  CHECK(v && v->old_retained == 140 && v->new_retained == 540 && v->diff == 400,
        "owners: the value under the same key grew 140 -> 540 (%llu -> %llu)",
        v ? (unsigned long long)v->old_retained : 0ull, v ? (unsigned long long)v->new_retained : 0ull);
  const LjmHeapGrowth *k = growth_of(gr, n, "_G.owners<key table: 0x900>");
  CHECK(k && k->old_retained == 50 && k->new_retained == 50, "owners: the key itself, found in both");
  ljm_heapgraph_growth_free(gr, n);
  /* The key at another address: another key, absent from the other side. */
  load_owners(&moved, &b1, 0x980, 1);
  CHECK(ljm_heapgraph_growth(&moved, &grown, 100, &gr, &n) == 0, "owners: growth, key moved");
  v = growth_of(gr, n, "_G.owners[table: 0x900]");
  const LjmHeapGrowth *w = growth_of(gr, n, "_G.owners[table: 0x980]");
  CHECK(v && v->old_retained == 0 && v->new_retained == 540 && w && w->old_retained == 140 &&
        w->new_retained == 0, "owners: keys at different addresses do not match");
  ljm_heapgraph_growth_free(gr, n);
  ljm_heapgraph_free(&old);
  ljm_heapgraph_free(&grown);
  ljm_heapgraph_free(&moved);
  free(b1.p);
  free(b2.p);
}

/* -- Deep chains: no recursion per step --------------------------------------- */

/* Occurrences of s in h. */
static uint32_t count_of(const char *h, const char *s)
{
  uint32_t n = 0;
  for (const char *p = strstr(h, s); p; p = strstr(p + strlen(s), s)) n++;
  return n;
}

/* A path of "_G" then steps "<n>", elided: the shown steps and the counted
** ones add up to want, and both ends are there. */
static int chain_path_ok(const char *path, uint32_t want)
{
  const char *m = strstr(path, "<... ");
  unsigned elided = 0;
  if (!m || sscanf(m, "<... %u steps ...>", &elided) != 1) return 0;
  size_t len = strlen(path);
  return !strncmp(path, "_G<n>", 5) && len > 3 && !strcmp(path + len - 3, "<n>") &&
         count_of(path, "<n>") + elided == want;
}

static void path_count_cb(void *ud, const char *path)
{
  char **out = ud;
  free(*out);
  *out = strdup(path);
}

/* root -_G-> 1 -n-> 2 -n-> ... -n-> N: a list a million long, built in
** memory. Paths, depths and retained sizes must not recurse once per step. */
static void test_deep_chain(void)
{
  enum { N = 1000000 };
  Buf b = {0};
  for (const char *m = "ljh\x01"; *m; m++) put(&b, (unsigned char)*m);
  str(&b, "test build");
  uleb(&b, 0);
  obj_head(&b, LJH_ROOT, 0, 0, "", 1);
  edge(&b, LJH_EDGE_NAME, 16);
  str(&b, "_G");
  for (uint64_t v = 1; v <= N; v++) {
    obj_head(&b, LJH_TAB, 16 * v, 32, v == N ? "tail" : "", v < N);
    if (v < N) {
      edge(&b, LJH_EDGE_NAME, 16 * (v + 1));
      str(&b, "n");
    }
  }
  put(&b, 0);
  LjmInput *in = ljm_input_mem(b.p, b.n);
  LjmHeapGraph hg;
  LjmDiag d;
  CHECK(ljm_heapgraph_load(&hg, in, &d) == LJM_OK && hg.nobj == N + 1, "chain: loads: %s", d.msg);
  if (hg.nobj == N + 1) {
    CHECK(hg.obj[N].depth == N && hg.obj[N].idom == N - 1, "chain: the tail is %u deep",
          hg.obj[N].depth);
    CHECK(hg.obj[1].retained == 32ull * N && hg.obj[0].retained == 32ull * N &&
          hg.obj[N / 2].retained == 32ull * (N - N / 2 + 1),
          "chain: retained %llu", (unsigned long long)hg.obj[1].retained);
    LjmHeapPreds preds;
    CHECK(ljm_heapgraph_preds(&hg, &preds) == 0, "chain: predecessors");
    char *all = NULL;
    uint32_t n = ljm_heapgraph_all_paths(&hg, &preds, N, 20, path_count_cb, &all);
    CHECK(n == 1 && all && chain_path_ok(all, N - 1) && strlen(all) < 4096,
          "chain: one path, %u steps, elided: %.80s", N, all ? all : "(none)");
    free(all);
    ljm_heapgraph_preds_free(&preds);
    char path[1024];
    CHECK(chain_path_ok(ljm_heapgraph_path(&hg, N, path, sizeof(path)), N - 1),
          "chain: the shortest path elided: %.80s", path);
    CHECK(strlen(ljm_heapgraph_path(&hg, N, path, 40)) == 39, "chain: a short buffer cuts");
    /* A path that fits is whole: 120 steps in 1 KiB. */
    CHECK(!strstr(ljm_heapgraph_path(&hg, 121, path, sizeof(path)), "...") &&
          count_of(path, "<n>") == 120, "chain: 120 steps whole: %s", path);
    uint32_t top[2];
    CHECK(ljm_heapgraph_top_retainers(&hg, top, 2) == 2 && top[0] == 1 && top[1] == 2,
          "chain: the head retains most");
  }
  ljm_heapgraph_free(&hg);
  ljm_input_close(in);
  free(b.p);
}

/* -- Impossible sizes: refused where they are, nothing wraps ------------------ */

/* root -_G-> 1 -> 2 -> ... -> n, object i of size[i - 1]; *at gets the
** offset of each object's size. */
static void write_sized(Buf *b, const uint64_t *size, int n, uint64_t *at)
{
  header(b, 0);
  obj_head(b, LJH_ROOT, 0, 0, "", 1);
  edge(b, LJH_EDGE_NAME, 16);
  str(b, "_G");
  for (int i = 1; i <= n; i++) {
    put(b, LJH_TAB);
    uleb(b, 16 * (uint64_t)i);
    at[i - 1] = b->n;
    uleb(b, size[i - 1]);
    str(b, "");
    uleb(b, i < n);
    if (i < n) {
      edge(b, LJH_EDGE_NAME, 16 * (uint64_t)i + 16);
      str(b, "n");
    }
  }
  put(b, 0);
}

static LjmStatus load_buf(LjmHeapGraph *g, const Buf *b, LjmDiag *d)
{
  LjmInput *in = ljm_input_mem(b->p, b->n);
  LjmStatus st = ljm_heapgraph_load(g, in, d);
  ljm_input_close(in);
  return st;
}

static void test_impossible_sizes(void)
{
  Buf b = {0};
  LjmHeapGraph g;
  LjmDiag d;
  uint64_t size[70], at[70];
  /* Two objects of 2^63: their sum wrapped to 0 ("_G retains 0"). */
  size[0] = size[1] = 1ull << 63;
  write_sized(&b, size, 2, at);
  CHECK(load_buf(&g, &b, &d) == LJM_ERROR && d.offset == at[0] &&
        !strcmp(d.msg, "impossible object size 9223372036854775808 (above 2^56 bytes)") &&
        g.nobj == 1, "2^63: refused at its size (byte %llu): %s", (unsigned long long)d.offset, d.msg);
  ljm_heapgraph_free(&g);
  /* 64 objects of 2^56 make 2^62 exactly: read, exact. */
  for (int i = 0; i < 65; i++) size[i] = 1ull << 56;
  write_sized(&b, size, 64, at);
  CHECK(load_buf(&g, &b, &d) == LJM_OK && g.nobj == 65 && g.obj[1].retained == 1ull << 62 &&
        g.obj[64].retained == 1ull << 56, "2^62 in all: read (%s)", d.msg);
  ljm_heapgraph_free(&g);
  /* One byte more: refused at that object, what came before kept. */
  size[64] = 1;
  write_sized(&b, size, 65, at);
  CHECK(load_buf(&g, &b, &d) == LJM_ERROR && d.offset == at[64] &&
        !strcmp(d.msg, "object sizes add up to 4611686018427387905, above 2^62: impossible") &&
        g.nobj == 65 && g.obj[1].retained == 1ull << 62,
        "past 2^62: refused at byte %llu: %s", (unsigned long long)d.offset, d.msg);
  ljm_heapgraph_free(&g);
  /* Each within the bound, past 2^62 together: refused at the first too many. */
  for (int i = 0; i < 70; i++) size[i] = (1ull << 56) - 1;
  write_sized(&b, size, 70, at);
  CHECK(load_buf(&g, &b, &d) == LJM_ERROR && d.offset == at[64] && g.nobj == 65 &&
        g.obj[1].retained == 64 * ((1ull << 56) - 1), "many near 2^56: refused at the 65th");
  ljm_heapgraph_free(&g);
  /* The VM's count too. */
  header(&b, (1ull << 62) + 1);
  obj_head(&b, LJH_ROOT, 0, 0, "", 0);
  put(&b, 0);
  CHECK(load_buf(&g, &b, &d) == LJM_ERROR && d.offset == 5 &&
        !strcmp(d.msg, "impossible GC total 4611686018427387905 (above 2^62 bytes)") && !g.nobj,
        "gctotal past 2^62: byte %llu: %s", (unsigned long long)d.offset, d.msg);
  ljm_heapgraph_free(&g);
  free(b.p);
}

int main(void)
{
  test_deep_chain();
  test_impossible_sizes();
  test_object_keys();

  /* Random graphs: sparse and dense, with and without weak references. */
  for (int seed = 1; seed <= 400; seed++) {
    Graph g;
    memset(&g, 0, sizeof(g));
    srand((unsigned)seed);
    g.n = 1 + rand() % MAXN;
    int density = 1 + rand() % 4;
    for (int v = 1; v <= g.n; v++) g.size[v] = 1 + (uint64_t)(rand() % 1000);
    for (int w = 1; w <= g.n; w++)
      if (rand() % 3 == 0) g.adj[0][w] = 1;
    for (int v = 1; v <= g.n; v++)
      for (int w = 1; w <= g.n; w++)
        if (v != w && rand() % (g.n + 1) < density) g.adj[v][w] = rand() % 5 ? 1 : 2;
    check_graph(&g, seed);
    check_order(&g, seed);
  }
  /* Dense ones: tables of more than 16 entries (sorted by qsort_r). */
  for (int seed = 1; seed <= 40; seed++) {
    Graph g;
    memset(&g, 0, sizeof(g));
    srand((unsigned)(1000 + seed));
    g.n = MAXN;
    for (int w = 1; w <= g.n; w++) g.adj[0][w] = rand() % 8 == 0;
    for (int v = 1; v <= g.n; v++) {
      g.size[v] = 1 + (uint64_t)(rand() % 1000);
      for (int w = 1; w <= g.n; w++)
        if (v != w && rand() % 3) g.adj[v][w] = rand() % 5 ? 1 : 2;
    }
    check_order(&g, 1000 + seed);
  }

  /* A diamond: root -> a -> {b, c} -> d; a retains all, d has two paths. */
  {
    Graph g;
    memset(&g, 0, sizeof(g));
    g.n = 4;
    for (int v = 1; v <= 4; v++) g.size[v] = 10;
    g.adj[0][1] = g.adj[1][2] = g.adj[1][3] = g.adj[2][4] = g.adj[3][4] = 1;
    check_graph(&g, 0);
    Buf b = {0};
    write_graph(&g, &b);
    LjmInput *in = ljm_input_mem(b.p, b.n);
    LjmHeapGraph hg;
    ljm_heapgraph_load(&hg, in, NULL);
    int n = 0;
    LjmHeapPreds preds;
    CHECK(ljm_heapgraph_preds(&hg, &preds) == 0, "diamond: predecessors");
    uint32_t total = ljm_heapgraph_all_paths(&hg, &preds, 4, 10, count_cb, &n);
    ljm_heapgraph_preds_free(&preds);
    CHECK(total == 2 && n == 2, "diamond: 2 shortest paths to d (%u, %d)", total, n);
    char path[128];
    CHECK(!strcmp(ljm_heapgraph_path(&hg, 4, path, sizeof(path)), "e1<e2><e4>"),
          "diamond: path %s", path);
    uint32_t top[4];
    CHECK(ljm_heapgraph_top_retainers(&hg, top, 4) == 4 && top[0] == 1 && hg.obj[1].retained == 40,
          "diamond: a retains everything first");
    ljm_heapgraph_free(&hg);
    ljm_input_close(in);
    free(b.p);
  }
  printf("heapgraph_test: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
