/* heaptrack.c -- the Heaptrack exporter: a heaptrack data file, format 3.
**
** Streaming: every event is written as it is decoded, in stream order:
**   ALLOC    [- dropped]  + new      ('dropped': a block the stream overwrote
**   FREE     - old                    without freeing it)
**   REALLOC  - old [- dropped] + new
** A '-' is written only for blocks whose owner is known, so heaptrack's
** calls, peak and leaked figures equal the model's alloc_count, peak_bytes
** and inuse_bytes. Time stamps ('c', ms) are derived from the event index:
** one millisecond per EVENTS_PER_MS events.
**
** Each site is one frame ('i'): Lua "file:linedefined" at file:line, a C
** symbol, "TRACE [n]" (called from the trace's start site) or INTERNAL, with
** a module telling these kinds apart. Strings, frames, trace nodes and
** allocation infos are written just before their first use. Rules from
** heaptrack_print's pitfalls: lowercase hex only, sizes of sized strings in
** bytes, no newline in strings, no angle brackets (template shortening), no
** function named like a program entry point, and a dummy first 'a' record
** (the index-0 temporary quirk).
**
** The output is compressed by the output name: ".gz" zlib, ".zst" zstd,
** anything else plain text (which heaptrack also reads).
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exporters/common/utf8.h"
#include "exporters/heaptrack/ht_sink.h"
#include "exporters/ljm_exporter.h"

#define EVENTS_PER_MS 100
#define TEXT_BUF HT_SINK_CHUNK
#define NAME_MAX_BYTES 200  /* longer names (one-line chunks) are cut */
#define NAME_CLEAN (LJM_CLEAN_BRACKETS | LJM_CLEAN_SPACE)

/* -- Hash maps ---------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* Allocation infos: (size, trace) -> index + 1. */
typedef struct AInfo {
  uint64_t size;
  uint32_t trace;
  uint32_t idx1;  /* 0: empty slot */
} AInfo;

/* Strings: cleaned text -> index. */
typedef struct SEntry {
  uint64_t h;
  char *s;        /* NULL: empty slot */
  uint64_t idx;
} SEntry;

/* -- State -------------------------------------------------------------- */

/* What was written for a site, and a one-entry cache of its alloc infos
** (a site tends to allocate the same size again). */
typedef struct SiteOut {
  uint32_t trace;         /* trace node, 0: not written yet */
  uint32_t last_idx1;     /* alloc info index + 1 of last_size, 0: none */
  uint64_t last_size;
} SiteOut;

typedef struct Ht {
  HtSink *sink;
  char *buf;              /* text being written (a buffer of the sink) */
  size_t len;
  SiteOut *site;          /* per site id */
  size_t capsite;
  AInfo *ai;              /* open addressing, power-of-two capacity */
  size_t capai, nai;      /* nai counts records written, dummy included */
  SEntry *se;
  size_t capse, nse;
  uint64_t nstr, nip, ntrace;
  uint64_t last_ms;
  LjmBuf clean;           /* the name being cleaned */
  int have_c;
  int oom;
} Ht;

/* -- Text output -------------------------------------------------------- */

static void flush_text(Ht *h)
{
  if (h->len) h->buf = ht_sink_submit(h->sink, h->buf, h->len);
  h->len = 0;
}

/* Room for n more bytes of text. */
static inline char *room(Ht *h, size_t n)
{
  if (h->len + n > TEXT_BUF) flush_text(h);
  return h->buf + h->len;
}

/* Writes v in lowercase hex (heaptrack rejects uppercase); returns the end. */
static inline char *put_hex(char *p, uint64_t v)
{
  int n = (67 - __builtin_clzll(v | 1)) >> 2;  /* digits */
  for (int i = n - 1; i >= 0; i--, v >>= 4) p[i] = "0123456789abcdef"[v & 15];
  return p + n;
}

/* One record: mode char and up to 5 hex fields. */
static void rec(Ht *h, char mode, int n, const uint64_t *f)
{
  char *p = room(h, 2 + (size_t)n * 17 + 1), *s = p;
  *p++ = mode;
  for (int i = 0; i < n; i++) {
    *p++ = ' ';
    p = put_hex(p, f[i]);
  }
  *p++ = '\n';
  h->len += (size_t)(p - s);
}

static void rec1(Ht *h, char mode, uint64_t a) { rec(h, mode, 1, &a); }

/* -- Strings ------------------------------------------------------------ */

/* heaptrack ends a backtrace at these names and drops "operator new" at
** the leaf; a function spelled so (a C symbol) gets a suffix. */
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

