/* output.h -- where ljm convert writes: stdout, a device, or a file that
** only appears (atomically) once the export succeeded. */
#ifndef LJM_OUTPUT_H
#define LJM_OUTPUT_H

#include <stdio.h>

typedef struct LjmOutput {
  FILE *f;
  const char *path;   /* as given; "-" for stdout */
  char *tmp;          /* temporary name beside path, or NULL */
} LjmOutput;

/* Opens path for writing. A regular (or new) file is written under a
** temporary name in the same directory; stdout and devices directly.
** Returns 0, or -1 after printing a one-line error. */
int ljm_output_open(LjmOutput *o, const char *path);
/* Flushes and closes; renames the temporary file into place. Returns 0, or
** 1 after printing a one-line error (the temporary file is removed). */
int ljm_output_commit(LjmOutput *o);
/* Closes and drops what was written to a temporary file; never removes
** anything else. */
void ljm_output_abort(LjmOutput *o);

#endif
