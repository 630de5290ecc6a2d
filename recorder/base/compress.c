/* compress.c -- compressed file output of the recorder (.gz, .zst). */
#include "recorder/base/compress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* Fast levels: the writer thread must keep up with an allocation-heavy
** program (`gzip -1` and `zstd -1` take 0.37 s and 0.11 s for the 39 MB
** bench stream of bench/gen_big here: 105 and 350 MB/s). */
#define GZ_LEVEL 1
#define ZSTD_LEVEL 1
#define OUT_SIZE (1u << 18)

RecZKind rec_zout_kind(const char *path)
{
  size_t n = path ? strlen(path) : 0;
  if (n > 3 && strcmp(path + n - 3, ".gz") == 0) return REC_Z_GZIP;
  if (n > 4 && strcmp(path + n - 4, ".zst") == 0) return REC_Z_ZSTD;
  return REC_Z_NONE;
}

int rec_zout_init(RecZout *z, RecZKind kind, RecSinkFn sink, void *ud)
{
  memset(z, 0, sizeof(*z));
  z->sink = sink;
  z->ud = ud;
  if (kind == REC_Z_NONE) return 0;
  if (!(z->out = malloc(OUT_SIZE))) return ENOMEM;
  z->outcap = OUT_SIZE;
  if (kind == REC_Z_GZIP) {
    z_stream *s = calloc(1, sizeof(*s));
    /* windowBits 15 + 16: a gzip header and trailer around the deflate data */
    if (!s || deflateInit2(s, GZ_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      free(s);
      free(z->out);
      z->out = NULL;
      return ENOMEM;
    }
    z->ctx = s;
  } else {
    ZSTD_CStream *s = ZSTD_createCStream();
    ZSTD_inBuffer none_in = {NULL, 0, 0};
    ZSTD_outBuffer none_out = {NULL, 0, 0};
    /* The empty call sizes and allocates the stream's workspace here, on
    ** the host's thread: the writer thread never allocates (base/thread.h). */
    if (!s || ZSTD_isError(ZSTD_CCtx_setParameter(s, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
        ZSTD_isError(ZSTD_compressStream2(s, &none_out, &none_in, ZSTD_e_continue))) {
      ZSTD_freeCStream(s);
      free(z->out);
      z->out = NULL;
      return ENOMEM;
    }
    z->ctx = s;
  }
  z->kind = kind;
  return 0;
}

/* deflate with 'flush' until it has taken all input and has nothing more. */
static int gz_run(RecZout *z, const void *data, size_t len, int flush)
{
  z_stream *s = z->ctx;
  s->next_in = (Bytef *)(uintptr_t)data;
  s->avail_in = (uInt)len;  /* buffers are 8 MiB: far below uInt's range */
  for (;;) {
    s->next_out = z->out;
    s->avail_out = (uInt)z->outcap;
    int r = deflate(s, flush);
    if (r == Z_STREAM_ERROR) return EIO;
    size_t n = z->outcap - s->avail_out;
    if (n) {
      int e = z->sink(z->ud, z->out, n);
      if (e) return e;
    }
    if (r == Z_STREAM_END || (s->avail_in == 0 && s->avail_out != 0)) return 0;
  }
}

/* zstd with 'op' until it has taken all input and flushed what op asks. */
static int zstd_run(RecZout *z, const void *data, size_t len, ZSTD_EndDirective op)
{
  ZSTD_inBuffer in = { data, len, 0 };
  for (;;) {
    ZSTD_outBuffer out = { z->out, z->outcap, 0 };
    size_t left = ZSTD_compressStream2(z->ctx, &out, &in, op);
    if (ZSTD_isError(left)) return EIO;
    if (out.pos) {
      int e = z->sink(z->ud, z->out, out.pos);
      if (e) return e;
    }
    if (left == 0 && in.pos == in.size) return 0;
  }
}

int rec_zout_write(void *ud, const void *data, size_t len)
{
  RecZout *z = ud;
  if (z->kind == REC_Z_GZIP) return gz_run(z, data, len, Z_SYNC_FLUSH);
  if (z->kind == REC_Z_ZSTD) return zstd_run(z, data, len, ZSTD_e_flush);
  return z->sink(z->ud, data, len);
}

int rec_zout_end(RecZout *z)
{
  if (z->kind == REC_Z_GZIP) return gz_run(z, NULL, 0, Z_FINISH);
  if (z->kind == REC_Z_ZSTD) return zstd_run(z, NULL, 0, ZSTD_e_end);
  return 0;
}

void rec_zout_free(RecZout *z)
{
  if (z->kind == REC_Z_GZIP) {
    deflateEnd(z->ctx);
    free(z->ctx);
  } else if (z->kind == REC_Z_ZSTD) {
    ZSTD_freeCStream(z->ctx);
  }
  free(z->out);
  memset(z, 0, sizeof(*z));
}
