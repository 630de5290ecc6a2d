/* registry.c -- the list of outputs and lookups by name and suffix.
**
** The list is exporters/BUILD's FORMATS, generated into
** exporters/format_list.h as LJM_FORMAT_LIST(X): X(text) X(folded) ...
*/
#include <string.h>

#include "exporters/format_list.h"  /* generated (exporters/BUILD) */
#include "exporters/ljm_exporter.h"

#define LJM_DECLARE(name) extern const LjmExporter ljm_exporter_##name;
LJM_FORMAT_LIST(LJM_DECLARE)

#define LJM_ENTRY(name) &ljm_exporter_##name,
static const LjmExporter *const registry[] = {LJM_FORMAT_LIST(LJM_ENTRY) NULL};

const LjmExporter *const *ljm_exporters(void) { return registry; }

const LjmExporter *ljm_exporter_by_name(const char *command, const char *name)
{
  for (const LjmExporter *const *e = registry; *e; e++)
    if (strcmp((*e)->name, name) == 0 && strcmp((*e)->command, command) == 0) return *e;
  return NULL;
}

/* Longest matching suffix wins, so ".heaptrack.gz" beats a plain ".gz". */
const LjmExporter *ljm_exporter_by_path(const char *command, const char *path)
{
  const LjmExporter *best = NULL;
  size_t bestlen = 0, n = strlen(path);
  for (const LjmExporter *const *e = registry; *e; e++) {
    if (strcmp((*e)->command, command) != 0) continue;
    for (const char *const *s = (*e)->suffixes; s && *s; s++) {
      size_t k = strlen(*s);
      if (k <= n && k > bestlen && strcmp(path + n - k, *s) == 0) {
        best = *e;
        bestlen = k;
      }
    }
  }
  return best;
}

static const char *const value_names[] = {
  "default", "alloc_bytes", "alloc_count", "inuse_bytes", "inuse_count",
  "peak_bytes", "temp_count"
};

int ljm_value_kind_parse(const char *s)
{
  for (int i = 1; i < (int)(sizeof(value_names) / sizeof(value_names[0])); i++)
    if (strcmp(s, value_names[i]) == 0) return i;
  return -1;
}

const char *ljm_value_kind_name(LjmValueKind k)
{
  return (unsigned)k < sizeof(value_names) / sizeof(value_names[0])
             ? value_names[k] : "?";
}
