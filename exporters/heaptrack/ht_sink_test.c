/* ht_sink_test.c -- the Heaptrack output sink: round trips through each
** codec (many chunks, so the writer thread really overlaps), and a write
** error that must be reported. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "exporters/heaptrack/ht_sink.h"

static int passed, failures;

#define CHECK(c, ...)                                       \
  do {                                                      \
    if (c) {                                                \
      passed++;                                             \
    } else {                                                \
      failures++;                                           \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);  \
      fprintf(stderr, __VA_ARGS__);                         \
      fputc('\n', stderr);                                  \
    }                                                       \
  } while (0)

/* Deterministic text like a heaptrack file's event lines. */
static char *make_text(size_t n)
{
  char *t = malloc(n);
  uint32_t x = 12345;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    t[i] = i % 6 == 5 ? '\n' : "+- 0123456789abcdef"[(x >> 16) % 19];
  }
  return t;
}

static unsigned char *slurp(FILE *f, size_t *len)
{
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
  *len = fread(b, 1, (size_t)n, f);
  return b;
}

static unsigned char *inflate_all(const unsigned char *in, size_t n, size_t cap, size_t *out)
{
  unsigned char *o = malloc(cap);
  z_stream z;
  memset(&z, 0, sizeof z);
  inflateInit2(&z, 15 + 16);
  z.next_in = (Bytef *)in;
  z.avail_in = (uInt)n;
  z.next_out = o;
  z.avail_out = (uInt)cap;
  int rc = inflate(&z, Z_FINISH);
  *out = rc == Z_STREAM_END ? z.total_out : (size_t)-1;
  inflateEnd(&z);
  return o;
}

static void round_trip(HtCodec codec, const char *name)
{
  const size_t total = 5 * HT_SINK_CHUNK + 777;
  char *text = make_text(total);
  FILE *f = tmpfile();
  char err[200] = "";
  HtSink *s = ht_sink_open(f, codec, err, sizeof err);
  CHECK(s != NULL, "%s: open: %s", name, err);
  if (!s) return;
  char *buf = ht_sink_buffer(s);
  for (size_t off = 0; off < total;) {  /* uneven chunks up to the limit */
    size_t k = total - off < HT_SINK_CHUNK ? total - off : HT_SINK_CHUNK - off % 1000;
    memcpy(buf, text + off, k);
    buf = ht_sink_submit(s, buf, k);
    off += k;
  }
  CHECK(ht_sink_close(s, err, sizeof err) == 0, "%s: close: %s", name, err);
  size_t n, got = 0;
  unsigned char *bytes = slurp(f, &n), *plain = bytes;
  if (codec == HT_GZIP) {
    CHECK(n > 2 && bytes[0] == 0x1f && bytes[1] == 0x8b, "%s: no gzip magic", name);
    plain = inflate_all(bytes, n, total + 1, &got);
  } else if (codec == HT_ZSTD) {
    plain = malloc(total + 1);
    got = ZSTD_decompress(plain, total + 1, bytes, n);
    CHECK(!ZSTD_isError(got), "%s: %s", name, ZSTD_getErrorName(got));
  } else {
    got = n;
  }
  CHECK(got == total && memcmp(plain, text, total) == 0, "%s: round trip differs (%zu of %zu)",
        name, got, total);
  CHECK(codec == HT_PLAIN || n < total / 4 * 3, "%s: not compressed (%zu bytes)", name, n);
  if (plain != bytes) free(plain);
  free(bytes);
  free(text);
  fclose(f);
}

/* /dev/full accepts the open and fails every write with ENOSPC ("r+" so
** that a missing device is not created as a regular file). */
static void write_error(HtCodec codec, const char *name)
{
  FILE *f = fopen("/dev/full", "r+");
  if (!f) {
    CHECK(0, "cannot open /dev/full");
    return;
  }
  char *text = make_text(HT_SINK_CHUNK);
  char err[200] = "";
  HtSink *s = ht_sink_open(f, codec, err, sizeof err);
  for (int i = 0; s && i < 4; i++) {
    char *buf = ht_sink_buffer(s);
    memcpy(buf, text, HT_SINK_CHUNK);
    ht_sink_submit(s, buf, HT_SINK_CHUNK);
  }
  CHECK(s && ht_sink_close(s, err, sizeof err) == -1, "%s: write error not reported", name);
  CHECK(strstr(err, "No space") != NULL, "%s: message %s", name, err);
  fclose(f);
  free(text);
}

int main(void)
{
  round_trip(HT_PLAIN, "plain");
  round_trip(HT_GZIP, "gzip");
  round_trip(HT_ZSTD, "zstd");
  write_error(HT_PLAIN, "plain");
  write_error(HT_GZIP, "gzip");
  write_error(HT_ZSTD, "zstd");
  printf("%d passed, %d failed\n", passed, failures);
  return failures != 0;
}
