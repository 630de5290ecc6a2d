/* cmd_heap.c -- ljm heap: what a heap snapshot holds and what keeps it. */
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "exporters/common/json_str.h"
#include "model/ljm_heapgraph.h"

#define PATH_MAX_LEN 1024
#define PATHS_MAX 20  /* shortest paths shown per object (--path-to) */

static const char usage[] =
    "usage: ljm heap [--top N] [--json] [--base OLD | --path-to PATTERN] FILE\n"
    "\n"
    "Prints what a heap snapshot (rec.snapshot(path), ljm_recorder_snapshot)\n"
    "holds: objects and bytes per type, largest first, beside the VM's own\n"
    "count of allocated bytes; then the top retainers: the objects whose\n"
    "going would free the most (their dominator subtree), each with its\n"
    "shortest path from a root in Lua notation (_G.sessions[12]). FILE may be\n"
    "gzip- or zstd-compressed, or '-'.\n"
    "\n"
    "  --top N     retainers (or --path-to objects) listed (default 20)\n"
    "  --base OLD  what grew from snapshot OLD to FILE: signed differences\n"
    "              by type, then by retaining path (largest growth first)\n"
    "  --path-to PATTERN\n"
    "              why objects whose label matches PATTERN (a POSIX extended\n"
    "              regular expression) are alive: all their shortest paths\n"
    "              from the roots (up to 20 each)\n"
    "  --json      the same as one JSON object: build, gc_total, objects,\n"
    "              bytes, types (each {type, count, bytes}) and retainers\n"
    "              (each {path, type, retained_bytes}, largest first)\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit status: 0 success, 1 bad or unreadable snapshot, 2 usage error.\n";

static void json_str(FILE *f, const char *s)
{
  static LjmBuf out, tmp;  /* scratch for the whole run */
  ljm_json_fputs(f, &out, &tmp, s);
}

typedef struct Figures {
  LjmHeapType types[LJH_NTYPES];
  int ntypes;
  uint64_t objects, bytes;
  uint32_t *top;
  uint32_t ntop;
} Figures;

static void print_text(const LjmHeapGraph *g, const Figures *f)
{
  char path[PATH_MAX_LEN];
  printf("HEAP SNAPSHOT of %s\n", g->build ? g->build : "?");
  printf("%" PRIu64 " objects, %" PRIu64 " bytes (the VM counted %" PRIu64 ")\n\n",
         f->objects, f->bytes, g->gctotal);
  printf("%-12s %12s %14s %7s\n", "type", "objects", "bytes", "share");
  for (int i = 0; i < f->ntypes; i++) {
    const LjmHeapType *t = &f->types[i];
    printf("%-12s %12" PRIu64 " %14" PRIu64 " %6.1f%%\n", ljh_type_name(t->type), t->count,
           t->bytes, f->bytes ? 100.0 * (double)t->bytes / (double)f->bytes : 0.0);
  }
  printf("\nTOP RETAINERS (bytes freed if the object went)\n");
  printf("%14s  %-12s %s\n", "retained", "type", "path");
  for (uint32_t i = 0; i < f->ntop; i++) {
    const LjmHeapObj *o = &g->obj[f->top[i]];
    printf("%14" PRIu64 "  %-12s %s\n", o->retained, ljh_type_name((LjhType)o->type),
           ljm_heapgraph_path(g, f->top[i], path, sizeof(path)));
  }
}

static void print_json(const LjmHeapGraph *g, const Figures *f)
{
  char path[PATH_MAX_LEN];
  printf("{\"build\": ");
  json_str(stdout, g->build ? g->build : "");
  printf(", \"gc_total\": %" PRIu64 ", \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64
         ", \"types\": [",
         g->gctotal, f->objects, f->bytes);
  for (int i = 0; i < f->ntypes; i++) {
    printf("%s{\"type\": ", i ? ", " : "");
    json_str(stdout, ljh_type_name(f->types[i].type));
    printf(", \"count\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", f->types[i].count,
           f->types[i].bytes);
  }
  printf("], \"retainers\": [");
  for (uint32_t i = 0; i < f->ntop; i++) {
    const LjmHeapObj *o = &g->obj[f->top[i]];
    printf("%s{\"path\": ", i ? ", " : "");
    json_str(stdout, ljm_heapgraph_path(g, f->top[i], path, sizeof(path)));
    printf(", \"type\": ");
    json_str(stdout, ljh_type_name((LjhType)o->type));
    printf(", \"retained_bytes\": %" PRIu64 "}", o->retained);
  }
  printf("]}\n");
}

