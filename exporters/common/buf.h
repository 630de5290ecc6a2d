/* buf.h -- a growable byte buffer for exporters that build text in memory. */
#ifndef LJM_EXPORTERS_BUF_H
#define LJM_EXPORTERS_BUF_H

#include <stddef.h>
#include <stdint.h>

/* A failed allocation sets 'oom' and turns later appends into no-ops, so
** callers check once at the end instead of after every append. */
typedef struct LjmBuf {
  char *p;      /* bytes, NUL-terminated while len < cap */
  size_t len;   /* bytes used */
  size_t cap;   /* bytes allocated */
  int oom;      /* an allocation failed */
} LjmBuf;

/* Appends len bytes. */
void ljm_buf_put(LjmBuf *b, const void *s, size_t len);
/* Appends a NUL-terminated string. */
void ljm_buf_puts(LjmBuf *b, const char *s);
/* Appends one byte. */
void ljm_buf_putc(LjmBuf *b, char c);
/* Appends printf-style text. */
void ljm_buf_printf(LjmBuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Empties the buffer, keeping its memory. */
void ljm_buf_reset(LjmBuf *b);
/* The bytes as a C string ("" while nothing was allocated). */
const char *ljm_buf_str(const LjmBuf *b);
/* Frees the bytes and resets the buffer; the struct itself is the caller's. */
void ljm_buf_free(LjmBuf *b);

#endif
