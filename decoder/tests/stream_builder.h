/* stream_builder.h -- writes ljm byte streams in tests, one field at a time. */
#ifndef LJM_STREAM_BUILDER_H
#define LJM_STREAM_BUILDER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct Sbuf {
  uint8_t *p;
  size_t n, cap;
} Sbuf;

static inline void sb_byte(Sbuf *b, uint8_t v)
{
  if (b->n == b->cap) {
    b->cap = b->cap ? b->cap * 2 : 256;
    b->p = realloc(b->p, b->cap);
  }
  b->p[b->n++] = v;
}

static inline void sb_uleb(Sbuf *b, uint64_t v)
{
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    sb_byte(b, c | (v ? 0x80 : 0));
  } while (v);
}

static inline void sb_bytes(Sbuf *b, const void *s, size_t len)
{
  for (size_t i = 0; i < len; i++) sb_byte(b, ((const uint8_t *)s)[i]);
}

static inline void sb_str(Sbuf *b, const char *s)
{
  sb_uleb(b, strlen(s));
  sb_bytes(b, s, strlen(s));
}

static inline void sb_prologue(Sbuf *b, const char *magic, int ver)
{
  sb_bytes(b, magic, 3);
  sb_byte(b, (uint8_t)ver);
  sb_bytes(b, "\0\0\0", 3);
}

/* Lua prototype: symtab entry (header 0x00) or event (0x08). */
static inline void sb_proto(Sbuf *b, uint8_t hdr, uint64_t addr, const char *chunk, uint64_t line)
{
  sb_byte(b, hdr);
  sb_uleb(b, addr);
  sb_str(b, chunk);
  sb_uleb(b, line);
}

static inline void sb_cfunc(Sbuf *b, uint8_t hdr, uint64_t addr, const char *name)
{
  sb_byte(b, hdr);
  sb_uleb(b, addr);
  sb_str(b, name);
}

/* Allocation events with a Lua location. */
static inline void sb_alloc_lua(Sbuf *b, uint64_t proto, uint64_t line, uint64_t addr, uint64_t size)
{
  sb_byte(b, 0x09);
  sb_uleb(b, proto);
  sb_uleb(b, line);
  sb_uleb(b, addr);
  sb_uleb(b, size);
}

static inline void sb_free_int(Sbuf *b, uint64_t addr, uint64_t size)
{
  sb_byte(b, 0x06);
  sb_uleb(b, addr);
  sb_uleb(b, size);
}

static inline void sb_realloc_lua(Sbuf *b, uint64_t proto, uint64_t line, uint64_t oaddr,
                                  uint64_t osize, uint64_t naddr, uint64_t nsize)
{
  sb_byte(b, 0x0b);
  sb_uleb(b, proto);
  sb_uleb(b, line);
  sb_uleb(b, oaddr);
  sb_uleb(b, osize);
  sb_uleb(b, naddr);
  sb_uleb(b, nsize);
}

#endif
