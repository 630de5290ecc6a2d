/* state.h -- the start every exporter's state shares, and its allocation. */
#ifndef LJM_EXPORTERS_STATE_H
#define LJM_EXPORTERS_STATE_H

#include <stddef.h>
#include <stdio.h>

#include "exporters/ljm_exporter.h"

/* The first member of an exporter's state struct. */
typedef struct LjmExportBase {
  FILE *out;           /* the caller's stream */
  LjmExportOptions o;  /* the options as given */
  LjmValueKind value;  /* o.value resolved (never LJM_VALUE_DEFAULT) */
} LjmExportBase;

/* Allocates a zeroed state of 'size' bytes whose first member is an
** LjmExportBase and fills that base; NULL with "out of memory" in err. */
void *ljm_export_state_new(size_t size, const LjmExportOptions *o, FILE *out,
                           char *err, size_t errlen);

#endif
