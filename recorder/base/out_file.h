/* out_file.h -- a file replaced only once complete (heap snapshots).
**
** The bytes go to a temporary file beside the path's final target and are
** renamed over it at the end. The temporary file is created exclusively
** under a name nobody holds (<target>.tmp<pid>, else .tmp<pid>.<random>):
** a file or link a user keeps under such a name is never touched, and only
** what was created here is ever removed. Symbolic links are followed, as cp and a
** shell's redirection follow them: the link stays, its target gets the
** file; a dangling link's target is created. Anything but a regular file
** (a device, a FIFO, a directory, a socket) is refused: a rename would
** replace it with a regular file. Writes keep their errno (ENOSPC, EFBIG,
** EPIPE...) and never raise SIGPIPE or SIGXFSZ (base/signals.h).
*/
#ifndef REC_OUTFILE_H
#define REC_OUTFILE_H

#include <limits.h>
#include <stdio.h>

typedef struct RecOutFile {
  FILE *f;                   /* write here (a 1 MiB stdio buffer) */
  int fd;
  int err;                   /* first write or close error, 0 if none */
  char target[PATH_MAX];     /* the final target */
  char tmp[PATH_MAX + 32];   /* beside it */
} RecOutFile;

/* Opens the temporary file for path. 0, or an errno value with *why set
** to the reason (strerror's, or one naming the kind of file refused). */
int rec_outfile_open(RecOutFile *o, const char *path, const char **why);
/* A descriptor the recorder opened that took the number of a closed
** stdin, stdout or stderr, moved above 2 (the host's prints must not land
** in it): the descriptor to use, or -1 with errno set. */
int rec_fd_off_std(int fd);
/* Closes it and, if ok and every write succeeded, renames it over the
** target; else removes it. 0, or the first error's errno. */
int rec_outfile_commit(RecOutFile *o, int ok);

#endif
