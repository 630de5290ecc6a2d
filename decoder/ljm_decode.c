/* ljm_decode.c -- the stream grammar (see ljm_decoder.h) turned into callbacks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljm_decoder.h"
#include "ljm_input.h"
#include "ljm_uleb.h"

#ifndef LJM_DECODE_BUF  /* the fuzz target makes it small: more refills */
#define LJM_DECODE_BUF (256u << 10)
#endif
#define BUF_SIZE LJM_DECODE_BUF
#define EVENT_MAX 64  /* longest event without strings: 1 + 5 numbers of 10 */
#define BATCH 64      /* events handed over at once to on_events */

/* Outcome of one read step; anything but RD_OK ends decoding. */
typedef enum { RD_OK, RD_EOF, RD_ERR } Rd;

typedef struct Dec {
  LjmInput *in;
  uint8_t *buf;
  const uint8_t *p, *end;
  uint64_t base;          /* stream offset of buf[0] */
  int eof;
  LjmDiag *diag;
  char *str;              /* last string read */
  size_t strlen, strcap;
  const LjmCallbacks *cb;
  void *ud;
  int ljs_ver, ljm_ver;
  LjmRawEvent *batch;     /* pending events for on_events */
  size_t nbatch;
  uint64_t item;          /* offset of the item being read */
  const char *what;       /* its description, for truncation messages */
  unsigned flags;         /* extension flags of the event section */
  uint32_t nodes;         /* stack nodes defined so far */
  uint32_t stack;         /* stack of the events that follow */
  uint64_t time;          /* last time mark, or LJM_NO_TIME */
  int nosample;           /* a 0x31 item waits for its reallocation */
  uint32_t labels;        /* label set of the events that follow */
  uint8_t type;           /* TYPES: the last allocation's type */
  uint8_t label_def[LJM_LABEL_SETS / 8 + 1];  /* label sets defined */
} Dec;

static uint64_t dec_off(const Dec *d) { return d->base + (uint64_t)(d->p - d->buf); }

/* Hands pending events over; called before any symbol entry and at the end. */
static void dec_flush(Dec *d)
{
  if (d->nbatch) d->cb->on_events(d->ud, d->batch, d->nbatch);
  d->nbatch = 0;
}

