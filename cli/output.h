/* output.h -- where ljm convert writes: stdout, a device, or a file that
** only appears (atomically) once the export succeeded. */
#ifndef LJM_OUTPUT_H
#define LJM_OUTPUT_H

#include <stdio.h>

typedef struct LjmOutput {
  FILE *f;
  const char *path;   /* as given; "-" for stdout */
  char *target;       /* the file the temporary one replaces: path, or the
                         final target of a symbolic link path (malloc'd) */
  char *tmp;          /* temporary name beside target, or NULL */
} LjmOutput;

/* An LjmOutput that ljm_output_abort() may be given before it was opened. */
#define LJM_OUTPUT_INIT { NULL, NULL, NULL, NULL }

/* Opens path for writing. A regular (or new) file is written under a
** temporary name in the same directory; a symbolic link is followed (the
** temporary file goes beside its final target, which it replaces, so the
** link stays a link; a dangling link is refused); stdout and devices
** (FIFOs, /dev/null) are written in place. While a temporary file exists,
** SIGHUP, SIGINT and SIGTERM remove it before the process dies of them.
** Returns 0, or -1 after printing a one-line error. */
int ljm_output_open(LjmOutput *o, const char *path);
/* Flushes and closes; renames the temporary file into place. Returns 0, or
** 1 after printing a one-line error (the temporary file is removed). */
int ljm_output_commit(LjmOutput *o);
/* Closes and drops what was written to a temporary file; never removes
** anything else. Safe on an LJM_OUTPUT_INIT output. */
void ljm_output_abort(LjmOutput *o);
/* Whether what is written goes to a temporary file (so a failure can
** still leave the named file as it was), not to stdout or a device. */
int ljm_output_is_file(const LjmOutput *o);

#endif
