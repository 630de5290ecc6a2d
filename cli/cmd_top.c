/* cmd_top.c -- ljm top: a stream still being written, watched live.
**
** The model is built as the stream is read (decoder/ljm_decoder.h,
** ljm_input_follow); between reads, at each interval, model/ljm_live.h takes
** its figures and exporters/top draws them: the screen on a terminal, a
** plain table per interval otherwise. Everything runs in this one thread:
** where the data ends, the input waits in short steps, reading keys and
** redrawing, so the model is never read while an event is half applied.
** With a filter by fate the file is read anew at each refresh instead
** (top_reread.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/opts.h"
#include "cli/top_state.h"

static const char usage[] =
    "usage: ljm top [--interval S] [--stacks] [--by KEY] [--sort in-use|rate|growth]\n"
    "               [--top N] [--once] [--label KEY=VALUE]... [--size MIN..MAX]\n"
    "               [--[not-]function REGEX]... [--[not-]source REGEX]...\n"
    "               [--lifetime WHICH] [--lived MIN..MAX] [--site-leaked PCT] FILE|-\n"
    "\n"
    "Watches a recording while it is being written (ljm record with\n"
    "--flush-interval, the Lua module's flush option, the nginx example) or a\n"
    "stream on a pipe: the bytes in use and RSS with their history, and the\n"
    "lines (call stacks, label values) holding the most, with what each\n"
    "allocates and frees per second and how much it grew since ljm top\n"
    "started and since the last refresh. A long file is read up to its end\n"
    "first. On a terminal the screen refreshes in place; otherwise a plain\n"
    "table is printed per interval. FILE may be gzip or zstd (a pipe: plain).\n"
    "\n"
    "  --interval S   seconds between refreshes (default 1)\n"
    "  --stacks       rows per call stack, innermost frame first (recordings\n"
    "                 with --stacks) instead of per line\n"
    "  --by KEY       rows per value of label KEY (rec.label)\n"
    "  --sort WHAT    in-use (default), rate (allocated per second) or growth\n"
    "  --top N        rows of a plain table (default 10)\n"
    "  --once         read what is there, print one table and exit: rates are\n"
    "                 per second of the whole recording, growth since its start\n"
    "  --label KEY=VALUE only the blocks allocated under that label (rec.label;\n"
    "                 KEY=(none): without KEY); repeatable\n"
    LJM_CLI_FILTER_HELP
    LJM_CLI_FATE_HELP
    "                    (top: at each refresh, judged as of its end; FILE is\n"
    "                    read anew each time, twice, and a refresh waits at\n"
    "                    least as long as its readings took; not '-')\n"
    "  -h, --help     show this help\n"
    "\n"
    "Keys: i, a, g sort by in use, allocation rate, growth; v switches lines,\n"
    "stacks and label values; p pauses; q quits.\n"
    "\n"
    "Exit status: 0 after q, --once or a complete stream; 1 bad input, a\n"
    "stream cut short (a pipe that closed), a file truncated or replaced;\n"
    "2 usage error.\n";

/* Between reads: keys, a refresh when due, and (waiting) a pause of at
** most 100 ms. */
static void tick(Top *t, int waiting)
{
  if (ljm_top_signalled()) t->quit = 1;
  uint64_t now = ljm_top_now_us(t);
  /* Caught up where the file's data first ends after the reads passed its
  ** first size: every event read is in the model then (a pipe: at once). */
  if (!t->caught_up && (t->initial < 0 || (t->reached && waiting))) {
    t->caught_up = 1;
    t->status[0] = 0;
    t->next = now;
  }
  if (t->initial < 0 || (int64_t)ljm_input_position(t->in) >= t->initial) t->reached = 1;
  /* Not before the events begin (a bad stream gets its error alone), nor
  ** while a first read's events are still to come. */
  int ready = ljm_model_stream(t->m)->ljm_version != 0 &&
              (waiting || ljm_model_totals(t->m)->events != 0);
  static const char nolabels[] = "no labels so far (rec.label, recorded with --time, --stacks "
                                 "or --sample)";
  int none = ready && t->show.view == LJM_LIVE_LABELS && !ljm_model_stream(t->m)->label_sets;
  if (none && !t->status[0]) snprintf(t->status, sizeof(t->status), "%s", nolabels);
  else if (!none && !strcmp(t->status, nolabels)) t->status[0] = 0;
  if (t->caught_up && ready && !t->show.paused && now >= t->next) {
    ljm_top_refresh(t);
    t->next = now + t->interval;
  } else if (!t->caught_up && now >= t->next) {
    snprintf(t->status, sizeof(t->status), "reading %s up to its end: %.0f%%", t->path,
             100.0 * (double)ljm_input_position(t->in) / (double)(t->initial ? t->initial : 1));
    if (t->screen) {
      ljm_top_screen_draw(t->live, t->m, &(LjmTopShow){ .path = t->path, .view = t->show.view,
                                                         .sort = t->show.sort,
                                                         .status = t->status });
    }
    t->next = now + 200000;
  }
  if (t->screen && !ready && waiting && now >= t->next) {
    snprintf(t->status, sizeof(t->status), "waiting for %s's first events", t->path);
    ljm_top_draw(t);
    t->status[0] = 0;
    t->next = now + t->interval;
  }
  uint64_t wait = waiting ? 100000 : 0;
  if (waiting && t->caught_up && t->next > now && t->next - now < wait) wait = t->next - now;
  if (t->screen) {
    int c = ljm_top_screen_key((int)(wait / 1000));
    if (c >= 0 && ljm_top_key(t, c) && t->caught_up) ljm_top_draw(t);
  } else if (wait) {
    usleep((useconds_t)wait);
  }
}

