/* ljm_exporter.h -- the interface every output format implements.
**
** One folder per format (exporters/<format>/) defines one LjmExporter and
** the registry (registry.c) lists them; nothing else knows a format. Exporters
** read the model through ljm_model.h only.
**
** Life cycle, driven by the CLI:
**   ljm_model_set_slices(m, e->slice_events)   streaming formats, before decoding
**   st = e->begin(opts, out)        before decoding (streaming formats) or after
**   e->on_event(st, m, ev)          for each event, only if e->streaming
**   e->on_time(st, m, usec)         each time mark, if e->streaming and set
**   e->finish(st, m)                after decoding: write the rest, free st
** 'out' stays owned by the caller, who checks it for write errors and closes it.
*/
#ifndef LJM_EXPORTER_H
#define LJM_EXPORTER_H

#include <stdint.h>
#include <stdio.h>

#include "model/ljm_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which figure a format shows when it can show only one (--value). */
typedef enum LjmValueKind {
  LJM_VALUE_DEFAULT = 0,  /* the format's own default */
  LJM_VALUE_ALLOC_BYTES,  /* "alloc_bytes" */
  LJM_VALUE_ALLOC_COUNT,  /* "alloc_count" */
  LJM_VALUE_INUSE_BYTES,  /* "inuse_bytes" */
  LJM_VALUE_INUSE_COUNT,  /* "inuse_count" */
  LJM_VALUE_PEAK_BYTES    /* "peak_bytes" */
} LjmValueKind;

typedef struct LjmExportOptions {
  const char *out_path;   /* output name as given ("-" for stdout) */
  const char *in_path;    /* profile name, for titles and comments */
  LjmValueKind value;     /* --value */
  uint64_t min_bytes;     /* markdown --min-bytes */
  unsigned top;           /* markdown --top (0: all) */
  int leak_only;          /* text report --leak-only */
  int human_readable;     /* text report --human-readable */
  int traces_as_lines;    /* text report --traces=lines: traces at their start lines */
} LjmExportOptions;

typedef struct LjmExporter {
  const char *name;                 /* -f name: "pprof" */
  const char *summary;              /* one line for --help */
  const char *const *suffixes;      /* output names that select it, NULL-ended */
  int binary;                       /* 1: refuses to write to a terminal */
  int streaming;                    /* 1: begin before decoding, gets on_event */
  uint32_t slice_events;            /* streaming: slices it needs from the model
                                       (ljm_model_set_slices), 0: none */
  /* Starts an export to 'out'. Returns state (non-NULL) or NULL with a
  ** one-line reason in err. */
  void *(*begin)(const LjmExportOptions *o, FILE *out, char *err, size_t errlen);
  /* One event (streaming exporters only). */
  void (*on_event)(void *st, const LjmModel *m, const LjmLiveEvent *ev);
  /* Each time mark of an extended stream (streaming exporters; optional). */
  void (*on_time)(void *st, const LjmModel *m, uint64_t usec);
  /* Writes what is left and frees st. Returns 0, or -1 with a reason in err. */
  int (*finish)(void *st, const LjmModel *m, char *err, size_t errlen);
} LjmExporter;

/* Exporter by -f name, or NULL. */
const LjmExporter *ljm_exporter_by_name(const char *name);
/* Exporter chosen by the output file name's suffix, or NULL. */
const LjmExporter *ljm_exporter_by_path(const char *path);
/* The registry, NULL-terminated. */
const LjmExporter *const *ljm_exporters(void);
/* Parses a --value name; returns -1 when unknown. */
int ljm_value_kind_parse(const char *s);
/* Name of a value kind ("inuse_bytes"). */
const char *ljm_value_kind_name(LjmValueKind k);

#ifdef __cplusplus
}
#endif

#endif
