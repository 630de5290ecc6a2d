/* fd_out.h -- writes to a descriptor that never stall the host for long.
**
** A regular file takes its bytes with plain write()s. A pipe, FIFO, socket
** or terminal may have a reader that stops reading: a write into it would
** block for as long as the reader likes, inside the host's allocator. So
** those are written without blocking: send(MSG_DONTWAIT) on a socket,
** write() on a descriptor with O_NONBLOCK. A host's blocking descriptor is
** opened again through /proc/self/fd with O_NONBLOCK (a description of our
** own: the host's flags stay as they are); where that fails, at most
** PIPE_BUF bytes go at a time once poll() says there is room. Between
** writes poll() waits. When no byte goes through for the timeout the write
** fails with ETIMEDOUT; every byte taken starts the timeout again, so a
** slow reader is waited for and a stalled one is not.
*/
#ifndef REC_FDOUT_H
#define REC_FDOUT_H

#include <stddef.h>
#include <stdint.h>

/* timeout_ms: wait for ever. */
#define REC_FDOUT_FOREVER 0xffffffffu

typedef struct RecFdOut {
  int fd;               /* the descriptor the stream goes to */
  int wfd;              /* where the bytes are written: fd, or our own */
  int own;              /* wfd was opened here (rec_fdout_close closes it) */
  int kind;             /* REC_FDOUT_FILE, _SOCKET or _STREAM (below) */
  int nonblock;         /* wfd's open file description has O_NONBLOCK */
  int timed_out;        /* the last error was this timeout's */
  uint32_t timeout_ms;  /* no progress for this long: ETIMEDOUT */
} RecFdOut;

enum { REC_FDOUT_FILE, REC_FDOUT_SOCKET, REC_FDOUT_STREAM };

/* Looks at what fd is (fstat, fcntl), opens a non-blocking description of
** a blocking stream when it can, and keeps the timeout. */
void rec_fdout_init(RecFdOut *o, int fd, uint32_t timeout_ms);
/* Closes the description opened by rec_fdout_init, if any. */
void rec_fdout_close(RecFdOut *o);
/* Writes all of data[0..len): 0, or an errno value (ETIMEDOUT with
** timed_out set when no byte went through for the timeout). EINTR is
** retried. The caller holds off SIGPIPE and SIGXFSZ (base/signals.h). */
int rec_fdout_write(RecFdOut *o, const void *data, size_t len);
/* open(path, flags, mode) that never waits long: a FIFO is opened with
** O_NONBLOCK, and while it has no reader (ENXIO) tried again every 10 ms
** until the timeout (then ETIMEDOUT); a character device (a terminal) gets
** O_NONBLOCK too; anything else is opened as asked. */
int rec_fdout_open(const char *path, int flags, int mode, uint32_t timeout_ms);

#endif
