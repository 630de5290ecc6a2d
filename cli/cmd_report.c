/* cmd_report.c -- ljm report: the reference-compatible text report. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "exporters/ljm_exporter.h"
#include "exporters/text/trace_lines.h"

static const char usage[] =
    "usage: ljm report [--by KEY] [--temporary] [--label KEY=VALUE]... [--from T] [--to T]\n"
    "                  [--size MIN..MAX] [--[not-]function REGEX]... [--[not-]source REGEX]...\n"
    "                  [--lifetime leaked|temporary|freed] [--lived MIN..MAX] [--site-leaked PCT]\n"
    "                  [--leak-only] [--human-readable] [--traces=lines] [--strict] [-q] FILE\n"
    "\n"
    "Prints the memory report of an ljm profile exactly as Tarantool's\n"
    "memprof parser does (luajit -tm). FILE may be gzip- or zstd-compressed,\n"
    "or '-' for standard input. Rows with equal counts are ordered by name.\n"
    "\n"
    "  --by KEY          first a table of the bytes and blocks allocated, freed\n"
    "                    and in use per value of label KEY (rec.label), a block\n"
    "                    counting for the labels it was allocated under\n"
    "  --temporary       first the temporary allocations of each line, most\n"
    "                    first: blocks freed by the very next allocation event\n"
    "                    after they were made (heaptrack's rule, which tells\n"
    "                    blocks apart by stack and size; exact recordings)\n"
    "  --label KEY=VALUE only the blocks allocated under that label (KEY=(none):\n"
    "                    without KEY), as if the rest had not been recorded;\n"
    "                    repeat it to narrow further\n"
    LJM_CLI_FILTER_HELP
    LJM_CLI_FATE_HELP
    "  --from T, --to T  only the events between T and T: seconds from the\n"
    "                    start ('30', '2m', '1500ms') or from the end ('-30s');\n"
    "                    a block allocated before and freed in the window is a\n"
    "                    free (recordings with time marks: --time, --stacks)\n"
    "  --leak-only       print only the HEAP SUMMARY (and ALIASES)\n"
    "  --human-readable  sizes in KiB/MiB/GiB instead of bytes\n"
    "  --traces=lines    charge each JIT trace's events to the line the trace\n"
    "                    started at, merged with that line's own row (the\n"
    "                    default, --traces=traces, names traces as the\n"
    "                    reference does: TRACE [n] started at FILE:LINE)\n"
    "  --strict          a stream that stops early is an error (exit 1)\n"
    "                    instead of a warning\n"
    "  -q, --quiet       no progress line (shown on a terminal while a large\n"
    "                    profile decodes), nor the note when JIT traces hold\n"
    "                    most allocations\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 success, 1 bad or unreadable profile, 2 usage error.\n";

int ljm_cmd_report(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "by", required_argument, NULL, 'b' },
    { "temporary", no_argument, NULL, 'P' },
    { "label", required_argument, NULL, 'L' },
    { "from", required_argument, NULL, 'F' },
    { "to", required_argument, NULL, 'T' },
    { "leak-only", no_argument, NULL, 'l' },
    { "human-readable", no_argument, NULL, 'H' },
    { "strict", no_argument, NULL, 's' },
    { "traces", required_argument, NULL, 't' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    LJM_CLI_FILTER_OPTIONS,
    { NULL, 0, NULL, 0 }
  };
  LjmExportOptions o;
  memset(&o, 0, sizeof(o));
  int strict = 0, quiet = 0, c;
  LjmCliFilter labels;
  memset(&labels, 0, sizeof(labels));
  LjmCliWindow window;
  memset(&window, 0, sizeof(window));
  optind = 1;
  while ((c = ljm_getopt(argc, argv, "hq", longopts, "report")) != -1) {
    switch (c) {
    case 'b':
      if (!*optarg) return ljm_cli_usage_error("report", "--by wants a label key");
      o.by_key = optarg;
      break;
    case 'L':
      if ((c = ljm_cli_label_arg(&labels, "report", optarg))) return c;
      break;
    case 'F':
    case 'T':
      if ((c = ljm_cli_window_arg(&window, "report", c == 'T', optarg))) return c;
      break;
    case 'l': o.leak_only = 1; break;
    case 'P': o.temporaries = 1; break;
    case 'H': o.human_readable = 1; break;
    case 's': strict = 1; break;
    case 't':
      if (!strcmp(optarg, "lines")) o.traces_as_lines = 1;
      else if (strcmp(optarg, "traces"))
        return ljm_cli_usage_error("report", "--traces wants 'lines' or 'traces', not '%s'", optarg);
      break;
    case 'q': quiet = 1; break;
    case 'h':
      fputs(usage, stdout);
      return ljm_cli_close_output(stdout, "stdout");
    default:
      if (c >= LJM_OPT_FILTER_FIRST && c < LJM_OPT_FILTER_END) {
        if ((c = ljm_cli_filter_arg(&labels, "report", c, optarg))) return c;
        break;
      }
      return LJM_EXIT_USAGE;
    }
  }
  if (optind >= argc) return ljm_cli_usage_error("report", "missing profile FILE");
  if (optind + 1 < argc)
    return ljm_cli_usage_error("report", "one profile at a time ('%s' is extra)", argv[optind + 1]);
  const char *path = argv[optind];
  o.in_path = path;
  o.out_path = "-";

  LjmModel *m = ljm_model_new();
  /* --function matches functions named from their sources (as convert's) */
  if (m && ((labels.nregex && ljm_model_set_sources(m, NULL, 0)) ||
            ljm_cli_filter_apply(m, &labels))) {
    ljm_model_free(m);
    m = NULL;
  }
  if (!m) {
    fprintf(stderr, "ljm: out of memory\n");
    return LJM_EXIT_BAD_INPUT;
  }
  if ((c = ljm_cli_window_apply(m, &window, path, "report")) ||
      (c = ljm_cli_fates_apply(m, &labels, &window, path, "report"))) {
    ljm_model_free(m);
    return c;
  }
  /* labels and temporaries need the whole model */
  if (!o.by_key && !o.temporaries) ljm_model_set_reference_only(m);
  int worth, rc = ljm_cli_load(path, strict, quiet, m, &worth);
  if (worth) {  /* even after an error: what was read is kept */
    char err[256] = "";
    const LjmExporter *e = ljm_exporter_by_name("convert", "text");
    void *st = e->begin(&o, stdout, err, sizeof(err));
    if (!st || e->finish(st, m, err, sizeof(err)) != 0) {
      fprintf(stderr, "ljm report: %s\n", err);
      rc = 1;
    }
    if (ljm_cli_close_output(stdout, "stdout")) rc = 1;
    /* JIT-heavy programs: the rows are mostly traces, whose numbers change
    ** from run to run; one line on stderr says how to get lines instead. */
    double share = o.traces_as_lines || quiet || rc ? 0 : ljm_trace_share(m);
    if (share > 0.5)
      fprintf(stderr, "ljm report: note: JIT traces hold %.0f%% of the allocations; record with "
              "'ljm record -joff' for rows per line (--traces=lines charges each trace to the "
              "line it started at)\n", share * 100);
  }
  ljm_model_free(m);
  return rc;
}