static Rd dec_error(Dec *d, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static Rd dec_error(Dec *d, uint64_t off, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  d->diag->offset = off;
  vsnprintf(d->diag->msg, sizeof(d->diag->msg), fmt, ap);
  va_end(ap);
  return RD_ERR;
}

/* Makes at least n bytes available unless the input ends first; ahead: n
** is a look ahead, not a need, so an input followed while it is written
** (ljm_input_follow) waits only while no byte is there. */
static Rd dec_fill_to(Dec *d, size_t n, int ahead)
{
  if ((size_t)(d->end - d->p) >= n || d->eof) return RD_OK;
  /* Events decoded so far reach the consumer before a read that may wait
  ** (ljm_input_follow) */
  if (d->cb->on_events) dec_flush(d);
  size_t keep = (size_t)(d->end - d->p);
  memmove(d->buf, d->p, keep);
  d->base += (uint64_t)(d->p - d->buf);
  d->p = d->buf;
  d->end = d->buf + keep;
  while ((size_t)(d->end - d->p) < n && !d->eof) {
    ptrdiff_t got = ahead ? ljm_input_read_now(d->in, d->buf + keep, BUF_SIZE - keep, d->diag,
                                               d->base + keep)
                          : LJM_INPUT_AGAIN;
    if (got == LJM_INPUT_AGAIN && ahead && keep > 0) break;
    if (got == LJM_INPUT_AGAIN)
      got = ljm_input_read(d->in, d->buf + keep, BUF_SIZE - keep, d->diag, d->base + keep);
    if (got < 0) return RD_ERR;
    if (got == 0) d->eof = 1;
    keep += (size_t)got;
    d->end = d->buf + keep;
  }
  if (d->cb->on_progress) d->cb->on_progress(d->ud, d->base + keep);
  return RD_OK;
}

static Rd dec_fill(Dec *d, size_t n) { return dec_fill_to(d, n, 0); }
static Rd dec_fill_ahead(Dec *d, size_t n) { return dec_fill_to(d, n, 1); }

static Rd dec_byte(Dec *d, uint8_t *b)
{
  if (d->p == d->end) {
    Rd r = dec_fill(d, 1);
    if (r != RD_OK) return r;
    if (d->p == d->end) return RD_EOF;
  }
  *b = *d->p++;
  return RD_OK;
}

static Rd dec_uleb_slow(Dec *d, uint64_t *v);

/* Callers looked EVENT_MAX bytes ahead: fewer are there only at the end
** of the input, or of what a followed input has so far (the slow path
** then reads on). Most numbers of a stream are one or two bytes: decode those inline. */
static inline __attribute__((always_inline)) Rd dec_uleb(Dec *d, uint64_t *v)
{
  const uint8_t *p = d->p;
  if (d->end - p >= LJM_ULEB_MAX) {  /* no bounds checks needed */
    uint64_t x = p[0] & 0x7f;
    if (!(p[0] & 0x80)) {
      *v = x;
      d->p = p + 1;
      return RD_OK;
    }
    for (int i = 1; i < LJM_ULEB_MAX - 1; i++) {
      x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
      if (!(p[i] & 0x80)) {
        *v = x;
        d->p = p + i + 1;
        return RD_OK;
      }
    }
  }
  return dec_uleb_slow(d, v);  /* 10-byte values, errors, end of input */
}

static Rd dec_uleb_slow(Dec *d, uint64_t *v)
{
  int n = ljm_uleb_decode(d->p, d->end, v);
  if (n > 0) {
    d->p += n;
    return RD_OK;
  }
  /* Short: a string used up the window looked ahead, or the input is
  ** followed and has no more yet: a byte more at a time. */
  while (n == LJM_ULEB_SHORT && !d->eof) {
    Rd r = dec_fill(d, (size_t)(d->end - d->p) + 1);
    if (r != RD_OK) return r;
    if ((n = ljm_uleb_decode(d->p, d->end, v)) > 0) {
      d->p += n;
      return RD_OK;
    }
  }
  if (n == LJM_ULEB_SHORT) return RD_EOF;
  return dec_error(d, dec_off(d), n == LJM_ULEB_TOOLONG
                   ? "ULEB128 number longer than 10 bytes"
                   : "ULEB128 number does not fit in 64 bits");
}

/* Reads len raw bytes into d->str (NUL-terminated, d->strlen). */
static Rd dec_bytes(Dec *d, uint64_t len)
{
  Rd r;
  size_t got = 0;
  while (got < len) {
    if (d->p == d->end) {
      if ((r = dec_fill(d, 1)) != RD_OK) return r;
      if (d->p == d->end) return RD_EOF;
    }
    size_t take = (size_t)(d->end - d->p);
    if (take > len - got) take = (size_t)(len - got);
    if (got + take + 1 > d->strcap) {  /* grow with the data, not the claim */
      size_t cap = d->strcap ? d->strcap : 256;
      while (cap < got + take + 1) cap *= 2;
      char *s = realloc(d->str, cap);
      if (!s) return dec_error(d, dec_off(d), "out of memory for a %llu-byte string",
                               (unsigned long long)len);
      d->str = s;
      d->strcap = cap;
    }
    memcpy(d->str + got, d->p, take);
    d->p += take;
    got += take;
  }
  if (!d->str) {
    d->str = malloc(256);
    if (!d->str) return dec_error(d, dec_off(d), "out of memory");
    d->strcap = 256;
  }
  d->str[got] = '\0';
  d->strlen = got;
  return RD_OK;
}

/* Passes over len bytes. */
static Rd dec_skip(Dec *d, uint64_t len)
{
  while (len) {
    if (d->p == d->end) {
      Rd r = dec_fill(d, 1);
      if (r != RD_OK) return r;
      if (d->p == d->end) return RD_EOF;
    }
    size_t take = (size_t)(d->end - d->p);
    if (take > len) take = (size_t)len;
    d->p += take;
    len -= take;
  }
  return RD_OK;
}

/* Reads a length-prefixed string into d->str (NUL-terminated): its first
** LJM_STRING_MAX bytes, the rest skipped and reported (on_long_string). */
static Rd dec_string(Dec *d)
{
  uint64_t len, at = dec_off(d);
  Rd r = dec_uleb(d, &len);
  if (r != RD_OK) return r;
  if (len <= LJM_STRING_MAX) return dec_bytes(d, len);
  if ((r = dec_bytes(d, LJM_STRING_MAX)) != RD_OK || (r = dec_skip(d, len - LJM_STRING_MAX)) != RD_OK)
    return r;
  if (d->cb->on_long_string) d->cb->on_long_string(d->ud, at, len);
  return RD_OK;
}

#define TRY(x) do { Rd r_ = (x); if (r_ != RD_OK) return r_; } while (0)

/* Prologue: 3 magic bytes, version, 3 reserved bytes. */
static Rd dec_prologue(Dec *d, const char *magic, const char *section, int *ver,
                       unsigned *flags)
{
  d->item = dec_off(d);
  d->what = d->item == 0 ? "the symbol table prologue" : "the event section prologue";
  TRY(dec_fill(d, 7));
  size_t have = (size_t)(d->end - d->p);
  size_t cmp = have < 3 ? have : 3;
  if (memcmp(d->p, magic, cmp) != 0) {
    char shown[16] = "";
    for (size_t i = 0; i < cmp; i++)
      snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown),
               (d->p[i] >= 0x20 && d->p[i] < 0x7f) ? "%c" : "\\x%02x", d->p[i]);
    /* A heap snapshot given where a profile belongs says which command reads it. */
    int snapshot = d->item == 0 && cmp == 3 && !memcmp(d->p, "ljh", 3);
    return dec_error(d, dec_off(d), "bad %s magic '%s' (expected '%s')%s",
                     section, shown, magic,
                     snapshot ? ": a heap snapshot, not an ljm profile ('ljm heap' reads it)"
                     : d->item == 0 ? ": not an ljm profile" : "");
  }
  if (have < 7) return RD_EOF;
  *ver = d->p[3];
  if (*ver < 1 || *ver > 3)
    return dec_error(d, dec_off(d) + 3, "unsupported %s version %d (this tool reads 1 to 3)",
                     section, *ver);
  if (flags) {  /* the event section's extension flags (EXTENSION.md) */
    *flags = d->p[4];
    if (*flags & ~LJM_EXT_KNOWN)
      return dec_error(d, dec_off(d) + 4, "unknown extension flags 0x%02x", *flags);
    if (*flags && *ver != 3)
      return dec_error(d, dec_off(d) + 4, "extension flags in a version %d stream", *ver);
  }
  d->p += 7;
  return RD_OK;
}

