/* rec_buf.h -- fixed-size output buffer of the recorder.
**
** Events are appended into one large buffer that is handed to the sink in
** a single call when it fills up (and at the end), like the reference's
** 8 MiB buffered writer. The buffer never comes from the Lua allocator.
** After the first sink error the buffer turns into a sink hole: appends
** are discarded, and the error is kept for ljm_recorder_stop().
*/
#ifndef REC_BUF_H
#define REC_BUF_H

#include <stddef.h>
#include <stdint.h>

/* Writes all of data[0..len); returns 0 or an errno value. */
typedef int (*RecSinkFn)(void *ud, const void *data, size_t len);

typedef struct RecBuf {
  uint8_t *p;        /* next free byte */
  uint8_t *end;      /* end of the buffer */
  uint8_t *buf;      /* start of the buffer */
  RecSinkFn sink;    /* where full buffers go */
  void *ud;          /* sink argument */
  int err;           /* first sink error (errno), 0 while healthy */
  uint64_t written;  /* bytes accepted by the sink */
} RecBuf;

/* Largest event without strings: header, loc (2 ULEBs), 4 ULEBs. */
#define REC_EVENT_MAX 64
/* Default buffer size, the same as the reference writer's. */
#define REC_BUF_SIZE (8u << 20)

/* Allocates the buffer (malloc); returns 0 or ENOMEM. */
int rec_buf_init(RecBuf *b, size_t size, RecSinkFn sink, void *ud);
/* Releases the buffer (does not flush). */
void rec_buf_free(RecBuf *b);
/* Hands the buffered bytes to the sink; returns the sticky error. */
int rec_buf_flush(RecBuf *b);
/* Appends a length-prefixed string, flushing as often as needed. */
void rec_buf_str(RecBuf *b, const char *s, size_t len);

/* Makes room for n (<= REC_EVENT_MAX) bytes. */
static inline void rec_buf_need(RecBuf *b, size_t n)
{
  if ((size_t)(b->end - b->p) < n) rec_buf_flush(b);
}

static inline void rec_buf_byte(RecBuf *b, uint8_t v)
{
  *b->p++ = v;
}

/* Minimal ULEB128, at most 10 bytes; the caller made room. */
static inline void rec_buf_uleb(RecBuf *b, uint64_t v)
{
  uint8_t *p = b->p;
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  b->p = p;
}

#endif
