/* ljm_input.c -- byte sources: files, stdin, gzip files, memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ljm_decoder.h"
#include "ljm_input.h"

struct LjmInput {
  gzFile gz;             /* zlib reads plain and gzip data alike */
  int fd, own_fd;
  const uint8_t *mem;    /* memory input (no gzip) */
  size_t memlen, mempos;
  int gzip;              /* 1 once zlib found a gzip header */
};

static void diag_set(LjmDiag *d, uint64_t off, const char *msg)
{
  if (!d) return;
  d->offset = off;
  snprintf(d->msg, sizeof(d->msg), "%s", msg);
}

LjmInput *ljm_input_fdopen(int fd, int own_fd, LjmDiag *diag)
{
  LjmInput *in = calloc(1, sizeof(*in));
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
  in->memlen = len;
  return in;
}

int ljm_input_is_gzip(const LjmInput *in) { return in->gzip; }

void ljm_input_close(LjmInput *in)
{
  if (!in) return;
  if (in->gz) gzclose(in->gz);
  if (in->own_fd && in->fd >= 0) close(in->fd);
  free(in);
}

ptrdiff_t ljm_input_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag,
                         uint64_t offset)
{
  if (!in->gz) {
    size_t n = in->memlen - in->mempos;
    if (n > len) n = len;
    memcpy(buf, in->mem + in->mempos, n);
    in->mempos += n;
    return (ptrdiff_t)n;
  }
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
