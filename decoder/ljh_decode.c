/* ljh_decode.c -- streaming decoder of heap snapshots (ljh_decoder.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ljh_decoder.h"
#include "ljm_input.h"
#include "ljm_uleb.h"

#define BUF (64u << 10)
#define STR_MAX (1u << 20)  /* longest label or edge name accepted */

typedef struct Rd {
  LjmInput *in;
  LjmDiag *diag;
  uint8_t buf[BUF];
  size_t pos, len;
  uint64_t base;   /* stream offset of buf[0] */
  int eof, err;
  /* The object being read: its edges and their names. */
  LjhEdge *edges;
  size_t nedges, capedges;
  char *text;
  size_t ntext, captext;
} Rd;

static uint64_t offset(const Rd *r) { return r->base + r->pos; }

static int fill(Rd *r)
{
  if (r->eof || r->err) return 0;
  r->base += r->pos;
  memmove(r->buf, r->buf + r->pos, r->len - r->pos);
  r->len -= r->pos;
  r->pos = 0;
  ptrdiff_t n = ljm_input_read(r->in, r->buf + r->len, BUF - r->len, r->diag, r->base + r->len);
  if (n < 0) {
    r->err = 1;
    return 0;
  }
  if (n == 0) r->eof = 1;
  r->len += (size_t)n;
  return n > 0;
}

static int bad(Rd *r, const char *msg)
{
  if (!r->err) {
    r->err = 1;
    r->diag->offset = offset(r);
    snprintf(r->diag->msg, sizeof(r->diag->msg), "%s", msg);
  }
  return -1;
}

/* An impossible figure (worded as the ljm reader words them): the error is
** at the number's own offset. */
static int impossible(Rd *r, uint64_t at, const char *fmt, uint64_t v)
{
  if (!r->err) {
    r->err = 1;
    r->diag->offset = at;
    snprintf(r->diag->msg, sizeof(r->diag->msg), fmt, (unsigned long long)v);
  }
  return -1;
}

/* 1 with a byte, 0 at the end of input, -1 on error. */
static int get_byte(Rd *r, uint8_t *b)
{
  if (r->pos == r->len && !fill(r)) return r->err ? -1 : 0;
  *b = r->buf[r->pos++];
  return 1;
}

static int get_uleb(Rd *r, uint64_t *v)
{
  if (r->len - r->pos < LJM_ULEB_MAX) fill(r);
  if (r->err) return -1;
  int n = ljm_uleb_decode(r->buf + r->pos, r->buf + r->len, v);
  if (n == LJM_ULEB_SHORT) return 0;
  if (n < 0) return bad(r, "bad ULEB128 number");
  r->pos += (size_t)n;
  return 1;
}

/* A string appended to the object's text; *at its offset. */
static int get_str(Rd *r, size_t *at, size_t *len)
{
  uint64_t n;
  int k = get_uleb(r, &n);
  if (k <= 0) return k;
  if (n > STR_MAX) return bad(r, "string longer than 1 MiB");
  if (r->ntext + n + 1 > r->captext) {
    size_t cap = r->captext ? r->captext : 4096;
    while (cap < r->ntext + n + 1) cap *= 2;
    char *t = realloc(r->text, cap);
    if (!t) return bad(r, "out of memory");
    r->text = t;
    r->captext = cap;
  }
  *at = r->ntext;
  *len = (size_t)n;
  for (size_t i = 0; i < n; i++) {
    if (r->pos == r->len && !fill(r)) return r->err ? -1 : 0;
    r->text[r->ntext++] = (char)r->buf[r->pos++];
  }
  r->text[r->ntext++] = '\0';
  return 1;
}

/* One edge into r->edges; names are offsets until the object is whole. */
static int get_edge(Rd *r)
{
  uint8_t kind;
  int k = get_byte(r, &kind);
  if (k <= 0) return k;
  if (r->nedges == r->capedges) {
    size_t cap = r->capedges ? r->capedges * 2 : 64;
    LjhEdge *e = realloc(r->edges, cap * sizeof(*e));
    if (!e) return bad(r, "out of memory");
    r->edges = e;
    r->capedges = cap;
  }
  LjhEdge *e = &r->edges[r->nedges];
  memset(e, 0, sizeof(*e));
  e->kind = kind & 0x7f;
  e->weak = (kind & LJH_EDGE_WEAK) != 0;
  if (e->kind < LJH_EDGE_NAME || e->kind > LJH_EDGE_KEY) {
    r->pos--;
    return bad(r, "unknown edge kind");
  }
  if ((k = get_uleb(r, &e->target)) <= 0) return k;
  if (e->kind == LJH_EDGE_NAME) {
    size_t at;
    if ((k = get_str(r, &at, &e->len)) <= 0) return k;
    e->name = (const char *)(uintptr_t)at;
  } else if (e->kind != LJH_EDGE_KEY) {
    if ((k = get_uleb(r, &e->key)) <= 0) return k;
  }
  r->nedges++;
  return 1;
}

const char *ljh_type_name(LjhType t)
{
  static const char *const names[LJH_NTYPES] = {
    "?", "root", "string", "table", "function", "C function", "prototype", "upvalue",
    "thread", "userdata", "cdata", "trace", "VM internal",
  };
  return (unsigned)t < LJH_NTYPES ? names[t] : "?";
}

static LjmStatus finish(Rd *r, LjmStatus st)
{
  free(r->edges);
  free(r->text);
  free(r);
  return st;
}

