/* gen_out.h -- buffered byte writer for the benchmark stream generator.
**
** The generator writes tens of millions of tiny fields; going through stdio
** per byte would dominate its run time, so fields are encoded straight into
** a large buffer that is flushed with one fwrite when nearly full.
*/
#ifndef GEN_OUT_H
#define GEN_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GEN_OUT_CAP (1u << 20)
#define GEN_OUT_SLACK 64  /* room for one whole event without a check */

typedef struct GenOut {
  FILE *f;
  int own;              /* 1: f was opened here and is closed by gen_out_close */
  int err;              /* 1: a write failed */
  size_t len;
  uint64_t total;       /* bytes written so far (flushed or buffered) */
  unsigned char buf[GEN_OUT_CAP];
} GenOut;

/* Opens path ("-": stdout). Returns 0, or -1 with errno set. */
int gen_out_open(GenOut *o, const char *path);
/* Writes the buffer out. */
void gen_out_flush(GenOut *o);
/* Flushes and closes. Returns 0, or -1 if any write failed. */
int gen_out_close(GenOut *o);
/* Raw bytes of any length. */
void gen_out_bytes(GenOut *o, const void *p, size_t n);

/* Makes room for one event (at most GEN_OUT_SLACK bytes). */
static inline void gen_out_reserve(GenOut *o)
{
  if (o->len + GEN_OUT_SLACK > GEN_OUT_CAP) gen_out_flush(o);
}

static inline void gen_out_byte(GenOut *o, unsigned b)
{
  o->buf[o->len++] = (unsigned char)b;
  o->total++;
}

/* Minimal ULEB128, as the LuaJIT writer emits it. */
static inline void gen_out_uleb(GenOut *o, uint64_t v)
{
  size_t start = o->len;
  while (v >= 0x80) {
    o->buf[o->len++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  o->buf[o->len++] = (unsigned char)v;
  o->total += o->len - start;
}

/* ULEB length + raw bytes. */
static inline void gen_out_str(GenOut *o, const char *s, size_t n)
{
  gen_out_reserve(o);
  gen_out_uleb(o, n);
  gen_out_bytes(o, s, n);
}

#endif
