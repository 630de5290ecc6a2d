/* cmd_growth.c -- ljm growth: what grows steadily in a running program. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "exporters/ljm_exporter.h"

static const char usage[] =
    "usage: ljm growth [--skip DURATION | --from T] [--to T] [--fail-above RATE]\n"
    "                  [--top N] [--json]\n"
    "                  [--source-dir DIR]... [--label KEY=VALUE]... [--size MIN..MAX]\n"
    "                  [--[not-]function REGEX]... [--[not-]source REGEX]...\n"
    "                  [--lifetime leaked|temporary|freed] [--lived MIN..MAX] [--site-leaked PCT]\n"
    "                  [--strict] [-q] FILE\n"
    "\n"
    "Lists the lines and call stacks whose in-use bytes grow steadily over the\n"
    "time of a recording, steepest first: the slope (bytes per second and per\n"
    "hour) since the time it is measured from, how steadily they grew (the\n"
    "share of up to ten stretches of time that grew) and what they hold at the\n"
    "end. Memory that grows and then levels off (a cache that fills) is not\n"
    "listed. FILE is a recording with time marks: 'ljm record --stacks'\n"
    "(exact or --sample), or the Lua module's {stacks = true}; gzip- or\n"
    "zstd-compressed, or '-' for standard input.\n"
    "\n"
    "  --skip DURATION   leave out the first DURATION (warm-up): '30s', '2m',\n"
    "                    '500ms'; a bare number is seconds\n"
    "  --from T          the same, T also from the end: '-10m' (the last ten\n"
    "                    minutes)\n"
    "  --to T            leave out what comes after T (seconds from the start,\n"
    "                    or from the end: '-30s'); 'at the end' is then T\n"
    "  --fail-above RATE exit 3 when a line or a stack grows faster than RATE:\n"
    "                    '10KB/s', '1MB/h', '512k/min'; a bare size is per second\n"
    "                    (k, M, G: 1024, 1024^2, 1024^3)\n"
    "  --top N           rows per table (default 10)\n"
    "  --json            JSON instead of text\n"
    "  --source-dir DIR  also look for Lua sources under DIR, for functions'\n"
    "                    names (\"M.leak\", not \"function <app.lua:9>\")\n"
    "  --label KEY=VALUE only the blocks allocated under that label (rec.label;\n"
    "                    KEY=(none): without KEY); repeatable\n"
    LJM_CLI_FILTER_HELP
    LJM_CLI_FATE_HELP
    "  --strict          a stream that stops early is an error (exit 1)\n"
    "                    instead of a warning\n"
    "  -q, --quiet       no progress line\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 success, 1 bad or unreadable profile (or no time marks),\n"
    "2 usage error, 3 a line grows faster than --fail-above.\n";

enum { LJM_EXIT_ABOVE = 3 };

/* "10KB/s", "1MiB/h", "512k/min", "2048" -> bytes per second; -1 when bad. */
static int parse_rate(const char *s, double *rate)
{
  char *end;
  double v = strtod(s, &end), mul = 1, per = 1;
  if (end == s || !(v > 0)) return -1;
  switch (tolower((unsigned char)*end)) {
  case 'k': mul = 1024.0; end++; break;
  case 'm': mul = 1024.0 * 1024; end++; break;
  case 'g': mul = 1024.0 * 1024 * 1024; end++; break;
  default: break;
  }
  if (mul > 1 && *end == 'i') end++;
  if (tolower((unsigned char)*end) == 'b') end++;
  if (*end == '/') {
    end++;
    if (!strcasecmp(end, "s")) per = 1;
    else if (!strcasecmp(end, "min") || !strcasecmp(end, "m")) per = 60;
    else if (!strcasecmp(end, "h")) per = 3600;
    else return -1;
  } else if (*end) {
    return -1;
  }
  *rate = v * mul / per;
  return isfinite(*rate) && *rate > 0 ? 0 : -1;
}

