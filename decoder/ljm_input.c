/* ljm_input.c -- byte sources: files, stdin, gzip and zstd files, memory.
**
** zlib reads plain and gzip data alike, from files and pipes. zstd data is
** told by its magic in the first bytes zlib passes through unchanged; it is
** then decompressed from those bytes on. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY  /* ZSTD_getFrameHeader: a refused frame's window */
#include <zstd.h>
#include <zstd_errors.h>

#include "ljm_decoder.h"
#include "ljm_input.h"

struct LjmInput {
  gzFile gz;             /* zlib reads plain and gzip data alike (pipes) */
  int plain;             /* a regular file without gzip magic: read() it */
  int fd, own_fd;
  const uint8_t *mem;    /* memory input (no gzip) */
  size_t memlen, mempos;  /* memlen: the bytes shown (ljm_input_mem_show) */
  size_t memall;
  int gzip;              /* 1 once zlib found a gzip header */
  int sniffed;           /* the first bytes have been read into zin */
  ZSTD_DStream *zs;      /* zstd input: its decompressor */
  uint8_t *zin;          /* zstd: compressed bytes; else the first bytes read */
  size_t zlen, zpos;
  int zeof;              /* zstd: no more compressed bytes */
  int zheld;             /* zstd: the last call filled its output: it may hold more */
  uint8_t fh[ZSTD_FRAMEHEADERSIZE_MAX];  /* zstd: the current frame's first bytes */
  size_t fhlen, fhfrom;  /* bytes in fh; where in zin they continue */
  uint64_t nread;        /* bytes read (after decompression) */
  uint64_t pos;          /* position after the last read */
  int64_t size;          /* file size, -1 when unknown */
  int (*wait)(void *ud);  /* ljm_input_follow: called where the data ends */
  void *wait_ud;
  int pipe;              /* following a pipe: plain reads as data comes */
  int undecided;         /* following a file too short to tell gzip or zstd yet */
  int drain;             /* a pipe past the stream's end: what is there, no wait */
  uint64_t limit;        /* ljm_input_limit: the stream bytes read at most, 0: all */
};

static void diag_set(LjmDiag *d, uint64_t off, const char *msg)
{
  if (!d) return;
  d->offset = off;
  snprintf(d->msg, sizeof(d->msg), "%s", msg);
}

static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
#define ZIN_SIZE (1u << 17)
/* The largest zstd window accepted (zstd's own default: 128 MiB, what
** zstd --long writes); a window is memory the decompressor must hold. */
#define ZSTD_WINDOW_LOG_MAX 27

/* A regular file can be peeked at without consuming it: plain files then
** skip zlib's extra copy. */
static int is_plain_file(int fd)
{
  struct stat st;
  unsigned char magic[4];
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  off_t at = lseek(fd, 0, SEEK_CUR);
  if (at < 0) return 0;
  ssize_t n = pread(fd, magic, 4, at);
  return n >= 0 && !(n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) &&
         !(n == 4 && memcmp(magic, zstd_magic, 4) == 0);
}

static int64_t file_size(int fd)
{
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return (int64_t)st.st_size;
}

LjmInput *ljm_input_fdopen(int fd, int own_fd, LjmDiag *diag)
{
  LjmInput *in = calloc(1, sizeof(*in));
  if (in) in->size = file_size(fd);
  if (in && is_plain_file(fd)) {
    in->plain = 1;
    in->fd = fd;
    in->own_fd = own_fd;
    return in;
  }
  int zfd = dup(fd);  /* gzclose closes what gzdopen got */
  if (!in || zfd < 0) {
    diag_set(diag, 0, strerror(errno));
    free(in);
    if (zfd >= 0) close(zfd);
    return NULL;
  }
  in->gz = gzdopen(zfd, "rb");
  if (!in->gz) {
    diag_set(diag, 0, "cannot set up decompression");
    close(zfd);
    free(in);
    return NULL;
  }
  gzbuffer(in->gz, 1 << 17);
  in->fd = fd;
  in->own_fd = own_fd;
  return in;
}

