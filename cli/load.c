/* load.c -- open, decode and explain: the one place diagnostics are printed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"

int ljm_cli_usage_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "ljm%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see 'ljm%s%s --help')\n", cmd ? " " : "", cmd ? cmd : "");
  return LJM_EXIT_USAGE;
}

int ljm_cli_load(const char *path, int strict, int quiet, LjmModel *m, int *worth_output)
{
  LjmDiag d;
  LjmProgressLine progress;
  *worth_output = 0;
  LjmInput *in = ljm_input_open(path, &d);
  if (!in) {
    fprintf(stderr, "%s: cannot open: %s\n", path, d.msg);
    return 1;
  }
  ljm_progress_start(&progress, in, path, quiet);
  ljm_model_set_progress(m, ljm_progress_update, &progress);
  LjmStatus st = ljm_model_load(m, in, path, &d);
  ljm_progress_end(&progress);
  ljm_model_set_progress(m, NULL, NULL);
  ljm_input_close(in);
  const LjmStreamInfo *info = ljm_model_stream(m);
  /* A cut stream is reported as far as it goes; after an error only what
  ** follows a readable event-section prologue is worth printing. */
  *worth_output = info->ljm_version != 0 || (st == LJM_TRUNCATED && !strict);
  if (st == LJM_ERROR) {
    char line[512];
    ljm_diag_format(&d, path, line, sizeof(line));
    fprintf(stderr, "%s\n", line);
    return 1;
  }
  if (st == LJM_TRUNCATED) {
    const LjmTotals *t = ljm_model_totals(m);
    fprintf(stderr, "%s: byte %llu: %s%s (%llu event%s before it %s)\n", path,
            (unsigned long long)d.offset, strict ? "" : "warning: ", d.msg,
            (unsigned long long)t->events, t->events == 1 ? "" : "s",
            strict ? "read; --strict rejects the stream" : "reported");
    if (strict) return 1;
  }
  const char *const *terms;
  /* a stream with allocation types has labels, even with no block in view */
  if (ljm_model_label_filters(m, &terms) && !info->label_sets && !info->types) {
    fprintf(stderr, "%s: --label %s: the profile has no labels (they are recorded with "
            "rec.label under 'ljm record --time', --stacks or --sample)\n", path, terms[0]);
    *worth_output = 0;
    return 1;
  }
  if (ljm_model_group_key(m) && !info->label_sets && !info->types) {
    fprintf(stderr, "%s: --group-by %s: the profile has no labels (they are recorded with "
            "rec.label under 'ljm record --time', --stacks or --sample)\n", path,
            ljm_model_group_key(m));
    *worth_output = 0;
    return 1;
  }
  /* (a stream cut before its events has said so above) */
  if (info->windowed && info->ljm_version && !(info->ext_flags & 2)) {
    fprintf(stderr, "%s: --from/--to: the profile has no time marks (they are recorded by "
            "'ljm record --time', --stacks or --sample)\n", path);
    *worth_output = 0;
    return 1;
  }
  if (info->windowed && info->recorded != LJM_NO_TIME_US && info->window_from > info->recorded) {
    fprintf(stderr, "%s: --from: the window starts at %.6f s, after the recording's end "
            "(%.6f s)\n", path, info->window_from / 1e6, info->recorded / 1e6);
    *worth_output = 0;
    return 1;
  }
  if (info->trailing)
    fprintf(stderr, "%s: byte %llu: warning: %llu bytes after the end marker ignored\n",
            path, (unsigned long long)info->bytes, (unsigned long long)info->trailing);
  if (info->names_cut)
    fprintf(stderr, "%s: byte %llu: warning: a name of %llu bytes was cut to its first %u "
            "(%llu name%s cut in all)\n", path, (unsigned long long)info->name_cut_at,
            (unsigned long long)info->name_cut_len, LJM_STRING_MAX,
            (unsigned long long)info->names_cut, info->names_cut == 1 ? "" : "s");
  return 0;
}

int ljm_cli_close_output(FILE *f, const char *name)
{
  int bad = fflush(f) != 0 || ferror(f);
  int err = errno;
  if (f != stdout && fclose(f) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (bad) {
    fprintf(stderr, "ljm: %s: write error: %s\n", name, strerror(err));
    return 1;
  }
  return 0;
}

int ljm_cli_load_heap(const char *path, LjmHeapGraph *g, int *rc)
{
  LjmDiag d;
  memset(g, 0, sizeof(*g));
  LjmInput *in = ljm_input_open(path, &d);
  if (!in) {
    fprintf(stderr, "%s: cannot open: %s\n", path, d.msg);
    *rc = LJM_EXIT_BAD_INPUT;
    return 0;
  }
  LjmStatus st = ljm_heapgraph_load(g, in, &d);
  ljm_input_close(in);
  if (st != LJM_OK) {
    char line[512];
    ljm_diag_format(&d, path, line, sizeof(line));
    fprintf(stderr, "%s%s\n", line, st == LJM_TRUNCATED ? " (reported as far as it goes)" : "");
    *rc = LJM_EXIT_BAD_INPUT;
  }
  return g->build && g->nobj;  /* the header and the root were read */
}

int ljm_cli_load_heap_model(const char *path, LjmModel *m, int *worth_output)
{
  LjmHeapGraph g;
  int rc = 0;
  *worth_output = 0;
  if (ljm_cli_load_heap(path, &g, &rc)) {
    LjmDiag d;
    if (ljm_model_load_heap(m, &g, path, &d) == LJM_OK) {
      *worth_output = 1;
    } else {
      fprintf(stderr, "%s: %s\n", path, d.msg);
      rc = LJM_EXIT_BAD_INPUT;
    }
  }
  ljm_heapgraph_free(&g);
  return rc;
}
