/* cmd_heap.c -- ljm heap: what a heap snapshot holds and what keeps it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "model/ljm_heapgraph.h"

#define PATH_MAX_LEN 1024

static const char usage[] =
    "usage: ljm heap [--top N] [--json] FILE\n"
    "\n"
    "Prints what a heap snapshot (rec.snapshot(path), ljm_recorder_snapshot)\n"
    "holds: objects and bytes per type, largest first, beside the VM's own\n"
    "count of allocated bytes; then the top retainers: the objects whose\n"
    "going would free the most (their dominator subtree), each with its\n"
    "shortest path from a root in Lua notation (_G.sessions[12]). FILE may be\n"
    "gzip- or zstd-compressed, or '-'.\n"
    "\n"
    "  --top N     retainers listed (default 20)\n"
    "  --json      the same as one JSON object: build, gc_total, objects,\n"
    "              bytes, types (each {type, count, bytes}) and retainers\n"
    "              (each {path, type, retained_bytes}, largest first)\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit status: 0 success, 1 bad or unreadable snapshot, 2 usage error.\n";

static void json_str(FILE *f, const char *s)
{
  putc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f) fprintf(f, "\\u%04x", c);
    else putc(c, f);
  }
  putc('"', f);
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

int ljm_cmd_heap(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { "top", required_argument, NULL, 't' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  int json = 0, c;
  unsigned long top = 20;
  char *end;
  optind = 1;
  while ((c = ljm_getopt(argc, argv, "h", longopts, "heap")) != -1) {
    switch (c) {
    case 'j': json = 1; break;
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
  const char *path = argv[optind];
  LjmDiag d;
  LjmInput *in = ljm_input_open(path, &d);
  if (!in) {
    fprintf(stderr, "%s: cannot open: %s\n", path, d.msg);
    return LJM_EXIT_BAD_INPUT;
  }
  LjmHeapGraph g;
  LjmStatus st = ljm_heapgraph_load(&g, in, &d);
  ljm_input_close(in);
  int rc = LJM_EXIT_OK;
  if (st != LJM_OK) {
    char line[512];
    ljm_diag_format(&d, path, line, sizeof(line));
    fprintf(stderr, "%s%s\n", line, st == LJM_TRUNCATED ? " (reported as far as it goes)" : "");
    rc = LJM_EXIT_BAD_INPUT;
  }
  if (g.build && g.nobj) {  /* the header and the root were read: report what was */
    Figures f;
    memset(&f, 0, sizeof(f));
    f.ntypes = ljm_heapgraph_types(&g, f.types, &f.objects, &f.bytes);
    f.top = malloc((top ? top : 1) * sizeof(*f.top));
    if (!f.top) {
      fprintf(stderr, "ljm heap: out of memory\n");
      ljm_heapgraph_free(&g);
      return LJM_EXIT_BAD_INPUT;
    }
    f.ntop = ljm_heapgraph_top_retainers(&g, f.top, (uint32_t)top);
    if (json) print_json(&g, &f);
    else print_text(&g, &f);
    free(f.top);
    if (ljm_cli_close_output(stdout, "stdout")) rc = LJM_EXIT_BAD_INPUT;
  }
  ljm_heapgraph_free(&g);
  return rc;
}