/* Index of string s (written as an 's' record on first use); 0 on OOM. */
static uint64_t string_id(Ht *h, const char *raw, int is_func)
{
  LjmBuf *t = &h->clean;
  ljm_buf_reset(t);
  ljm_text_clean(t, raw, strlen(raw), NAME_CLEAN, NAME_MAX_BYTES);
  if (!t->len) ljm_buf_putc(t, '?');
  if (is_func && special_name(ljm_buf_str(t))) ljm_buf_puts(t, " [C]");
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
  char *p = room(h, len + 24), *s = p;
  *p++ = 's';
  *p++ = ' ';
  p = put_hex(p, len);  /* sized string: length in bytes */
  *p++ = ' ';
  memcpy(p, c, len);
  p += len;
  *p++ = '\n';
  h->len += (size_t)(p - s);
  h->se[j] = (SEntry){hv, copy, ++h->nstr};
  h->nse++;
  return h->nstr;
}

/* -- Frames and trace nodes --------------------------------------------- */

static const char *module_of(LjmSiteKind k)
{
  switch (k) {
  case LJM_SITE_LUA: return "[lua]";
  case LJM_SITE_C: return "[C]";
  case LJM_SITE_TRACE: return "[jit trace]";
  default: return "[vm internal]";
  }
}

/* Trace node of a site, writing its strings, frame and node on first use. */
static uint32_t site_trace(Ht *h, const LjmModel *m, uint32_t id, int depth)
{
  if (id >= ljm_model_nsites(m)) return 0;
  if (id >= h->capsite) {
    size_t nc = h->capsite ? h->capsite : 256;
    while (nc <= id) nc *= 2;
    SiteOut *n = realloc(h->site, nc * sizeof *n);
    if (!n) return h->oom = 1, 0;
    memset(n + h->capsite, 0, (nc - h->capsite) * sizeof *n);
    h->site = n;
    h->capsite = nc;
  }
  if (h->site[id].trace) return h->site[id].trace;
  const LjmSite *s = ljm_model_site(m, id);
  uint32_t parent = 0;
  if (s->kind == LJM_SITE_TRACE && depth == 0 && s->trace_start != LJM_NO_SITE &&
      s->trace_start < ljm_model_nsites(m) &&
      ljm_model_site(m, s->trace_start)->kind != LJM_SITE_TRACE)
    parent = site_trace(h, m, s->trace_start, 1);
  uint64_t f[6];
  int n = 0;
  f[n++] = h->nip + 1;  /* the ip: any unique number */
  f[n++] = string_id(h, module_of(s->kind), 0);
  f[n++] = string_id(h, s->func, 1);
  if (s->kind == LJM_SITE_LUA) {
    f[n++] = string_id(h, *s->file ? s->file : *s->chunk ? s->chunk : "?", 0);
    f[n++] = s->line > 0 ? (uint64_t)s->line : 0;
  }
  if (h->oom) return 0;
  rec(h, 'i', n, f);
  h->nip++;
  uint64_t t[2] = {h->nip, parent};
  rec(h, 't', 2, t);
  h->ntrace++;
  return h->site[id].trace = (uint32_t)h->ntrace;
}

/* Index of the allocation info (size, trace), written on first use. */
static inline uint64_t alloc_info(Ht *h, uint64_t size, uint32_t trace)
{
  if (h->nai * 2 + 2 >= h->capai) {
    size_t nc = h->capai ? h->capai * 2 : 64;
    AInfo *n = calloc(nc, sizeof *n);
    if (!n) return h->oom = 1, 0;
    for (size_t i = 0; i < h->capai; i++) {
      if (!h->ai[i].idx1) continue;
      size_t j = mix(h->ai[i].size ^ (uint64_t)h->ai[i].trace << 40) & (nc - 1);
      while (n[j].idx1) j = (j + 1) & (nc - 1);
      n[j] = h->ai[i];
    }
    free(h->ai);
    h->ai = n;
    h->capai = nc;
  }
  size_t j = mix(size ^ (uint64_t)trace << 40) & (h->capai - 1);
  for (; h->ai[j].idx1; j = (j + 1) & (h->capai - 1))
    if (h->ai[j].size == size && h->ai[j].trace == trace) return h->ai[j].idx1 - 1;
  if (h->nai == 0) {  /* dummy index 0, never used by an event */
    uint64_t d[2] = {1, trace};
    rec(h, 'a', 2, d);
    h->nai = 1;
  }
  uint64_t a[2] = {size, trace};
  rec(h, 'a', 2, a);
  h->ai[j] = (AInfo){size, trace, (uint32_t)(h->nai + 1)};
  return h->nai++;
}

