/* ljm_exporter.h -- the interface every output implements.
**
** One folder per format (exporters/<format>/) defines one LjmExporter,
** ljm_exporter_<format>; the list FORMATS in exporters/BUILD registers it
** (registry.c), and the CLI's help, the man page's list (tests/man_test.py)
** and the fuzz target follow the registry: nothing else knows a format.
** Each output says what it reads: profiles (ljm streams), heap snapshots
** (.ljh), or both.
**
** Most outputs read the event model (ljm_model.h); a heap snapshot reaches
** them as the model of its heap, a flame graph. Life cycle, driven by the CLI:
**   ljm_model_set_slices(m, e->slice_events)   streaming formats, before decoding
**   st = e->begin(opts, out)        before decoding (streaming formats) or after
**   e->on_event(st, m, ev)          for each event, only if e->streaming
**   e->on_time(st, m, usec)         each time mark, if e->streaming and set
**   e->finish(st, m)                after decoding: write the rest, free st
** An output with 'add' merges several profiles (ljm convert FILE...): each
** is decoded into a model of its own, handed to e->add(st, m) and freed;
** the last goes to finish.
** An output that needs no model has write_heap (the heap graph of a
** snapshot: model/ljm_heapgraph.h) or write_stream (the stream's bytes as
** they decode) instead, and no begin.
** 'out' stays owned by the caller, who checks it for write errors and closes it.
*/
#ifndef LJM_EXPORTER_H
#define LJM_EXPORTER_H

#include <stdint.h>
#include <stdio.h>

#include "decoder/ljm_decoder.h"
#include "model/ljm_heapgraph.h"
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
  LJM_VALUE_PEAK_BYTES,   /* "peak_bytes" */
  LJM_VALUE_TEMP_COUNT    /* "temp_count": temporary allocations (LjmFigures) */
} LjmValueKind;

/* What an output reads (LjmExporter.reads). */
#define LJM_READS_PROFILE 1u   /* an ljm stream */
#define LJM_READS_SNAPSHOT 2u  /* a heap snapshot (.ljh) */

/* Which type names and labels a heap view shows; nonzero: matches. */
typedef int (*LjmHeapLabelMatch)(void *ud, const char *text);

/* Paths shown per object by ljm heap's views unless told (--paths). */
#define LJM_HEAP_PATHS_DEFAULT 3
/* ljm heap --format dot|mermaid unless told: levels of retainers (--depth)
** and objects (--max) drawn. */
#define LJM_HEAP_DEPTH_DEFAULT 3
#define LJM_HEAP_DRAWN_DEFAULT 50

typedef struct LjmExportOptions {
  const char *out_path;   /* output name as given ("-" for stdout) */
  const char *in_path;    /* profile name, for titles and comments */
  LjmValueKind value;     /* --value */
  uint64_t min_bytes;     /* markdown --min-bytes */
  unsigned top;           /* markdown --top (0: all) */
  int leak_only;          /* text report --leak-only */
  int human_readable;     /* text report --human-readable */
  int traces_as_lines;    /* text report --traces=lines: traces at their start lines */
  const char *by_key;     /* text report --by KEY: a table per value of label KEY first */
  int temporaries;        /* text report --temporary: the sites' temporary
                             allocations first (LjmFigures.temp_count) */
  /* ljm heap's views (heapreport): the summary, or what grew since 'base',
  ** or the paths to what 'match' picks (--path-to 'pattern'). 'top' is the
  ** number of rows. */
  int json;               /* JSON instead of text */
  uint32_t paths;         /* paths shown per object */
  const LjmHeapGraph *base;  /* --base: the earlier snapshot */
  const char *pattern;    /* --path-to, as given */
  LjmHeapLabelMatch match;   /* --path-to, or --top TYPE: the objects shown */
  void *match_ud;
  uint32_t depth;         /* dot, mermaid: levels of retainers (0: the default) */
  uint32_t max_objects;   /* dot, mermaid: objects drawn (0: the default) */
  /* ljm growth: the start left out (usec); *steepest, where set, gets the
  ** steepest growing line's slope in bytes/s (0: none grows). */
  uint64_t skip_us;
  double *steepest;
} LjmExportOptions;

typedef struct LjmExporter {
  const char *name;                 /* -f name: "pprof" */
  const char *summary;              /* one line for --help */
  const char *const *suffixes;      /* output names that select it, NULL-ended */
  unsigned reads;                   /* LJM_READS_*: the inputs it takes */
  const char *command;              /* the command that writes it: "convert", "heap" */
  int binary;                       /* 1: refuses to write to a terminal */
  int streaming;                    /* 1: begin before decoding, gets on_event */
  uint32_t slice_events;            /* streaming: slices it needs from the model
                                       (ljm_model_set_slices), 0: none */
  int refuses;                      /* 1: finish may refuse a readable input with a
                                       one-line reason (growth: no time marks) */
  /* Starts an export to 'out'. Returns state (non-NULL) or NULL with a
  ** one-line reason in err. */
  void *(*begin)(const LjmExportOptions *o, FILE *out, char *err, size_t errlen);
  /* One event (streaming exporters only). */
  void (*on_event)(void *st, const LjmModel *m, const LjmLiveEvent *ev);
  /* Each time mark of an extended stream (streaming exporters; optional). */
  void (*on_time)(void *st, const LjmModel *m, uint64_t usec);
  /* Optional, not with streaming: adds one of several profiles to the output
  ** (all but the last, which finish gets). Returns 0, or -1 with a reason in err. */
  int (*add)(void *st, const LjmModel *m, char *err, size_t errlen);
  /* Writes what is left and frees st. Returns 0, or -1 with a reason in err. */
  int (*finish)(void *st, const LjmModel *m, char *err, size_t errlen);
  /* Outputs without a model (begin NULL), one of: */
  /* Writes a heap snapshot's graph: 0, -1 with a reason in err, or an exit
  ** status > 0 already reported (a usage error). */
  int (*write_heap)(const LjmHeapGraph *g, const LjmExportOptions *o, FILE *out, char *err,
                    size_t errlen);
  /* Writes the stream from 'in' as it decodes: the decode status (a cut
  ** stream is written as far as it goes) with diag filled in; *werr gets
  ** the errno of a failed write, else 0; 'note' a line for the user or "". */
  LjmStatus (*write_stream)(LjmInput *in, const LjmExportOptions *o, FILE *out, LjmDiag *diag,
                            int *werr, char *note, size_t notelen);
} LjmExporter;

/* Exporter by -f name among those 'command' writes, or NULL. */
const LjmExporter *ljm_exporter_by_name(const char *command, const char *name);
/* Exporter chosen by the output file name's suffix among those 'command'
** writes (the longest suffix wins), or NULL. */
const LjmExporter *ljm_exporter_by_path(const char *command, const char *path);
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
