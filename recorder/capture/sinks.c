/* sinks.c -- where a session's bytes go: its file descriptor, compressed or
** not, bounded in time, or the host's callback. */
#include "recorder/capture/session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "recorder/base/signals.h"

/* "<name>: <why the stream failed>" for a message. */
REC_API void failure_text(const LjmRecorder *r, int e, char *buf, size_t len)
{
  if (e == ECHILD)
    snprintf(buf, len, "%s: the recording stayed with the parent process (fork)", r->name);
  else if (e == ETIMEDOUT && r->fo.timed_out)
    snprintf(buf, len, "%s: the reader took no data for %.3g s (the write timeout): recording stopped",
             r->name, r->wtimeout_ms / 1000.0);
  else
    snprintf(buf, len, "%s: %s", r->name, strerror(e));
}

/* Whether fd is the file r's stream went to at its start (fd_known). */
REC_API int is_stream_file(const LjmRecorder *r, int fd)
{
  struct stat st;
  return r->fd_known && !fstat(fd, &st) && st.st_dev == r->fd_dev && st.st_ino == r->fd_ino;
}

/* Also called on the host's thread (a compressed file's trailer at stop
** or exit): SIGPIPE and SIGXFSZ are held off, so EPIPE and EFBIG come
** back as errors (base/signals.h). */
REC_API int fd_write(void *ud, const void *data, size_t len)
{
  LjmRecorder *r = ud;
  const char *p = data;
  RecSigGuard sg;
  int e;
  /* A host that closed the descriptor (a daemon closing every fd) may
  ** have opened a file of its own under the same number: never write
  ** into it. */
  if (r->fd_known && !is_stream_file(r, r->fd)) return EBADF;
  rec_sig_block(&sg);
  e = rec_fdout_write(&r->fo, p, len);
  rec_sig_restore(&sg);
  return e;
}

/* Notes what r->fd refers to, for fd_write's check, and how to write it. */
REC_API void note_fd(LjmRecorder *r)
{
  struct stat st;
  rec_fdout_init(&r->fo, r->fd, r->wtimeout_ms);
  r->fd_known = !fstat(r->fd, &st);
  if (r->fd_known) {
    r->fd_dev = st.st_dev;
    r->fd_ino = st.st_ino;
  }
}

/* The stream's bytes, compressed first when the path asked for it. */
REC_API int fd_sink(void *ud, const void *data, size_t len)
{
  LjmRecorder *r = ud;
  return r->z.kind != REC_Z_NONE ? rec_zout_write(&r->z, data, len) : fd_write(r, data, len);
}

REC_API int cb_sink(void *ud, const void *data, size_t len)
{
  LjmRecorder *r = ud;
  int e = r->write(r->wud, data, len);
  return e;
}