static Rd dec_sym_proto(Dec *d, int in_events)
{
  uint64_t addr, line;
  TRY(dec_uleb(d, &addr));
  TRY(dec_string(d));
  TRY(dec_fill_ahead(d, EVENT_MAX));
  TRY(dec_uleb(d, &line));
  if (d->cb->on_proto) d->cb->on_proto(d->ud, addr, d->str, d->strlen, line, in_events);
  return RD_OK;
}

static Rd dec_sym_cfunc(Dec *d, int in_events)
{
  uint64_t addr;
  TRY(dec_uleb(d, &addr));
  TRY(dec_string(d));
  if (d->cb->on_cfunc) d->cb->on_cfunc(d->ud, addr, d->str, d->strlen, in_events);
  return RD_OK;
}

/* ljs v2 traces also carry the machine-code address, which we drop. */
static Rd dec_sym_trace(Dec *d, int with_mcode, int in_events)
{
  uint64_t traceno, mcode, proto, line;
  TRY(dec_uleb(d, &traceno));
  if (with_mcode) TRY(dec_uleb(d, &mcode));
  TRY(dec_uleb(d, &proto));
  TRY(dec_uleb(d, &line));
  if (d->cb->on_trace) d->cb->on_trace(d->ud, traceno, proto, line, in_events);
  return RD_OK;
}

static Rd dec_symtab(Dec *d)
{
  for (;;) {
    d->item = dec_off(d);
    d->what = "a symbol table entry";
    TRY(dec_fill_ahead(d, EVENT_MAX));
    uint8_t h;
    Rd r = dec_byte(d, &h);
    if (r == RD_EOF) {
      d->what = "the symbol table";
      d->item = 7;
    }
    if (r != RD_OK) return r;
    if (h & 0x80) return RD_OK;  /* the reference ends the table at any such byte */
    switch (h & 3) {
    case 0:
      TRY(dec_sym_proto(d, 0));
      break;
    case 1:
      if (d->ljs_ver == 3) TRY(dec_sym_cfunc(d, 0));
      else if (d->ljs_ver == 2) TRY(dec_sym_trace(d, 1, 0));
      else return dec_error(d, d->item, "unknown symbol table entry 0x%02x", h);
      break;
    case 2:
      if (d->ljs_ver != 3)
        return dec_error(d, d->item, "unknown symbol table entry 0x%02x", h);
      TRY(dec_sym_trace(d, 0, 0));
      break;
    default:
      if (d->ljs_ver != 3)
        return dec_error(d, d->item, "unknown symbol table entry 0x%02x", h);
      break;  /* v3: type 3 carries no payload (reference behaviour) */
    }
  }
}

static const char *const event_names[4] = {
  "a symbol event", "an alloc event", "a free event", "a realloc event"
};

/* Checks a header byte against the event stream version; returns its
** source bits (0 for the ignored header 0x00) or -1 (error already set). */
static int dec_header_ok(Dec *d, uint8_t h)
{
  unsigned ev = h & 3, src = h & 0x1c;
  unsigned max = d->ljm_ver == 1 ? 0x0f : 0x13;
  if (h > max) {
    dec_error(d, d->item, "unknown event header 0x%02x", h);
    return -1;
  }
  if (ev == 0) {
    if (d->ljm_ver == 3) return (int)src;  /* symtab event, or ignored 0x00/0x04 */
    dec_error(d, d->item, "unknown event header 0x%02x (no symbol events before version 3)", h);
    return -1;
  }
  if (src == 0) {
    dec_error(d, d->item, "unknown allocation source 0 in event header 0x%02x", h);
    return -1;
  }
  return (int)src;
}

