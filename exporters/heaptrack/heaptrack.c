/* heaptrack.c -- the Heaptrack exporter: a heaptrack data file, format 3.
**
** Streaming: every event is written as it is decoded, in stream order:
**   ALLOC    [- dropped]  + new      ('dropped': a block the stream overwrote
**   FREE     - old                    without freeing it)
**   REALLOC  - old [- dropped] + new
** A '-' is written only for blocks whose owner is known, so heaptrack's
** calls, peak and leaked figures equal the model's alloc_count, peak_bytes
** and inuse_bytes; which index each line uses is ht_events.h's business.
** Only what the profile knows is written: a stream without time marks
** records no time, RSS or system memory, so it has no 'c', 'I' and 'R'
** lines (heaptrack then shows a runtime of 0 and empty charts rather than a
** duration the program never had) and the debuggee line ('X') says the
** recording has no time; an extended stream with time marks
** (decoder/EXTENSION.md) gives real 'c' times, at events and time marks and
** where an idle stretch begins (so it stays flat in the charts), and its RSS
** samples as 'R'
** lines (pages of 4096 bytes: 'I 1000 0', system memory still unknown).
**
** Each site is one frame ('i'): a Lua function (LjmSite.func: "Cache:put",
** "main chunk", ...) at file:line in module <file>, a C symbol in [C],
** "TRACE [n]" in [JIT] called from the trace's start site, or INTERNAL in
** [LuaJIT VM]. Strings, frames and trace nodes are
** written just before their first use. Rules from heaptrack_print's
** pitfalls: lowercase hex only, sizes of sized strings in bytes, no newline
** in strings, no angle brackets (template shortening), no function named
** like a program entry point.
**
** The output is compressed by the output name: ".gz" zlib, ".zst" zstd,
** anything else plain text (which heaptrack also reads).
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/sampled.h"
#include "exporters/common/utf8.h"
#include "exporters/heaptrack/ht_events.h"
#include "exporters/heaptrack/ht_sink.h"
#include "exporters/heaptrack/ht_text.h"
#include "exporters/ljm_exporter.h"

#define RSS_PAGE 4096  /* the unit of 'R' lines for timed streams */
#define NAME_MAX_BYTES 200  /* longer names (one-line chunks) are cut */
#define NAME_CLEAN (LJM_CLEAN_BRACKETS | LJM_CLEAN_SPACE)

/* -- State -------------------------------------------------------------- */

/* Strings: cleaned text -> index. */
typedef struct SEntry {
  uint64_t h;
  char *s;        /* NULL: empty slot */
  uint64_t idx;
} SEntry;

typedef struct Ht {
  HtText text;
  HtEvents ev;
  uint32_t *site;         /* trace node per site id, 0: not written yet */
  size_t capsite;
  uint32_t *node;         /* trace node per call-tree node (real stacks) */
  size_t capnode;
  uint32_t *chain;        /* scratch: the nodes stack_trace writes */
  size_t capchain;
  uint32_t *ip;           /* frame ('i') index per site, 0: not written yet */
  size_t capip;
  uint32_t marker_ip[3];  /* frames of [coroutine], [tail call], [...] */
  int stacks;             /* the stream has real stacks */
  int timed;              /* the stream has time marks and RSS */
  int header_done;        /* 'X' (and 'I') written */
  const char *in_path;
  SEntry *se;
  size_t capse, nse;
  uint64_t nstr, nip, ntrace;
  uint64_t last_ms;
  LjmBuf clean;           /* the name being cleaned */
  int have_c;
  int oom;
} Ht;

static void rec(Ht *h, char mode, int n, const uint64_t *f)
{
  ht_text_rec(&h->text, mode, n, f);
}

static void rec1(Ht *h, char mode, uint64_t a) { rec(h, mode, 1, &a); }

/* -- Strings ------------------------------------------------------------ */

/* heaptrack ends a backtrace at these names and drops "operator new" at
** the leaf; a function spelled so gets a suffix saying what it is. */
static int special_name(const char *s)
{
  return strcmp(s, "main") == 0 || strcmp(s, "__libc_start_main") == 0 ||
         strcmp(s, "__static_initialization_and_destruction_0") == 0 ||
         strncmp(s, "operator new", 12) == 0;
}

