/* fd_out.c -- writes to a descriptor that never stall the host for long. */
#include "recorder/base/fd_out.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder/base/clock.h"
#include "recorder/base/out_file.h"

void rec_fdout_init(RecFdOut *o, int fd, uint32_t timeout_ms)
{
  struct stat st, st2;
  int fl = fcntl(fd, F_GETFL);
  o->fd = o->wfd = fd;
  o->own = 0;
  o->timed_out = 0;
  o->timeout_ms = timeout_ms;
  o->nonblock = fl >= 0 && (fl & O_NONBLOCK);
  if (fstat(fd, &st) || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
    o->kind = REC_FDOUT_FILE;
    return;
  }
  o->kind = S_ISSOCK(st.st_mode) ? REC_FDOUT_SOCKET : REC_FDOUT_STREAM;
  if (o->kind == REC_FDOUT_STREAM && !o->nonblock && timeout_ms != REC_FDOUT_FOREVER) {
    char p[64];
    int w;
    snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
    w = rec_fd_off_std(open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (w >= 0 && (fstat(w, &st2) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino)) {
      close(w);  /* not the same file: write the host's descriptor */
      w = -1;
    }
    if (w >= 0) {
      o->wfd = w;
      o->own = 1;
      o->nonblock = 1;
    }
  }
}

void rec_fdout_close(RecFdOut *o)
{
  if (o->own && o->wfd >= 0) close(o->wfd);
  o->own = 0;
  o->wfd = o->fd;
}

/* Waits until wfd takes bytes or the deadline passes (ETIMEDOUT). An error
** or hang-up also returns 0: the write that follows says which. */
static int wait_room(int fd, uint64_t deadline, int forever)
{
  for (;;) {
    struct pollfd p = {fd, POLLOUT, 0};
    int ms = -1, n;
    if (!forever) {
      uint64_t now = rec_time_now_ns(), left;
      if (now >= deadline) return ETIMEDOUT;
      left = (deadline - now + 999999u) / 1000000u;
      ms = left > 1000000 ? 1000000 : (int)left;  /* poll again after ~17 min */
    }
    n = poll(&p, 1, ms);
    if (n > 0) return 0;
    if (n < 0 && errno != EINTR) return errno;
  }
}

int rec_fdout_write(RecFdOut *o, const void *data, size_t len)
{
  const char *p = data;
  int forever = o->timeout_ms == REC_FDOUT_FOREVER;
  uint64_t span = (uint64_t)o->timeout_ms * 1000000u, deadline = 0;
  o->timed_out = 0;
  if (o->kind != REC_FDOUT_FILE && !forever) deadline = rec_time_now_ns() + span;
  while (len) {
    ssize_t n;
    if (o->kind == REC_FDOUT_FILE || (forever && o->kind == REC_FDOUT_STREAM && !o->nonblock)) {
      n = write(o->wfd, p, len);
    } else if (o->kind == REC_FDOUT_SOCKET) {
      n = send(o->wfd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == ENOTSOCK) {  /* not what fstat said: write as a stream */
        o->kind = REC_FDOUT_STREAM;
        continue;
      }
    } else if (o->nonblock) {
      n = write(o->wfd, p, len);
    } else {  /* a blocking pipe: PIPE_BUF bytes fit once poll() saw room */
      int e = wait_room(o->wfd, deadline, forever);
      if (e) {
        o->timed_out = e == ETIMEDOUT;
        return e;
      }
      n = write(o->wfd, p, len < PIPE_BUF ? len : PIPE_BUF);
    }
    if (n < 0) {
      int e = errno;
      if (e == EINTR) continue;
      if ((e == EAGAIN || e == EWOULDBLOCK) && o->kind != REC_FDOUT_FILE) {
        e = wait_room(o->wfd, deadline, forever);
        if (e) {
          o->timed_out = e == ETIMEDOUT;
          return e;
        }
        continue;
      }
      return e ? e : EIO;
    }
    if (n == 0) return EIO;
    p += n;
    len -= (size_t)n;
    if (deadline) deadline = rec_time_now_ns() + span;  /* progress: the reader reads */
  }
  return 0;
}

int rec_fdout_open(const char *path, int flags, int mode, uint32_t timeout_ms)
{
  struct stat st;
  uint64_t deadline = rec_time_now_ns() + (uint64_t)timeout_ms * 1000000u;
  if (stat(path, &st) || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
    return open(path, flags, mode);
  for (;;) {
    int fd = open(path, flags | O_NONBLOCK, mode);
    if (fd >= 0 || errno != ENXIO || !S_ISFIFO(st.st_mode)) return fd;
    if (timeout_ms != REC_FDOUT_FOREVER && rec_time_now_ns() >= deadline) {
      errno = ETIMEDOUT;
      return -1;
    }
    {
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
}