int ljh_sniff(const char *path)
{
  LjmDiag d;
  uint8_t magic[3];
  size_t got = 0;
  struct stat st;
  /* A pipe or FIFO (<(...)) cannot be read twice: only regular files. */
  if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode)) return 0;
  LjmInput *in = ljm_input_open(path, &d);
  if (!in) return 0;
  ljm_input_small_reads(in);
  while (got < sizeof(magic)) {
    ptrdiff_t k = ljm_input_read(in, magic + got, sizeof(magic) - got, &d, got);
    if (k <= 0) break;
    got += (size_t)k;
  }
  ljm_input_close(in);
  return got == sizeof(magic) && !memcmp(magic, "ljh", 3);
}

LjmStatus ljh_decode(LjmInput *in, const LjhCallbacks *cb, void *ud, LjmDiag *diag)
{
  LjmDiag scratch;
  if (!diag) diag = &scratch;
  memset(diag, 0, sizeof(*diag));
  Rd *r = calloc(1, sizeof(*r));
  if (!r) {
    snprintf(diag->msg, sizeof(diag->msg), "out of memory");
    return LJM_ERROR;
  }
  r->in = in;
  r->diag = diag;
  uint8_t magic[4];
  for (int i = 0; i < 4; i++) {
    int k = get_byte(r, &magic[i]);
    if (k < 0) return finish(r, LJM_ERROR);
    if (k == 0) {
      diag->offset = offset(r);
      snprintf(diag->msg, sizeof(diag->msg), "not a heap snapshot (too short)");
      return finish(r, LJM_ERROR);
    }
  }
  if (memcmp(magic, "ljh", 3)) {
    diag->offset = 0;
    snprintf(diag->msg, sizeof(diag->msg), "%s",
             memcmp(magic, "ljs", 3) ? "not a heap snapshot (no \"ljh\" magic)"
             : "not a heap snapshot: an ljm profile ('ljm report' and 'ljm convert' read it)");
    return finish(r, LJM_ERROR);
  }
  if (magic[3] != 1 && magic[3] != 2) {
    diag->offset = 3;
    snprintf(diag->msg, sizeof(diag->msg), "heap snapshot version %u (this ljm reads 1 and 2)",
             magic[3]);
    return finish(r, LJM_ERROR);
  }
  size_t at, len;
  uint64_t total, sum = 0, size_at;
  int k;
  if ((k = get_str(r, &at, &len)) <= 0) goto stop;
  size_at = offset(r);
  if ((k = get_uleb(r, &total)) <= 0) goto stop;
  if (total > LJH_TOTAL_MAX) {
    k = impossible(r, size_at, "impossible GC total %llu (above 2^62 bytes)", total);
    goto stop;
  }
  if (cb->header) cb->header(ud, r->text + at, len, total);
  if (magic[3] >= 2) {  /* the process's figures */
    uint64_t nf, v;
    size_at = offset(r);
    if ((k = get_uleb(r, &nf)) <= 0) goto stop;
    if (nf > LJH_FIELDS_MAX) {
      k = impossible(r, size_at, "%llu process figures (at most 64)", nf);
      goto stop;
    }
    for (uint64_t i = 0; i < nf; i++) {
      r->ntext = 0;
      if ((k = get_str(r, &at, &len)) <= 0) goto stop;
      size_at = offset(r);
      if ((k = get_uleb(r, &v)) <= 0) goto stop;
      if (v > LJH_TOTAL_MAX) {
        k = impossible(r, size_at, "impossible process figure %llu (above 2^62 bytes)", v);
        goto stop;
      }
      if (cb->field) cb->field(ud, r->text + at, len, v);
    }
  }
  for (int first = 1;; first = 0) {
    uint64_t addr, size, n;
    uint8_t type;
    r->ntext = r->nedges = 0;
    if ((k = get_byte(r, &type)) <= 0) goto stop;
    if (type == 0) {
      if (first) {
        r->pos--;
        k = bad(r, "snapshot without its root");
        goto stop;
      }
      return finish(r, LJM_OK);
    }
    if (type >= LJH_NTYPES || (first != (type == LJH_ROOT))) {
      r->pos--;
      k = bad(r, first ? "snapshot without its root" : "unknown object type");
      goto stop;
    }
    if ((k = get_uleb(r, &addr)) <= 0) goto stop;
    size_at = offset(r);
    if ((k = get_uleb(r, &size)) <= 0) goto stop;
    /* Bounded here, so that no sum a reader makes of sizes can wrap. */
    if (size > LJH_SIZE_MAX) {
      k = impossible(r, size_at, "impossible object size %llu (above 2^56 bytes)", size);
      goto stop;
    }
    sum += size;  /* <= 2^62 + 2^56: cannot wrap */
    if (sum > LJH_TOTAL_MAX) {
      k = impossible(r, size_at, "object sizes add up to %llu, above 2^62: impossible", sum);
      goto stop;
    }
    if ((k = get_str(r, &at, &len)) <= 0 || (k = get_uleb(r, &n)) <= 0) goto stop;
    for (uint64_t i = 0; i < n; i++)
      if ((k = get_edge(r)) <= 0) goto stop;
    for (size_t i = 0; i < r->nedges; i++)
      if (r->edges[i].kind == LJH_EDGE_NAME)
        r->edges[i].name = r->text + (size_t)(uintptr_t)r->edges[i].name;
    if (cb->object) cb->object(ud, (LjhType)type, addr, size, r->text + at, len, r->edges, r->nedges);
  }
stop:
  if (k < 0) return finish(r, LJM_ERROR);
  diag->offset = offset(r);
  snprintf(diag->msg, sizeof(diag->msg), "snapshot stops before its end byte");
  return finish(r, LJM_TRUNCATED);
}
