/* out_file.c -- a file replaced only once complete (heap snapshots). */
#include "recorder/base/out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/base/clock.h"
#include "recorder/base/signals.h"

#define MAX_LINKS 40  /* as the kernel's ELOOP limit */
#define TMP_TRIES 100  /* temporary names tried beside the target */

static const char *kind_of(mode_t m)
{
  if (S_ISDIR(m)) return "is a directory, not a regular file";
  if (S_ISCHR(m)) return "is a character device, not a regular file";
  if (S_ISBLK(m)) return "is a block device, not a regular file";
  if (S_ISFIFO(m)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(m)) return "is a socket, not a regular file";
  return "is not a regular file";
}

/* Follows path's symbolic links to the file that would be written (it
** need not exist). 0, or an errno value with *why set. */
static int resolve(const char *path, char *out, size_t len, const char **why)
{
  char link[PATH_MAX];
  int hops;
  if ((size_t)snprintf(out, len, "%s", path) >= len) return ENAMETOOLONG;
  for (hops = 0;; hops++) {
    struct stat st;
    ssize_t n;
    if (lstat(out, &st)) return errno == ENOENT ? 0 : errno;  /* created */
    if (!S_ISLNK(st.st_mode)) {
      if (S_ISREG(st.st_mode)) return 0;
      *why = kind_of(st.st_mode);
      return S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    }
    if (hops == MAX_LINKS) return ELOOP;
    n = readlink(out, link, sizeof(link));
    if (n < 0) return errno;
    if ((size_t)n >= sizeof(link)) return ENAMETOOLONG;
    link[n] = '\0';
    if (link[0] == '/') {
      if ((size_t)n >= len) return ENAMETOOLONG;
      memcpy(out, link, (size_t)n + 1);
    } else {  /* relative to the link's directory */
      char *slash = strrchr(out, '/');
      size_t d = slash ? (size_t)(slash - out) + 1 : 0;
      if (d + (size_t)n >= len) return ENAMETOOLONG;
      memcpy(out + d, link, (size_t)n + 1);
    }
  }
}

/* stdio's write function: keeps the errno, holds off SIGPIPE/SIGXFSZ. */
static ssize_t cookie_write(void *c, const char *p, size_t len)
{
  RecOutFile *o = c;
  RecSigGuard sg;
  size_t done = 0;
  if (o->err) return -1;
  rec_sig_block(&sg);
  while (done < len) {
    ssize_t n = write(o->fd, p + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      o->err = n < 0 ? errno : EIO;
      break;
    }
    done += (size_t)n;
  }
  rec_sig_restore(&sg);
  if (o->err) {
    errno = o->err;
    return -1;
  }
  return (ssize_t)done;
}

static int cookie_close(void *c)
{
  RecOutFile *o = c;
  if (close(o->fd) && !o->err) o->err = errno;
  o->fd = -1;
  return o->err ? -1 : 0;
}

int rec_fd_off_std(int fd)
{
  int hi, e;
  if (fd < 0 || fd > 2) return fd;
  hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  e = errno;
  close(fd);
  errno = e;
  return hi;
}

int rec_outfile_open(RecOutFile *o, const char *path, const char **why)
{
  static const cookie_io_functions_t io = {NULL, cookie_write, NULL, cookie_close};
  int e;
  memset(o, 0, sizeof(*o));
  o->fd = -1;
  *why = NULL;
  e = resolve(path, o->target, sizeof(o->target), why);
  if (e) return e;
  /* A name nobody holds: created exclusively (O_EXCL: a file or link
  ** someone has there is never opened, truncated or removed); while one is
  ** taken, the next candidate has a random suffix. Only a file made here
  ** is ever unlinked. */
  uint64_t x = rec_time_now_ns() ^ ((uint64_t)(uintptr_t)o << 16) ^ (uint64_t)getpid();
  for (int i = 0;; i++) {
    int n, fd;
    x ^= x << 13;  /* xorshift: the host's rand() state is not ours to draw from */
    x ^= x >> 7;
    x ^= x << 17;
    n = i ? snprintf(o->tmp, sizeof(o->tmp), "%s.tmp%ld.%08x", o->target, (long)getpid(),
                     (unsigned)(x >> 32))
          : snprintf(o->tmp, sizeof(o->tmp), "%s.tmp%ld", o->target, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(o->tmp)) return ENAMETOOLONG;
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      o->fd = rec_fd_off_std(fd);
      if (o->fd < 0) {
        e = errno;
        unlink(o->tmp);  /* made above */
        return e;
      }
      break;
    }
    e = errno;
    if (e != EEXIST || i == TMP_TRIES - 1) {
      if (e == EEXIST) *why = "every temporary name tried beside it (<name>.tmp<pid>...) is taken";
      o->tmp[0] = '\0';
      return e;
    }
  }
  o->f = fopencookie(o, "w", io);
  if (!o->f) {
    e = errno ? errno : ENOMEM;
    close(o->fd);
    unlink(o->tmp);  /* made above */
    return e;
  }
  setvbuf(o->f, NULL, _IOFBF, 1 << 20);
  return 0;
}

int rec_outfile_commit(RecOutFile *o, int ok)
{
  int e;
  if (fclose(o->f) && !o->err) o->err = errno ? errno : EIO;
  o->f = NULL;
  e = o->err;
  if (ok && !e && rename(o->tmp, o->target)) e = errno;
  if (!ok || e) unlink(o->tmp);
  return e;
}
