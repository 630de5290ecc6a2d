/* heapreport.c -- ljm heap's summary, growth and paths views (ljm_heapreport.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/buf.h"
#include "exporters/common/json_str.h"
#include "exporters/heapreport/ljm_heapreport.h"

#define PATH_MAX_LEN 1024

/* The output and the scratch its JSON strings need. */
typedef struct Out {
  FILE *f;
  LjmBuf s, tmp;
} Out;

static void jstr(Out *o, const char *s) { ljm_json_fputs(o->f, &o->s, &o->tmp, s); }

static void out_free(Out *o)
{
  ljm_buf_free(&o->s);
  ljm_buf_free(&o->tmp);
}

static int oom(char *err, size_t errlen)
{
  snprintf(err, errlen, "out of memory");
  return -1;
}

/* -- Summary ---------------------------------------------------------------- */

typedef struct Figures {
  LjmHeapType types[LJH_NTYPES];
  int ntypes;
  uint64_t objects, bytes;
} Figures;

static void figures(const LjmHeapGraph *g, Figures *f)
{
  memset(f, 0, sizeof(*f));
  f->ntypes = ljm_heapgraph_types(g, f->types, &f->objects, &f->bytes);
}

static void summary_text(Out *o, const LjmHeapGraph *g, const Figures *f, const uint32_t *top,
                         uint32_t ntop)
{
  char path[PATH_MAX_LEN];
  fprintf(o->f, "HEAP SNAPSHOT of %s\n", g->build ? g->build : "?");
  fprintf(o->f, "%" PRIu64 " objects, %" PRIu64 " bytes (the VM counted %" PRIu64 ")\n\n",
          f->objects, f->bytes, g->gctotal);
  fprintf(o->f, "%-12s %12s %14s %7s\n", "type", "objects", "bytes", "share");
  for (int i = 0; i < f->ntypes; i++) {
    const LjmHeapType *t = &f->types[i];
    fprintf(o->f, "%-12s %12" PRIu64 " %14" PRIu64 " %6.1f%%\n", ljh_type_name(t->type),
            t->count, t->bytes,
            f->bytes ? 100.0 * (double)t->bytes / (double)f->bytes : 0.0);
  }
  fprintf(o->f, "\nTOP RETAINERS (bytes freed if the object went)\n");
  fprintf(o->f, "%14s  %-12s %s\n", "retained", "type", "path");
  for (uint32_t i = 0; i < ntop; i++) {
    const LjmHeapObj *ob = &g->obj[top[i]];
    fprintf(o->f, "%14" PRIu64 "  %-12s %s\n", ob->retained, ljh_type_name((LjhType)ob->type),
            ljm_heapgraph_path(g, top[i], path, sizeof(path)));
  }
}

static void summary_json(Out *o, const LjmHeapGraph *g, const Figures *f, const uint32_t *top,
                         uint32_t ntop)
{
  char path[PATH_MAX_LEN];
  fprintf(o->f, "{\"build\": ");
  jstr(o, g->build ? g->build : "");
  fprintf(o->f, ", \"gc_total\": %" PRIu64 ", \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64
          ", \"types\": [", g->gctotal, f->objects, f->bytes);
  for (int i = 0; i < f->ntypes; i++) {
    fprintf(o->f, "%s{\"type\": ", i ? ", " : "");
    jstr(o, ljh_type_name(f->types[i].type));
    fprintf(o->f, ", \"count\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", f->types[i].count,
            f->types[i].bytes);
  }
  fprintf(o->f, "], \"retainers\": [");
  for (uint32_t i = 0; i < ntop; i++) {
    const LjmHeapObj *ob = &g->obj[top[i]];
    fprintf(o->f, "%s{\"path\": ", i ? ", " : "");
    jstr(o, ljm_heapgraph_path(g, top[i], path, sizeof(path)));
    fprintf(o->f, ", \"type\": ");
    jstr(o, ljh_type_name((LjhType)ob->type));
    fprintf(o->f, ", \"retained_bytes\": %" PRIu64 "}", ob->retained);
  }
  fprintf(o->f, "]}\n");
}

