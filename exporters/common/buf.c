/* buf.c -- a growable byte buffer for exporters that build text in memory. */
#include "exporters/common/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for 'more' bytes plus a NUL; returns 0 on failure. */
static int buf_reserve(LjmBuf *b, size_t more)
{
  if (b->oom) return 0;
  if (b->len + more < b->cap) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap <= b->len + more) {
    if (cap > SIZE_MAX / 2) { b->oom = 1; return 0; }
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (!p) { b->oom = 1; return 0; }
  b->p = p;
  b->cap = cap;
  return 1;
}

void ljm_buf_put(LjmBuf *b, const void *s, size_t len)
{
  if (!buf_reserve(b, len)) return;
  if (len) memcpy(b->p + b->len, s, len);
  b->len += len;
  b->p[b->len] = '\0';
}

void ljm_buf_puts(LjmBuf *b, const char *s) { ljm_buf_put(b, s, strlen(s)); }

void ljm_buf_putc(LjmBuf *b, char c) { ljm_buf_put(b, &c, 1); }

void ljm_buf_printf(LjmBuf *b, const char *fmt, ...)
{
  char small[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if (n < 0) { b->oom = 1; return; }
  if ((size_t)n < sizeof(small)) { ljm_buf_put(b, small, (size_t)n); return; }
  if (!buf_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void ljm_buf_reset(LjmBuf *b)
{
  b->len = 0;
  if (b->p) b->p[0] = '\0';
}

const char *ljm_buf_str(const LjmBuf *b) { return b->p ? b->p : ""; }

void ljm_buf_free(LjmBuf *b)
{
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}
