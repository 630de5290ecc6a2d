/* ljm_fuzzer.c -- libFuzzer target: any bytes through the decoder into a
** model, then through every registered exporter, with a --value kind (and
** text report mode, markdown options) taken from the input.
**
** Crashes, leaks, hangs and sanitizer reports are failures, and so is any
** broken invariant (__builtin_trap):
**   - every streamed event names a site that exists;
**   - each figure summed over the sites equals the total, and the sites'
**     peak figures sum to the peak (what held the peak);
**   - an exporter that starts always finishes without error (only pprof may
**     refuse peak_bytes, and only heaptrack a pipe);
**   - the folded stacks' counts add up to the total of their --value kind.
** Streaming exporters (heaptrack, speedscope) are all fed by the same
** decoding, heaptrack with the codec chosen by the first input byte (plain
** mostly; gzip and zstd start a writer thread each).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/ljm_exporter.h"
#include "exporters/heapreport/ljm_heapreport.h"
#include "exporters/heapsnapshot/ljm_heapsnapshot.h"
#include "model/ljm_heapgraph.h"
#include "model/ljm_model_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static FILE *devnull(void)
{
  static FILE *f;
  if (!f) f = fopen("/dev/null", "w");
  CHECK(f != NULL);
  return f;
}

#define MAX_STREAMING 8

/* The streaming exporters, each begun once, fed every event. */
typedef struct Streams {
  const LjmExporter *e[MAX_STREAMING];
  void *st[MAX_STREAMING];
  size_t n, seen;
} Streams;

static void on_event(void *ud, const LjmModel *m, const LjmLiveEvent *ev)
{
  Streams *s = ud;
  size_t n = ljm_model_nsites(m);
  CHECK(ev->site < n);
  CHECK(ev->old_site == LJM_NO_SITE || ev->old_site < n);
  CHECK(ev->dropped_site == LJM_NO_SITE || ev->dropped_site < n);
  s->seen++;
  for (size_t i = 0; i < s->n; i++) s->e[i]->on_event(s->st[i], m, ev);
}

static void on_time(void *ud, const LjmModel *m, uint64_t usec)
{
  Streams *s = ud;
  for (size_t i = 0; i < s->n; i++)
    if (s->e[i]->on_time) s->e[i]->on_time(s->st[i], m, usec);
}

static void check_model(const LjmModel *m, size_t seen)
{
  const LjmTotals *t = ljm_model_totals(m);
  LjmFigures sum;
  memset(&sum, 0, sizeof(sum));
  CHECK(seen == t->events);
  for (uint32_t i = 0; i < ljm_model_nsites(m); i++) {
    const LjmFigures *f = &ljm_model_site(m, i)->fig;
    CHECK(f->peak_bytes <= t->fig.peak_bytes && f->inuse_bytes <= f->alloc_bytes);
    sum.alloc_count += f->alloc_count;
    sum.alloc_bytes += f->alloc_bytes;
    sum.free_count += f->free_count;
    sum.free_bytes += f->free_bytes;
    sum.inuse_count += f->inuse_count;
    sum.inuse_bytes += f->inuse_bytes;
    sum.peak_count += f->peak_count;
    sum.peak_bytes += f->peak_bytes;
  }
  CHECK(memcmp(&sum, &t->fig, sizeof(sum)) == 0);
  CHECK(t->fig.alloc_bytes <= LJM_TOTAL_MAX && t->fig.free_bytes <= LJM_TOTAL_MAX);
  for (int sec = 0; sec < 3; sec++) {
    const LjmRow *rows;
    size_t n = ljm_model_rows(m, (LjmSection)sec, &rows);
    for (size_t i = 1; i < n; i++) CHECK(rows[i - 1].num >= rows[i].num);
  }
  const LjmHeapLine *h;
  size_t nh = ljm_model_heap_summary(m, &h);
  for (size_t i = 0; i < nh; i++) CHECK(h[i].dbytes > 0);
}