int ljm_cmd_growth(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "skip", required_argument, NULL, 'S' },
    { "from", required_argument, NULL, 'F' },
    { "to", required_argument, NULL, 'T' },
    { "fail-above", required_argument, NULL, 'f' },
    { "top", required_argument, NULL, 't' },
    { "json", no_argument, NULL, 'j' },
    { "source-dir", required_argument, NULL, 'D' },
    { "label", required_argument, NULL, 'L' },
    { "strict", no_argument, NULL, 's' },
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
  int skip_given = 0;
  double fail_above = 0, steepest = 0;
  const char *fail_arg = NULL;
  const char *srcdirs[64];
  size_t nsrcdirs = 0;
  char *end;
  unsigned long top;
  optind = 1;
  while ((c = ljm_getopt(argc, argv, "hq", longopts, "growth")) != -1) {
    switch (c) {
    case 'S':
      if (ljm_cli_duration(optarg, &o.skip_us))
        return ljm_cli_usage_error("growth", "--skip wants a duration ('30s', '2m', '500ms'), "
                                   "not '%s'", optarg);
      skip_given = 1;
      break;
    case 'F':
    case 'T':
      if ((c = ljm_cli_window_arg(&window, "growth", c == 'T', optarg))) return c;
      break;
    case 'f':
      fail_arg = optarg;
      if (parse_rate(optarg, &fail_above))
        return ljm_cli_usage_error("growth", "--fail-above wants a rate ('10KB/s', '1MB/h'), "
                                   "not '%s'", optarg);
      break;
    case 't':
      top = strtoul(optarg, &end, 10);
      if (*optarg < '0' || *optarg > '9' || *end || top < 1 || top > 1000000)
        return ljm_cli_usage_error("growth", "--top wants a number 1..1000000, not '%s'", optarg);
      o.top = (unsigned)top;
      break;
    case 'j': o.json = 1; break;
    case 'D':
      if (nsrcdirs == sizeof(srcdirs) / sizeof(srcdirs[0]))
        return ljm_cli_usage_error("growth", "too many --source-dir options");
      srcdirs[nsrcdirs++] = optarg;
      break;
    case 'L':
      if ((c = ljm_cli_label_arg(&labels, "growth", optarg))) return c;
      break;
    case 's': strict = 1; break;
    case 'q': quiet = 1; break;
    case 'h':
      fputs(usage, stdout);
      return ljm_cli_close_output(stdout, "stdout");
    default:
      if (c >= LJM_OPT_FILTER_FIRST && c < LJM_OPT_FILTER_END) {
        if ((c = ljm_cli_filter_arg(&labels, "growth", c, optarg))) return c;
        break;
      }
      return LJM_EXIT_USAGE;
    }
  }
  if (optind >= argc) return ljm_cli_usage_error("growth", "missing profile FILE");
  if (optind + 1 < argc)
    return ljm_cli_usage_error("growth", "one profile at a time ('%s' is extra)", argv[optind + 1]);
  const char *path = argv[optind];
  if (ljh_sniff(path))
    return ljm_cli_usage_error("growth", "%s is a heap snapshot: 'ljm heap --base OLD NEW' says "
                               "what grew between two", path);
  o.in_path = path;
  o.out_path = "-";
  o.steepest = &steepest;
  if (skip_given && window.from.arg)
    return ljm_cli_usage_error("growth", "--skip and --from say the same: give one");
  /* The slopes are measured from --from (--skip's work), over the whole
  ** history before it: the model's window runs from 0 to --to. */
  uint64_t from_us = 0, to_us = UINT64_MAX;
  if ((window.from.arg || window.to.arg) &&
      (c = ljm_cli_window_resolve(&window, path, "growth", &from_us, &to_us)))
    return c;
  if (window.from.arg) o.skip_us = from_us;

  const LjmExporter *e = ljm_exporter_by_name("growth", "growth");
  char err[512] = "";
  LjmModel *m = ljm_model_new();
  if (m && (ljm_model_set_sources(m, srcdirs, nsrcdirs) != 0 || ljm_cli_filter_apply(m, &labels))) {
    ljm_model_free(m);
    m = NULL;
  }
  if (m && window.to.arg) ljm_model_set_window(m, 0, to_us);
  if (m && ljm_cli_fate_named(&labels)) {  /* the first reading in the same window: 0 to --to */
    LjmCliWindow upto = window;
    upto.from.arg = NULL;
    if ((c = ljm_cli_fates_apply(m, &labels, &upto, path, "growth"))) {
      ljm_model_free(m);
      return c;
    }
  }
  void *st = m ? e->begin(&o, stdout, err, sizeof(err)) : NULL;
  if (!st) {
    fprintf(stderr, "ljm growth: %s\n", m ? err : "out of memory");
    ljm_model_free(m);
    return LJM_EXIT_BAD_INPUT;
  }
  LjmListener l = { e->on_event, e->on_time };
  ljm_model_set_listener(m, &l, st);
  int worth, rc = ljm_cli_load(path, strict, quiet, m, &worth);
  if (!worth) {  /* nothing read: no events, so finish only frees st */
    e->finish(st, m, err, sizeof(err));
    ljm_model_free(m);
    return rc ? rc : LJM_EXIT_BAD_INPUT;
  }
  /* After a decoding error (rc 1) what was read is still analysed; a
  ** refusal then (no time marks, too short) adds nothing to that error. */
  if (e->finish(st, m, err, sizeof(err)) != 0) {
    fflush(stdout);
    if (!rc) fprintf(stderr, "ljm growth: %s: %s\n", path, err);
    rc = LJM_EXIT_BAD_INPUT;
  }
  ljm_model_free(m);
  if (ljm_cli_close_output(stdout, "stdout")) return LJM_EXIT_BAD_INPUT;
  if (!rc && fail_arg && steepest > fail_above) {
    fprintf(stderr, "ljm growth: %s: memory grows %.0f bytes/s, faster than --fail-above %s\n",
            path, steepest, fail_arg);
    return LJM_EXIT_ABOVE;
  }
  return rc;
}
