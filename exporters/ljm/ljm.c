/* ljm.c -- the standard stream of an extended one (decoder/EXTENSION.md,
** "Downgrade"), which Tarantool's parser reads.
**
** Decodes the stream and writes back every symbol entry and event the way
** the reference writer encodes them (minimal ULEB128s), without extension
** items and with the flags byte 0. Items a reader ignores (headers 0x00 and
** 0x04, symbol type 3) carry nothing and are dropped. Only version 3
** streams; a standard stream comes out as it went in. A sampled stream's
** events are written as they are (raw samples; a reallocation whose new
** block left the sample as a free), and the note says so.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/ljm_exporter.h"

#define OUT_BUF (64u << 10)

typedef struct Dg {
  FILE *out;
  uint8_t buf[OUT_BUF];
  size_t len;
  int started;        /* the ljs prologue is out */
  int in_events;      /* the ljm prologue is out */
  int werr;           /* errno of a failed write */
  int bad_version;    /* not a version 3 stream */
  uint64_t rate;      /* a sampled stream's rate, else 0 */
} Dg;

static void dg_flush(Dg *g)
{
  errno = 0;
  if (g->len && !g->werr && fwrite(g->buf, 1, g->len, g->out) != g->len)
    g->werr = errno ? errno : EIO;
  g->len = 0;
}

static void put(Dg *g, const void *p, size_t n)
{
  const uint8_t *s = p;
  while (n) {
    if (g->len == OUT_BUF) dg_flush(g);
    size_t k = OUT_BUF - g->len < n ? OUT_BUF - g->len : n;
    memcpy(g->buf + g->len, s, k);
    g->len += k;
    s += k;
    n -= k;
  }
}

static void byte(Dg *g, uint8_t b) { put(g, &b, 1); }

static void uleb(Dg *g, uint64_t v)
{
  uint8_t b[10];
  size_t n = 0;
  do {
    b[n] = v & 0x7f;
    v >>= 7;
    if (v) b[n] |= 0x80;
    n++;
  } while (v);
  put(g, b, n);
}

static void str(Dg *g, const char *s, size_t len)
{
  uleb(g, len);
  put(g, s, len);
}

static void start(Dg *g)
{
  static const uint8_t ljs[] = { 'l', 'j', 's', 3, 0, 0, 0 };
  if (!g->started) put(g, ljs, sizeof(ljs));
  g->started = 1;
}

static void on_versions(void *ud, int ljs, int ljm)
{
  Dg *g = ud;
  static const uint8_t ljm_prologue[] = { 'l', 'j', 'm', 3, 0, 0, 0 };
  if (ljs != 3 || ljm != 3) {
    g->bad_version = 1;
    return;
  }
  start(g);
  byte(g, 0x80);  /* end of the symbol table */
  put(g, ljm_prologue, sizeof(ljm_prologue));
  g->in_events = 1;
}

static void on_proto(void *ud, uint64_t addr, const char *chunk, size_t len,
                     uint64_t firstline, int in_events)
{
  Dg *g = ud;
  start(g);
  byte(g, in_events ? 0x08 : 0x00);
  uleb(g, addr);
  str(g, chunk, len);
  uleb(g, firstline);
}

static void on_cfunc(void *ud, uint64_t addr, const char *name, size_t len, int in_events)
{
  Dg *g = ud;
  start(g);
  byte(g, in_events ? 0x0C : 0x01);
  uleb(g, addr);
  str(g, name, len);
}

static void on_trace(void *ud, uint64_t traceno, uint64_t proto, uint64_t line,
                     int in_events)
{
  Dg *g = ud;
  start(g);
  byte(g, in_events ? 0x10 : 0x02);
  uleb(g, traceno);
  uleb(g, proto);
  uleb(g, line);
}

static void on_event(void *ud, const LjmRawEvent *ev)
{
  Dg *g = ud;
  if (ev->nosample) {  /* the new block left the sample: a free of the old one */
    LjmRawEvent f = *ev;
    f.kind = LJM_RAW_FREE;
    f.nosample = 0;
    on_event(ud, &f);
    return;
  }
  byte(g, (uint8_t)(ev->kind | ev->loc.source));
  switch (ev->loc.source) {
  case LJM_SRC_LUA: uleb(g, ev->loc.addr); uleb(g, ev->loc.line); break;
  case LJM_SRC_C: uleb(g, ev->loc.addr); break;
  case LJM_SRC_TRACE: uleb(g, ev->loc.traceno); break;
  default: break;
  }
  if (ev->kind != LJM_RAW_ALLOC) {
    uleb(g, ev->oaddr);
    uleb(g, ev->osize);
  }
  if (ev->kind != LJM_RAW_FREE) {
    uleb(g, ev->naddr);
    uleb(g, ev->nsize);
  }
}

static void on_sample_rate(void *ud, uint64_t rate)
{
  ((Dg *)ud)->rate = rate;
}

static int stopped(void *ud)
{
  const Dg *g = ud;
  return g->bad_version || g->werr;
}

static LjmStatus ljm_write(LjmInput *in, const LjmExportOptions *o, FILE *out, LjmDiag *diag,
                           int *werr, char *note, size_t notelen)
{
  static Dg zero;
  *werr = 0;
  if (notelen) *note = 0;
  Dg *g = malloc(sizeof(*g));
  if (!g) {
    diag->offset = 0;
    snprintf(diag->msg, sizeof(diag->msg), "out of memory");
    return LJM_ERROR;
  }
  *g = zero;
  g->out = out;
  LjmCallbacks cb;
  memset(&cb, 0, sizeof(cb));
  cb.on_versions = on_versions;
  cb.on_proto = on_proto;
  cb.on_cfunc = on_cfunc;
  cb.on_trace = on_trace;
  cb.on_event = on_event;
  cb.stopped = stopped;
  cb.on_sample_rate = on_sample_rate;
  LjmStatus st = ljm_decode(in, &cb, g, diag, NULL, NULL);
  if (g->rate)
    snprintf(note, notelen, "%s is a sampled recording (one byte in %llu): the standard stream "
             "holds its raw samples, not estimates", o->in_path, (unsigned long long)g->rate);
  if (g->bad_version) {
    diag->offset = 3;
    snprintf(diag->msg, sizeof(diag->msg),
             "only version 3 streams are written as ljm (this one is older)");
    st = LJM_ERROR;
  } else if (st == LJM_OK) {
    byte(g, 0x80);  /* the end marker; a cut stream stays cut */
  }
  dg_flush(g);
  if (g->werr) {
    snprintf(diag->msg, sizeof(diag->msg), "write failed: %s", strerror(g->werr));
    st = LJM_ERROR;
  }
  *werr = g->werr;
  free(g);
  return st;
}

const LjmExporter ljm_exporter_ljm = {
  .name = "ljm", .command = "convert", .reads = LJM_READS_PROFILE,
  .summary = "the standard stream of an extended one (ljm record --stacks)",
  .suffixes = (const char *const[]){".ljm", NULL}, .binary = 1, .write_stream = ljm_write,
};