/* One string of a label pair at p: its bytes (at most max) and the bytes
** consumed, or 0 when it is cut or longer. */
static size_t label_str(const uint8_t *p, const uint8_t *end, uint64_t max, LjmLabel *l, int value)
{
  uint64_t len;
  int k = ljm_uleb_decode(p, end, &len);
  if (k <= 0 || len > max || len > (uint64_t)(end - p - k)) return 0;
  if (value) {
    l->value = (const char *)p + k;
    l->vlen = (size_t)len;
  } else {
    l->key = (const char *)p + k;
    l->klen = (size_t)len;
  }
  return (size_t)k + (size_t)len;
}

/* 0x26 len:U set:U (key:S value:S)*: read whole (at most
** LJM_LABEL_ITEM_MAX bytes), then checked. */
static Rd dec_label_set(Dec *d)
{
  uint64_t len, set;
  LjmLabel lab[LJM_LABEL_PAIRS];
  unsigned n = 0;
  int k;
  d->what = "a label set";
  TRY(dec_uleb(d, &len));
  if (len > LJM_LABEL_ITEM_MAX)
    return dec_error(d, d->item, "a label set of %llu bytes (at most %d)",
                     (unsigned long long)len, LJM_LABEL_ITEM_MAX);
  TRY(dec_bytes(d, len));
  const uint8_t *p = (const uint8_t *)d->str, *end = p + len;
  if ((k = ljm_uleb_decode(p, end, &set)) <= 0)
    return dec_error(d, d->item, "a label set without its id");
  p += k;
  if (set < 1 || set > LJM_LABEL_SETS)
    return dec_error(d, d->item, "label set %llu (1..%d)", (unsigned long long)set, LJM_LABEL_SETS);
  if (d->label_def[set / 8] & (1u << (set % 8)))
    return dec_error(d, d->item, "label set %llu defined twice", (unsigned long long)set);
  while (p < end) {
    if (n == LJM_LABEL_PAIRS)
      return dec_error(d, d->item, "label set %llu has more than %d labels",
                       (unsigned long long)set, LJM_LABEL_PAIRS);
    size_t used;
    if (!(used = label_str(p, end, LJM_LABEL_KEY_MAX, &lab[n], 0)))
      return dec_error(d, d->item, "label set %llu: label %u's key is cut or longer than %d bytes",
                       (unsigned long long)set, n + 1, LJM_LABEL_KEY_MAX);
    p += used;
    if (!(used = label_str(p, end, LJM_LABEL_VALUE_MAX, &lab[n], 1)))
      return dec_error(d, d->item, "label set %llu: label %u's value is cut or longer than %d bytes",
                       (unsigned long long)set, n + 1, LJM_LABEL_VALUE_MAX);
    p += used;
    for (unsigned i = 0; i < n; i++)
      if (lab[i].klen == lab[n].klen && !memcmp(lab[i].key, lab[n].key, lab[n].klen))
        return dec_error(d, d->item, "label set %llu: label %u's key is label %u's",
                         (unsigned long long)set, n + 1, i + 1);
    n++;
  }
  d->label_def[set / 8] |= (uint8_t)(1u << (set % 8));
  dec_flush(d);
  if (d->cb->on_label_set) d->cb->on_label_set(d->ud, (uint32_t)set, lab, n);
  return RD_OK;
}

