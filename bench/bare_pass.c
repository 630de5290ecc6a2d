/* bare_pass.c -- the floor of decoding: read a plain v3 stream and step over
** every item, reading each ULEB128 field and nothing more (no model, no
** names, no checks beyond what stepping needs). `ljm report` is measured
** against it (bench/run.sh).
**
**   bare_pass FILE      prints "N events, M bytes"
*/
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF (256u << 10)
#define SLACK 64  /* a whole event, so the hot loop needs no refill check */

typedef struct In {
  int fd;
  uint8_t *buf, *p, *end;
  int eof;
} In;

/* Keeps at least SLACK bytes ahead of p unless the file ends. */
static void refill(In *in)
{
  size_t keep = (size_t)(in->end - in->p);
  memmove(in->buf, in->p, keep);
  in->p = in->buf;
  in->end = in->buf + keep;
  while (!in->eof && (size_t)(in->end - in->buf) < BUF) {
    ssize_t n = read(in->fd, in->end, BUF - (size_t)(in->end - in->buf));
    if (n <= 0) {
      in->eof = 1;
      break;
    }
    in->end += n;
  }
}

static inline uint64_t uleb(In *in)
{
  uint64_t v = 0;
  int shift = 0;
  for (;;) {
    uint8_t b = *in->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
    shift += 7;
  }
}

static void skip_string(In *in)
{
  uint64_t n = uleb(in);
  while (n) {
    size_t have = (size_t)(in->end - in->p);
    size_t k = have < n ? have : (size_t)n;
    in->p += k;
    n -= k;
    if (n) {
      refill(in);
      if (in->p == in->end) return;
    }
  }
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fputs("usage: bare_pass FILE\n", stderr);
    return 2;
  }
  In in = { open(argv[1], O_RDONLY), malloc(BUF), NULL, NULL, 0 };
  if (in.fd < 0 || !in.buf) {
    perror(argv[1]);
    return 1;
  }
  in.p = in.end = in.buf;
  refill(&in);
  uint64_t events = 0, sink = 0;
  in.p += 7;  /* ljs prologue */
  for (;;) {  /* symbol table */
    if (in.end - in.p < SLACK) refill(&in);
    uint8_t h = *in.p++;
    if (h & 0x80) break;
    if ((h & 3) == 0) { sink += uleb(&in); skip_string(&in); sink += uleb(&in); }
    else if ((h & 3) == 1) { sink += uleb(&in); skip_string(&in); }
    else if ((h & 3) == 2) { sink += uleb(&in); sink += uleb(&in); sink += uleb(&in); }
  }
  in.p += 7;  /* ljm prologue */
  for (;;) {
    if (in.end - in.p < SLACK) {
      refill(&in);
      if (in.p == in.end) break;
    }
    uint8_t h = *in.p++;
    if (h == 0x80) break;
    unsigned ev = h & 3, src = h & 0x1c;
    if (h >= 0x20) {  /* extension items: one or two fields */
      sink += uleb(&in);
      if (h == 0x20) {
        uint8_t k = *in.p++;
        if (k == 1) { sink += uleb(&in); sink += uleb(&in); }
        else if (k == 2 || k == 3) sink += uleb(&in);
      }
      continue;
    }
    if (ev == 0) {
      if (src == 0x08) { sink += uleb(&in); skip_string(&in); sink += uleb(&in); }
      else if (src == 0x0c) { sink += uleb(&in); skip_string(&in); }
      else if (src == 0x10) { sink += uleb(&in); sink += uleb(&in); sink += uleb(&in); }
      continue;
    }
    if (src == 0x08) { sink += uleb(&in); sink += uleb(&in); }
    else if (src == 0x0c || src == 0x10) sink += uleb(&in);
    if (ev != 1) { sink += uleb(&in); sink += uleb(&in); }
    if (ev != 2) { sink += uleb(&in); sink += uleb(&in); }
    events++;
  }
  printf("%llu events, checksum %llu\n", (unsigned long long)events,
         (unsigned long long)(sink & 0xffff));
  close(in.fd);
  free(in.buf);
  return 0;
}
