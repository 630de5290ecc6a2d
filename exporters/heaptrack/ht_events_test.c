/* ht_events_test.c -- the '+'/'-' lines read back the way heaptrack 1.4.0
** reads them, on random and hand-made event sequences.
**
** For every sequence the written file must give, under heaptrack's rules
** (index-based temporary with its reset of the last index to 0 after a
** '-', peak sampled at '+' lines): the true number of allocations, the true
** peak, the true bytes leaked per trace node, and the true temporary count
** (a free right after an allocation of the same size and trace node), plus
** one for each free the writer says it had to leave misplaced. And every
** index must be used by a '+' for the first time in the order 0, 1, 2, ...
** (heaptrack_gui's parser). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/heaptrack/ht_events.h"
#include "exporters/heaptrack/ht_sink.h"

static int passed, failures;

#define CHECK(c, ...)                                       \
  do {                                                      \
    if (c) {                                                \
      passed++;                                             \
    } else {                                                \
      failures++;                                           \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);  \
      fprintf(stderr, __VA_ARGS__);                         \
      fputc('\n', stderr);                                  \
    }                                                       \
  } while (0)

#define MAXTRACE 16

/* One operation of a sequence: allocate or free a block of (size, trace). */
typedef struct Op {
  char mode;
  uint64_t size;
  uint32_t trace;
} Op;

typedef struct Figures {
  uint64_t calls, temporary, peak, live;
  int64_t leaked[MAXTRACE];
} Figures;

/* What the sequence itself says. */
static void truth(const Op *ops, size_t n, Figures *f)
{
  memset(f, 0, sizeof(*f));
  for (size_t i = 0; i < n; i++) {
    const Op *o = &ops[i];
    if (o->mode == '+') {
      f->calls++;
      f->live += o->size;
      f->leaked[o->trace] += (int64_t)o->size;
      if (f->live > f->peak) f->peak = f->live;
    } else {
      if (i && ops[i - 1].mode == '+' && ops[i - 1].size == o->size &&
          ops[i - 1].trace == o->trace)
        f->temporary++;
      f->live -= o->size;
      f->leaked[o->trace] -= (int64_t)o->size;
    }
  }
}

/* Reads the written lines as heaptrack 1.4.0 does; 0 if the GUI's index
** order holds and every line parses. */
static int heaptrack_reads(const char *text, Figures *f)
{
  uint64_t size[1 << 16];
  uint32_t trace[1 << 16];
  size_t ninfo = 0, nplus_first = 0;
  uint64_t last = 0;
  int ok = 1;
  memset(f, 0, sizeof(*f));
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    char mode = p[0];
    unsigned long long a = 0, b = 0;
    if (mode == 'a') {
      if (sscanf(p, "a %llx %llx", &a, &b) != 2 || ninfo >= (1 << 16)) ok = 0;
      else size[ninfo] = a, trace[ninfo++] = (uint32_t)b;
    } else if (mode == '+' || mode == '-') {
      if (sscanf(p + 2, "%llx", &a) != 1 || a >= ninfo) {
        ok = 0;
      } else if (mode == '+') {
        if (a > nplus_first) ok = 0;  /* heaptrack_gui would crash here */
        if (a == nplus_first) nplus_first++;
        f->calls++;
        f->live += size[a];
        f->leaked[trace[a]] += (int64_t)size[a];
        if (f->live > f->peak) f->peak = f->live;
        last = a;
      } else {
        if (last == a) f->temporary++;
        last = 0;
        f->live -= size[a];
        f->leaked[trace[a]] -= (int64_t)size[a];
      }
    }
    p = nl ? nl + 1 : p + strlen(p);
  }
  return ok;
}

/* Writes ops through HtEvents; returns the text (caller frees). */
static char *write_ops(const Op *ops, size_t n, uint64_t *misplaced)
{
  char *mem = NULL;
  size_t memlen = 0;
  FILE *out = open_memstream(&mem, &memlen);
  char err[128];
  HtText t = { 0 };
  HtEvents e;
  t.sink = ht_sink_open(out, HT_PLAIN, err, sizeof(err));
  t.buf = ht_sink_buffer(t.sink);
  ht_events_init(&e, &t);
  for (size_t i = 0; i < n; i++) {
    if (ops[i].mode == '+') ht_events_plus(&e, ops[i].size, ops[i].trace);
    else ht_events_minus(&e, ops[i].size, ops[i].trace);
  }
  ht_events_finish(&e);
  CHECK(!e.oom && !e.bad, "writer failed: oom %d bad %d", e.oom, e.bad);
  *misplaced = e.misplaced;
  ht_events_free(&e);
  ht_text_flush(&t);
  CHECK(ht_sink_close(t.sink, err, sizeof(err)) == 0, "sink: %s", err);
  fclose(out);
  return mem;
}

static uint64_t total_misplaced;

static void check_ops(const char *name, const Op *ops, size_t n)
{
  Figures want, got;
  uint64_t misplaced;
  char *text = write_ops(ops, n, &misplaced);
  truth(ops, n, &want);
  CHECK(heaptrack_reads(text, &got), "%s: indices out of order or unreadable", name);
  CHECK(got.calls == want.calls, "%s: calls %llu, want %llu", name,
        (unsigned long long)got.calls, (unsigned long long)want.calls);
  CHECK(got.peak == want.peak, "%s: peak %llu, want %llu", name,
        (unsigned long long)got.peak, (unsigned long long)want.peak);
  CHECK(got.live == want.live, "%s: leaked %llu, want %llu", name,
        (unsigned long long)got.live, (unsigned long long)want.live);
  CHECK(memcmp(got.leaked, want.leaked, sizeof(want.leaked)) == 0,
        "%s: leaked per trace node differs", name);
  CHECK(got.temporary == want.temporary + misplaced, "%s: temporary %llu, want %llu + %llu",
        name, (unsigned long long)got.temporary, (unsigned long long)want.temporary,
        (unsigned long long)misplaced);
  total_misplaced += misplaced;
  free(text);
}

