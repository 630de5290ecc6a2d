/* state.c -- the start every exporter's state shares, and its allocation. */
#include "exporters/common/state.h"

#include <stdlib.h>

#include "exporters/common/value.h"

void *ljm_export_state_new(size_t size, const LjmExportOptions *o, FILE *out,
                           char *err, size_t errlen)
{
  LjmExportBase *b = calloc(1, size);
  if (!b) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  b->out = out;
  b->o = *o;
  b->value = ljm_value_resolve(o->value);
  return b;
}
