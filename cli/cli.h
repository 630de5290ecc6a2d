/* cli.h -- what the ljm subcommands share. */
#ifndef LJM_CLI_H
#define LJM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "model/ljm_heapgraph.h"
#include "model/ljm_model_load.h"

#define LJM_VERSION "0.1.0"

/* Exit statuses of every subcommand. */
enum { LJM_EXIT_OK = 0, LJM_EXIT_BAD_INPUT = 1, LJM_EXIT_USAGE = 2 };

/* Prints "ljm <cmd>: <message> (see 'ljm <cmd> --help')" and returns 2. */
int ljm_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Decodes 'path' into m, printing the one-line error or truncation warning
** ("FILE: byte N: ..."), and a progress line while it takes long (unless
** quiet; progress.h). Returns 0 when the model is usable as a complete or
** tolerated-truncated profile, 1 otherwise. *worth_output tells whether the
** model holds anything worth writing out (the event section was reached). */
int ljm_cli_load(const char *path, int strict, int quiet, LjmModel *m, int *worth_output);

/* The filters (--label, --size, --function, --source and their --not-
** forms) and --group-by KEY (filter_args.c). */
#define LJM_CLI_LABELS_MAX 16
typedef struct LjmCliFilter {
  const char *terms[LJM_CLI_LABELS_MAX];
  size_t n;
  const char *group_by;  /* --group-by KEY, or NULL */
  int size;  /* --size given: the range, inclusive */
  uint64_t size_min, size_max;
  const char *regex[LJM_FILTER_REGEX_MAX];  /* --function ... in the order given */
  int regex_kind[LJM_FILTER_REGEX_MAX];     /* LjmFrameFilter */
  size_t nregex;
  LjmFateSpec fate;  /* --lifetime, --lived, --site-leaked (a first reading) */
} LjmCliFilter;
/* The filters' long options, codes LJM_OPT_FILTER_FIRST and up (at the end
** of a command's option table, before its terminator). */
enum {
  LJM_OPT_FILTER_FIRST = 0x400,
  LJM_OPT_SIZE = LJM_OPT_FILTER_FIRST,
  LJM_OPT_FUNCTION,
  LJM_OPT_NOT_FUNCTION,
  LJM_OPT_SOURCE,
  LJM_OPT_NOT_SOURCE,
  LJM_OPT_LIFETIME,
  LJM_OPT_LIVED,
  LJM_OPT_SITE_LEAKED,
  LJM_OPT_FILTER_END
};
#define LJM_CLI_FILTER_OPTIONS                                          \
  { "size", required_argument, NULL, LJM_OPT_SIZE },                    \
  { "function", required_argument, NULL, LJM_OPT_FUNCTION },            \
  { "not-function", required_argument, NULL, LJM_OPT_NOT_FUNCTION },    \
  { "source", required_argument, NULL, LJM_OPT_SOURCE },                \
  { "not-source", required_argument, NULL, LJM_OPT_NOT_SOURCE },          \
  { "lifetime", required_argument, NULL, LJM_OPT_LIFETIME },              \
  { "lived", required_argument, NULL, LJM_OPT_LIVED },                    \
  { "site-leaked", required_argument, NULL, LJM_OPT_SITE_LEAKED }
/* The filters' lines of a command's --help. */
#define LJM_CLI_FILTER_HELP                                                     \
  "  --size MIN..MAX   only blocks of MIN to MAX bytes (either may be left\n"   \
  "                    out; suffixes K, M, G: KiB, MiB, GiB)\n"                  \
  "  --function REGEX  only blocks with a frame of their allocation stack (the\n" \
  "                    line, without stacks) in a function whose name matches\n" \
  "                    REGEX (POSIX extended); --not-function: with none\n"      \
  "  --source REGEX    the same for the source file; --not-source: with none\n"
/* The lines of the filters that read FILE twice. */
#define LJM_CLI_FATE_HELP                                                        \
  "  --lifetime WHICH  only blocks still in use at the end (leaked), freed\n"    \
  "                    before another block was allocated (temporary) or\n"    \
  "                    freed before the end (freed); reads FILE twice\n"        \
  "  --lived MIN..MAX  only blocks that lived MIN to MAX ('1s..', '..500ms'; in\n" \
  "                    use at the end: until the end; recordings with time)\n"  \
  "  --site-leaked PCT only blocks of lines where at least PCT% of the blocks\n"  \
  "                    made are still in use at the end\n"