/* Live blocks of a generated sequence. */
typedef struct Gen {
  Op *ops;
  size_t n, cap;
  Op live[4096];
  size_t nlive;
  uint32_t rnd;
} Gen;

static uint32_t rnd(Gen *g, uint32_t n)
{
  g->rnd = g->rnd * 1103515245u + 12345u;
  return (g->rnd >> 8) % n;
}

static void emit(Gen *g, char mode, uint64_t size, uint32_t trace)
{
  if (g->n == g->cap) {
    g->cap = g->cap ? g->cap * 2 : 1024;
    g->ops = realloc(g->ops, g->cap * sizeof(Op));
  }
  g->ops[g->n++] = (Op){ mode, size, trace };
}

static void alloc_one(Gen *g, uint64_t size, uint32_t trace)
{
  emit(g, '+', size, trace);
  if (g->nlive < 4096) g->live[g->nlive++] = (Op){ '+', size, trace };
}

static void free_at(Gen *g, size_t i)
{
  emit(g, '-', g->live[i].size, g->live[i].trace);
  g->live[i] = g->live[--g->nlive];
}

/* Random sequences over few sizes and traces, so that frees right after an
** allocation of the same kind, runs of frees and reuse of the first kind
** are all common. */
static void random_sequences(void)
{
  for (uint32_t seed = 1; seed <= 3000; seed++) {
    Gen g = { 0 };
    g.rnd = seed;
    uint32_t nsizes = 1 + rnd(&g, 3), ntraces = 1 + rnd(&g, 3);
    size_t len = 2 + rnd(&g, 60);
    for (size_t k = 0; k < len; k++) {
      uint32_t r = rnd(&g, 10);
      if (g.nlive && r < 4) {
        size_t runs = 1 + rnd(&g, 4);  /* a run of frees, like a GC sweep */
        while (runs-- && g.nlive) free_at(&g, rnd(&g, (uint32_t)g.nlive));
      } else if (g.nlive && r == 4) {
        free_at(&g, g.nlive - 1);  /* the newest block: a temporary */
      } else {
        alloc_one(&g, 16 * (1 + rnd(&g, nsizes)), 1 + rnd(&g, ntraces));
      }
    }
    char name[32];
    snprintf(name, sizeof(name), "random %u", seed);
    check_ops(name, g.ops, g.n);
    free(g.ops);
  }
}

static void hand_made(void)
{
  /* The first block freed after another free: moved back after the '+'. */
  static const Op moved[] = {
    { '+', 10, 1 }, { '+', 20, 2 }, { '+', 30, 3 }, { '-', 20, 2 }, { '-', 10, 1 } };
  check_ops("moved back", moved, 5);
  /* The '+' before the run is followed by its own free: held back. */
  static const Op held[] = {
    { '+', 10, 1 }, { '+', 20, 2 }, { '+', 30, 3 }, { '-', 30, 3 }, { '-', 10, 1 },
    { '-', 20, 2 }, { '+', 5, 4 }, { '-', 5, 4 } };
  check_ops("held back", held, 8);
  /* No place keeps every figure: the writer must say so. */
  static const Op stuck[] = {
    { '+', 10, 1 }, { '+', 5, 2 }, { '-', 5, 2 }, { '-', 10, 1 }, { '+', 100, 3 } };
  uint64_t misplaced;
  free(write_ops(stuck, 5, &misplaced));
  CHECK(misplaced == 1, "stuck: %llu misplaced", (unsigned long long)misplaced);
  check_ops("stuck", stuck, 5);
  /* The first block freed at once; more blocks of its kind later. */
  static const Op again[] = {
    { '+', 10, 1 }, { '-', 10, 1 }, { '+', 10, 1 }, { '-', 10, 1 }, { '+', 10, 1 },
    { '+', 10, 1 }, { '-', 10, 1 }, { '-', 10, 1 } };
  check_ops("same kind again", again, 8);
}

/* A sweep longer than a sink buffer between the last '+' and the free of
** the first block: the line to move back to has been handed over. */
static void long_sweep(void)
{
  Gen g = { 0 };
  alloc_one(&g, 48, 1);
  for (int i = 0; i < 4000; i++) alloc_one(&g, 64, 2);
  emit(&g, '+', 32, 3);  /* not kept live: freed below */
  emit(&g, '-', 32, 3);
  for (int r = 0; r < 100; r++)
    for (int i = 0; i < 4000; i++) emit(&g, i & 1 ? '+' : '-', 64, 2);
  for (int i = 0; i < 4000; i++) emit(&g, '-', 64, 2);
  emit(&g, '-', 48, 1);
  emit(&g, '+', 8, 4);
  check_ops("long sweep", g.ops, g.n);
  free(g.ops);
}

int main(void)
{
  hand_made();
  random_sequences();
  long_sweep();
  printf("ht_events_test: %d passed, %d failed (%llu frees misplaced in random sequences)\n",
         passed, failures, (unsigned long long)total_misplaced);
  return failures != 0;
}