/* Sum of the counts of folded output (one "stack count" per line). */
static uint64_t folded_sum(const char *p, size_t len)
{
  uint64_t sum = 0;
  const char *end = p + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    CHECK(nl != NULL);
    const char *sp = nl;
    while (sp > p && sp[-1] != ' ') sp--;
    CHECK(sp > p);
    uint64_t v = strtoull(sp, NULL, 10);
    CHECK(v > 0);
    sum += v;
    p = nl + 1;
  }
  return sum;
}

static uint64_t total_of(const LjmTotals *t, LjmValueKind k)
{
  switch (k) {
  case LJM_VALUE_ALLOC_COUNT: return t->fig.alloc_count;
  case LJM_VALUE_INUSE_BYTES: return t->fig.inuse_bytes;
  case LJM_VALUE_INUSE_COUNT: return t->fig.inuse_count;
  case LJM_VALUE_PEAK_BYTES: return t->fig.peak_bytes;
  default: return t->fig.alloc_bytes;
  }
}

/* One export after decoding; returns 0 when the exporter refused to start. */
static int export_once(const LjmExporter *e, const LjmModel *m, LjmExportOptions *o)
{
  char err[256];
  char *mem = NULL;
  size_t memlen = 0;
  int folded = strcmp(e->name, "folded") == 0;
  FILE *out = folded ? open_memstream(&mem, &memlen) : devnull();
  CHECK(out != NULL);
  void *st = e->begin(o, out, err, sizeof(err));
  if (!st) {
    CHECK(strcmp(e->name, "pprof") == 0 && o->value == LJM_VALUE_PEAK_BYTES);
    if (folded) { fclose(out); free(mem); }
    return 0;
  }
  CHECK(e->finish(st, m, err, sizeof(err)) == 0);
  if (folded) {
    CHECK(fflush(out) == 0);
    CHECK(folded_sum(mem, memlen) == total_of(ljm_model_totals(m), o->value));
    fclose(out);
    free(mem);
  }
  return 1;
}

/* The same bytes as a heap snapshot: as they are, and behind the magic
** (so that the corpus's streams exercise the object grammar too). */
static void count_path(void *ud, const char *path)
{
  CHECK(path != NULL);
  (*(uint32_t *)ud)++;
}

static int match_every(void *ud, const char *label)
{
  (void)ud;
  return label != NULL;
}

