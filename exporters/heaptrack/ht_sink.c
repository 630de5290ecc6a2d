/* ht_sink.c -- gzip/zstd/plain output on a writer thread (see ht_sink.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "exporters/heaptrack/ht_sink.h"

/* Fast levels: the export must keep pace with decoding. */
#define GZIP_LEVEL 1
#define ZSTD_LEVEL 1
#ifndef HT_SINK_OUT_BUF
#define HT_SINK_OUT_BUF (256u << 10)
#endif
#define OUT_BUF HT_SINK_OUT_BUF

struct HtSink {
  FILE *out;
  HtCodec codec;
  z_stream z;
  ZSTD_CCtx *zc;
  uint8_t *cbuf;          /* compressed bytes on their way to out */
  char *fill;             /* the buffer the caller fills */
  char *pend;             /* text handed to the writer */
  size_t plen;
  int has_work, done;     /* under mu */
  int threaded;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int failed;             /* a write or codec error happened */
  char msg[160];
};

static void fail(HtSink *s, const char *what)
{
  if (!s->failed)
    snprintf(s->msg, sizeof s->msg, "heaptrack: %s", what);
  s->failed = 1;
}

static void put(HtSink *s, const void *p, size_t n)
{
  if (n && !s->failed && fwrite(p, 1, n, s->out) != n) {
    char m[128];
    snprintf(m, sizeof m, "write failed: %s", strerror(errno));
    fail(s, m);
  }
}

/* Compresses text (last: end the stream) and writes the result. */
static void encode(HtSink *s, const char *text, size_t len, int last)
{
  if (s->failed) return;
  if (s->codec == HT_PLAIN) {
    put(s, text, len);
  } else if (s->codec == HT_GZIP) {
    s->z.next_in = (Bytef *)text;
    s->z.avail_in = (uInt)len;
    int rc;
    do {
      s->z.next_out = s->cbuf;
      s->z.avail_out = OUT_BUF;
      rc = deflate(&s->z, last ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_ERROR) {
        fail(s, "zlib error");
        return;
      }
      put(s, s->cbuf, OUT_BUF - s->z.avail_out);
    } while (last ? rc != Z_STREAM_END : s->z.avail_in || s->z.avail_out == 0);
  } else {
    ZSTD_inBuffer in = {text, len, 0};
    size_t left;
    do {
      ZSTD_outBuffer ob = {s->cbuf, OUT_BUF, 0};
      left = ZSTD_compressStream2(s->zc, &ob, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left)) {
        fail(s, ZSTD_getErrorName(left));
        return;
      }
      put(s, s->cbuf, ob.pos);
    } while (last ? left != 0 : in.pos < in.size);
  }
}

static void *writer(void *arg)
{
  HtSink *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->has_work && !s->done) pthread_cond_wait(&s->cv, &s->mu);
    if (!s->has_work) break;
    pthread_mutex_unlock(&s->mu);
    encode(s, s->pend, s->plen, 0);
    pthread_mutex_lock(&s->mu);
    s->has_work = 0;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

HtSink *ht_sink_open(FILE *out, HtCodec codec, char *err, size_t errlen)
{
  HtSink *s = calloc(1, sizeof *s);
  if (!s || !(s->cbuf = malloc(OUT_BUF)) || !(s->pend = malloc(HT_SINK_CHUNK)) ||
      !(s->fill = malloc(HT_SINK_CHUNK))) {
    if (s) {
      free(s->cbuf);
      free(s->pend);
    }
    free(s);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  s->out = out;
  s->codec = codec;
  int ok = 1;
  if (codec == HT_GZIP) {  /* windowBits 15 + 16: a gzip wrapper */
    ok = deflateInit2(&s->z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
                      Z_DEFAULT_STRATEGY) == Z_OK;
  } else if (codec == HT_ZSTD) {
    ok = (s->zc = ZSTD_createCCtx()) != NULL &&
         !ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_compressionLevel,
                                              ZSTD_LEVEL));
  }
  if (!ok) {
    snprintf(err, errlen, "heaptrack: cannot start the %s compressor",
             codec == HT_GZIP ? "gzip" : "zstd");
    if (codec == HT_GZIP) deflateEnd(&s->z);
    ZSTD_freeCCtx(s->zc);
    free(s->fill);
    free(s->pend);
    free(s->cbuf);
    free(s);
    return NULL;
  }
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  /* Plain text is written as it comes: a thread pays off only to compress. */
  s->threaded = codec != HT_PLAIN && pthread_create(&s->th, NULL, writer, s) == 0;
  return s;
}

char *ht_sink_buffer(HtSink *s) { return s->fill; }

char *ht_sink_submit(HtSink *s, char *buf, size_t len)
{
  if (!s->threaded) {
    encode(s, buf, len, 0);
    return buf;
  }
  pthread_mutex_lock(&s->mu);
  while (s->has_work) pthread_cond_wait(&s->cv, &s->mu);
  char *next = s->pend;  /* the writer is done with it */
  s->pend = buf;
  s->plen = len;
  s->has_work = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return s->fill = next;
}

int ht_sink_close(HtSink *s, char *err, size_t errlen)
{
  if (s->threaded) {
    pthread_mutex_lock(&s->mu);
    s->done = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
  }
  encode(s, "", 0, 1);
  if (!s->failed && fflush(s->out) != 0) {
    char m[128];
    snprintf(m, sizeof m, "write failed: %s", strerror(errno));
    fail(s, m);
  }
  int rc = s->failed ? -1 : 0;
  if (rc) snprintf(err, errlen, "%s", s->msg);
  if (s->codec == HT_GZIP) deflateEnd(&s->z);
  ZSTD_freeCCtx(s->zc);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s->fill);
  free(s->pend);
  free(s->cbuf);
  free(s);
  return rc;
}