int ljm_heapreport_summary(const LjmHeapGraph *g, uint32_t top, int json, FILE *f, char *err,
                           size_t errlen)
{
  Figures fig;
  figures(g, &fig);
  uint32_t *idx = malloc(((size_t)top + 1) * sizeof(*idx));
  if (!idx) return oom(err, errlen);
  uint32_t ntop = ljm_heapgraph_top_retainers(g, idx, top);
  Out o = { f, { 0 }, { 0 } };
  if (json) summary_json(&o, g, &fig, idx, ntop);
  else summary_text(&o, g, &fig, idx, ntop);
  out_free(&o);
  free(idx);
  return 0;
}

/* -- Growth ------------------------------------------------------------------ */

/* Signed differences per type, the types that changed in 'order', largest
** byte growth first. */
typedef struct TypeDiff {
  int64_t count[LJH_NTYPES], bytes[LJH_NTYPES];
  int order[LJH_NTYPES], n;
} TypeDiff;

static void type_diff(const Figures *fo, const Figures *fn, TypeDiff *d)
{
  int seen[LJH_NTYPES] = { 0 };
  memset(d, 0, sizeof(*d));
  for (int i = 0; i < fo->ntypes; i++) {
    d->count[fo->types[i].type] -= (int64_t)fo->types[i].count;
    d->bytes[fo->types[i].type] -= (int64_t)fo->types[i].bytes;
    seen[fo->types[i].type] = 1;
  }
  for (int i = 0; i < fn->ntypes; i++) {
    d->count[fn->types[i].type] += (int64_t)fn->types[i].count;
    d->bytes[fn->types[i].type] += (int64_t)fn->types[i].bytes;
    seen[fn->types[i].type] = 1;
  }
  for (int t = 0; t < LJH_NTYPES; t++)
    if (seen[t] && (d->count[t] || d->bytes[t])) d->order[d->n++] = t;
  for (int i = 1; i < d->n; i++)  /* insertion sort: a handful of types */
    for (int j = i; j > 0 && d->bytes[d->order[j]] > d->bytes[d->order[j - 1]]; j--) {
      int x = d->order[j];
      d->order[j] = d->order[j - 1];
      d->order[j - 1] = x;
    }
}

int ljm_heapreport_growth(const LjmHeapGraph *old, const LjmHeapGraph *g, uint32_t top,
                          int json, FILE *f, char *err, size_t errlen)
{
  Figures fo, fn;
  TypeDiff d;
  figures(old, &fo);
  figures(g, &fn);
  type_diff(&fo, &fn, &d);
  LjmHeapGrowth *gr;
  uint32_t nall;
  /* Candidates beyond 'top': a retainer may grow most without being among
  ** the largest of either snapshot. */
  uint32_t cand = top * 20 > 2000 ? top * 20 : 2000;
  if (ljm_heapgraph_growth(old, g, cand, &gr, &nall)) return oom(err, errlen);
  uint32_t ng = nall > top ? top : nall;
  int64_t dobj = (int64_t)(fn.objects - fo.objects), dbytes = (int64_t)(fn.bytes - fo.bytes);
  int64_t dgc = (int64_t)(g->gctotal - old->gctotal);
  Out o = { f, { 0 }, { 0 } };
  if (json) {
    fprintf(f, "{\"objects\": %" PRId64 ", \"bytes\": %" PRId64 ", \"gc_total\": %" PRId64
            ", \"types\": [", dobj, dbytes, dgc);
    for (int i = 0; i < d.n; i++) {
      fprintf(f, "%s{\"type\": ", i ? ", " : "");
      jstr(&o, ljh_type_name((LjhType)d.order[i]));
      fprintf(f, ", \"count\": %" PRId64 ", \"bytes\": %" PRId64 "}", d.count[d.order[i]],
              d.bytes[d.order[i]]);
    }
    fprintf(f, "], \"retainers\": [");
    for (uint32_t i = 0; i < ng; i++) {
      fprintf(f, "%s{\"path\": ", i ? ", " : "");
      jstr(&o, gr[i].path);
      fprintf(f, ", \"type\": ");
      jstr(&o, ljh_type_name(gr[i].type));
      fprintf(f, ", \"retained_bytes\": %" PRId64 "}", gr[i].diff);
    }
    fprintf(f, "]}\n");
  } else {
    fprintf(f, "HEAP GROWTH\n%+" PRId64 " objects, %+" PRId64 " bytes (the VM counted %+" PRId64
            ")\n\n", dobj, dbytes, dgc);
    fprintf(f, "%-12s %12s %14s\n", "type", "objects", "bytes");
    for (int i = 0; i < d.n; i++)
      fprintf(f, "%-12s %+12" PRId64 " %+14" PRId64 "\n", ljh_type_name((LjhType)d.order[i]),
              d.count[d.order[i]], d.bytes[d.order[i]]);
    fprintf(f, "\nRETAINERS BY GROWTH\n%14s  %-12s %s\n", "retained", "type",
            "path (before -> after)");
    for (uint32_t i = 0; i < ng; i++)
      fprintf(f, "%+14" PRId64 "  %-12s %s (%" PRIu64 " -> %" PRIu64 ")\n", gr[i].diff,
              ljh_type_name(gr[i].type), gr[i].path, gr[i].old_retained, gr[i].new_retained);
  }
  out_free(&o);
  ljm_heapgraph_growth_free(gr, nall);
  return 0;
}