static void fuzz_heap(const uint8_t *data, size_t size)
{
  uint8_t *buf = malloc(size + 4);
  CHECK(buf != NULL);
  memcpy(buf, "ljh\x01", 4);
  memcpy(buf + 4, data, size);
  LjmHeapGraph graphs[2];
  for (int pass = 0; pass < 2; pass++) {
    LjmInput *in = pass ? ljm_input_mem(buf, size + 4) : ljm_input_mem(data, size);
    LjmHeapGraph g;
    LjmDiag d;
    LjmStatus st = ljm_heapgraph_load(&g, in, &d);
    CHECK(st == LJM_OK || st == LJM_TRUNCATED || st == LJM_ERROR);
    LjmHeapType types[LJH_NTYPES];
    uint64_t objects, bytes, count = 0, sum = 0;
    int n = ljm_heapgraph_types(&g, types, &objects, &bytes);
    for (int i = 0; i < n; i++) {
      count += types[i].count;
      sum += types[i].bytes;
      if (i) CHECK(types[i - 1].bytes >= types[i].bytes);
    }
    CHECK(count == objects && sum == bytes);
    uint32_t top[8];
    char path[256];
    uint32_t nt = ljm_heapgraph_top_retainers(&g, top, 8);
    LjmHeapPreds preds;
    CHECK(ljm_heapgraph_preds(&g, &preds) == 0);
    for (uint32_t i = 0; i < nt; i++) {
      CHECK(top[i] < g.nobj);
      CHECK(g.obj[top[i]].retained >= g.obj[top[i]].size);
      ljm_heapgraph_path(&g, top[i], path, sizeof(path));
      if (i) CHECK(g.obj[top[i - 1]].retained >= g.obj[top[i]].retained);
      uint32_t np = 0;
      CHECK(ljm_heapgraph_all_paths(&g, &preds, top[i], 4, count_path, &np) >= np && np <= 4);
      CHECK(np >= 1);  /* a retainer is strongly reachable: it has a path */
    }
    ljm_heapgraph_preds_free(&preds);
    for (uint32_t i = 1; i < g.nobj; i++) CHECK(g.obj[i].idom == LJM_HEAP_NONE || g.obj[i].idom < g.nobj);
    char err[128];
    CHECK(ljm_heapsnapshot_write(&g, devnull(), err, sizeof(err)) == 0);
    for (int json = 0; json < 2; json++) {  /* ljm heap's views, text and JSON */
      CHECK(ljm_heapreport_summary(&g, 8, json, devnull(), err, sizeof(err)) == 0);
      CHECK(ljm_heapreport_paths(&g, match_every, NULL, ".", 4, json, devnull(), err,
                                 sizeof(err)) == 0);
    }
    graphs[pass] = g;
    ljm_input_close(in);
  }
  /* The growth from one reading to the other, largest first. */
  LjmHeapGrowth *gr;
  uint32_t ng;
  if (ljm_heapgraph_growth(&graphs[0], &graphs[1], 16, &gr, &ng) == 0) {
    for (uint32_t i = 1; i < ng; i++) CHECK(gr[i - 1].diff >= gr[i].diff);
    ljm_heapgraph_growth_free(gr, ng);
  }
  char err[128];
  for (int json = 0; json < 2; json++)
    CHECK(ljm_heapreport_growth(&graphs[0], &graphs[1], 8, json, devnull(), err, sizeof(err)) == 0);
  ljm_heapgraph_free(&graphs[0]);
  ljm_heapgraph_free(&graphs[1]);
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const ht_names[] = {"f.heaptrack", "f.heaptrack.gz", "f.heaptrack.zst"};
  LjmModel *m = ljm_model_new();
  CHECK(m != NULL);
  LjmInput *in = ljm_input_mem(data, size);
  LjmExportOptions o;
  memset(&o, 0, sizeof(o));
  o.in_path = "fuzz.ljm";
  char err[256];
  Streams s;
  memset(&s, 0, sizeof(s));
  for (const LjmExporter *const *e = ljm_exporters(); *e; e++) {
    if (!(*e)->streaming) continue;
    CHECK(s.n < MAX_STREAMING);
    /* Heaptrack: plain text mostly; compressed for 1 input in 8. */
    o.out_path = strcmp((*e)->name, "heaptrack") != 0 ? "out"
                 : ht_names[size && (data[0] & 7) == 7 ? 1 + (data[size - 1] & 1) : 0];
    if ((*e)->slice_events) ljm_model_set_slices(m, (*e)->slice_events);
    s.e[s.n] = *e;
    s.st[s.n] = (*e)->begin(&o, devnull(), err, sizeof(err));
    CHECK(s.st[s.n] != NULL);
    s.n++;
  }
  CHECK(s.n >= 2);
  LjmListener l = { on_event, on_time };
  ljm_model_set_listener(m, &l, &s);
  LjmDiag d;
  LjmStatus st = ljm_model_load(m, in, "fuzz.ljm", &d);
  CHECK(st == LJM_OK || st == LJM_TRUNCATED || st == LJM_ERROR);
  check_model(m, s.seen);
  for (size_t i = 0; i < s.n; i++) CHECK(s.e[i]->finish(s.st[i], m, err, sizeof(err)) == 0);

  /* Every other format once, with a --value kind (and text report mode)
  ** picked from the input, so the corpus covers all of them. */
  unsigned pick = size ? data[size / 2] : 0;
  o.out_path = "out";
  o.value = (LjmValueKind)(pick % (LJM_VALUE_PEAK_BYTES + 1));
  o.leak_only = pick >> 3 & 1;
  o.human_readable = pick >> 4 & 1;
  o.top = pick >> 5;                     /* markdown options */
  o.min_bytes = size > 1 ? data[1] : 0;
  for (const LjmExporter *const *e = ljm_exporters(); *e; e++)
    if (!(*e)->streaming) export_once(*e, m, &o);
  ljm_input_close(in);
  ljm_model_free(m);
  fuzz_heap(data, size);
  return 0;
}