/* One extension item (EXTENSION.md), its header h already read. */
static Rd dec_ext(Dec *d, uint8_t h)
{
  uint64_t a, b;
  switch (h) {
  case 0x20: {  /* stack node: parent frame */
    LjmRawFrame f;
    uint8_t k;
    d->what = "a stack node";
    memset(&f, 0, sizeof(f));
    TRY(dec_uleb(d, &a));
    TRY(dec_byte(d, &k));
    f.kind = (LjmFrameKind)k;
    switch (k) {
    case LJM_FRAME_LUA: TRY(dec_uleb(d, &f.addr)); TRY(dec_uleb(d, &f.line)); break;
    case LJM_FRAME_C: TRY(dec_uleb(d, &f.addr)); break;
    case LJM_FRAME_TRACE: TRY(dec_uleb(d, &f.traceno)); break;
    case LJM_FRAME_RESUME: case LJM_FRAME_TAIL: case LJM_FRAME_CUT: break;
    default: return dec_error(d, d->item, "unknown stack frame kind 0x%02x", k);
    }
    if (a > d->nodes)
      return dec_error(d, d->item, "stack node %u refers to node %llu, not defined before it",
                       d->nodes + 1, (unsigned long long)a);
    if (d->nodes == UINT32_MAX - 1) return dec_error(d, d->item, "too many stack nodes");
    dec_flush(d);  /* events before it are delivered first */
    d->nodes++;
    if (d->cb->on_stack_node) d->cb->on_stack_node(d->ud, d->nodes, (uint32_t)a, &f);
    return RD_OK;
  }
  case 0x21:  /* stack of the events that follow */
    d->what = "a stack selection";
    TRY(dec_uleb(d, &a));
    if (a > d->nodes)
      return dec_error(d, d->item, "stack node %llu is not defined", (unsigned long long)a);
    d->stack = (uint32_t)a;
    return RD_OK;
  case 0x22:  /* time mark */
    d->what = "a time mark";
    TRY(dec_uleb(d, &a));
    if (d->time != LJM_NO_TIME && a < d->time)
      return dec_error(d, d->item, "time goes back from %llu to %llu us",
                       (unsigned long long)d->time, (unsigned long long)a);
    if (a == LJM_NO_TIME) return dec_error(d, d->item, "time mark out of range");
    d->time = a;
    if (d->cb->on_time) {
      dec_flush(d);  /* no call overtakes the events before it */
      d->cb->on_time(d->ud, a);
    }
    return RD_OK;
  case 0x23:  /* RSS sample */
    d->what = "an RSS sample";
    TRY(dec_uleb(d, &b));
    dec_flush(d);
    if (d->cb->on_rss) d->cb->on_rss(d->ud, d->time, b);
    return RD_OK;
  case 0x30:  /* the sampling rate: dec_events reads the one that opens the section */
    return dec_error(d, d->item, "a second sampling rate");
  case 0x31:  /* the next event is a reallocation whose new block is not sampled */
    d->nosample = 1;
    return RD_OK;
  case 0x25: {  /* a prototype's definition name */
    d->what = "a definition name";
    TRY(dec_uleb(d, &a));
    if (a > LJM_NAME_ITEM_MAX)
      return dec_error(d, d->item, "%s of %llu bytes (at most %d)", d->what,
                       (unsigned long long)a, LJM_NAME_ITEM_MAX);
    uint64_t start = dec_off(d), proto;
    TRY(dec_uleb(d, &proto));
    uint64_t used = dec_off(d) - start;
    if (used > a) return dec_error(d, d->item, "definition name item longer than its length");
    TRY(dec_bytes(d, a - used));
    dec_flush(d);
    if (d->cb->on_proto_name) d->cb->on_proto_name(d->ud, proto, d->str, d->strlen);
    return RD_OK;
  }
  case 0x26: return dec_label_set(d);
  case 0x27:
  case 0x28: {  /* labels of the events that follow; sets folded so far */
    d->what = h == 0x27 ? "a label selection" : "a folded-labels count";
    TRY(dec_uleb(d, &a));
    if (a > LJM_LABEL_ITEM_MAX)
      return dec_error(d, d->item, "%s of %llu bytes (at most %d)", d->what,
                       (unsigned long long)a, LJM_LABEL_ITEM_MAX);
    uint64_t start = dec_off(d);
    TRY(dec_uleb(d, &b));
    uint64_t used = dec_off(d) - start;
    if (used > a) return dec_error(d, d->item, "%s longer than its length", d->what);
    TRY(dec_skip(d, a - used));
    if (h == 0x28) {
      dec_flush(d);
      if (d->cb->on_labels_folded) d->cb->on_labels_folded(d->ud, b);
      return RD_OK;
    }
    if (b > LJM_LABEL_SETS || (b && !(d->label_def[b / 8] & (1u << (b % 8)))))
      return dec_error(d, d->item, "label set %llu is not defined", (unsigned long long)b);
    d->labels = (uint32_t)b;
    return RD_OK;
  }
  default: {  /* 0x24 function name, 0x29..0x2F skipped: len, then the body */
    if (h == 0x29 && (d->flags & LJM_EXT_TYPES))
      return dec_error(d, d->item, "an allocation type (0x29) that follows no allocation");
    d->what = h == 0x24 ? "a function name" : "an annotation";
    TRY(dec_uleb(d, &a));
    if (h != 0x24) return dec_skip(d, a);  /* any length: nothing is kept */
    if (a > LJM_NAME_ITEM_MAX)
      return dec_error(d, d->item, "%s of %llu bytes (at most %d)", d->what,
                       (unsigned long long)a, LJM_NAME_ITEM_MAX);
    uint64_t start = dec_off(d);
    uint64_t node, what;
    TRY(dec_uleb(d, &node));
    TRY(dec_uleb(d, &what));
    uint64_t used = dec_off(d) - start;
    if (used > a) return dec_error(d, d->item, "function name item longer than its length");
    if (node == 0 || node > d->nodes)
      return dec_error(d, d->item, "function name of stack node %llu, not defined before it",
                       (unsigned long long)node);
    if (what < LJM_NAME_GLOBAL || what > LJM_NAME_META)
      return dec_error(d, d->item, "unknown kind of function name %llu",
                       (unsigned long long)what);
    TRY(dec_bytes(d, a - used));
    dec_flush(d);
    if (d->cb->on_node_name)
      d->cb->on_node_name(d->ud, (uint32_t)node, (unsigned)what, d->str, d->strlen);
    return RD_OK;
  }
  }
}