static void summary(const LjmHeapGraph *g, uint32_t top, int json)
{
  Figures f;
  memset(&f, 0, sizeof(f));
  f.ntypes = ljm_heapgraph_types(g, f.types, &f.objects, &f.bytes);
  f.top = malloc(((size_t)top + 1) * sizeof(*f.top));
  if (f.top) f.ntop = ljm_heapgraph_top_retainers(g, f.top, top);
  if (json) print_json(g, &f);
  else print_text(g, &f);
  free(f.top);
}

/* --base: signed differences by type, then by retaining path. */
static int growth(const LjmHeapGraph *old, const LjmHeapGraph *new_, uint32_t top, int json)
{
  Figures fo, fn;
  memset(&fo, 0, sizeof(fo));
  memset(&fn, 0, sizeof(fn));
  fo.ntypes = ljm_heapgraph_types(old, fo.types, &fo.objects, &fo.bytes);
  fn.ntypes = ljm_heapgraph_types(new_, fn.types, &fn.objects, &fn.bytes);
  int64_t dc[LJH_NTYPES] = {0}, db[LJH_NTYPES] = {0};
  int seen[LJH_NTYPES] = {0};
  for (int i = 0; i < fo.ntypes; i++) {
    dc[fo.types[i].type] -= (int64_t)fo.types[i].count;
    db[fo.types[i].type] -= (int64_t)fo.types[i].bytes;
    seen[fo.types[i].type] = 1;
  }
  for (int i = 0; i < fn.ntypes; i++) {
    dc[fn.types[i].type] += (int64_t)fn.types[i].count;
    db[fn.types[i].type] += (int64_t)fn.types[i].bytes;
    seen[fn.types[i].type] = 1;
  }
  int order[LJH_NTYPES], n = 0;
  for (int t = 0; t < LJH_NTYPES; t++)
    if (seen[t] && (dc[t] || db[t])) order[n++] = t;
  for (int i = 1; i < n; i++)  /* largest growth first */
    for (int j = i; j > 0 && db[order[j]] > db[order[j - 1]]; j--) {
      int x = order[j];
      order[j] = order[j - 1];
      order[j - 1] = x;
    }
  LjmHeapGrowth *gr;
  uint32_t nall, ng;
  uint32_t cand = top * 20 > 2000 ? top * 20 : 2000;
  if (ljm_heapgraph_growth(old, new_, cand, &gr, &nall)) {
    fprintf(stderr, "ljm heap: out of memory\n");
    return LJM_EXIT_BAD_INPUT;
  }
  ng = nall > top ? top : nall;
  int64_t dobj = (int64_t)(fn.objects - fo.objects), dbytes = (int64_t)(fn.bytes - fo.bytes);
  int64_t dgc = (int64_t)(new_->gctotal - old->gctotal);
  if (json) {
    printf("{\"objects\": %" PRId64 ", \"bytes\": %" PRId64 ", \"gc_total\": %" PRId64
           ", \"types\": [", dobj, dbytes, dgc);
    for (int i = 0; i < n; i++) {
      printf("%s{\"type\": ", i ? ", " : "");
      json_str(stdout, ljh_type_name((LjhType)order[i]));
      printf(", \"count\": %" PRId64 ", \"bytes\": %" PRId64 "}", dc[order[i]], db[order[i]]);
    }
    printf("], \"retainers\": [");
    for (uint32_t i = 0; i < ng; i++) {
      printf("%s{\"path\": ", i ? ", " : "");
      json_str(stdout, gr[i].path);
      printf(", \"type\": ");
      json_str(stdout, ljh_type_name(gr[i].type));
      printf(", \"retained_bytes\": %" PRId64 "}", gr[i].diff);
    }
    printf("]}\n");
  } else {
    printf("HEAP GROWTH\n%+" PRId64 " objects, %+" PRId64 " bytes (the VM counted %+" PRId64
           ")\n\n", dobj, dbytes, dgc);
    printf("%-12s %12s %14s\n", "type", "objects", "bytes");
    for (int i = 0; i < n; i++)
      printf("%-12s %+12" PRId64 " %+14" PRId64 "\n", ljh_type_name((LjhType)order[i]),
             dc[order[i]], db[order[i]]);
    printf("\nRETAINERS BY GROWTH\n%14s  %-12s %s\n", "retained", "type", "path (before -> after)");
    for (uint32_t i = 0; i < ng; i++)
      printf("%+14" PRId64 "  %-12s %s (%" PRIu64 " -> %" PRIu64 ")\n", gr[i].diff,
             ljh_type_name(gr[i].type), gr[i].path, gr[i].old_retained, gr[i].new_retained);
  }
  ljm_heapgraph_growth_free(gr, nall);
  return 0;
}

