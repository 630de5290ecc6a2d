/* cmd_convert.c -- ljm convert: a profile into any registered format. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/output.h"
#include "exporters/common/sampled.h"
#include "exporters/ljm_exporter.h"

/* A row of the formats table: name, suffixes, summary. */
#define FORMAT_ROW "  %-12s %-33s %s\n"

static void usage(FILE *f)
{
  fputs("usage: ljm convert [-f FORMAT] [--value KIND] [options] -o OUT FILE...\n"
        "\n"
        "Writes the ljm profile FILE ('-' for stdin; gzip or zstd allowed) as OUT\n"
        "('-' for stdout where the format allows). Without -f the format\n"
        "comes from OUT's name. FILE may be a heap snapshot (.ljh, a regular\n"
        "file): a format that reads both draws the heap as a flame graph, each\n"
        "object's bytes under its path from the roots (the dominator tree).\n"
        "Several profiles (the workers of one server) make one pprof profile,\n"
        "their figures added up.\n"
        "\nformats:\n", f);
  for (const LjmExporter *const *e = ljm_exporters(); *e; e++) {
    if (strcmp((*e)->command, "convert")) continue;
    char sfx[128] = "";
    for (const char *const *s = (*e)->suffixes; s && *s; s++)
      snprintf(sfx + strlen(sfx), sizeof(sfx) - strlen(sfx), "%s%s", *sfx ? " " : "", *s);
    fprintf(f, FORMAT_ROW, (*e)->name, sfx, (*e)->summary);
  }
  /* What each reads, from the registry. */
  static const struct { unsigned reads; const char *what; } kinds[] = {
    { LJM_READS_PROFILE | LJM_READS_SNAPSHOT, "profiles and snapshots" },
    { LJM_READS_PROFILE, "profiles only" },
    { LJM_READS_SNAPSHOT, "snapshots only" },
  };
  fputc('\n', f);
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    int n = 0;
    for (const LjmExporter *const *e = ljm_exporters(); *e; e++)
      if (!strcmp((*e)->command, "convert") && (*e)->reads == kinds[k].reads)
      {
        if (n++) fprintf(f, ", %s", (*e)->name);
        else fprintf(f, "  %s: %s", kinds[k].what, (*e)->name);
      }
    if (n) fputc('\n', f);
  }
  fputs("\noptions:\n"
        "  -f, --format FORMAT  output format (see above)\n"
        "  -o, --output OUT     output file, or '-' for stdout\n"
        "  --value KIND         figure to show where a format shows one:\n"
        "                       alloc_bytes, alloc_count, inuse_bytes,\n"
        "                       inuse_count, peak_bytes, temp_count\n"
        "                       (temporary allocations: freed right after\n"
        "                       they were made; exact recordings)\n"
        "  --source-dir DIR     look for Lua sources under DIR too (repeatable);\n"
        "                       functions are named from their definition lines\n"
        "                       when the source is found (else file and line)\n"
        "  --label KEY=VALUE    only the blocks allocated under that label\n"
        "                       (rec.label; KEY=(none): without KEY), as if the\n"
        "                       rest had not been recorded; repeatable (not with\n"
        "                       -f ljm, which copies the stream)\n"
        "  --size MIN..MAX      only blocks of MIN to MAX bytes (either may be\n"
        "                       left out: '1M..'; K, M, G: KiB, MiB, GiB)\n"
        "  --function REGEX     only blocks with a frame of their allocation\n"
        "                       stack (without stacks: the line) in a function\n"
        "                       whose name matches REGEX (POSIX extended)\n"
        "  --not-function REGEX only blocks with no such frame\n"
        "  --source REGEX, --not-source REGEX\n"
        "                       the same for the frames' source files\n"
        "  --lifetime WHICH     only blocks still in use at the end (leaked),\n"
        "                       freed before another block was allocated\n"
        "                       (temporary) or freed before the end (freed);\n"
        "                       reads FILE twice\n"
        "  --lived MIN..MAX     only blocks that lived MIN to MAX ('1s..',\n"
        "                       '..500ms'; recordings with time)\n"
        "  --site-leaked PCT    only blocks of lines where at least PCT% of the\n"
        "                       blocks made are still in use at the end; filters\n"
        "                       add up, and figures and titles say which made\n"
        "                       the view (not with -f ljm)\n"
        "  --group-by KEY       one root frame per value of label KEY\n"
        "                       (\"plugin=auth\", \"plugin=(none)\") above the\n"
        "                       stacks: a flame graph per plugin side by side\n"
        "  --from T, --to T     only the events between T and T (seconds from\n"
        "                       the start: '30', '2m', '1500ms'; from the end:\n"
        "                       '-30s'), memory in use at --from carried in;\n"
        "                       times count from --from (recordings with time\n"
        "                       marks; not with -f ljm)\n"
        "  --min-bytes N        markdown: hide rows smaller than N bytes\n"
        "  --top N              markdown: show the N largest rows only\n"
        "  --leak-only          text: only the HEAP SUMMARY\n"
        "  --human-readable     text: sizes in KiB/MiB/GiB\n"
        "  --strict             a stream that stops early is an error\n"
        "  -q, --quiet          no progress line (shown on a terminal while a\n"
        "                       large profile decodes)\n"
        "  -h, --help           show this help\n"
        "\nExit status: 0 success, 1 bad profile or write error, 2 usage error.\n", f);
}