static uint64_t hash_str(const char *s)
{
  uint64_t x = 1469598103934665603ull;  /* FNV-1a */
  for (; *s; s++) x = (x ^ (unsigned char)*s) * 1099511628211ull;
  return x;
}

/* Index of string s (written as an 's' record on first use); 0 on OOM.
** 'suffix' (functions only) is added to names heaptrack treats specially. */
static uint64_t string_id(Ht *h, const char *raw, const char *suffix)
{
  LjmBuf *t = &h->clean;
  ljm_buf_reset(t);
  ljm_text_clean(t, raw, strlen(raw), NAME_CLEAN, NAME_MAX_BYTES);
  if (!t->len) ljm_buf_putc(t, '?');
  if (suffix && special_name(ljm_buf_str(t))) ljm_buf_puts(t, suffix);
  if (t->oom) return h->oom = 1, 0;
  const char *c = t->p;
  if (h->nse * 2 >= h->capse) {
    size_t nc = h->capse ? h->capse * 2 : 256;
    SEntry *n = calloc(nc, sizeof *n);
    if (!n) return h->oom = 1, 0;
    for (size_t i = 0; i < h->capse; i++) {
      if (!h->se[i].s) continue;
      size_t j = h->se[i].h & (nc - 1);
      while (n[j].s) j = (j + 1) & (nc - 1);
      n[j] = h->se[i];
    }
    free(h->se);
    h->se = n;
    h->capse = nc;
  }
  uint64_t hv = hash_str(c);
  size_t j = hv & (h->capse - 1);
  for (; h->se[j].s; j = (j + 1) & (h->capse - 1))
    if (h->se[j].h == hv && strcmp(h->se[j].s, c) == 0) return h->se[j].idx;
  size_t len = t->len;
  char *copy = malloc(len + 1);
  if (!copy) return h->oom = 1, 0;
  memcpy(copy, c, len + 1);
  char *p = ht_text_room(&h->text, len + 24), *s = p;
  *p++ = 's';
  *p++ = ' ';
  p = ht_put_hex(p, len);  /* sized string: length in bytes */
  *p++ = ' ';
  memcpy(p, c, len);
  p += len;
  *p++ = '\n';
  h->text.len += (size_t)(p - s);
  h->se[j] = (SEntry){hv, copy, ++h->nstr};
  h->nse++;
  return h->nstr;
}

/* -- Frames and trace nodes --------------------------------------------- */

/* The module of a frame: a Lua chunk's file, so that heaptrack_gui, which
** groups by (function, module), keeps "main chunk" of each file apart. */
static const char *module_of(const LjmSite *s)
{
  switch (s->kind) {
  case LJM_SITE_LUA: return *s->file ? s->file : "?";
  case LJM_SITE_C: return "[C]";
  case LJM_SITE_TRACE: return "[JIT]";
  case LJM_SITE_LABEL: return "[label]";
  default: return "[LuaJIT VM]";
  }
}

/* Grows a per-id table of uint32 (zeroed) so that id fits; 0 or -1. */
static int fit(uint32_t **tab, size_t *cap, size_t id)
{
  if (id < *cap) return 0;
  size_t nc = *cap ? *cap : 256;
  while (nc <= id) nc *= 2;
  uint32_t *n = realloc(*tab, nc * sizeof *n);
  if (!n) return -1;
  memset(n + *cap, 0, (nc - *cap) * sizeof *n);
  *tab = n;
  *cap = nc;
  return 0;
}

/* The frame ('i') of a site, or of a stack marker (site LJM_NO_SITE and a
** name), written on first use; returns its ip index. */
static uint32_t frame_ip(Ht *h, const LjmModel *m, uint32_t site, const char *marker)
{
  uint32_t *slot;
  if (marker) {
    slot = &h->marker_ip[marker[1] == 'c' ? 0 : marker[1] == 't' ? 1 : 2];
  } else {
    if (fit(&h->ip, &h->capip, site) != 0) return h->oom = 1, 0;
    slot = &h->ip[site];
  }
  if (*slot) return *slot;
  uint64_t f[6];
  int n = 0;
  f[n++] = h->nip + 1;  /* the ip: any unique number */
  if (marker) {
    f[n++] = string_id(h, "[LuaJIT VM]", NULL);
    f[n++] = string_id(h, marker, NULL);
  } else {
    const LjmSite *s = ljm_model_site(m, site);
    f[n++] = string_id(h, module_of(s), NULL);
    f[n++] = string_id(h, s->func, s->kind == LJM_SITE_LUA     ? " (Lua)"
                                   : s->kind == LJM_SITE_LABEL ? NULL
                                                               : " [C]");
    if (s->kind == LJM_SITE_LUA && s->func_from != LJM_FUNC_BUILTIN) {
      f[n++] = string_id(h, *s->file ? s->file : "?", NULL);
      f[n++] = s->line > 0 ? (uint64_t)s->line : 0;
    }
  }
  if (h->oom) return 0;
  rec(h, 'i', n, f);
  return *slot = (uint32_t)++h->nip;
}