static int on_wait(void *ud)
{
  Top *t = ud;
  tick(t, 1);
  return t->quit || ljm_top_replaced(t);
}

static void on_progress(void *ud, uint64_t offset, uint64_t events)
{
  (void)offset, (void)events;
  tick(ud, 0);
}

int ljm_cmd_top(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "interval", required_argument, NULL, 'i' },
    { "stacks", no_argument, NULL, 'S' },
    { "by", required_argument, NULL, 'b' },
    { "sort", required_argument, NULL, 's' },
    { "top", required_argument, NULL, 't' },
    { "once", no_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },
    { "label", required_argument, NULL, 'L' },
    LJM_CLI_FILTER_OPTIONS,
    { NULL, 0, NULL, 0 }
  };
  Top t;
  memset(&t, 0, sizeof(t));
  t.interval = 1000000;
  t.show.top = 10;
  LjmCliFilter filter;
  memset(&filter, 0, sizeof(filter));
  int c;
  char *end;
  optind = 1;
  while ((c = ljm_getopt(argc, argv, "h", longopts, "top")) != -1) {
    switch (c) {
    case 'i': {
      double s = strtod(optarg, &end);
      if (end == optarg || *end || !(s >= 0.05 && s <= 3600))
        return ljm_cli_usage_error("top", "--interval wants seconds from 0.05 to 3600, not '%s'",
                                   optarg);
      t.interval = (uint64_t)(s * 1e6);
      break;
    }
    case 'S': t.show.view = LJM_LIVE_STACKS; break;
    case 'b':
      if (!*optarg || strchr(optarg, '=') || strlen(optarg) > LJM_LABEL_KEY_MAX)
        return ljm_cli_usage_error("top", "--by wants a label KEY, not '%.80s'", optarg);
      t.by = optarg;
      t.show.view = LJM_LIVE_LABELS;
      break;
    case 's':
      if (!strcmp(optarg, "in-use")) t.show.sort = LJM_LIVE_BY_INUSE;
      else if (!strcmp(optarg, "rate")) t.show.sort = LJM_LIVE_BY_RATE;
      else if (!strcmp(optarg, "growth")) t.show.sort = LJM_LIVE_BY_GROWTH;
      else return ljm_cli_usage_error("top", "--sort wants in-use, rate or growth, not '%s'", optarg);
      break;
    case 't': {
      unsigned long n = strtoul(optarg, &end, 10);
      if (*optarg < '0' || *optarg > '9' || *end || n < 1 || n > 100000)
        return ljm_cli_usage_error("top", "--top wants a number 1..100000, not '%s'", optarg);
      t.show.top = (unsigned)n;
      break;
    }
    case 'o': t.once = 1; break;
    case 'L':
      if ((c = ljm_cli_label_arg(&filter, "top", optarg))) return c;
      break;
    case 'h':
      fputs(usage, stdout);
      return ljm_cli_close_output(stdout, "stdout");
    default:
      if (c >= LJM_OPT_FILTER_FIRST && c < LJM_OPT_FILTER_END) {
        if ((c = ljm_cli_filter_arg(&filter, "top", c, optarg))) return c;
        break;
      }
      return LJM_EXIT_USAGE;
    }
  }
  if (optind >= argc) return ljm_cli_usage_error("top", "missing FILE (or '-')");
  if (optind + 1 < argc)
    return ljm_cli_usage_error("top", "one stream at a time ('%s' is extra)", argv[optind + 1]);
  t.path = t.show.path = argv[optind];
  const char *fate = ljm_cli_fate_named(&filter);
  struct stat fst;
  int piped = !strcmp(t.path, "-") ||
              (stat(t.path, &fst) == 0 && !S_ISREG(fst.st_mode) && !S_ISDIR(fst.st_mode));
  if (fate && piped)
    return ljm_cli_usage_error("top", "%s reads the recording anew at each refresh, twice "
                               "(each block's fate first): give a file, not %s", fate,
                               strcmp(t.path, "-") ? "a pipe or device" : "'-'");
  if (ljh_sniff(t.path))
    return ljm_cli_usage_error("top", "%s is a heap snapshot, one moment: 'ljm heap' prints it",
                               t.path);
  if (fate) return ljm_top_reread(&t, &filter);

  LjmDiag d;
  t.in = ljm_input_open(t.path, &d);
  if (!t.in) {
    fprintf(stderr, "%s: cannot open: %s\n", t.path, d.msg);
    return LJM_EXIT_BAD_INPUT;
  }
  t.m = ljm_model_new();
  t.live = ljm_live_new(t.by);
  if (!t.m || !t.live || (filter.nregex && ljm_model_set_sources(t.m, NULL, 0)) ||
      ljm_cli_filter_apply(t.m, &filter)) {
    fprintf(stderr, "ljm: out of memory\n");
    ljm_model_free(t.m);
    ljm_live_free(t.live);
    ljm_input_close(t.in);
    return LJM_EXIT_BAD_INPUT;
  }
  t.t0 = ljm_top_clock_us();
  t.initial = t.once ? -1 : ljm_input_size(t.in);
  if (strcmp(t.path, "-") && fstat(ljm_input_fd(t.in), &t.st) == 0) t.has_st = 1;
  t.screen = !t.once && isatty(0) && isatty(1);
  if (!t.once) {
    ljm_input_follow(t.in, on_wait, &t);
    ljm_model_set_progress(t.m, on_progress, &t);
  } else {
    ljm_live_sample(t.live, t.m, 0);  /* the start: rates over the whole recording */
  }
  ljm_top_signals();
  if (t.screen && ljm_top_screen_open() != 0) {
    t.screen = 0;  /* a terminal ncurses cannot drive: plain tables */
  }
  LjmStatus st = ljm_model_load(t.m, t.in, t.path, &d);
  int rc = 0;
  char line[512] = "";
  if (t.oom) {
    snprintf(line, sizeof(line), "ljm top: out of memory");
    rc = 1;
  } else if (t.quit || ljm_top_signalled()) {
    rc = 0;  /* q, or a signal: whatever the input was doing then */
  } else if (st == LJM_ERROR) {
    ljm_diag_format(&d, t.path, line, sizeof(line));
    rc = 1;
  } else if (t.ended) {
    snprintf(line, sizeof(line), "%s: the file %s while it was followed", t.path, t.ended);
    rc = 1;
  } else if (st == LJM_TRUNCATED && !t.once) {
    snprintf(line, sizeof(line), "%s: byte %llu: the stream stopped before its end (%s)", t.path,
             (unsigned long long)d.offset,
             t.has_st ? d.msg : "the pipe closed");
    rc = 1;
  }
  /* The end: --once's table, or a complete stream's last figures (on the
  ** screen until q); a stream cut short keeps its last table, then one
  ** line on stderr says why, as does any other end. */
  if (rc && !t.screen && !t.oom && ljm_model_stream(t.m)->ljm_version != 0 &&
      ljm_model_totals(t.m)->events)
    ljm_top_refresh(&t);
  if (!rc && !t.quit && !ljm_top_signalled()) {
    if (t.once) {
      ljm_top_refresh(&t);
      if (st == LJM_TRUNCATED)  /* as report warns: a stream still being written */
        snprintf(line, sizeof(line), "%s: byte %llu: warning: %s (the table is what came before)",
                 t.path, (unsigned long long)d.offset, d.msg);
    } else if (t.screen) {
      ljm_top_hold(&t, "the recording ended (a complete stream)");
    } else {
      snprintf(t.status, sizeof(t.status), "the recording ended (a complete stream)");
      ljm_top_refresh(&t);
    }
  }
  if (t.screen) ljm_top_screen_close();
  if (line[0]) fprintf(stderr, "%s\n", line);
  ljm_input_close(t.in);
  ljm_live_free(t.live);
  ljm_model_free(t.m);
  if (!rc && ljm_cli_close_output(stdout, "stdout")) rc = 1;
  return rc;
}