LjmInput *ljm_input_open(const char *path, LjmDiag *diag)
{
  if (strcmp(path, "-") == 0) return ljm_input_fdopen(0, 0, diag);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    diag_set(diag, 0, strerror(errno));
    return NULL;
  }
  LjmInput *in = ljm_input_fdopen(fd, 1, diag);
  if (!in) close(fd);
  return in;
}

LjmInput *ljm_input_mem(const void *data, size_t len)
{
  LjmInput *in = calloc(1, sizeof(*in));
  if (!in) return NULL;
  in->fd = -1;
  in->mem = data;
  in->memlen = in->memall = len;
  in->size = (int64_t)len;
  return in;
}

void ljm_input_small_reads(LjmInput *in)
{
  if (in->gz) gzbuffer(in->gz, 1024);
}

int ljm_input_is_gzip(const LjmInput *in) { return in->gzip; }

int ljm_input_is_zstd(const LjmInput *in) { return in->zs != NULL; }

static uint64_t position_now(const LjmInput *in)
{
  if (in->plain) return in->nread;
  if (!in->gz) return in->mempos;
  z_off_t o = gzoffset(in->gz);  /* fails on a pipe */
  return o > 0 ? (uint64_t)o : in->nread;
}

/* Kept after each read: gzoffset() is not free, and progress asks often. */
uint64_t ljm_input_position(const LjmInput *in) { return in->pos; }

static ptrdiff_t input_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag,
                            uint64_t offset);
static ptrdiff_t follow_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag,
                             uint64_t offset, int now);

ptrdiff_t ljm_input_read_now(LjmInput *in, void *buf, size_t len, LjmDiag *diag, uint64_t offset)
{
  if (!in->wait) return ljm_input_read(in, buf, len, diag, offset);
  ptrdiff_t n = follow_read(in, buf, len, diag, offset, 1);
  if (n >= 0) in->pos = position_now(in);
  return n;
}

uint64_t ljm_input_decoded(const LjmInput *in)
{
  return in->gz || in->plain ? in->nread : in->mempos;
}

void ljm_input_limit(LjmInput *in, uint64_t bytes) { in->limit = bytes; }

ptrdiff_t ljm_input_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag,
                         uint64_t offset)
{
  if (in->limit) {  /* the same prefix as an earlier reading, however the file grew */
    uint64_t at = ljm_input_decoded(in);
    if (at >= in->limit) return 0;
    if (len > in->limit - at) len = (size_t)(in->limit - at);
  }
  ptrdiff_t n = in->wait ? follow_read(in, buf, len, diag, offset, 0)
                         : input_read(in, buf, len, diag, offset);
  if (n >= 0) in->pos = position_now(in);
  return n;
}

int64_t ljm_input_size(const LjmInput *in) { return in->size; }

int ljm_input_fd(const LjmInput *in) { return in->fd; }

void ljm_input_stop_following(LjmInput *in)
{
  in->wait = NULL;
  in->drain = in->pipe;  /* a writer may keep its end open */
}

size_t ljm_input_mem_show(LjmInput *in, size_t len)
{
  in->memlen = len < in->memall ? len : in->memall;
  return in->memlen;
}

void ljm_input_follow(LjmInput *in, int (*wait)(void *ud), void *ud)
{
  in->wait = wait;
  in->wait_ud = ud;
  /* zlib reads a pipe until its buffer is full: a pipe is read here */
  if (in->fd >= 0 && file_size(in->fd) < 0) in->pipe = in->plain = 1;
  /* a file just created: gzip or zstd is told by its first bytes */
  else if (in->fd >= 0 && file_size(in->fd) < 4 && in->plain) in->undecided = 1;
}

/* A followed file that now has its first bytes: plain, or zlib's (gzip,
** zstd) as ljm_input_fdopen would have chosen. 0, or -1 with diag. */
static int decide(LjmInput *in, LjmDiag *diag, uint64_t offset)
{
  in->undecided = 0;
  if (is_plain_file(in->fd)) return 0;
  int zfd = dup(in->fd);
  if (zfd < 0 || !(in->gz = gzdopen(zfd, "rb"))) {
    if (zfd >= 0) close(zfd);
    diag_set(diag, offset, "cannot set up decompression");
    return -1;
  }
  gzbuffer(in->gz, 1 << 17);
  in->plain = 0;
  return 0;
}