/* A trace node ('t'): a frame called from a parent node. */
static uint32_t trace_node(Ht *h, uint32_t ip, uint32_t parent)
{
  uint64_t t[2] = {ip, parent};
  rec(h, 't', 2, t);
  return (uint32_t)++h->ntrace;
}

/* Trace node of a site on its own (standard streams): a trace is called
** from its start site. */
static uint32_t site_trace(Ht *h, const LjmModel *m, uint32_t id, int depth)
{
  if (id >= ljm_model_nsites(m)) return 0;
  if (fit(&h->site, &h->capsite, id) != 0) return h->oom = 1, 0;
  if (h->site[id]) return h->site[id];
  const LjmSite *s = ljm_model_site(m, id);
  uint32_t parent = 0;
  if (s->kind == LJM_SITE_TRACE && depth == 0 && s->trace_start != LJM_NO_SITE &&
      s->trace_start < ljm_model_nsites(m) &&
      ljm_model_site(m, s->trace_start)->kind != LJM_SITE_TRACE)
    parent = site_trace(h, m, s->trace_start, 1);
  uint32_t ip = frame_ip(h, m, id, NULL);
  if (!ip) return 0;
  return h->site[id] = trace_node(h, ip, parent);
}

/* Trace node of a node of a real stack, writing its callers first: the
** nodes up to a written caller (or the root) are collected once, then
** written outermost first, so a chain costs its length, not its square. */
static uint32_t stack_trace(Ht *h, const LjmModel *m, uint32_t id)
{
  if (fit(&h->node, &h->capnode, id) != 0) return h->oom = 1, 0;
  if (h->node[id]) return h->node[id];
  size_t n = 0;
  uint32_t top = id;
  while (top != LJM_NO_NODE && !(top < h->capnode && h->node[top])) {
    if (fit(&h->chain, &h->capchain, n) != 0) return h->oom = 1, 0;
    h->chain[n++] = top;
    top = ljm_model_node(m, top)->parent;
  }
  uint32_t parent = top == LJM_NO_NODE ? 0 : h->node[top];
  while (n-- > 0) {
    uint32_t k = h->chain[n];
    const LjmNode *nd = ljm_model_node(m, k);
    const char *marker = nd->kind == LJM_NODE_RESUME ? "[coroutine]"
                         : nd->kind == LJM_NODE_TAIL ? "[tail call]"
                         : nd->kind == LJM_NODE_CUT  ? "[...]" : NULL;
    uint32_t ip = frame_ip(h, m, nd->site, marker);
    if (!ip || fit(&h->node, &h->capnode, k) != 0) return h->oom = 1, 0;
    parent = h->node[k] = trace_node(h, ip, parent);
  }
  return parent;
}

/* One '+' or '-' line for a block of 'size' bytes allocated at node. */
static inline __attribute__((always_inline)) void event(Ht *h, const LjmModel *m, char mode,
                                                        uint32_t node, uint64_t size)
{
  uint32_t t;
  if (h->stacks) {
    t = node < h->capnode && h->node[node] ? h->node[node] : stack_trace(h, m, node);
  } else {  /* node i is site i */
    t = node < h->capsite && h->site[node] ? h->site[node] : site_trace(h, m, node, 0);
  }
  if (!t) return;  /* out of memory: the error is reported at the end */
  if (mode == '+') ht_events_plus(&h->ev, size, t);
  else ht_events_minus(&h->ev, size, t);
}

/* -- The exporter ------------------------------------------------------- */