static int parse_count(const char *s, uint64_t *out)
{
  char *end;
  errno = 0;
  if (!*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

typedef struct Run {
  const LjmExporter *e;
  void *st;
} Run;

/* An output of a heap snapshot's graph (write_heap). */
static int convert_heap(const LjmExporter *e, const LjmExportOptions *o)
{
  const char *in_path = o->in_path, *out_path = o->out_path;
  LjmHeapGraph g;
  int rc = 0;
  if (!ljm_cli_load_heap(in_path, &g, &rc)) {  /* nothing was read: leave no output behind */
    ljm_heapgraph_free(&g);
    return LJM_EXIT_BAD_INPUT;
  }
  LjmOutput out = LJM_OUTPUT_INIT;
  char err[256] = "";
  if (ljm_output_open(&out, out_path) != 0) {
    ljm_heapgraph_free(&g);
    return LJM_EXIT_BAD_INPUT;
  }
  if (rc && ljm_output_is_file(&out)) {  /* failed: no file is written or replaced */
    ljm_output_abort(&out);
    ljm_heapgraph_free(&g);
    return rc;
  }
  if (e->write_heap(&g, o, out.f, err, sizeof(err))) {
    fprintf(stderr, "ljm convert: %s: %s\n", out_path, err);
    ljm_output_abort(&out);
    ljm_heapgraph_free(&g);
    return LJM_EXIT_BAD_INPUT;
  }
  if (ljm_output_commit(&out)) rc = LJM_EXIT_BAD_INPUT;
  ljm_heapgraph_free(&g);
  return rc;
}

/* An output of the stream's bytes as they decode (write_stream): what
** was read is written even when the stream is cut; a bad stream, or a cut
** one with --strict, leaves no file. */
static int convert_stream(const LjmExporter *e, const LjmExportOptions *o, int strict)
{
  LjmDiag d;
  LjmOutput out = LJM_OUTPUT_INIT;
  LjmInput *in = ljm_input_open(o->in_path, &d);
  if (!in) {
    fprintf(stderr, "%s: cannot open: %s\n", o->in_path, d.msg);
    return LJM_EXIT_BAD_INPUT;
  }
  if (ljm_output_open(&out, o->out_path) != 0) {
    ljm_input_close(in);
    return LJM_EXIT_BAD_INPUT;
  }
  int werr = 0;
  char note[PATH_MAX + 256];  /* names the input */
  LjmStatus st = e->write_stream(in, o, out.f, &d, &werr, note, sizeof(note));
  ljm_input_close(in);
  if (werr) {  /* the output's fault, not the input's */
    fprintf(stderr, "ljm convert: %s: write error: %s\n", o->out_path, strerror(werr));
    ljm_output_abort(&out);
    return LJM_EXIT_BAD_INPUT;
  }
  char line[512];
  ljm_diag_format(&d, o->in_path, line, sizeof(line));
  if (st == LJM_ERROR || (st == LJM_TRUNCATED && strict)) {
    fprintf(stderr, "%s\n", line);
    ljm_output_abort(&out);
    return LJM_EXIT_BAD_INPUT;
  }
  if (st == LJM_TRUNCATED)
    fprintf(stderr, "%s: byte %llu: warning: %s (written as far as it goes)\n", o->in_path,
            (unsigned long long)d.offset, d.msg);
  if (*note) fprintf(stderr, "ljm convert: %s\n", note);
  return ljm_output_commit(&out) ? LJM_EXIT_BAD_INPUT : LJM_EXIT_OK;
}

/* A model for one profile with the options every profile shares; NULL
** (said) when out of memory. */
static LjmModel *new_model(const char *const *srcdirs, size_t nsrcdirs, const LjmCliFilter *labels)
{
  LjmModel *m = ljm_model_new();
  if (m && (ljm_model_set_sources(m, srcdirs, nsrcdirs) != 0 || ljm_cli_filter_apply(m, labels))) {
    ljm_model_free(m);
    m = NULL;
  }
  if (!m) fprintf(stderr, "ljm: out of memory\n");
  return m;
}

static void note_missing_sources(const LjmModel *m, const LjmExporter *e, int quiet);

/* --value temp_count of a profile that cannot count temporary allocations:
** said, and 1; else 0. */
static int temp_refused(const LjmModel *m, LjmValueKind value, const char *path)
{
  const char *why = value == LJM_VALUE_TEMP_COUNT ? ljm_temp_refusal(m) : NULL;
  if (why) fprintf(stderr, "%s: --value temp_count: %s\n", path, why);
  return why != NULL;
}

/* One of several profiles decoded into a model of its own: NULL (said)
** when it cannot be read. */
static LjmModel *load_one(const char *path, const char *const *srcdirs, size_t nsrcdirs,
                          const LjmCliFilter *labels, const LjmCliWindow *window, int strict,
                          int quiet, LjmValueKind value, int *rc)
{
  int worth = 0;
  LjmModel *m = NULL;
  if (!strcmp(path, "-")) {
    *rc = ljm_cli_usage_error("convert", "'-' (stdin) is one profile on its own, not one of "
                              "several");
  } else if (ljh_sniff(path)) {
    fprintf(stderr, "%s: a heap snapshot: only profiles merge; convert one snapshot at a time\n",
            path);
    *rc = LJM_EXIT_BAD_INPUT;
  } else if (!(m = new_model(srcdirs, nsrcdirs, labels))) {
    *rc = LJM_EXIT_BAD_INPUT;
  } else if (!(*rc = ljm_cli_window_apply(m, window, path, "convert")) &&
             !(*rc = ljm_cli_fates_apply(m, labels, window, path, "convert"))) {
    *rc = ljm_cli_load(path, strict, quiet, m, &worth);
    if (!*rc && !worth) *rc = LJM_EXIT_BAD_INPUT;
    if (!*rc && temp_refused(m, value, path)) *rc = LJM_EXIT_BAD_INPUT;
  }
  if (*rc) {
    ljm_model_free(m);
    return NULL;
  }
  return m;
}

/* Several profiles into one output that merges them (e->add): each decodes
** into a model of its own, added to the output (the last one finishes it)
** once the next has been read, then freed: two models at most at a time.
** A profile that cannot be read fails the whole conversion, and no file is
** written. */
static int convert_many(const LjmExporter *e, LjmExportOptions *o, char *const *files, int n,
                        const char *const *srcdirs, size_t nsrcdirs, const LjmCliFilter *labels,
                        const LjmCliWindow *window, int strict, int quiet)
{
  int rc = 0;
  LjmModel *prev = load_one(files[0], srcdirs, nsrcdirs, labels, window, strict, quiet, o->value, &rc);
  if (!prev) return rc;
  LjmOutput out = LJM_OUTPUT_INIT;
  char err[256] = "";
  void *st = NULL;
  if (ljm_output_open(&out, o->out_path) != 0) {
    ljm_model_free(prev);
    return LJM_EXIT_BAD_INPUT;
  }
  o->in_path = files[0];
  if (!(st = e->begin(o, out.f, err, sizeof(err)))) rc = -1;
  for (int i = 1; i < n && !rc; i++) {
    LjmModel *m = load_one(files[i], srcdirs, nsrcdirs, labels, window, strict, quiet, o->value, &rc);
    if (!m) break;
    if (i == 1) note_missing_sources(prev, e, quiet);
    if (e->add(st, prev, err, sizeof(err))) rc = -1;
    ljm_model_free(prev);
    prev = m;
  }
  /* finish frees the state, so it runs after a failure too */
  if (st && e->finish(st, prev, err, sizeof(err)) && !rc) rc = -1;
  ljm_model_free(prev);
  if (rc) {
    if (rc < 0) fprintf(stderr, "ljm convert: %s: %s\n", o->out_path, err[0] ? err : "export failed");
    ljm_output_abort(&out);
    return rc < 0 ? LJM_EXIT_BAD_INPUT : rc;
  }
  return ljm_output_commit(&out) ? LJM_EXIT_BAD_INPUT : LJM_EXIT_OK;
}

/* Source files looked for and not found: said once, as names depend on them
** (a frame the stream names keeps its name anywhere). The text report
** names nothing from sources. */
static void note_missing_sources(const LjmModel *m, const LjmExporter *e, int quiet)
{
  const char *example;
  char shown[64];
  size_t i;
  uint32_t n = ljm_model_sources_missing(m, &example);
  if (!n || quiet || !strcmp(e->name, "text")) return;
  /* A chunk name is any bytes: printable ASCII only, and short. */
  for (i = 0; example[i] && i < sizeof(shown) - 1; i++)
    shown[i] = example[i] >= 0x20 && example[i] < 0x7f ? example[i] : '?';
  shown[i] = 0;
  fprintf(stderr, "ljm convert: note: %u Lua source file%s not found (e.g. %s%s): functions the "
          "stream does not name read \"function <file:N>\" (--source-dir DIR; -q)\n",
          n, n == 1 ? "" : "s", shown, example[i] ? "..." : "");
}

int ljm_cmd_convert(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "format", required_argument, NULL, 'f' },
    { "output", required_argument, NULL, 'o' },
    { "value", required_argument, NULL, 'v' },
    { "min-bytes", required_argument, NULL, 'm' },
    { "top", required_argument, NULL, 't' },
    { "leak-only", no_argument, NULL, 'l' },
    { "human-readable", no_argument, NULL, 'H' },
    { "strict", no_argument, NULL, 's' },
    { "source-dir", required_argument, NULL, 'S' },
    { "label", required_argument, NULL, 'L' },
    { "group-by", required_argument, NULL, 'G' },
    { "from", required_argument, NULL, 'F' },
    { "to", required_argument, NULL, 'T' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    LJM_CLI_FILTER_OPTIONS,
    { NULL, 0, NULL, 0 }
  };
  LjmExportOptions o;
  memset(&o, 0, sizeof(o));
  const char *format = NULL;
  const char *srcdirs[64];
  size_t nsrcdirs = 0;
  int strict = 0, quiet = 0, c;
  LjmCliFilter labels;
  memset(&labels, 0, sizeof(labels));
  LjmCliWindow window;
  memset(&window, 0, sizeof(window));
  uint64_t n;
  optind = 1;
  while ((c = ljm_getopt(argc, argv, "f:o:hq", longopts, "convert")) != -1) {
    switch (c) {
    case 'f': format = optarg; break;
    case 'o': o.out_path = optarg; break;
    case 'v': {
      int k = ljm_value_kind_parse(optarg);
      if (k < 0)
        return ljm_cli_usage_error("convert", "unknown --value '%s'", optarg);
      o.value = (LjmValueKind)k;
      break;
    }
    case 'm':
      if (parse_count(optarg, &o.min_bytes))
        return ljm_cli_usage_error("convert", "--min-bytes needs a number, not '%s'", optarg);
      break;
    case 't':
      if (parse_count(optarg, &n) || n > 1000000000u)
        return ljm_cli_usage_error("convert", "--top needs a number, not '%s'", optarg);
      o.top = (unsigned)n;
      break;
    case 'l': o.leak_only = 1; break;
    case 'H': o.human_readable = 1; break;
    case 's': strict = 1; break;
    case 'q': quiet = 1; break;
    case 'S':
      if (nsrcdirs == sizeof(srcdirs) / sizeof(srcdirs[0]))
        return ljm_cli_usage_error("convert", "too many --source-dir options");
      srcdirs[nsrcdirs++] = optarg;
      break;
    case 'L':
      if ((c = ljm_cli_label_arg(&labels, "convert", optarg))) return c;
      break;
    case 'G':
      if ((c = ljm_cli_group_arg(&labels, "convert", optarg))) return c;
      break;
    case 'F':
    case 'T':
      if ((c = ljm_cli_window_arg(&window, "convert", c == 'T', optarg))) return c;
      break;
    case 'h':
      usage(stdout);
      return ljm_cli_close_output(stdout, "stdout");
    default:
      if (c >= LJM_OPT_FILTER_FIRST && c < LJM_OPT_FILTER_END) {
        if ((c = ljm_cli_filter_arg(&labels, "convert", c, optarg))) return c;
        break;
      }
      return LJM_EXIT_USAGE;
    }
  }
  if (!o.out_path) return ljm_cli_usage_error("convert", "missing -o OUT");
  if (optind >= argc) return ljm_cli_usage_error("convert", "missing profile FILE");
  o.in_path = argv[optind];

  Run run = { NULL, NULL };
  run.e = format ? ljm_exporter_by_name("convert", format)
                 : ljm_exporter_by_path("convert", o.out_path);
  if (!run.e) {
    if (format) return ljm_cli_usage_error("convert", "unknown format '%s'", format);
    return ljm_cli_usage_error("convert", "cannot tell the format from '%s'; name it with -f",
                               o.out_path);
  }
  if (optind + 1 < argc && !run.e->add)
    return ljm_cli_usage_error("convert", "one profile at a time ('%s' is extra; pprof merges "
                               "several)", argv[optind + 1]);
  /* The label filter is the model's: outputs without one cannot apply it. */
  if (labels.n && (run.e->write_heap || run.e->write_stream))
    return ljm_cli_usage_error("convert", "--label: the %s format is written from the %s as it "
                               "is, without the filter", run.e->name,
                               run.e->write_heap ? "heap snapshot" : "stream");
  if (ljm_cli_filter_named(&labels) && (run.e->write_heap || run.e->write_stream))
    return ljm_cli_usage_error("convert", "%s: the %s format is written from the %s as it is, "
                               "without the filter", ljm_cli_filter_named(&labels), run.e->name,
                               run.e->write_heap ? "heap snapshot" : "stream");
  if (labels.group_by && (run.e->write_heap || run.e->write_stream))
    return ljm_cli_usage_error("convert", "--group-by: the %s format is written from the %s as "
                               "it is, without a call tree", run.e->name,
                               run.e->write_heap ? "heap snapshot" : "stream");
  if ((window.from.arg || window.to.arg) && (run.e->write_heap || run.e->write_stream))
    return ljm_cli_usage_error("convert", "--from/--to: the %s format is written from the %s as "
                               "it is, without a window", run.e->name,
                               run.e->write_heap ? "heap snapshot" : "stream");
  if (labels.group_by && !strcmp(run.e->name, "text"))
    return ljm_cli_usage_error("convert", "--group-by: the text report is Tarantool's; "
                               "'ljm report --by %s' gives its table per value", labels.group_by);
  /* Outputs without a model read the heap graph or the stream itself. */
  if (run.e->write_heap) return convert_heap(run.e, &o);
  int to_stdout = strcmp(o.out_path, "-") == 0;
  if (to_stdout && run.e->binary && isatty(1)) {
    fprintf(stderr, "ljm convert: %s output is binary; not writing it to a terminal\n",
            run.e->name);
    return LJM_EXIT_USAGE;
  }
  if (run.e->write_stream) return convert_stream(run.e, &o, strict);
  if (optind + 1 < argc)
    return convert_many(run.e, &o, argv + optind, argc - optind, srcdirs, nsrcdirs, &labels,
                        &window, strict, quiet);
  int heap = ljh_sniff(o.in_path);
  if (heap && (labels.n || labels.group_by)) {
    fprintf(stderr, "%s: %s %s: a heap snapshot has no labels\n", o.in_path,
            labels.n ? "--label" : "--group-by", labels.n ? labels.terms[0] : labels.group_by);
    return LJM_EXIT_BAD_INPUT;
  }
  if (heap && ljm_cli_filter_named(&labels)) {
    fprintf(stderr, "%s: %s: filters apply to recordings, not to a heap snapshot ('ljm heap "
            "--path-to' and --top choose its objects)\n", o.in_path, ljm_cli_filter_named(&labels));
    return LJM_EXIT_BAD_INPUT;
  }
  if (heap && (window.from.arg || window.to.arg)) {
    fprintf(stderr, "%s: --from/--to: a heap snapshot is one moment, with no time\n", o.in_path);
    return LJM_EXIT_BAD_INPUT;
  }
  if (heap && !(run.e->reads & LJM_READS_SNAPSHOT))
    return ljm_cli_usage_error("convert", "%s is a heap snapshot: 'ljm heap' prints it; convert "
                               "writes it as a flame graph (folded, svg, pprof, speedscope, ...)",
                               o.in_path);

  LjmModel *m = new_model(srcdirs, nsrcdirs, &labels);
  if (!m) return LJM_EXIT_BAD_INPUT;
  if ((c = ljm_cli_window_apply(m, &window, o.in_path, "convert")) ||
      (c = ljm_cli_fates_apply(m, &labels, &window, o.in_path, "convert"))) {
    ljm_model_free(m);
    return c;
  }
  LjmOutput out = LJM_OUTPUT_INIT;
  char err[256] = "";
  int rc = 0, worth = 0;
  /* Streaming formats write while decoding, the others once it is over. */
  if (run.e->streaming) {
    if (ljm_output_open(&out, o.out_path) != 0) {
      ljm_model_free(m);
      return LJM_EXIT_BAD_INPUT;
    }
    if (!(run.st = run.e->begin(&o, out.f, err, sizeof(err)))) goto export_failed;
    ljm_model_set_slices(m, run.e->slice_events);
    LjmListener l = { run.e->on_event, run.e->on_time };  /* the exporter's own: no hop */
    ljm_model_set_listener(m, &l, run.st);
  }
  /* A heap snapshot: the heap as a flame graph, in any format but text. */
  if (heap) rc = ljm_cli_load_heap_model(o.in_path, m, &worth);
  else rc = ljm_cli_load(o.in_path, strict, quiet, m, &worth);
  if (worth && !run.e->streaming && ljm_output_open(&out, o.out_path) != 0) {
    ljm_model_free(m);
    return LJM_EXIT_BAD_INPUT;
  }
  /* Nothing was read: leave no output behind. A failed conversion writes
  ** what was read before the error only where it replaces nothing (stdout,
  ** a device), never into a file: an existing one stays as it was. */
  if (!worth || (rc && ljm_output_is_file(&out)) || temp_refused(m, o.value, o.in_path)) {
    if (run.st) run.e->finish(run.st, m, err, sizeof(err));
    ljm_output_abort(&out);
    ljm_model_free(m);
    return rc ? rc : LJM_EXIT_BAD_INPUT;
  }
  if (!run.e->streaming && !(run.st = run.e->begin(&o, out.f, err, sizeof(err))))
    goto export_failed;
  if (run.e->finish(run.st, m, err, sizeof(err)) != 0) goto export_failed;
  if (ljm_output_commit(&out)) rc = 1;
  note_missing_sources(m, run.e, quiet);
  ljm_model_free(m);
  return rc;

export_failed:
  fprintf(stderr, "ljm convert: %s: %s\n", o.out_path, err[0] ? err : "export failed");
  ljm_output_abort(&out);
  ljm_model_free(m);
  return LJM_EXIT_BAD_INPUT;
}
