/* registry.c -- the list of output formats and lookups by name and suffix. */
#include <string.h>

#include "exporters/ljm_exporter.h"

extern const LjmExporter ljm_exporter_text;
extern const LjmExporter ljm_exporter_folded;
extern const LjmExporter ljm_exporter_svg;
extern const LjmExporter ljm_exporter_markdown;
extern const LjmExporter ljm_exporter_json;
extern const LjmExporter ljm_exporter_pprof;
extern const LjmExporter ljm_exporter_heaptrack;
extern const LjmExporter ljm_exporter_speedscope;
extern const LjmExporter ljm_exporter_heapprofile;

static const LjmExporter *const registry[] = {
  &ljm_exporter_text,
  &ljm_exporter_folded,
  &ljm_exporter_svg,
  &ljm_exporter_markdown,
  &ljm_exporter_json,
  &ljm_exporter_pprof,
  &ljm_exporter_heaptrack,
  &ljm_exporter_speedscope,
  &ljm_exporter_heapprofile,
  NULL
};

const LjmExporter *const *ljm_exporters(void) { return registry; }

const LjmExporter *ljm_exporter_by_name(const char *name)
{
  for (const LjmExporter *const *e = registry; *e; e++)
    if (strcmp((*e)->name, name) == 0) return *e;
  return NULL;
}

/* Longest matching suffix wins, so ".heaptrack.gz" beats a plain ".gz". */
const LjmExporter *ljm_exporter_by_path(const char *path)
{
  const LjmExporter *best = NULL;
  size_t bestlen = 0, n = strlen(path);
  for (const LjmExporter *const *e = registry; *e; e++)
    for (const char *const *s = (*e)->suffixes; s && *s; s++) {
      size_t k = strlen(*s);
      if (k <= n && k > bestlen && strcmp(path + n - k, *s) == 0) {
        best = *e;
        bestlen = k;
      }
    }
  return best;
}

static const char *const value_names[] = {
  "default", "alloc_bytes", "alloc_count", "inuse_bytes", "inuse_count",
  "peak_bytes"
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
