/* trace_lines.h -- the text report's rows with every trace charged to the
** line it started at (ljm report --traces=lines): "TRACE [3] started at
** @app.lua:9" becomes "@app.lua:9" and is merged with that line's own row. */
#ifndef LJM_TRACE_LINES_H
#define LJM_TRACE_LINES_H

#include <stddef.h>

#include "model/ljm_model.h"

typedef struct LjmTraceLines {
  LjmRow *rows[3];        /* per section, sorted as ljm_model_rows sorts */
  size_t nrows[3];
  LjmHeapLine *heap;      /* HEAP SUMMARY, sorted as ljm_model_heap_summary */
  size_t nheap;
  LjmStr *names;          /* the merged rows' overrides */
} LjmTraceLines;

/* Builds the merged view of m into t. Returns 0, or -1 out of memory. */
int ljm_trace_lines_build(const LjmModel *m, LjmTraceLines *t);
/* Frees what ljm_trace_lines_build made. */
void ljm_trace_lines_free(LjmTraceLines *t);
/* The line a trace's name says it started at ("TRACE [3] started at
** @app.lua:9" -> "@app.lua:9"), or the name itself. */
LjmStr ljm_trace_line_of(LjmStr s);
/* The share (0..1) of the ALLOCATIONS events that are charged to traces. */
double ljm_trace_share(const LjmModel *m);

#endif
