/* rec_buf.c -- fixed-size output buffer of the recorder. */
#include "rec_buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rec_buf_init(RecBuf *b, size_t size, RecSinkFn sink, void *ud)
{
  memset(b, 0, sizeof(*b));
  if (size < 4 * REC_EVENT_MAX) size = 4 * REC_EVENT_MAX;
  b->buf = malloc(size);
  if (!b->buf) return ENOMEM;
  b->p = b->buf;
  b->end = b->buf + size;
  b->sink = sink;
  b->ud = ud;
  return 0;
}

void rec_buf_free(RecBuf *b)
{
  free(b->buf);
  b->buf = b->p = b->end = NULL;
}

int rec_buf_flush(RecBuf *b)
{
  size_t n = (size_t)(b->p - b->buf);
  if (n && !b->err) {
    int e = b->sink(b->ud, b->buf, n);
    if (e) b->err = e;
    else b->written += n;
  }
  b->p = b->buf;  /* after an error everything is dropped */
  return b->err;
}

void rec_buf_str(RecBuf *b, const char *s, size_t len)
{
  rec_buf_need(b, 10);
  rec_buf_uleb(b, len);
  while (len) {
    size_t room = (size_t)(b->end - b->p), n;
    if (!room) {
      rec_buf_flush(b);
      room = (size_t)(b->end - b->p);
    }
    n = len < room ? len : room;
    memcpy(b->p, s, n);
    b->p += n;
    s += n;
    len -= n;
  }
}
