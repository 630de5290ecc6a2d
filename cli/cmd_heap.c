/* cmd_heap.c -- ljm heap: what a heap snapshot holds and what keeps it. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "exporters/ljm_exporter.h"
#include "model/ljm_heapgraph.h"

static const char usage[] =
    "usage: ljm heap [--top N] [--paths N] [--json | --format FORMAT]\n"
    "                [--depth N] [--max N]\n"
    "                [--top TYPE | --base OLD | --path-to PATTERN] FILE\n"
    "       (--top TYPE, --base and --path-to are three views: one at a time)\n"
    "\n"
    "Prints what a heap snapshot (rec.snapshot(path), ljm_recorder_snapshot)\n"
    "holds: objects and bytes per type, largest first, beside the VM's own\n"
    "count of allocated bytes and the process's (RSS, malloc); then the top\n"
    "retainers: the objects whose going would free the most (their dominator\n"
    "subtree), each with its paths from the roots in Lua notation\n"
    "(_G.sessions[12], package.loaded.mymod.cache, main thread<main chunk\n"
    "(app.lua) local cache>): globals and modules first, then locals, then\n"
    "registry internals and unnamed stack slots. FILE may be gzip- or\n"
    "zstd-compressed, or '-'.\n"
    "\n"
    "  --top N     retainers (or --path-to objects) listed (default 20)\n"
    "  --top TYPE  only retainers whose type name matches TYPE (a POSIX\n"
    "              extended regular expression: Point, ^table$, ...)\n"
    "  --paths N   paths shown per object, one per reference into it, best\n"
    "              first; how many more there are is said (default 3)\n"
    "  --base OLD  what grew from snapshot OLD to FILE: signed differences\n"
    "              by type, then by retaining path (largest growth first),\n"
    "              what grew inside a table counted under it\n"
    "  --path-to PATTERN\n"
    "              why objects are alive whose type name (Point, the\n"
    "              metatable's __name; table, function, ...) or else label\n"
    "              matches PATTERN (a POSIX extended regular expression)\n"
    "  --json      the same as one JSON object: build, gc_total, objects,\n"
    "              bytes, process, types (each {type, count, bytes}) and\n"
    "              retainers (each {path, type, retained_bytes, paths,\n"
    "              references}, largest first)\n"
    "  --format text|json|dot|mermaid\n"
    "              dot (GraphViz) and mermaid draw what retains the objects\n"
    "              the view lists (the top retainers, --top TYPE's or\n"
    "              --path-to's), level by level: an edge per reference, named\n"
    "              by its key, index or slot; --paths N references followed\n"
    "              into each object (not with --base)\n"
    "  --depth N   dot, mermaid: levels of retainers drawn (default 3)\n"
    "  --max N     dot, mermaid: objects drawn at most, more than --top\n"
    "              (default 50; mermaid's own defaults refuse more than\n"
    "              50,000 characters or 500 edges: about --max 100)\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit status: 0 success, 1 bad or unreadable snapshot, 2 usage error.\n";

static int label_matches(void *re, const char *label)
{
  return regexec(re, label, 0, NULL, 0) == 0;
}

/* --path-to: the pattern is compiled here, the view is the report's. */
static int path_to(const LjmExporter *e, const LjmHeapGraph *g, LjmExportOptions *o, char *err,
                   size_t errlen)
{
  regex_t re;
  if (regcomp(&re, o->pattern, REG_EXTENDED | REG_NOSUB))
    return ljm_cli_usage_error("heap", "--path-to wants a POSIX extended regular expression, not '%s'",
                               o->pattern);
  o->match = label_matches;
  o->match_ud = &re;
  int r = e->write_heap(g, o, stdout, err, errlen);
  regfree(&re);
  return r;
}