/* Keeps one filter option (code c, LJM_OPT_*): 0, or the usage error's
** exit status (a range that is empty or unreadable, a regex that does not
** compile: named with its option). */
int ljm_cli_filter_arg(LjmCliFilter *f, const char *cmd, int c, const char *arg);
/* The first filter option given other than --label ("--size", ...), or NULL. */
const char *ljm_cli_filter_named(const LjmCliFilter *f);
/* Keeps one --label argument; 0, or the usage error's exit status. */
int ljm_cli_label_arg(LjmCliFilter *l, const char *cmd, const char *arg);
/* Keeps the --group-by argument; 0, or the usage error's exit status. */
int ljm_cli_group_arg(LjmCliFilter *l, const char *cmd, const char *arg);
/* Sets m's filters and grouping (before loading; ljm_cli_load then
** refuses a stream without labels for --label): 0, or -1 when out of memory. */
int ljm_cli_filter_apply(LjmModel *m, const LjmCliFilter *l);
/* The first of --lifetime, --lived and --site-leaked that l sets (each asks
** for a first reading), or NULL. */
const char *ljm_cli_fate_named(const LjmCliFilter *l);

/* --from T and --to T (window.c): each as given, and its microseconds
** from the start, or (from_end) from the end. */
typedef struct LjmCliTime {
  const char *arg;  /* NULL: not given */
  uint64_t us;
  int from_end;
} LjmCliTime;
typedef struct LjmCliWindow {
  LjmCliTime from, to;
} LjmCliWindow;
/* "30s", "2m", "1.5h", "500ms", "90" (seconds) -> usec: 0, or -1 when bad. */
int ljm_cli_duration(const char *s, uint64_t *usec);
/* Keeps a --from (is_to 0) or --to argument; 0, or the usage error's status. */
int ljm_cli_window_arg(LjmCliWindow *w, const char *cmd, int is_to, const char *arg);
/* Sets m's window (before loading), reading the stream's end first for a
** time from the end; ljm_cli_load then refuses a stream without time
** marks, or a window after its end. 0, or the usage error's status. */
/* The window's bounds in usec (to UINT64_MAX: the end), the stream's end
** read first for a time from the end: 0, or the usage error's status. */
int ljm_cli_window_resolve(const LjmCliWindow *w, const char *path, const char *cmd,
                           uint64_t *from_us, uint64_t *to_us);
int ljm_cli_window_apply(LjmModel *m, const LjmCliWindow *w, const char *path, const char *cmd);
/* When l asks for it, reads path once (in window w, as m will) and gives m
** the blocks' fates (first_pass.c). 0, or the exit status after a one-line
** message (standard input cannot be read twice; --lived without time). */
int ljm_cli_fates_apply(LjmModel *m, const LjmCliFilter *l, const LjmCliWindow *w,
                        const char *path, const char *cmd);
/* The first reading itself, of an input the caller opened (and closes),
** in window w (NULL: none), with a progress callback (NULL: none); the
** same statuses. ljm top reads each refresh's prefix so. */
int ljm_cli_fates_read(LjmModel *m, const LjmCliFilter *l, const LjmCliWindow *w, LjmInput *in,
                       const char *path, const char *cmd, LjmProgressFn progress, void *ud);

/* Reads a heap snapshot into g (freed by the caller either way). A cut or bad
** snapshot gets its one-line message and *rc = 1; what was read is kept.
** Returns whether anything worth reporting was read (its header and root). */
int ljm_cli_load_heap(const char *path, LjmHeapGraph *g, int *rc);

/* A heap snapshot as a model (ljm_model_load_heap: the heap as a flame
** graph), errors reported as ljm_cli_load reports them; returns the exit
** status. *worth_output: the model holds the snapshot. */
int ljm_cli_load_heap_model(const char *path, LjmModel *m, int *worth_output);

/* Flushes stdout-like streams; prints an error and returns 1 on write failure. */
int ljm_cli_close_output(FILE *f, const char *name);

int ljm_cmd_report(int argc, char **argv);
/* ljm heap: a heap snapshot by type (cmd_heap.c). */
int ljm_cmd_heap(int argc, char **argv);
int ljm_cmd_convert(int argc, char **argv);
/* ljm growth: what grows steadily over a recording's time (cmd_growth.c). */
int ljm_cmd_growth(int argc, char **argv);
/* ljm top: a stream still being written, watched live (cmd_top.c). */
int ljm_cmd_top(int argc, char **argv);

#endif