/* One '+' or '-' line: the hot path, one per event half. */
static inline void event(Ht *h, const LjmModel *m, char mode, uint32_t site,
                         uint64_t size)
{
  uint64_t idx;
  if (site < h->capsite && h->site[site].last_idx1 && h->site[site].last_size == size) {
    idx = h->site[site].last_idx1 - 1;
  } else {
    uint32_t t = site < h->capsite && h->site[site].trace ? h->site[site].trace
                                                          : site_trace(h, m, site, 0);
    if (!t) return;  /* out of memory: the error is reported at the end */
    idx = alloc_info(h, size, t);
    if (h->oom) return;
    h->site[site].last_size = size;
    h->site[site].last_idx1 = (uint32_t)idx + 1;
  }
  char *p = room(h, 20), *s = p;
  *p++ = mode;
  *p++ = ' ';
  p = put_hex(p, idx);
  *p++ = '\n';
  h->len += (size_t)(p - s);
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
  h->sink = ht_sink_open(out, codec, err, errlen);
  if (!h->sink) {
    free(h);
    return NULL;
  }
  h->buf = ht_sink_buffer(h->sink);
  room(h, 32);
  h->len += (size_t)sprintf(h->buf + h->len, "v 10400 3\n");
  /* 'X' is the rest of the line, not a sized string. */
  const char *in = o->in_path ? o->in_path : "-";
  size_t il = strlen(in);
  LjmBuf src = {0};
  ljm_text_clean(&src, in, il, NAME_CLEAN, 1024);
  if (!src.oom) {
    char *p = room(h, src.len + 48);
    h->len += (size_t)sprintf(p, "X %s (LuaJIT memprof, via ljm convert)\n", ljm_buf_str(&src));
  }
  ljm_buf_free(&src);
  long pg = sysconf(_SC_PAGESIZE), np = sysconf(_SC_PHYS_PAGES);
  uint64_t si[2] = {pg > 0 ? (uint64_t)pg : 4096, np > 0 ? (uint64_t)np : 0};
  rec(h, 'I', 2, si);
  return h;
}

static void ht_on_event(void *st, const LjmModel *m, const LjmLiveEvent *ev)
{
  Ht *h = st;
  if (h->oom) return;
  uint64_t ms = ev->index / EVENTS_PER_MS;
  if (!h->have_c || ms != h->last_ms) {
    rec1(h, 'c', ms);
    h->last_ms = ms;
    h->have_c = 1;
  }
  if (ev->kind != LJM_EV_ALLOC && ev->old_site != LJM_NO_SITE)
    event(h, m, '-', ev->old_site, ev->old_size);
  if (ev->kind != LJM_EV_FREE) {
    if (ev->dropped_site != LJM_NO_SITE)
      event(h, m, '-', ev->dropped_site, ev->dropped_size);
    event(h, m, '+', ev->site, ev->new_size);
  }
}

static void ht_free(Ht *h)
{
  for (size_t i = 0; i < h->capse; i++) free(h->se[i].s);
  free(h->se);
  free(h->ai);
  free(h->site);
  ljm_buf_free(&h->clean);
  free(h);
}

static int ht_finish(void *st, const LjmModel *m, char *err, size_t errlen)
{
  Ht *h = st;
  /* Total runtime is the last time stamp plus 1 ms. */
  rec1(h, 'c', h->have_c ? h->last_ms + 1 : 0);
  char *p = room(h, 64);
  h->len += (size_t)sprintf(p, "# strings: %" PRIx64 "\n# ips: %" PRIx64 "\n",
                            h->nstr, h->nip);
  flush_text(h);
  int rc = ht_sink_close(h->sink, err, errlen);
  if (h->oom && rc == 0) {
    snprintf(err, errlen, "out of memory");
    rc = -1;
  }
  ht_free(h);
  return rc;
}

static const char *const ht_suffixes[] = {".heaptrack.gz", ".heaptrack.zst", NULL};

const LjmExporter ljm_exporter_heaptrack = {
  .name = "heaptrack",
  .summary = "heaptrack data file for heaptrack_print/heaptrack_gui (gzip or zstd by name)",
  .suffixes = ht_suffixes,
  .binary = 1,
  .streaming = 1,
  .begin = ht_begin,
  .on_event = ht_on_event,
  .finish = ht_finish,
};