void ljm_input_close(LjmInput *in)
{
  if (!in) return;
  if (in->gz) gzclose(in->gz);
  ZSTD_freeDStream(in->zs);
  free(in->zin);
  if (in->own_fd && in->fd >= 0) close(in->fd);
  free(in);
}

/* zlib's output: plain bytes, or gzip decompressed. 0 at the end, also of
** gzip data cut short (a truncated stream); -1 with diag on an error. */
static ptrdiff_t gz_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag, uint64_t offset)
{
  if (len > (1u << 30)) len = 1u << 30;
  int n = gzread(in->gz, buf, (unsigned)len);
  if (!gzdirect(in->gz)) in->gzip = 1;
  if (n >= 0) return n;
  int err;
  const char *msg = gzerror(in->gz, &err);
  if (err == Z_BUF_ERROR) return 0;  /* gzip data cut short: a truncated stream */
  char text[200];
  if (err == Z_ERRNO)
    snprintf(text, sizeof(text), "read error: %s", strerror(errno));
  else
    snprintf(text, sizeof(text), "corrupt gzip data: %s", msg);
  diag_set(diag, offset, text);
  return -1;
}

/* Reads the first bytes and decides whether they are zstd data. */
static int sniff(LjmInput *in, LjmDiag *diag, uint64_t offset)
{
  in->sniffed = 1;
  if (!(in->zin = malloc(ZIN_SIZE))) {
    diag_set(diag, offset, "out of memory");
    return -1;
  }
  ptrdiff_t n = gz_read(in, in->zin, ZIN_SIZE, diag, offset);
  if (n < 0) return -1;
  in->zlen = (size_t)n;
  if (!in->gzip && n >= 4 && memcmp(in->zin, zstd_magic, 4) == 0) {
    if (!(in->zs = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(in->zs)) ||
        ZSTD_isError(ZSTD_DCtx_setParameter(in->zs, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX))) {
      diag_set(diag, offset, "cannot set up zstd decompression");
      return -1;
    }
  }
  return 0;
}

/* What a zstd error is: a window above the limit is no corruption. */
static void zstd_error(const LjmInput *in, size_t r, LjmDiag *diag, uint64_t offset)
{
  char text[200];
  ZSTD_frameHeader h;
  if (ZSTD_getErrorCode(r) != ZSTD_error_frameParameter_windowTooLarge)
    snprintf(text, sizeof(text), "corrupt zstd data: %s", ZSTD_getErrorName(r));
  else if (ZSTD_getFrameHeader(&h, in->fh, in->fhlen) == 0)
    snprintf(text, sizeof(text), "zstd window %llu MiB exceeds the limit of %u MiB",
             (unsigned long long)((h.windowSize + (1u << 20) - 1) >> 20),
             1u << (ZSTD_WINDOW_LOG_MAX - 20));
  else
    snprintf(text, sizeof(text), "zstd window exceeds the limit of %u MiB",
             1u << (ZSTD_WINDOW_LOG_MAX - 20));
  diag_set(diag, offset, text);
}

/* Decompressed zstd bytes (frames one after another). 0 at the end, also
** of data cut short (a truncated stream). */
static ptrdiff_t zstd_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag, uint64_t offset)
{
  ZSTD_outBuffer out = { buf, len, 0 };
  while (len > 0) {
    if (in->zpos == in->zlen && !in->zeof) {
      ptrdiff_t n = gz_read(in, in->zin, ZIN_SIZE, diag, offset);
      if (n < 0) return -1;
      in->zlen = (size_t)n;
      in->zpos = 0;
      in->zeof = n == 0;
      in->fhfrom = 0;
    }
    /* The frame's header, kept whole across refills for zstd_error(). */
    while (in->fhlen < sizeof(in->fh) && in->fhfrom < in->zlen)
      in->fh[in->fhlen++] = in->zin[in->fhfrom++];
    /* Nothing to give and nothing held: zstd would count a call without
    ** progress (an error after a few, when a followed file waits) */
    if (in->zeof && in->zpos == in->zlen && !in->zheld) break;
    ZSTD_inBuffer zi = { in->zin, in->zlen, in->zpos };
    size_t before = out.pos;
    size_t r = ZSTD_decompressStream(in->zs, &out, &zi);
    in->zheld = out.pos == out.size && out.pos > before;
    in->zpos = zi.pos;
    if (ZSTD_isError(r)) {
      zstd_error(in, r, diag, offset);
      return -1;
    }
    if (r == 0) {  /* a frame ended: the next one starts here */
      in->fhlen = 0;
      in->fhfrom = zi.pos;
    }
    if (out.pos > 0) break;
    if (in->zeof && in->zpos == in->zlen) break;  /* nothing buffered either */
  }
  in->nread += out.pos;
  return (ptrdiff_t)out.pos;
}

