/* ht_text.h -- the text of a heaptrack data file, built in the sink's buffers.
**
** Lines are formatted straight into the buffer the sink (ht_sink.h) hands
** out; a full buffer is submitted for compression and the next one filled.
** Numbers are lowercase hex without a prefix: heaptrack rejects anything else.
*/
#ifndef HT_TEXT_H
#define HT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/heaptrack/ht_sink.h"

typedef struct HtText {
  HtSink *sink;
  char *buf;          /* buffer being filled (HT_SINK_CHUNK bytes) */
  size_t len;         /* bytes used */
  uint64_t flushes;   /* buffers submitted: offsets into buf are only
                         valid while this stays the same */
} HtText;

/* Submits what was written and starts a new buffer. */
static inline void ht_text_flush(HtText *t)
{
  if (t->len) t->buf = ht_sink_submit(t->sink, t->buf, t->len);
  t->len = 0;
  t->flushes++;
}

/* Room for n more bytes (n <= HT_SINK_CHUNK); returns where they go. */
static inline char *ht_text_room(HtText *t, size_t n)
{
  if (t->len + n > HT_SINK_CHUNK) ht_text_flush(t);
  return t->buf + t->len;
}

/* Writes v in lowercase hex at p; returns the end. Most numbers of a
** file are small indices: those take one or two table loads. */
static inline char *ht_put_hex(char *p, uint64_t v)
{
  static const char digits[] = "0123456789abcdef";
  if (v < 16) {
    *p = digits[v];
    return p + 1;
  }
  if (v < 256) {
    p[0] = digits[v >> 4];
    p[1] = digits[v & 15];
    return p + 2;
  }
  int n = (67 - __builtin_clzll(v)) >> 2;  /* digits */
  for (int i = n - 1; i >= 0; i--, v >>= 4) p[i] = digits[v & 15];
  return p + n;
}

/* One record: a mode character and n (<= 6) hex fields. */
static inline void ht_text_rec(HtText *t, char mode, int n, const uint64_t *f)
{
  char *p = ht_text_room(t, 2 + (size_t)n * 17 + 1), *s = p;
  *p++ = mode;
  for (int i = 0; i < n; i++) {
    *p++ = ' ';
    p = ht_put_hex(p, f[i]);
  }
  *p++ = '\n';
  t->len += (size_t)(p - s);
}

#endif