static void *ht_begin(const LjmExportOptions *o, FILE *out, char *err, size_t errlen)
{
  const char *path = o->out_path ? o->out_path : "-";
  if (strcmp(path, "-") == 0) {
    snprintf(err, errlen, "heaptrack cannot read a pipe: give -o NAME.heaptrack.gz "
             "or NAME.heaptrack.zst");
    return NULL;
  }
  Ht *h = calloc(1, sizeof *h);
  if (!h) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  size_t n = strlen(path);
  HtCodec codec = n >= 3 && strcmp(path + n - 3, ".gz") == 0    ? HT_GZIP
                  : n >= 4 && strcmp(path + n - 4, ".zst") == 0 ? HT_ZSTD
                                                                : HT_PLAIN;
  h->text.sink = ht_sink_open(out, codec, err, errlen);
  if (!h->text.sink) {
    free(h);
    return NULL;
  }
  h->text.buf = ht_sink_buffer(h->text.sink);
  ht_events_init(&h->ev, &h->text);
  char *p = ht_text_room(&h->text, 16);
  h->text.len += (size_t)sprintf(p, "v 10400 3\n");
  h->in_path = o->in_path ? o->in_path : "-";
  return h;
}

/* The header after 'v', once the stream's kind is known (first event or
** the end): 'X' says what the time axis is; a timed stream has RSS in
** bytes, counted in pages of 4096 bytes ('I' with no system memory). */
static void header(Ht *h, const LjmModel *m)
{
  if (h->header_done) return;
  h->header_done = 1;
  h->timed = (ljm_model_stream(m)->ext_flags & 2) != 0;
  h->stacks = ljm_model_stacked(m);  /* else node i is site i */
  /* 'X' is the rest of the line, not a sized string. */
  LjmBuf x = {0};
  ljm_buf_puts(&x, "X ");
  ljm_text_clean(&x, h->in_path, strlen(h->in_path), NAME_CLEAN, 1024);
  char note[128];
  if (ljm_model_stream(m)->snapshot)
    ljm_buf_puts(&x, " (LuaJIT heap snapshot via ljm convert: every object in use at the "
                 "snapshot, under the path that retains it; no time axis");
  else if (h->timed && ljm_model_stream(m)->windowed)
    ljm_buf_printf(&x, " (LuaJIT memory profile via ljm convert; time axis: real time from "
                   "%.3f s of the recording (--from); the blocks in use then are allocations "
                   "at 0", ljm_model_stream(m)->window_from / 1e6);
  else if (h->timed)
    ljm_buf_puts(&x, " (LuaJIT memory profile via ljm convert; time axis: real time");
  else
    ljm_buf_puts(&x, " (LuaJIT memory profile via ljm convert; no time recorded, so the runtime "
                 "shows 0 and the charts are empty: ljm record --stacks records time and RSS");
  /* Sampled: bytes are estimates; each sample is one allocation here. */
  if (ljm_sampled_note(m, note, sizeof(note)))
    ljm_buf_printf(&x, "; bytes are %s, allocation counts are the samples", note);
  char filter[1024];
  if (ljm_filter_line(m, filter, sizeof(filter))) ljm_buf_printf(&x, "; %s", filter);
  ljm_buf_puts(&x, ")\n");
  if (!x.oom) {
    char *p = ht_text_room(&h->text, x.len);
    memcpy(p, x.p, x.len);
    h->text.len += x.len;
  }
  ljm_buf_free(&x);
  if (h->timed) {
    uint64_t si[2] = {RSS_PAGE, 0};
    rec(h, 'I', 2, si);
  }
}

/* A 'c' line for millisecond ms unless the last one said it (never back). */
static void stamp(Ht *h, uint64_t ms)
{
  if (h->have_c && ms < h->last_ms) ms = h->last_ms;
  if (!h->have_c || ms != h->last_ms) {
    rec1(h, 'c', ms);
    h->last_ms = ms;
    h->have_c = 1;
  }
}