/* Is h an extension item the stream's flags allow? */
static int is_ext(const Dec *d, uint8_t h)
{
  if (h == 0x20 || h == 0x21 || h == 0x24) return (d->flags & LJM_EXT_STACKS) != 0;
  if (h == 0x22 || h == 0x23) return (d->flags & LJM_EXT_TIME) != 0;
  if (h == 0x30 || h == 0x31) return (d->flags & LJM_EXT_SAMPLED) != 0;
  return h >= 0x25 && h <= 0x2f && d->flags;  /* later annotations: skipped */
}

const char *ljm_type_name(unsigned type)
{
  static const char *const name[LJM_TYPES] = {
    NULL, "internal", "table", "table.array", "table.hash", "string", "function",
    "upvalue", "prototype", "thread", "thread.stack", "userdata", "cdata", "buffer", "trace",
  };
  return type < LJM_TYPES ? name[type] : NULL;
}

/* One number of an event the fast path reads: 1 to 9 bytes; 0 leaves the
** event to the checked path (10-byte values, and errors). */
static inline __attribute__((always_inline)) int fast_uleb(const uint8_t **pp, uint64_t *v)
{
  const uint8_t *p = *pp;
  uint64_t x = p[0] & 0x7f;
  if (!(p[0] & 0x80)) {
    *v = x;
    *pp = p + 1;
    return 1;
  }
  for (int i = 1; i < LJM_ULEB_MAX - 1; i++) {
    x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *v = x;
      *pp = p + i + 1;
      return 1;
    }
  }
  return 0;
}

/* The fast path of dec_events: while a whole event surely fits in the
** buffer (EVENT_MAX bytes), decodes allocation events (and the stack
** selections between them) straight into the batch with a local cursor, no
** refill checks and no per-field error paths. Stops before anything else
** (other extension items, symbol events, the end marker, bad headers, long
** numbers, undefined nodes), which the checked path then reads;
** so errors are found and worded there, and both paths give the same
** events. */
static void dec_events_fast(Dec *d)
{
  const uint8_t *p = d->p;
  unsigned max = d->ljm_ver == 1 ? 0x0f : 0x13;
  size_t n = d->nbatch;
  LjmRawEvent *out = d->batch;
  uint64_t base = d->base - (uint64_t)(uintptr_t)d->buf;  /* offset of a pointer */
  while ((size_t)(d->end - p) >= EVENT_MAX && n < BATCH) {
    unsigned h = p[0], kind = h & 3, src = h & 0x1c;
    const uint8_t *q = p + 1;
    if (d->nosample && kind != LJM_RAW_REALLOC) break;  /* the checked path says why */
    if (h == 0x21 && (d->flags & LJM_EXT_STACKS)) {  /* stack of the events that follow */
      uint64_t id;
      if (!fast_uleb(&q, &id) || id > d->nodes) break;
      d->stack = (uint32_t)id;
      p = q;
      continue;
    }
    if (h > max || !kind || !src) break;
    LjmRawEvent *ev = &out[n];
    uint64_t a = 0, b = 0, t = 0, oa = 0, os = 0, na = 0, ns = 0, mcode = 0;
    int ok = 1;
    switch (src) {
    case LJM_SRC_LUA: ok = fast_uleb(&q, &a) && fast_uleb(&q, &b); break;
    case LJM_SRC_C: ok = fast_uleb(&q, &a); break;
    case LJM_SRC_TRACE:
      ok = fast_uleb(&q, &t) && (d->ljm_ver != 2 || fast_uleb(&q, &mcode));
      break;
    default: break;
    }
    if (ok && kind != LJM_RAW_ALLOC) ok = fast_uleb(&q, &oa) && fast_uleb(&q, &os);
    if (ok && kind != LJM_RAW_FREE) ok = fast_uleb(&q, &na) && fast_uleb(&q, &ns);
    if (!ok) break;
    /* TYPES: its type may follow, 0x29 1 type as the recorder writes it
    ** (the checked path reads any other), within EVENT_MAX of the header. */
    uint8_t type = 0;
    if (d->flags & LJM_EXT_TYPES && kind != LJM_RAW_FREE) {
      type = kind == LJM_RAW_ALLOC ? d->type : 0;
      if (q[0] == 0x29) {
        if (q[1] != 1 || q[2] < 1 || q[2] >= LJM_TYPES) break;
        type = q[2];
        if (kind == LJM_RAW_ALLOC) d->type = type;
        q += 3;
      }
    }
    ev->kind = (LjmRawKind)kind;
    ev->loc.source = (LjmSource)src;
    ev->loc.addr = a;
    ev->loc.line = b;
    ev->loc.traceno = t;
    ev->oaddr = oa;
    ev->osize = os;
    ev->naddr = na;
    ev->nsize = ns;
    ev->offset = base + (uint64_t)(uintptr_t)p;
    ev->stack = d->stack;
    ev->labels = d->labels;
    ev->time = d->time;
    ev->nosample = d->nosample;
    ev->type = type;
    d->nosample = 0;
    n++;
    p = q;
  }
  if (n > d->nbatch) d->item = out[n - 1].offset;  /* where a stop poll reports */
  d->nbatch = n;
  d->p = p;
}