typedef struct PathOut {
  int json, first;
} PathOut;

static void print_path(void *ud, const char *path)
{
  PathOut *p = ud;
  if (p->json) {
    printf("%s", p->first ? "" : ", ");
    json_str(stdout, path);
  } else {
    printf("  %s\n", path);
  }
  p->first = 0;
}

/* --path-to: every object whose label matches, with all its shortest paths. */
static int path_to(const LjmHeapGraph *g, const char *pattern, uint32_t top, int json)
{
  regex_t re;
  if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB))
    return ljm_cli_usage_error("heap", "--path-to wants a POSIX extended regular expression, not '%s'",
                               pattern);
  LjmHeapPreds preds;
  if (ljm_heapgraph_preds(g, &preds)) {
    regfree(&re);
    fprintf(stderr, "ljm heap: out of memory\n");
    return LJM_EXIT_BAD_INPUT;
  }
  uint32_t shown = 0, matched = 0;
  if (json) printf("{\"matches\": [");
  for (uint32_t i = 1; i < g->nobj; i++) {
    const LjmHeapObj *o = &g->obj[i];
    if (o->type == LJH_INTERNAL || regexec(&re, ljm_heapgraph_label(g, i), 0, NULL, 0)) continue;
    if (++matched > top) continue;
    shown++;
    PathOut p = {json, 1};
    if (json) {
      printf("%s{\"label\": ", shown > 1 ? ", " : "");
      json_str(stdout, ljm_heapgraph_label(g, i));
      printf(", \"type\": ");
      json_str(stdout, ljh_type_name((LjhType)o->type));
      printf(", \"size\": %" PRIu64 ", \"retained_bytes\": %" PRIu64 ", \"paths\": [", o->size,
             o->retained);
    } else {
      printf("%s %s (%" PRIu64 " bytes, retains %" PRIu64 "):\n", ljh_type_name((LjhType)o->type),
             ljm_heapgraph_label(g, i), o->size, o->retained);
    }
    uint32_t n = ljm_heapgraph_all_paths(g, &preds, i, PATHS_MAX, print_path, &p);
    if (json) {
      printf("], \"more_paths\": %s}", n > PATHS_MAX ? "true" : "false");
    } else {
      if (!n) printf("  (only weakly reachable)\n");
      if (n > PATHS_MAX) printf("  ... and more\n");
    }
  }
  if (json) printf("], \"matched\": %" PRIu32 "}\n", matched);
  else if (matched > shown) printf("(%" PRIu32 " more objects match; --top N shows more)\n", matched - shown);
  else if (!matched) printf("no object's label matches '%s'\n", pattern);
  ljm_heapgraph_preds_free(&preds);
  regfree(&re);
  return 0;
}

int ljm_cmd_heap(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { "top", required_argument, NULL, 't' },
    { "base", required_argument, NULL, 'b' },
    { "path-to", required_argument, NULL, 'p' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  int json = 0, c;
  unsigned long top = 20;
  const char *base = NULL, *pattern = NULL;
  char *end;
  optind = 1;
  while ((c = ljm_getopt(argc, argv, "h", longopts, "heap")) != -1) {
    switch (c) {
    case 'j': json = 1; break;
    case 'b': base = optarg; break;
    case 'p': pattern = optarg; break;
    case 't':
      top = strtoul(optarg, &end, 10);
      if (*optarg < '0' || *optarg > '9' || *end || top > 1000000)
        return ljm_cli_usage_error("heap", "--top wants a number 0..1000000, not '%s'", optarg);
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
  if (base && pattern) return ljm_cli_usage_error("heap", "--base and --path-to do not go together");
  int rc = LJM_EXIT_OK, r = 0;
  LjmHeapGraph g, old;
  memset(&old, 0, sizeof(old));
  if (base && !ljm_cli_load_heap(base, &old, &rc)) {
    ljm_heapgraph_free(&old);
    return rc ? rc : LJM_EXIT_BAD_INPUT;
  }
  if (ljm_cli_load_heap(argv[optind], &g, &rc)) {
    if (base) r = growth(&old, &g, (uint32_t)top, json);
    else if (pattern) r = path_to(&g, pattern, (uint32_t)top, json);
    else summary(&g, (uint32_t)top, json);
    if (r) rc = r;
    if (!r && ljm_cli_close_output(stdout, "stdout")) rc = LJM_EXIT_BAD_INPUT;
  }
  ljm_heapgraph_free(&g);
  ljm_heapgraph_free(&old);
  return rc;
}