int ljm_cmd_heap(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { "top", required_argument, NULL, 't' },
    { "paths", required_argument, NULL, 'P' },
    { "base", required_argument, NULL, 'b' },
    { "path-to", required_argument, NULL, 'p' },
    { "format", required_argument, NULL, 'f' },
    { "depth", required_argument, NULL, 'd' },
    { "max", required_argument, NULL, 'm' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  int json = 0, c;
  unsigned long top = 20, paths = LJM_HEAP_PATHS_DEFAULT, depth = 0, max = 0;
  const char *base = NULL, *pattern = NULL, *type = NULL, *format = NULL;
  const char *depth_arg = NULL, *max_arg = NULL;
  char *end;
  optind = 1;
  while ((c = ljm_getopt(argc, argv, "h", longopts, "heap")) != -1) {
    switch (c) {
    case 'j': json = 1; break;
    case 'b': base = optarg; break;
    case 'p': pattern = optarg; break;
    case 't':
      if (*optarg < '0' || *optarg > '9') {  /* a type name */
        type = optarg;
        break;
      }
      top = strtoul(optarg, &end, 10);
      if (*end || top > 1000000)
        return ljm_cli_usage_error("heap", "--top wants a number 0..1000000 or a type name, not '%s'",
                                   optarg);
      break;
    case 'P':
      paths = strtoul(optarg, &end, 10);
      if (*optarg < '0' || *optarg > '9' || *end || paths > 1000)
        return ljm_cli_usage_error("heap", "--paths wants a number 0..1000, not '%s'", optarg);
      break;
    case 'f':
      if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "dot") &&
          strcmp(optarg, "mermaid"))
        return ljm_cli_usage_error("heap", "--format wants text, json, dot or mermaid, not '%s'",
                                   optarg);
      format = optarg;  /* the last one given */
      break;
    case 'd':
      depth_arg = optarg;
      depth = strtoul(optarg, &end, 10);
      if (*optarg < '0' || *optarg > '9' || *end || depth < 1 || depth > 100)
        return ljm_cli_usage_error("heap", "--depth wants a number 1..100, not '%s'", optarg);
      break;
    case 'm':
      max_arg = optarg;
      max = strtoul(optarg, &end, 10);
      if (*optarg < '0' || *optarg > '9' || *end || max < 1 || max > 100000)
        return ljm_cli_usage_error("heap", "--max wants a number 1..100000, not '%s'", optarg);
      break;
    case 'h':
      fputs(usage, stdout);
      return ljm_cli_close_output(stdout, "stdout");
    default:
      return LJM_EXIT_USAGE;
    }
  }
  if (optind >= argc) return ljm_cli_usage_error("heap", "missing snapshot FILE");
  if (optind + 1 < argc)
    return ljm_cli_usage_error("heap", "one snapshot at a time ('%s' is extra)", argv[optind + 1]);
  /* Three views, one at a time; the message names the options given. */
  if (base && pattern)
    return ljm_cli_usage_error("heap", "--base %s and --path-to %s are two views: give one", base,
                               pattern);
  if (type && base)
    return ljm_cli_usage_error("heap", "--top %s (a type) filters the summary's retainers and does not "
                               "go with --base %s (growth)", type, base);
  if (type && pattern)
    return ljm_cli_usage_error("heap", "--top %s (a type) does not go with --path-to %s, which "
                               "matches type names itself", type, pattern);
  if (json && format && strcmp(format, "json"))
    return ljm_cli_usage_error("heap", "--json and --format %s are two outputs: give one", format);
  if (format && !strcmp(format, "json")) json = 1;
  int graph = format && (!strcmp(format, "dot") || !strcmp(format, "mermaid"));
  if (!graph) format = "heapreport";
  if (graph && base)
    return ljm_cli_usage_error("heap", "--format %s draws what retains objects and does not go with "
                               "--base %s (growth)", format, base);
  if (!graph && (depth_arg || max_arg))
    return ljm_cli_usage_error("heap", "--%s %s goes with --format dot or mermaid",
                               depth_arg ? "depth" : "max", depth_arg ? depth_arg : max_arg);
  if (graph && paths == 0)
    return ljm_cli_usage_error("heap", "--paths 0 follows no reference: --format %s draws what "
                               "retains objects through --paths N of them (1 or more)", format);
  unsigned long most = max ? max : LJM_HEAP_DRAWN_DEFAULT;
  if (graph && top >= most)
    return ljm_cli_usage_error("heap", "--top %lu picks as many objects as --max %lu draws, with no "
                               "room for what retains them: raise --max or lower --top", top, most);
  regex_t tre;
  if (type && regcomp(&tre, type, REG_EXTENDED | REG_NOSUB))
    return ljm_cli_usage_error("heap", "--top wants a number or a POSIX extended regular expression, "
                               "not '%s'", type);
  int rc = LJM_EXIT_OK, r = 0;
  LjmHeapGraph g, old;
  memset(&old, 0, sizeof(old));
  if (base && !ljm_cli_load_heap(base, &old, &rc)) {
    ljm_heapgraph_free(&old);
    return rc ? rc : LJM_EXIT_BAD_INPUT;
  }
  if (ljm_cli_load_heap(argv[optind], &g, &rc)) {
    char err[128] = "";
    const LjmExporter *e = ljm_exporter_by_name("heap", format);
    LjmExportOptions o;
    memset(&o, 0, sizeof(o));
    o.in_path = argv[optind];
    o.out_path = "-";
    o.top = (unsigned)top;
    o.paths = (uint32_t)paths;
    o.json = json;
    o.depth = (uint32_t)depth;
    o.max_objects = (uint32_t)max;
    if (base) o.base = &old;
    if (type) {
      o.match = label_matches;
      o.match_ud = &tre;
    }
    o.pattern = pattern;
    if (pattern) r = path_to(e, &g, &o, err, sizeof(err));
    else r = e->write_heap(&g, &o, stdout, err, sizeof(err));
    if (r > 0) {
      rc = r;  /* a usage error, already reported */
    } else if (r < 0) {
      fprintf(stderr, "ljm heap: %s\n", err);
      rc = LJM_EXIT_BAD_INPUT;
    } else if (ljm_cli_close_output(stdout, "stdout")) {
      rc = LJM_EXIT_BAD_INPUT;
    }
  }
  if (type) regfree(&tre);
  ljm_heapgraph_free(&g);
  ljm_heapgraph_free(&old);
  return rc;
}