/* The item that opens a sampled stream's event section: 0x30 rate:U. */
static Rd dec_rate(Dec *d)
{
  uint8_t h;
  uint64_t rate;
  d->item = dec_off(d);
  d->what = "the sampling rate";
  TRY(dec_byte(d, &h));
  if (h != 0x30)
    return dec_error(d, d->item, "a sampled stream starts with its rate (item 0x30), not 0x%02x", h);
  TRY(dec_uleb(d, &rate));
  if (rate < 1 || rate > LJM_SAMPLE_RATE_MAX)
    return dec_error(d, d->item, "sampling rate %llu bytes (1..2^32)", (unsigned long long)rate);
  if (d->cb->on_sample_rate) d->cb->on_sample_rate(d->ud, rate);
  return RD_OK;
}

/* TYPES: the allocation type that may follow event ev (0x29 type:U). The
** event is not in the batch yet: a read that flushes it does not hand it
** over without its type. */
static Rd dec_type(Dec *d, LjmRawEvent *ev)
{
  ev->type = ev->kind == LJM_RAW_ALLOC ? d->type : 0;
  d->what = "an allocation type";
  if (d->p == d->end) {
    Rd r = dec_fill_ahead(d, 1);
    if (r != RD_OK) return r;
    if (d->p == d->end) return RD_OK;  /* the input ends after the event */
  }
  if (*d->p != 0x29) return RD_OK;
  uint64_t item = dec_off(d), len, t;
  d->item = item;
  d->p++;
  TRY(dec_uleb(d, &len));
  if (len < 1 || len > LJM_TYPE_ITEM_MAX)
    return dec_error(d, item, "an allocation type item of %llu bytes (1 to %d)",
                     (unsigned long long)len, LJM_TYPE_ITEM_MAX);
  uint64_t start = dec_off(d);
  TRY(dec_uleb(d, &t));
  uint64_t used = dec_off(d) - start;
  if (used > len) return dec_error(d, item, "an allocation type item longer than its length");
  TRY(dec_skip(d, len - used));
  if (t < 1 || t >= LJM_TYPES)
    return dec_error(d, item, "unknown allocation type %llu", (unsigned long long)t);
  ev->type = (uint8_t)t;
  if (ev->kind == LJM_RAW_ALLOC) d->type = (uint8_t)t;
  return RD_OK;
}

static Rd dec_events(Dec *d)
{
  for (;;) {
    if (d->batch) {
      dec_events_fast(d);
      if (d->nbatch == BATCH) {
        dec_flush(d);
        if (d->cb->stopped && d->cb->stopped(d->ud))
          return dec_error(d, d->item, "decoding stopped by the consumer");
        continue;
      }
    }
    d->item = dec_off(d);
    d->what = "an event";
    TRY(dec_fill_ahead(d, EVENT_MAX));
    uint8_t h;
    Rd r = dec_byte(d, &h);
    if (r == RD_EOF) {
      d->what = NULL;  /* clean cut between events: no epilogue */
      return RD_EOF;
    }
    if (r != RD_OK) return r;
    if (d->nosample && ((h & 3) != LJM_RAW_REALLOC || is_ext(d, h)))
      return dec_error(d, d->item, "item 0x31 (an unsampled reallocation) not followed by a "
                       "reallocation event");
    if (h == 0x80) return RD_OK;
    if (is_ext(d, h)) {
      TRY(dec_ext(d, h));
      continue;
    }
    int src = dec_header_ok(d, h);
    if (src < 0) return RD_ERR;
    d->what = event_names[h & 3];
    if ((h & 3) == 0) {
      dec_flush(d);
      if (src == LJM_SRC_LUA) TRY(dec_sym_proto(d, 1));
      else if (src == LJM_SRC_C) TRY(dec_sym_cfunc(d, 1));
      else if (src == LJM_SRC_TRACE) TRY(dec_sym_trace(d, 0, 1));
      continue;  /* 0x00 and 0x04: ignored, as the reference does */
    }
    LjmRawEvent ev0, *ev = d->batch ? &d->batch[d->nbatch] : &ev0;
    memset(ev, 0, sizeof(*ev));
    ev->kind = (LjmRawKind)(h & 3);
    ev->offset = d->item;
    ev->stack = d->stack;
    ev->labels = d->labels;
    ev->time = d->time;
    ev->nosample = d->nosample;
    d->nosample = 0;
    ev->loc.source = (LjmSource)src;
    switch (src) {
    case LJM_SRC_LUA:
      TRY(dec_uleb(d, &ev->loc.addr));
      TRY(dec_uleb(d, &ev->loc.line));
      break;
    case LJM_SRC_C:
      TRY(dec_uleb(d, &ev->loc.addr));
      break;
    case LJM_SRC_TRACE: {
      TRY(dec_uleb(d, &ev->loc.traceno));
      if (d->ljm_ver == 2) {
        uint64_t mcode;
        TRY(dec_uleb(d, &mcode));
      }
      break;
    }
    default:
      break;
    }
    if (ev->kind != LJM_RAW_ALLOC) {
      TRY(dec_uleb(d, &ev->oaddr));
      TRY(dec_uleb(d, &ev->osize));
    }
    /* TYPES: a bad or cut type item is said after its event is delivered */
    Rd typed = RD_OK;
    if (ev->kind != LJM_RAW_FREE) {
      TRY(dec_uleb(d, &ev->naddr));
      TRY(dec_uleb(d, &ev->nsize));
      if (d->flags & LJM_EXT_TYPES) typed = dec_type(d, ev);
    }
    if (d->batch) {
      if (++d->nbatch < BATCH && typed == RD_OK) continue;
      dec_flush(d);
    } else if (d->cb->on_event) {
      d->cb->on_event(d->ud, ev);
    }
    if (typed != RD_OK) return typed;
    if (d->cb->stopped && d->cb->stopped(d->ud))
      return dec_error(d, d->item, "decoding stopped by the consumer");
  }
}