static ptrdiff_t input_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag,
                            uint64_t offset)
{
  if (in->plain) {
    if (in->drain) {  /* no wait: what the pipe holds now */
      struct pollfd p = { in->fd, POLLIN, 0 };
      if (poll(&p, 1, 0) <= 0) return 0;
    }
    for (;;) {
      ssize_t n = read(in->fd, buf, len);
      if (n >= 0) {
        in->nread += (uint64_t)n;
        return n;
      }
      if (errno == EINTR) continue;
      char text[200];
      snprintf(text, sizeof(text), "read error: %s", strerror(errno));
      diag_set(diag, offset, text);
      return -1;
    }
  }
  if (!in->gz) {
    size_t n = in->memlen - in->mempos;
    if (n > len) n = len;
    memcpy(buf, in->mem + in->mempos, n);
    in->mempos += n;
    return (ptrdiff_t)n;
  }
  if (!in->sniffed && sniff(in, diag, offset) != 0) return -1;
  if (in->zs) return zstd_read(in, buf, len, diag, offset);
  ptrdiff_t n;
  if (in->zpos < in->zlen) {  /* the first bytes, read to look for zstd */
    n = (ptrdiff_t)(in->zlen - in->zpos < len ? in->zlen - in->zpos : len);
    memcpy(buf, in->zin + in->zpos, (size_t)n);
    in->zpos += (size_t)n;
  } else {
    n = gz_read(in, buf, len, diag, offset);
  }
  if (n > 0) in->nread += (uint64_t)n;
  return n;
}

/* A read that waits where the data ends (ljm_input_follow); now: returns
** LJM_INPUT_AGAIN there instead. */
static ptrdiff_t follow_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag,
                             uint64_t offset, int now)
{
  static const char *const shrunk = "the file shrank while it was followed (truncated or "
                                    "rewritten): start again";
  for (;;) {
    if (in->undecided) {
      if (file_size(in->fd) >= 4) {
        if (decide(in, diag, offset) != 0) return -1;
        continue;
      }
    } else if (in->pipe) {
      struct pollfd p = { in->fd, POLLIN, 0 };
      int r = poll(&p, 1, 0);
      if (r < 0 && errno != EINTR) {
        diag_set(diag, offset, strerror(errno));
        return -1;
      }
      if (r > 0) {
        ptrdiff_t n = input_read(in, buf, len, diag, offset);
        const uint8_t *b = buf;
        if (n > 0 && in->nread == (uint64_t)n &&
            ((n >= 2 && b[0] == 0x1f && b[1] == 0x8b) ||
             (n >= 4 && memcmp(b, zstd_magic, 4) == 0))) {
          diag_set(diag, offset, "compressed data on a pipe cannot be followed: follow the "
                   "file, or send the stream plain");
          return -1;
        }
        return n;  /* 0: the writer closed the pipe */
      }
    } else {
      ptrdiff_t n = input_read(in, buf, len, diag, offset);
      if (n != 0) return n;
      off_t at = lseek(in->fd, 0, SEEK_CUR);
      int64_t size = file_size(in->fd);
      if (at >= 0 && size >= 0 && (int64_t)at > size) {
        diag_set(diag, offset, shrunk);
        return -1;
      }
      if (in->gz) gzclearerr(in->gz);  /* zlib reads on past its end */
      in->zeof = 0;
    }
    if (now) return LJM_INPUT_AGAIN;
    if (in->wait(in->wait_ud)) return 0;
  }
}