/* -- Paths -------------------------------------------------------------------- */

typedef struct PathOut {
  Out *o;
  int json, first;
} PathOut;

static void print_path(void *ud, const char *path)
{
  PathOut *p = ud;
  if (p->json) {
    fprintf(p->o->f, "%s", p->first ? "" : ", ");
    jstr(p->o, path);
  } else {
    fprintf(p->o->f, "  %s\n", path);
  }
  p->first = 0;
}

int ljm_heapreport_paths(const LjmHeapGraph *g, LjmHeapLabelMatch match, void *ud,
                         const char *pattern, uint32_t top, int json, FILE *f, char *err,
                         size_t errlen)
{
  LjmHeapPreds preds;
  if (ljm_heapgraph_preds(g, &preds)) return oom(err, errlen);
  Out o = { f, { 0 }, { 0 } };
  uint32_t shown = 0, matched = 0;
  if (json) fprintf(f, "{\"matches\": [");
  for (uint32_t i = 1; i < g->nobj; i++) {
    const LjmHeapObj *ob = &g->obj[i];
    const char *label = ljm_heapgraph_label(g, i);
    if (ob->type == LJH_INTERNAL || !match(ud, label)) continue;
    if (++matched > top) continue;
    shown++;
    PathOut p = { &o, json, 1 };
    if (json) {
      fprintf(f, "%s{\"label\": ", shown > 1 ? ", " : "");
      jstr(&o, label);
      fprintf(f, ", \"type\": ");
      jstr(&o, ljh_type_name((LjhType)ob->type));
      fprintf(f, ", \"size\": %" PRIu64 ", \"retained_bytes\": %" PRIu64 ", \"paths\": [",
              ob->size, ob->retained);
    } else {
      fprintf(f, "%s %s (%" PRIu64 " bytes, retains %" PRIu64 "):\n",
              ljh_type_name((LjhType)ob->type), label, ob->size, ob->retained);
    }
    uint32_t n = ljm_heapgraph_all_paths(g, &preds, i, LJM_HEAPREPORT_PATHS, print_path, &p);
    if (json) {
      fprintf(f, "], \"more_paths\": %s}", n > LJM_HEAPREPORT_PATHS ? "true" : "false");
    } else {
      if (!n) fprintf(f, "  (only weakly reachable)\n");
      if (n > LJM_HEAPREPORT_PATHS) fprintf(f, "  ... and more\n");
    }
  }
  if (json)
    fprintf(f, "], \"matched\": %" PRIu32 "}\n", matched);
  else if (matched > shown)
    fprintf(f, "(%" PRIu32 " more objects match; --top N shows more)\n", matched - shown);
  else if (!matched)
    fprintf(f, "no object's label matches '%s'\n", pattern);
  out_free(&o);
  ljm_heapgraph_preds_free(&preds);
  return 0;
}