static uint64_t dec_count_rest(Dec *d)
{
  uint64_t n = 0;
  for (;;) {
    n += (uint64_t)(d->end - d->p);
    d->p = d->end;
    if (d->eof || dec_fill(d, 1) != RD_OK || d->p == d->end) return n;
  }
}

LjmStatus ljm_decode(LjmInput *in, const LjmCallbacks *cb, void *ud,
                     LjmDiag *diag, uint64_t *bytes, uint64_t *trailing)
{
  static const LjmCallbacks none;
  LjmDiag scratch;
  Dec d;
  memset(&d, 0, sizeof(d));
  d.in = in;
  d.cb = cb ? cb : &none;
  d.ud = ud;
  d.diag = diag ? diag : &scratch;
  memset(d.diag, 0, sizeof(*d.diag));
  d.buf = malloc(BUF_SIZE);
  if (d.cb->on_events) d.batch = malloc(BATCH * sizeof(LjmRawEvent));
  if (!d.buf || (d.cb->on_events && !d.batch)) {
    free(d.buf);
    snprintf(d.diag->msg, sizeof(d.diag->msg), "out of memory");
    return LJM_ERROR;
  }
  d.p = d.end = d.buf;
  d.time = LJM_NO_TIME;
  d.type = LJM_TYPE_INTERNAL;
  if (trailing) *trailing = 0;

  Rd r = dec_prologue(&d, "ljs", "symbol table", &d.ljs_ver, NULL);
  if (r == RD_EOF && d.end == d.buf) {
    r = dec_error(&d, 0, "empty input: not an ljm profile");
  }
  if (r == RD_OK) r = dec_symtab(&d);
  if (r == RD_OK) r = dec_prologue(&d, "ljm", "event section", &d.ljm_ver, &d.flags);
  /* Writers bumped both sections together; the v2 symtab layout read here
  ** (traces with a machine-code address) only ever preceded ljm v2. */
  if (r == RD_OK && d.ljs_ver != d.ljm_ver)
    r = dec_error(&d, dec_off(&d) - 4,
                  "event section version %d does not go with symbol table version %d",
                  d.ljm_ver, d.ljs_ver);
  if (r == RD_OK && d.cb->on_versions) d.cb->on_versions(d.ud, d.ljs_ver, d.ljm_ver);
  if (r == RD_OK && d.cb->on_flags) d.cb->on_flags(d.ud, d.flags);
  if (r == RD_OK && (d.flags & LJM_EXT_SAMPLED)) r = dec_rate(&d);
  if (r == RD_OK) r = dec_events(&d);
  dec_flush(&d);  /* events before an error or a cut are delivered too */

  LjmStatus st = LJM_OK;
  uint64_t end = dec_off(&d);
  if (r == RD_OK) {
    ljm_input_stop_following(in);
    if (trailing) *trailing = dec_count_rest(&d);
  } else if (r == RD_EOF) {
    end = d.base + (uint64_t)(d.end - d.buf);
    d.diag->offset = end;
    if (d.what)
      snprintf(d.diag->msg, sizeof(d.diag->msg), "stream stops inside %s that starts at byte %llu",
               d.what, (unsigned long long)d.item);
    else
      snprintf(d.diag->msg, sizeof(d.diag->msg), "stream stops without its 0x80 end marker");
    st = LJM_TRUNCATED;
  } else {
    st = LJM_ERROR;
  }
  if (bytes) *bytes = end;
  free(d.buf);
  free(d.batch);
  free(d.str);
  return st;
}

void ljm_diag_format(const LjmDiag *d, const char *path, char *buf, size_t len)
{
  snprintf(buf, len, "%s: byte %llu: %s", path, (unsigned long long)d->offset, d->msg);
}
