/* gen_out.c -- buffered byte writer (see gen_out.h). */
#include "bench/gen_out.h"

#include <string.h>

int gen_out_open(GenOut *o, const char *path)
{
  o->len = 0;
  o->total = 0;
  o->err = 0;
  if (strcmp(path, "-") == 0) {
    o->f = stdout;
    o->own = 0;
    return 0;
  }
  o->f = fopen(path, "wb");
  o->own = 1;
  return o->f ? 0 : -1;
}

void gen_out_flush(GenOut *o)
{
  if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len) o->err = 1;
  o->len = 0;
}

void gen_out_bytes(GenOut *o, const void *p, size_t n)
{
  const unsigned char *s = p;
  while (n) {
    if (o->len == GEN_OUT_CAP) gen_out_flush(o);
    size_t k = GEN_OUT_CAP - o->len;
    if (k > n) k = n;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    o->total += k;
    s += k;
    n -= k;
  }
}

int gen_out_close(GenOut *o)
{
  gen_out_flush(o);
  if (fflush(o->f) != 0) o->err = 1;
  if (o->own && fclose(o->f) != 0) o->err = 1;
  return o->err ? -1 : 0;
}
