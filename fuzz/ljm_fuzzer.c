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
**   - the folded stacks' counts add up to the total of their --value kind;
**   - amplification: for the decoded input's size N (the bytes the decoder
**     consumed, after decompression), the model's peak memory, and each
**     exporter's output, peak memory and CPU time, stay within a multiple
**     of N plus a constant (the AMP_* limits below).
** Inputs that start "LJR" are recipes (fuzz/ljm_recipe.h): they expand
** here into large valid extended streams or snapshots; fuzz/ljm_mutator.c
** writes and mutates them. LJM_FUZZ_DUMP=FILE writes the expansion,
** LJM_FUZZ_AMP_LOG=1 prints each phase's figures.
** Streaming exporters (heaptrack, speedscope) are all fed by the same
** decoding, heaptrack with the codec chosen by the first input byte (plain
** mostly; gzip and zstd start a writer thread each).
*/
#include <sanitizer/allocator_interface.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "decoder/ljm_input.h"
#include "exporters/common/frames.h"
#include "exporters/ljm_exporter.h"
#include "fuzz/ljm_recipe.h"
#include "model/ljm_heapgraph.h"
#include "model/ljm_live.h"
#include "model/ljm_model_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* Amplification limits, for N decoded bytes (what legitimate inputs need:
** LJM_FUZZ_AMP_LOG=1 on the corpus and on generated streams):
** - memory: the model (with the streaming exporters' state) at its peak
**   while decoding, and each exporter at its peak on top of the model. The
**   model needs up to ~100 bytes per input byte on stack trees (a node is
**   4-8 bytes of stream), svg as much on wide trees; the constant covers
**   fixed buffers (decoder, zstd/gzip writer threads, libFuzzer's own).
** - output: each exporter's bytes. A format repeats a name or a frame per
**   site or stack node, not per event times depth: the others need under
**   30 per byte; json writes a record of every node, ~430 bytes and at
**   most AMP_JSON_NODE with every figure 20 digits long, for a node of 3
**   stream bytes (a resumer), so it may add that per node. Folded, Markdown, pprof
**   and speedscope print each stack whole, at most LJM_FRAMES_SHOWN_MAX + 2
**   frames (frames.h) per event: AMP_PATH_TEXT bytes per frame for the two
**   that print names (512 bytes shown of a chunk, of a function, escaping),
**   AMP_PATH_INDEX for the two that print frame numbers (speedscope five
**   times, one profile per figure, and as timeline open/close events) on
**   top, and as much memory (folded and Markdown sort before they write).
** - work: each phase's process CPU time (heaptrack's writer threads count).
**   ASan builds need 0.1-1.3 us per byte in the model and up to 5.5 in an
**   exporter (pprof on a 10^5-node tree); 10 us trips only superlinear work
**   (a 20 000-deep chain costs the model 54), plus 4 us per frame of the
**   stacks the four formats above print whole (speedscope, five passes over
**   them, took 2.1 on a loaded machine). Wall time is also capped by
**   libFuzzer's -timeout. */
#define AMP_MEM_PER_BYTE 128u
#define AMP_MEM_CONST (48ull << 20)
#define AMP_OUT_PER_BYTE 64u
#define AMP_OUT_CONST (4ull << 20)
#define AMP_JSON_NODE 768u
#define AMP_PATH_TEXT 4096u
#define AMP_PATH_INDEX (5u * 12u + 2u * 48u)
#define AMP_NS_PER_BYTE 10000u
#define AMP_NS_CONST 2000000000ull
#define AMP_NS_PER_FRAME 4000u

/* Recipes expand to at most this much (LJM_FUZZ_BUDGET overrides; 16 MiB
** reaches 10^6-node trees): 4 MiB keeps a legitimate input under ~10 s. */
#define RECIPE_BUDGET (4u << 20)

/* Events and stack nodes of the stream being exported (set once it is
** decoded). */
static uint64_t amp_events, amp_nodes;

/* Bytes per event a format may print on top: each of its stacks whole. */
static uint64_t path_cost(const char *fmt)
{
  uint64_t per_frame = !strcmp(fmt, "folded") || !strcmp(fmt, "markdown") ? AMP_PATH_TEXT
                       : !strcmp(fmt, "pprof") || !strcmp(fmt, "speedscope") ? AMP_PATH_INDEX
                                                                              : 0;
  return (LJM_FRAMES_SHOWN_MAX + 2) * per_frame;
}

/* Memory of a phase: the four formats hold their stacks (folded and
** Markdown their whole output, sorted before it is written). */
static uint64_t mem_limit(const char *phase, uint64_t n)
{
  return AMP_MEM_PER_BYTE * n + AMP_MEM_CONST + amp_events * path_cost(phase);
}
/* Output of a format for n decoded bytes holding 'events' events. */
static uint64_t out_limit(const char *fmt, uint64_t n, uint64_t events)
{
  return AMP_OUT_PER_BYTE * n + AMP_OUT_CONST + events * path_cost(fmt) +
         (strcmp(fmt, "json") ? 0 : amp_nodes * AMP_JSON_NODE);
}
/* CPU time of a phase: a stack printed whole costs time per frame too. */
static uint64_t ns_limit(const char *phase, uint64_t n)
{
  uint64_t paths = path_cost(phase) ? amp_events * (LJM_FRAMES_SHOWN_MAX + 2) : 0;
  return AMP_NS_PER_BYTE * n + AMP_NS_CONST + paths * AMP_NS_PER_FRAME;
}

/* Says which limit broke (without malloc: it may run in a malloc hook). */
static void amp_fail(const char *what, const char *phase, uint64_t got, uint64_t limit,
                     uint64_t n)
{
  char line[256];
  int len = snprintf(line, sizeof(line),
                     "AMPLIFICATION: %s of %s: %llu > limit %llu (decoded input %llu bytes)\n",
                     what, phase, (unsigned long long)got, (unsigned long long)limit,
                     (unsigned long long)n);
  if (len > 0 && write(2, line, (size_t)len) < 0) len = 0;
  __builtin_trap();
}

/* Live heap bytes, counted by ASan's malloc and free hooks (all threads). */
static int64_t mem_now, mem_peak, mem_trap = INT64_MAX;
static const char *mem_phase = "";
static uint64_t mem_n;

static void on_malloc(const volatile void *p, size_t size)
{
  int64_t now = __atomic_add_fetch(&mem_now, (int64_t)size, __ATOMIC_RELAXED);
  int64_t peak = __atomic_load_n(&mem_peak, __ATOMIC_RELAXED);
  while (now > peak && !__atomic_compare_exchange_n(&mem_peak, &peak, now, 1,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  /* Trap at once: a runaway allocation would otherwise hit -rss_limit_mb
  ** first, which says less. */
  int64_t trap = __atomic_load_n(&mem_trap, __ATOMIC_RELAXED);
  if (now > trap) amp_fail("memory", mem_phase, (uint64_t)now, (uint64_t)trap, mem_n);
}

static void on_free(const volatile void *p)
{
  const void *q = (const void *)p;
  if (q && __sanitizer_get_ownership(q))
    __atomic_sub_fetch(&mem_now, (int64_t)__sanitizer_get_allocated_size(q), __ATOMIC_RELAXED);
}

/* A measured phase: peak memory over its start, CPU time. */
typedef struct Phase {
  const char *name;
  int64_t base;
  uint64_t t0;
} Phase;

static uint64_t cpu_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* bound: the input size known so far (an upper bound of the decoded size
** while decoding), for the early trap in the malloc hook. */
static void phase_begin(Phase *ph, const char *name, uint64_t bound)
{
  ph->name = name;
  ph->base = __atomic_load_n(&mem_now, __ATOMIC_RELAXED);
  __atomic_store_n(&mem_peak, ph->base, __ATOMIC_RELAXED);
  mem_phase = name;
  mem_n = bound;
  __atomic_store_n(&mem_trap, ph->base + (int64_t)mem_limit(name, bound), __ATOMIC_RELAXED);
  ph->t0 = cpu_ns();
}

/* LJM_FUZZ_AMP_LOG=1: one line per phase (how the limits were chosen). */
static int amp_log = -1;

/* n: the decoded input's size; out: the phase's output bytes (for the log). */
static void phase_end(Phase *ph, uint64_t n, uint64_t out)
{
  __atomic_store_n(&mem_trap, INT64_MAX, __ATOMIC_RELAXED);
  uint64_t ns = cpu_ns() - ph->t0;
  int64_t peak = __atomic_load_n(&mem_peak, __ATOMIC_RELAXED) - ph->base;
  if (amp_log < 0) amp_log = getenv("LJM_FUZZ_AMP_LOG") != NULL;
  if (amp_log)
    fprintf(stderr, "amp %-24s n %10llu mem %11lld (%6.1f/B) out %11llu (%6.1f/B) cpu %8.3f ms (%7.1f ns/B)\n",
            ph->name, (unsigned long long)n, (long long)peak, n ? (double)peak / (double)n : 0.0,
            (unsigned long long)out, n ? (double)out / (double)n : 0.0, (double)ns / 1e6,
            n ? (double)ns / (double)n : 0.0);
  if (peak > 0 && (uint64_t)peak > mem_limit(ph->name, n))
    amp_fail("memory", ph->name, (uint64_t)peak, mem_limit(ph->name, n), n);
  if (ns > ns_limit(ph->name, n)) amp_fail("CPU ns", ph->name, ns, ns_limit(ph->name, n), n);
}

/* An exporter's output: counted (a trap as soon as it passes its limit),
** and for folded, summed line by line ("stack count"). */
typedef struct Sink {
  const char *name;
  uint64_t n, limit, bound;
  int folded;
  uint64_t sum, num;
  size_t line, digits;
  int space;
} Sink;

static ssize_t sink_write(void *c, const char *p, size_t len)
{
  Sink *s = c;
  s->n += len;
  if (s->n > s->limit) amp_fail("output", s->name, s->n, s->limit, s->bound);
  for (size_t i = 0; s->folded && i < len; i++) {
    char ch = p[i];
    if (ch == '\n') {
      CHECK(s->space && s->digits > 0 && s->num > 0 && s->line > s->digits + 1);
      s->sum += s->num;
      s->line = s->digits = 0;
      s->num = 0;
      s->space = 0;
      continue;
    }
    s->line++;
    if (ch == ' ') {
      s->space = 1;
      s->num = 0;
      s->digits = 0;
    } else if (ch >= '0' && ch <= '9') {
      s->num = s->num * 10 + (uint64_t)(ch - '0');
      s->digits++;
    } else {
      s->num = 0;
      s->digits = 0;
    }
  }
  return (ssize_t)len;
}

/* bound: the input size the output comes from (an upper bound while the
** input is decoded). */
static FILE *sink_open(Sink *s, const char *name, uint64_t bound, int folded)
{
  memset(s, 0, sizeof(*s));
  s->name = name;
  s->bound = bound;
  s->limit = out_limit(name, bound, bound / 2);  /* an event takes 2 bytes or more */
  s->folded = folded;
  cookie_io_functions_t io = { NULL, sink_write, NULL, NULL };
  FILE *f = fopencookie(s, "w", io);
  CHECK(f != NULL);
  return f;
}

/* After the output is complete: within the limit of the decoded size n. */
static void sink_close(Sink *s, FILE *f, uint64_t n, uint64_t events)
{
  CHECK(fclose(f) == 0);
  uint64_t lim = out_limit(s->name, n, events);
  if (s->n > lim) amp_fail("output", s->name, s->n, lim, n);
  if (s->folded) CHECK(s->line == 0);
}

#define MAX_STREAMING 8

/* The streaming exporters, each begun once, fed every event. */
typedef struct Streams {
  const LjmExporter *e[MAX_STREAMING];
  void *st[MAX_STREAMING];
  Sink sink[MAX_STREAMING];
  FILE *out[MAX_STREAMING];
  size_t n, seen;
  uint64_t carried;  /* bytes a time window carried in (LJM_EV_CARRIED) */
} Streams;

static void on_event(void *ud, const LjmModel *m, const LjmLiveEvent *ev)
{
  Streams *s = ud;
  size_t n = ljm_model_nsites(m);
  CHECK(ev->site < n);
  CHECK(ev->old_site == LJM_NO_SITE || ev->old_site < n);
  CHECK(ev->dropped_site == LJM_NO_SITE || ev->dropped_site < n);
  if (ev->kind == LJM_EV_CARRIED) {  /* before the window's first event */
    CHECK(ljm_model_stream(m)->windowed && ev->index == ljm_model_totals(m)->events);
    CHECK(ev->new_count && ev->owner != LJM_NO_OWNER);
    s->carried += ev->new_size;
  } else {
    s->seen++;
  }
  for (size_t i = 0; i < s->n; i++) s->e[i]->on_event(s->st[i], m, ev);
}

static void on_time(void *ud, const LjmModel *m, uint64_t usec)
{
  Streams *s = ud;
  for (size_t i = 0; i < s->n; i++)
    if (s->e[i]->on_time) s->e[i]->on_time(s->st[i], m, usec);
}

static void check_model(const LjmModel *m, size_t seen, uint64_t carried)
{
  const LjmTotals *t = ljm_model_totals(m);
  LjmFigures sum;
  memset(&sum, 0, sizeof(sum));
  CHECK(seen == t->events);
  /* A window's peak is at least what it starts with; what it carries in is
  ** in use without being allocated in it. */
  int windowed = ljm_model_stream(m)->windowed;
  CHECK(carried <= t->fig.peak_bytes && (windowed || carried == 0));
  for (uint32_t i = 0; i < ljm_model_nsites(m); i++) {
    const LjmFigures *f = &ljm_model_site(m, i)->fig;
    CHECK(f->peak_bytes <= t->fig.peak_bytes && (windowed || f->inuse_bytes <= f->alloc_bytes));
    sum.alloc_count += f->alloc_count;
    sum.alloc_bytes += f->alloc_bytes;
    sum.free_count += f->free_count;
    sum.free_bytes += f->free_bytes;
    sum.inuse_count += f->inuse_count;
    sum.inuse_bytes += f->inuse_bytes;
    sum.peak_count += f->peak_count;
    sum.peak_bytes += f->peak_bytes;
    sum.temp_count += f->temp_count;
    /* a temporary block was allocated here (in a window: or carried in) */
    CHECK((windowed || f->temp_count <= f->alloc_count) && (t->temporaries || !f->temp_count));
  }
  CHECK(memcmp(&sum, &t->fig, sizeof(sum)) == 0);
  CHECK(t->fig.alloc_bytes <= LJM_TOTAL_MAX && t->fig.free_bytes <= LJM_TOTAL_MAX);
  /* The nodes' own figures add up to the totals; grouped, every node with
  ** figures is below a label's root (roots found parents first). */
  size_t nn = ljm_model_nnodes(m);
  int grouped = ljm_model_group_key(m) && ljm_model_stacked(m);
  uint32_t *root = grouped ? malloc((nn ? nn : 1) * sizeof(*root)) : NULL;
  CHECK(!grouped || root);
  memset(&sum, 0, sizeof(sum));
  for (uint32_t i = 0; i < nn; i++) {
    const LjmNode *nd = ljm_model_node(m, i);
    const LjmFigures *f = ljm_model_node_self(m, i);
    sum.alloc_count += f->alloc_count;
    sum.free_bytes += f->free_bytes;
    sum.inuse_bytes += f->inuse_bytes;
    sum.temp_count += f->temp_count;
    if (!grouped) continue;
    root[i] = nd->parent == LJM_NO_NODE ? i : root[nd->parent];
    const LjmNode *r = ljm_model_node(m, root[i]);
    CHECK(!(f->alloc_count | f->free_count) ||
          (r->site != LJM_NO_SITE && ljm_model_site(m, r->site)->kind == LJM_SITE_LABEL));
  }
  free(root);
  CHECK(sum.alloc_count == t->fig.alloc_count && sum.free_bytes == t->fig.free_bytes &&
        sum.inuse_bytes == t->fig.inuse_bytes && sum.temp_count == t->fig.temp_count);
  for (int sec = 0; sec < 3; sec++) {
    const LjmRow *rows;
    size_t n = ljm_model_rows(m, (LjmSection)sec, &rows);
    for (size_t i = 1; i < n; i++) CHECK(rows[i - 1].num >= rows[i].num);
  }
  const LjmHeapLine *h;
  size_t nh = ljm_model_heap_summary(m, &h);
  for (size_t i = 0; i < nh; i++) CHECK(h[i].dbytes > 0);
}

static uint64_t total_of(const LjmTotals *t, LjmValueKind k)
{
  switch (k) {
  case LJM_VALUE_ALLOC_COUNT: return t->fig.alloc_count;
  case LJM_VALUE_INUSE_BYTES: return t->fig.inuse_bytes;
  case LJM_VALUE_INUSE_COUNT: return t->fig.inuse_count;
  case LJM_VALUE_PEAK_BYTES: return t->fig.peak_bytes;
  case LJM_VALUE_TEMP_COUNT: return t->fig.temp_count;
  default: return t->fig.alloc_bytes;
  }
}

/* One export after decoding of n bytes; returns 0 when the exporter
** refused to start. */
static int export_once(const LjmExporter *e, const LjmModel *m, LjmExportOptions *o, uint64_t n)
{
  char err[256];
  int folded = strcmp(e->name, "folded") == 0;
  Sink sink;
  Phase ph;
  phase_begin(&ph, e->name, n);
  FILE *out = sink_open(&sink, e->name, n, folded);
  void *st = e->begin(o, out, err, sizeof(err));
  if (!st) {
    CHECK((strcmp(e->name, "pprof") == 0 && o->value == LJM_VALUE_PEAK_BYTES) ||
          (strcmp(e->name, "heapprofile") == 0 && o->value == LJM_VALUE_TEMP_COUNT));
    sink_close(&sink, out, n, ljm_model_totals(m)->events);
    phase_end(&ph, n, sink.n);
    return 0;
  }
  /* Temporaries asked of a model that cannot count them: refused. */
  int rc = e->finish(st, m, err, sizeof(err));
  CHECK(rc == 0 || (!ljm_model_totals(m)->temporaries &&
                    (o->value == LJM_VALUE_TEMP_COUNT || (o->temporaries && !strcmp(e->name, "text")))));
  sink_close(&sink, out, n, ljm_model_totals(m)->events);
  phase_end(&ph, n, sink.n);
  if (folded) CHECK(sink.sum == total_of(ljm_model_totals(m), o->value));
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

/* A heap writer's run, measured: out is a sink for it. */
#define HEAP_WRITE(name, n, call) do {                                        \
    Sink sink_; Phase ph_;                                                    \
    phase_begin(&ph_, name, n);                                               \
    FILE *out = sink_open(&sink_, name, n, 0);                                \
    CHECK((call) == 0);                                                       \
    sink_close(&sink_, out, n, 0);                                            \
    phase_end(&ph_, n, sink_.n);                                              \
  } while (0)

/* Opens every streaming format that reads 'reads' (LJM_READS_*) on s,
** listening to m's events; heaptrack writes to ht_path (its name picks the
** compression). */
static void streams_begin(Streams *s, LjmModel *m, LjmExportOptions *o, uint64_t bound,
                          const char *ht_path, unsigned reads)
{
  char err[256];
  memset(s, 0, sizeof(*s));
  for (const LjmExporter *const *e = ljm_exporters(); *e; e++) {
    if (!(*e)->streaming || !((*e)->reads & reads)) continue;
    CHECK(s->n < MAX_STREAMING);
    o->out_path = strcmp((*e)->name, "heaptrack") ? "out" : ht_path;
    if ((*e)->slice_events) ljm_model_set_slices(m, (*e)->slice_events);
    s->e[s->n] = *e;
    s->out[s->n] = sink_open(&s->sink[s->n], (*e)->name, bound, 0);
    s->st[s->n] = (*e)->begin(o, s->out[s->n], err, sizeof(err));
    CHECK(s->st[s->n] != NULL);
    s->n++;
  }
  CHECK(s->n >= 2);
  o->out_path = "out";
  LjmListener l = { on_event, on_time };
  ljm_model_set_listener(m, &l, s);
}

/* Finishes them after n decoded bytes: their output allowance recomputed
** now that the stream's nodes are known (json's is per node), with
** 'events' events' worth of stacks. */
static void streams_finish(Streams *s, const LjmModel *m, uint64_t n, uint64_t events)
{
  char err[256];
  Phase ph;
  for (size_t i = 0; i < s->n; i++) {
    uint64_t lim = out_limit(s->e[i]->name, s->sink[i].bound, events);
    if (lim > s->sink[i].limit) s->sink[i].limit = lim;
    phase_begin(&ph, s->e[i]->name, n);
    err[0] = 0;
    int rc = s->e[i]->finish(s->st[i], m, err, sizeof(err));
    /* growth refuses a stream without time marks: in one line */
    CHECK(rc == 0 || (s->e[i]->refuses && err[0] && !strchr(err, '\n')));
    sink_close(&s->sink[i], s->out[i], n, ljm_model_totals(m)->events);
    phase_end(&ph, n, s->sink[i].n);
  }
}

/* The heap as a flame graph (ljm_model_load_heap) in every format but the
** text report: all of the snapshot's bytes, each object an event. */
static void heap_flame(const LjmHeapGraph *g, uint64_t n, uint64_t bytes)
{
  Phase ph;
  LjmExportOptions o;
  memset(&o, 0, sizeof(o));
  o.in_path = "fuzz.ljh";
  o.out_path = "out";
  o.value = LJM_VALUE_INUSE_BYTES;
  phase_begin(&ph, "heap flame model", n);
  LjmModel *m = ljm_model_new();
  CHECK(m != NULL);
  static Streams s;  /* the streaming formats see the events as they come */
  streams_begin(&s, m, &o, n, "out", LJM_READS_SNAPSHOT);
  LjmDiag d;
  LjmStatus st = ljm_model_load_heap(m, g, "fuzz.ljh", &d);
  phase_end(&ph, n, 0);
  CHECK(st == LJM_OK);
  const LjmTotals *t = ljm_model_totals(m);
  CHECK(t->fig.inuse_bytes == bytes && t->fig.alloc_bytes == bytes);
  CHECK(g->nobj == 0 || t->events == (uint64_t)g->nobj - 1);
  check_model(m, s.seen, s.carried);
  amp_events = t->events;
  amp_nodes = ljm_model_nnodes(m);
  streams_finish(&s, m, n, amp_events);
  for (const LjmExporter *const *e = ljm_exporters(); *e; e++)
    if ((*e)->begin && !(*e)->streaming && ((*e)->reads & LJM_READS_SNAPSHOT))
      export_once(*e, m, &o, n);
  ljm_model_free(m);
}

/* Every output of a heap graph (write_heap) on g: ljm heap's with each
** view's options (summary and paths, text and JSON; with base, the growth
** from it, text and JSON), the others once. */
static void heap_writers(const LjmHeapGraph *g, const LjmHeapGraph *base, uint64_t n)
{
  char err[128];
  for (const LjmExporter *const *e = ljm_exporters(); *e; e++) {
    if (!(*e)->write_heap) continue;
    /* ljm heap's output has views; any other is one output of a graph. */
    int views = strcmp((*e)->command, "heap") ? !base : base ? 2 : 4;
    for (int view = 0; view < views; view++) {
      LjmExportOptions o;
      memset(&o, 0, sizeof(o));
      o.in_path = "fuzz.ljh";
      o.out_path = "out";
      o.json = view & 1;
      o.base = base;
      o.top = base ? 8 : view < 2 ? 8 : 4;
      o.paths = 3;
      if (view >= 2) o.pattern = ".";
      if (!o.json || view >= 2) o.match = match_every;
      HEAP_WRITE((*e)->name, n, (*e)->write_heap(g, &o, out, err, sizeof(err)));
    }
  }
}

/* Reads one snapshot into g and checks it and its views; returns the
** bytes its decoder read. */
static uint64_t heap_one(LjmHeapGraph *g, const uint8_t *data, size_t size)
{
  LjmInput *in = ljm_input_mem(data, size);
  CHECK(in != NULL);
  LjmDiag d;
  Phase ph;
  phase_begin(&ph, "heap graph", size);
  LjmStatus st = ljm_heapgraph_load(g, in, &d);
  uint64_t n = ljm_input_position(in);
  phase_end(&ph, n, 0);
  CHECK(st == LJM_OK || st == LJM_TRUNCATED || st == LJM_ERROR);
  LjmHeapType types[LJH_NTYPES];
  uint64_t objects, bytes, count = 0, sum = 0;
  int nt0 = ljm_heapgraph_types(g, types, &objects, &bytes);
  for (int i = 0; i < nt0; i++) {
    count += types[i].count;
    sum += types[i].bytes;
    if (i) CHECK(types[i - 1].bytes >= types[i].bytes);
  }
  CHECK(count == objects && sum == bytes);
  uint32_t top[8];
  char path[256];
  phase_begin(&ph, "heap retainers and paths", n);
  uint32_t nt = ljm_heapgraph_top_retainers(g, top, 8);
  LjmHeapPreds preds;
  CHECK(ljm_heapgraph_preds(g, &preds) == 0);
  for (uint32_t i = 0; i < nt; i++) {
    CHECK(top[i] < g->nobj);
    CHECK(g->obj[top[i]].retained >= g->obj[top[i]].size);
    ljm_heapgraph_path(g, top[i], path, sizeof(path));
    if (i) CHECK(g->obj[top[i - 1]].retained >= g->obj[top[i]].retained);
    uint32_t np = 0;
    CHECK(ljm_heapgraph_all_paths(g, &preds, top[i], 4, count_path, &np) >= np && np <= 4);
    CHECK(np >= 1);  /* a retainer is strongly reachable: it has a path */
    uint32_t via[3];  /* its own path's reference first, then distinct ones */
    uint32_t nr = ljm_heapgraph_retainers(g, &preds, top[i], via, 3);
    CHECK(nr >= 1 && via[0] == g->obj[top[i]].parent);
    for (uint32_t k = 1; k < nr && k < 3; k++) CHECK(via[k] != via[0] && g->ref[via[k]].to == top[i]);
  }
  ljm_heapgraph_preds_free(&preds);
  phase_end(&ph, n, 0);
  for (uint32_t i = 1; i < g->nobj; i++) CHECK(g->obj[i].idom == LJM_HEAP_NONE || g->obj[i].idom < g->nobj);
  heap_writers(g, NULL, n);
  heap_flame(g, n, bytes);
  ljm_input_close(in);
  return n;
}

/* Two snapshots (b may be a; blen 0: none) and the growth between them. */
static void fuzz_heap(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
  LjmHeapGraph graphs[2];
  uint64_t n = heap_one(&graphs[0], a, alen);
  int two = b != a;
  if (two) n += heap_one(&graphs[1], b, blen);
  else graphs[1] = graphs[0];
  /* The growth from one reading to the other, largest first. */
  LjmHeapGrowth *gr;
  uint32_t ng;
  Phase ph;
  phase_begin(&ph, "heap growth", n);
  if (ljm_heapgraph_growth(&graphs[0], &graphs[1], 16, &gr, &ng) == 0) {
    for (uint32_t i = 0; i < ng; i++) {
      uint32_t c = gr[i].container;
      CHECK(c == LJM_HEAP_NONE || (c < ng && gr[c].container == LJM_HEAP_NONE));
      /* Rows counted under none first, largest growth first among them. */
      if (i && c == LJM_HEAP_NONE)
        CHECK(gr[i - 1].container == LJM_HEAP_NONE && gr[i - 1].diff >= gr[i].diff);
    }
    ljm_heapgraph_growth_free(gr, ng);
  }
  phase_end(&ph, n, 0);
  heap_writers(&graphs[1], &graphs[0], n);
  ljm_heapgraph_free(&graphs[0]);
  if (two) ljm_heapgraph_free(&graphs[1]);
}

/* The text report of m with o's options, in memory (*len bytes). */
static char *text_report(const LjmModel *m, const LjmExportOptions *o, size_t *len)
{
  const LjmExporter *e = ljm_exporter_by_name("convert", "text");
  char *buf = NULL, err[256];
  FILE *f = open_memstream(&buf, len);
  CHECK(e != NULL && f != NULL);
  void *st = e->begin(o, f, err, sizeof(err));
  CHECK(st != NULL && e->finish(st, m, err, sizeof(err)) == 0);
  CHECK(fclose(f) == 0);
  return buf;
}

/* The block filters other than --label, for 1 input in 8 each (and so in
** the reference-only copy alike): --size from a range of the input's, a
** --function or --not-source regex. */
static void set_filters(LjmModel *m, const uint8_t *data, size_t size)
{
  char err[256];
  if (size > 5 && (data[5] & 7) == 3)
    CHECK(ljm_model_filter_size(m, (uint64_t)(data[5] >> 3) * 8,
                                data[5] & 0x80 ? UINT64_MAX : (uint64_t)(data[5] >> 3) * 64) == 0);
  if (size > 5 && (data[5] & 0x38) == 0x18)
    CHECK(ljm_model_filter_frames(m, data[5] & 0x40 ? LJM_FILTER_NOT_SOURCE : LJM_FILTER_FUNCTION,
                                  data[5] & 0x40 ? "a" : "^[a-f]", err, sizeof(err)) == 0);
}

/* `ljm report`'s model (ljm_model_set_reference_only) stops where the whole
** model stops, with the same status, and prints the same report as full. */
static uint64_t win_from, win_to;  /* the window of this input, if any */

/* --lifetime, --lived, --site-leaked for 1 input in 8: a first reading of
** the input (in its window) gives m the fates. */
static void set_fates(LjmModel *m, const uint8_t *data, size_t size)
{
  if (size <= 6 || (data[6] & 7) != 5) return;
  LjmFateSpec sp;
  memset(&sp, 0, sizeof(sp));
  sp.lifetime = (LjmLifetime)(data[6] >> 3 & 3);
  sp.lived = data[6] >> 5 & 1;
  sp.lived_max_us = sp.lived ? (uint64_t)(data[6] >> 3 & 3) * 1000 : 0;
  sp.site_leaked = data[6] >> 6 & 1;
  sp.site_leaked_pct = data[6] & 0x80 ? 50 : 0;
  LjmModel *first = ljm_model_new();
  LjmInput *in = ljm_input_mem(data, size);
  CHECK(first && in && ljm_model_fate_scan(first, &sp) == 0);
  if (size > 4 && (data[4] & 7) == 6) ljm_model_set_window(first, win_from, win_to);
  LjmDiag d;
  ljm_model_load(first, in, "fuzz.ljm", &d);
  LjmFates *f = ljm_model_fates_take(first);
  CHECK(f != NULL && ljm_model_filter_fates(m, f) == 0);
  ljm_input_close(in);
  ljm_model_free(first);
}

static void check_reference_only(const uint8_t *data, size_t size, const LjmModel *full,
                                 LjmStatus full_st, const LjmExportOptions *opts)
{
  LjmExportOptions ref = *opts;
  const LjmExportOptions *o = &ref;
  ref.temporaries = 0;  /* `ljm report --temporary` keeps the whole model */
  LjmModel *m = ljm_model_new();
  LjmInput *in = ljm_input_mem(data, size);
  CHECK(m != NULL && in != NULL);
  ljm_model_set_reference_only(m);
  if (ljm_model_stream(full)->windowed) ljm_model_set_window(m, win_from, win_to);
  const char *const *terms;  /* the same label filter (which takes the full path) */
  for (uint32_t i = 0, nt = ljm_model_label_filters(full, &terms); i < nt; i++)
    CHECK(ljm_model_label_filter(m, terms[i]) == 0);
  set_filters(m, data, size);
  set_fates(m, data, size);
  LjmDiag d;
  CHECK(ljm_model_load(m, in, "fuzz.ljm", &d) == full_st);
  CHECK(ljm_model_stream(m)->bytes == ljm_model_stream(full)->bytes);
  CHECK(ljm_model_totals(m)->events == ljm_model_totals(full)->events);
  size_t na, nb;
  char *a = text_report(full, o, &na), *b = text_report(m, o, &nb);
  CHECK(na == nb && memcmp(a, b, na) == 0);
  free(a);
  free(b);
  ljm_input_close(in);
  ljm_model_free(m);
}

/* A stream read as it is written (ljm_input_follow, ljm top): shown 'step'
** bytes more at each wait, it builds the model the whole input builds. */
typedef struct Pieces {
  LjmInput *in;
  size_t shown, step, size;
} Pieces;

static int show_more(void *ud)
{
  Pieces *p = ud;
  if (p->shown >= p->size) return 1;  /* all of it: the input ends */
  p->shown = ljm_input_mem_show(p->in, p->shown + p->step);
  return 0;
}

static void check_pieces(const uint8_t *data, size_t size, const LjmModel *whole,
                         LjmStatus whole_st)
{
  Pieces p = { ljm_input_mem(data, size), 0, 1 + (size > 5 ? data[5] % 61 : 7), size };
  LjmModel *m = ljm_model_new();
  CHECK(m != NULL && p.in != NULL);
  p.shown = ljm_input_mem_show(p.in, 0);
  ljm_input_follow(p.in, show_more, &p);
  LjmDiag d;
  CHECK(ljm_model_load(m, p.in, "fuzz.ljm", &d) == whole_st);
  const LjmStreamInfo *a = ljm_model_stream(m), *b = ljm_model_stream(whole);
  CHECK(a->bytes == b->bytes && a->truncated == b->truncated && a->trailing == b->trailing &&
        a->truncated_at == b->truncated_at);
  const LjmTotals *x = ljm_model_totals(m), *y = ljm_model_totals(whole);
  CHECK(x->events == y->events && x->fig.alloc_bytes == y->fig.alloc_bytes &&
        x->fig.inuse_bytes == y->fig.inuse_bytes && x->fig.peak_bytes == y->fig.peak_bytes);
  CHECK(ljm_model_nsites(m) == ljm_model_nsites(whole) &&
        ljm_model_nnodes(m) == ljm_model_nnodes(whole));
  ljm_input_close(p.in);
  ljm_model_free(m);
}

/* ljm top's reading anew (cli/top_reread.c): limited to a prefix, a
** reading builds what the prefix alone builds, a mark at an event count
** runs once, with that many events seen (or all, when fewer came), and
** the live figures taken there and at the end agree with the model. */
typedef struct Marked {
  LjmLive *live;
  int runs;
  uint64_t seen;
} Marked;

static void on_mark(void *ud, LjmModel *m)
{
  Marked *k = ud;
  k->runs++;
  k->seen = ljm_model_events_seen(m);
  CHECK(ljm_live_mark(k->live, m, 0) == 0);
}

static void check_reread(const uint8_t *data, size_t size)
{
  if (size < 8 || (data[7] & 7) != 3) return;
  size_t limit = 1 + (size_t)(data[7] >> 3) * size / 32;
  if (limit > size) limit = size;
  LjmModel *a = ljm_model_new(), *b = ljm_model_new();
  LjmInput *ia = ljm_input_mem(data, size), *ib = ljm_input_mem(data, limit);
  Marked k = { ljm_live_new("k"), 0, 0 };
  CHECK(a && b && ia && ib && k.live);
  /* a filter keeping every block: the events are counted (marks) */
  CHECK(ljm_model_filter_size(a, 0, UINT64_MAX) == 0 && ljm_model_filter_size(b, 0, UINT64_MAX) == 0);
  uint64_t at = data[6] % 64;
  ljm_model_set_mark(a, at, on_mark, &k);
  ljm_input_limit(ia, limit);
  LjmDiag d;
  LjmStatus sa = ljm_model_load(a, ia, "fuzz.ljm", &d), sb = ljm_model_load(b, ib, "fuzz.ljm", &d);
  ljm_model_marks_due(a);
  CHECK(sa == sb && ljm_input_decoded(ia) <= limit);
  CHECK(ljm_model_stream(a)->bytes == ljm_model_stream(b)->bytes &&
        ljm_model_totals(a)->events == ljm_model_totals(b)->events &&
        ljm_model_totals(a)->fig.inuse_bytes == ljm_model_totals(b)->fig.inuse_bytes &&
        ljm_model_events_seen(a) == ljm_model_events_seen(b));
  uint64_t seen = ljm_model_events_seen(a);
  CHECK(k.runs == 1 && k.seen == (at < seen ? at : seen));
  CHECK(ljm_live_sample(k.live, a, 1) == 0);
  CHECK(ljm_live_totals(k.live)->all.inuse_bytes == ljm_model_totals(a)->fig.inuse_bytes);
  ljm_live_restart(k.live);
  CHECK(ljm_live_sample(k.live, a, 2) == 0 && ljm_live_totals(k.live)->all.grown == 0);
  ljm_live_free(k.live);
  ljm_input_close(ia);
  ljm_input_close(ib);
  ljm_model_free(a);
  ljm_model_free(b);
}

/* The stream through the model, the streaming exporters and every other. */
static void fuzz_stream(const uint8_t *data, size_t size)
{
  static const char *const ht_names[] = {"f.heaptrack", "f.heaptrack.gz", "f.heaptrack.zst"};
  Phase ph;
  amp_events = amp_nodes = 0;
  phase_begin(&ph, "model", size);
  LjmModel *m = ljm_model_new();
  CHECK(m != NULL);
  LjmInput *in = ljm_input_mem(data, size);
  LjmExportOptions o;
  memset(&o, 0, sizeof(o));
  o.in_path = "fuzz.ljm";
  o.json = size > 2 && (data[2] & 1);   /* growth's view: text or JSON */
  /* --label for 1 input in 8: a value, or the key's absence */
  if (size > 3 && (data[3] & 7) == 5)
    CHECK(ljm_model_label_filter(m, data[3] & 8 ? "k=(none)" : "k=v") == 0);
  set_filters(m, data, size);
  /* --group-by for 1 input in 8 */
  if (size > 3 && (data[3] & 0x70) == 0x30) CHECK(ljm_model_group_by(m, "k") == 0);
  /* --from/--to for 1 input in 8: from 0..15 ms, 5 ms long or to the end */
  if (size > 4 && (data[4] & 7) == 6) {
    win_from = (uint64_t)(data[4] >> 3 & 15) * 1000;
    win_to = data[4] & 0x80 ? UINT64_MAX : win_from + 5000;
    ljm_model_set_window(m, win_from, win_to);
  }
  set_fates(m, data, size);
  static Streams s;
  /* Heaptrack: plain text mostly; compressed for 1 input in 8. */
  streams_begin(&s, m, &o, size, ht_names[size && (data[0] & 7) == 7 ? 1 + (data[size - 1] & 1) : 0],
                LJM_READS_PROFILE);
  LjmDiag d;
  LjmStatus st = ljm_model_load(m, in, "fuzz.ljm", &d);
  uint64_t n = ljm_model_stream(m)->bytes;
  CHECK(n <= size);
  amp_events = ljm_model_totals(m)->events;
  amp_nodes = ljm_model_nnodes(m);
  phase_end(&ph, n, 0);
  CHECK(st == LJM_OK || st == LJM_TRUNCATED || st == LJM_ERROR);
  check_model(m, s.seen, s.carried);
  streams_finish(&s, m, n, size / 2);

  /* Every other format once, with a --value kind (and text report mode)
  ** picked from the input, so the corpus covers all of them. */
  unsigned pick = size ? data[size / 2] : 0;
  o.out_path = "out";
  o.value = (LjmValueKind)(pick % (LJM_VALUE_TEMP_COUNT + 1));
  o.leak_only = pick >> 3 & 1;
  o.temporaries = size > 2 && data[size / 3] & 1;  /* text report --temporary */
  o.human_readable = pick >> 4 & 1;
  o.top = pick >> 5;                     /* markdown options */
  o.min_bytes = size > 1 ? data[1] : 0;
  for (const LjmExporter *const *e = ljm_exporters(); *e; e++)
    if ((*e)->begin && !(*e)->streaming && ((*e)->reads & LJM_READS_PROFILE))
      export_once(*e, m, &o, n);
  check_reference_only(data, size, m, st, &o);
  /* In pieces, for 1 input in 8 without a filter, grouping or window. */
  char fnote[64];
  if (size > 4 && (data[4] & 0x38) == 0x28 && !ljm_model_filter_note(m, fnote, sizeof(fnote)) &&
      !ljm_model_group_key(m) && !ljm_model_stream(m)->windowed)
    check_pieces(data, size, m, st);
  check_reread(data, size);
  ljm_input_close(in);
  ljm_model_free(m);
  /* The outputs of the stream's bytes (write_stream), each on its own reading. */
  for (const LjmExporter *const *e = ljm_exporters(); *e; e++) {
    if (!(*e)->write_stream) continue;
    Sink sink;
    char note[256];
    int werr;
    in = ljm_input_mem(data, size);
    CHECK(in != NULL);
    phase_begin(&ph, (*e)->name, size);
    FILE *out = sink_open(&sink, (*e)->name, size, 0);
    st = (*e)->write_stream(in, &o, out, &d, &werr, note, sizeof(note));
    CHECK(st == LJM_OK || st == LJM_TRUNCATED || st == LJM_ERROR);
    CHECK(werr == 0);
    uint64_t read = ljm_input_position(in);
    sink_close(&sink, out, read, 0);
    phase_end(&ph, read, sink.n);
    ljm_input_close(in);
  }
}

static size_t recipe_budget(void)
{
  const char *e = getenv("LJM_FUZZ_BUDGET");
  return e && *e ? (size_t)strtoull(e, NULL, 0) : RECIPE_BUDGET;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int hooked;
  if (!hooked) {
    CHECK(__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0);
    hooked = 1;
  }
  int kind = ljr_kind(data, size);
  if (kind != LJR_NONE) {
    uint8_t *buf;
    size_t len;
    CHECK(ljr_expand(data, size, recipe_budget(), &buf, &len) == 0);
    const char *dump = getenv("LJM_FUZZ_DUMP");  /* the expansion, for a reproducer */
    if (dump) {
      FILE *f = fopen(dump, "wb");
      CHECK(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0);
    }
    if (kind == LJR_HEAP) fuzz_heap(buf, len, buf, len);
    else fuzz_stream(buf, len);
    free(buf);
    return 0;
  }
  fuzz_stream(data, size);
  uint8_t *buf = malloc(size + 4);
  CHECK(buf != NULL);
  memcpy(buf, "ljh\x01", 4);
  memcpy(buf + 4, data, size);
  fuzz_heap(data, size, buf, size + 4);
  free(buf);
  return 0;
}
