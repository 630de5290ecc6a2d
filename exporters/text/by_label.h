/* by_label.h -- ljm report --by KEY: the figures of each value of a label. */
#ifndef LJM_BY_LABEL_H
#define LJM_BY_LABEL_H

#include <stdio.h>

#include "model/ljm_model.h"

/* Prints the table of key's values (rows by bytes in use, then name;
** "(none)" for blocks without the key, "(other)" for the sets the recorder
** folded); sizes as ljm_fmt_bytes prints them, estimates to 3 digits when
** round3. Returns 0, or -1 with a one-line reason (no labels, out of
** memory). */
int ljm_by_label_write(FILE *out, const LjmModel *m, const char *key, int human, int round3,
                       char *err, size_t errlen);

#endif