/* heaptrack_gui draws its charts through the 'c' lines, a point each. The
** recorder writes a time mark at the first event 5 ms after the last, and
** promises that events after a mark come within MARK_WINDOW_MS of it; so a
** mark later than that after the last one ends an idle stretch: a point
** where the window closed and one at the mark keep the chart flat across
** it, instead of a ramp from the last allocation to the next. (A heuristic:
** a ticker woken late can leave a busy stretch without marks longer than
** the window; the chart then shows a step where events continued.) */
#define MARK_WINDOW_MS 10
static void ht_on_time(void *st, const LjmModel *m, uint64_t usec)
{
  Ht *h = st;
  if (h->oom || h->ev.oom) return;
  if (__builtin_expect(!h->header_done, 0)) header(h, m);
  if (!h->timed) return;
  if (h->have_c && usec / 1000 > h->last_ms + MARK_WINDOW_MS) stamp(h, h->last_ms + MARK_WINDOW_MS);
  stamp(h, usec / 1000);
}

static void ht_on_event(void *st, const LjmModel *m, const LjmLiveEvent *ev)
{
  Ht *h = st;
  if (h->oom || h->ev.oom) return;
  if (__builtin_expect(!h->header_done, 0)) header(h, m);
  if (h->timed) stamp(h, ev->time == LJM_NO_TIME_US ? 0 : ev->time / 1000);
  if (ev->kind != LJM_EV_ALLOC && ev->old_node != LJM_NO_NODE)
    event(h, m, '-', ev->old_node, ev->old_size);
  if (ev->kind != LJM_EV_FREE) {
    if (ev->dropped_node != LJM_NO_NODE)
      event(h, m, '-', ev->dropped_node, ev->dropped_size);
    event(h, m, '+', ev->node, ev->new_size);
  }
}

static void ht_free(Ht *h)
{
  for (size_t i = 0; i < h->capse; i++) free(h->se[i].s);
  free(h->se);
  ht_events_free(&h->ev);
  free(h->site);
  free(h->node);
  free(h->chain);
  free(h->ip);
  ljm_buf_free(&h->clean);
  free(h);
}

static int ht_finish(void *st, const LjmModel *m, char *err, size_t errlen)
{
  Ht *h = st;
  header(h, m);
  ht_events_finish(&h->ev);
  /* Total runtime is the last time stamp plus 1 ms; a timed stream may go
  ** on after its last event. */
  if (h->timed) {
    uint64_t end = h->have_c ? h->last_ms + 1 : 0;
    const LjmStreamInfo *si = ljm_model_stream(m);
    if (si->duration != LJM_NO_TIME_US && si->duration / 1000 + 1 > end)
      end = si->duration / 1000 + 1;
    rec1(h, 'c', end);
    /* RSS only makes peak RSS: the samples can come last */
    const LjmRssSample *rss;
    size_t n = ljm_model_rss(m, &rss);
    for (size_t i = 0; i < n; i++) rec1(h, 'R', (rss[i].bytes + RSS_PAGE - 1) / RSS_PAGE);
  }
  char *p = ht_text_room(&h->text, 64);
  h->text.len += (size_t)sprintf(p, "# strings: %" PRIx64 "\n# ips: %" PRIx64 "\n",
                                 h->nstr, h->nip);
  if (h->ev.misplaced) {  /* see ht_events.h */
    p = ht_text_room(&h->text, 96);
    h->text.len += (size_t)sprintf(p, "# ljm: %" PRIu64 " free(s) of the first block "
                                   "counted as temporary by heaptrack\n", h->ev.misplaced);
  }
  ht_text_flush(&h->text);
  int rc = ht_sink_close(h->text.sink, err, errlen);
  if ((h->oom || h->ev.oom) && rc == 0) {
    snprintf(err, errlen, "out of memory");
    rc = -1;
  }
  if (h->ev.bad && rc == 0) {
    snprintf(err, errlen, "internal error: a free matched no allocation");
    rc = -1;
  }
  ht_free(h);
  return rc;
}

const LjmExporter ljm_exporter_heaptrack = {
  .name = "heaptrack", .command = "convert", .reads = LJM_READS_PROFILE | LJM_READS_SNAPSHOT,
  .summary = "heaptrack data file for heaptrack_print/heaptrack_gui (gzip or zstd by name)",
  .suffixes = (const char *const[]){".heaptrack.gz", ".heaptrack.zst", NULL}, .binary = 1,
  .streaming = 1, .begin = ht_begin, .on_event = ht_on_event, .on_time = ht_on_time,
  .finish = ht_finish,
};
