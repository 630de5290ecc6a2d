/* heapreport.c -- the views `ljm heap` prints of a heap snapshot
** (model/ljm_heapgraph.h), as text for people or as one JSON object:
**
**   summary   objects and bytes per type, largest first, beside the VM's
**             own count and the process's (RSS, malloc); the top retainers
**             (dominator subtrees), each with up to 'paths' paths from the
**             roots, one per reference into it, best first
**   growth    signed differences by type from an older snapshot, then the
**             retainers that grew most, what grew inside one counted under
**             it (entries, bytes, two examples)
**   paths     the objects whose type name or label a predicate accepts,
**             each with up to 'paths' paths
**
** Like the .heapsnapshot writer beside it, it reads the heap graph, not the
** event model (LjmExporter.write_heap); LjmExportOptions picks the view.
** Each view returns 0, or -1 with err filled (out of memory); write errors
** are the caller's to find when it closes f.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/buf.h"
#include "exporters/common/heapsub.h"
#include "exporters/common/json_str.h"
#include "exporters/ljm_exporter.h"

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

/* The retainer paths of the objects a view lists: up to 'max' each. */
typedef struct Paths {
  LjmHeapPreds preds;
  uint32_t *edges, max;
  uint32_t *memo;  /* type names (ljm_heapgraph_type_name) */
} Paths;

static int paths_init(Paths *p, const LjmHeapGraph *g, uint32_t max)
{
  memset(p, 0, sizeof(*p));
  p->max = max;
  p->edges = malloc(((size_t)max + 1) * sizeof(*p->edges));
  p->memo = calloc((size_t)g->nobj + 1, sizeof(*p->memo));
  if (!p->edges || !p->memo || ljm_heapgraph_preds(g, &p->preds)) {
    free(p->edges);
    free(p->memo);
    return -1;
  }
  return 0;
}

static void paths_free(Paths *p)
{
  ljm_heapgraph_preds_free(&p->preds);
  free(p->edges);
  free(p->memo);
}

/* Object i's retainers into p->edges; returns (shown, in all). */
static uint32_t retainers(const LjmHeapGraph *g, Paths *p, uint32_t i, uint32_t *all)
{
  *all = ljm_heapgraph_retainers(g, &p->preds, i, p->edges, p->max);
  return *all < p->max ? *all : p->max;
}

static const char *type_name(const LjmHeapGraph *g, Paths *p, uint32_t i)
{
  return ljm_heapgraph_type_name(g, i, p->memo);
}

/* The process's memory beside the VM's: one line of figures, one on the gap. */
static void process_text(Out *o, const LjmHeapGraph *g)
{
  if (!g->rss && !g->malloc_held) {
    fprintf(o->f, "(no process figures recorded: a version 1 snapshot, or none known)\n\n");
    return;
  }
  fprintf(o->f, "process: RSS %" PRIu64 " bytes; ", g->rss);
  if (g->malloc_held)
    fprintf(o->f, "glibc malloc %" PRIu64 " in use, %" PRIu64 " held", g->malloc_in_use,
            g->malloc_held);
  else
    fprintf(o->f, "glibc malloc unknown (another allocator?)");
  fprintf(o->f, "; Lua heap (VM count) %" PRIu64 "\n", g->gctotal);
  if (g->recorder)
    fprintf(o->f, "recorder: %" PRIu64 " bytes of its own buffers and tables, left out of "
            "the figures above: they are not the program's\n", g->recorder);
  if (g->rss && g->rss > g->gctotal)
    fprintf(o->f, "gap: RSS - Lua heap = %" PRIu64 " bytes of code, C libraries, C allocations "
            "(malloc in use) and freed memory allocators keep (malloc held - in use = %" PRIu64
            "); RSS growing while the Lua heap does not points there, not at Lua objects\n\n",
            g->rss - g->gctotal,
            g->malloc_held > g->malloc_in_use ? g->malloc_held - g->malloc_in_use : 0);
  else
    fprintf(o->f, "\n");
}

static void process_json(Out *o, const LjmHeapGraph *g)
{
  fprintf(o->f, ", \"process\": ");
  if (!g->rss && !g->malloc_held) {
    fprintf(o->f, "null");
    return;
  }
  fprintf(o->f, "{\"rss\": ");
  if (g->rss) fprintf(o->f, "%" PRIu64, g->rss);
  else fprintf(o->f, "null");
  if (g->malloc_held)
    fprintf(o->f, ", \"malloc_in_use\": %" PRIu64 ", \"malloc_held\": %" PRIu64, g->malloc_in_use,
            g->malloc_held);
  else
    fprintf(o->f, ", \"malloc_in_use\": null, \"malloc_held\": null");
  fprintf(o->f, ", \"recorder\": %" PRIu64 "}", g->recorder);
}

static void summary_text(Out *o, const LjmHeapGraph *g, const Figures *f, const uint32_t *top,
                         uint32_t ntop, Paths *p)
{
  char path[PATH_MAX_LEN];
  fprintf(o->f, "HEAP SNAPSHOT of %s\n", g->build ? g->build : "?");
  fprintf(o->f, "%" PRIu64 " objects, %" PRIu64 " bytes (the VM counted %" PRIu64 ")\n",
          f->objects, f->bytes, g->gctotal);
  process_text(o, g);
  fprintf(o->f, "%-12s %12s %14s %7s\n", "type", "objects", "bytes", "share");
  for (int i = 0; i < f->ntypes; i++) {
    const LjmHeapType *t = &f->types[i];
    fprintf(o->f, "%-12s %12" PRIu64 " %14" PRIu64 " %6.1f%%\n", ljh_type_name(t->type),
            t->count, t->bytes,
            f->bytes ? 100.0 * (double)t->bytes / (double)f->bytes : 0.0);
  }
  fprintf(o->f, "\nTOP RETAINERS (bytes freed if the object went; up to %" PRIu32
          " paths each, by the references into it)\n", p->max);
  fprintf(o->f, "%14s  %-12s %s\n", "retained", "type", "path");
  for (uint32_t i = 0; i < ntop; i++) {
    const LjmHeapObj *ob = &g->obj[top[i]];
    uint32_t all, n = retainers(g, p, top[i], &all);
    fprintf(o->f, "%14" PRIu64 "  %-12s %s\n", ob->retained, type_name(g, p, top[i]),
            n ? ljm_heapgraph_path_via(g, p->edges[0], path, sizeof(path))
              : ljm_heapgraph_path(g, top[i], path, sizeof(path)));
    for (uint32_t k = 1; k < n; k++)
      fprintf(o->f, "%14s  %-12s %s\n", "", "", ljm_heapgraph_path_via(g, p->edges[k], path,
              sizeof(path)));
    if (all > n)
      fprintf(o->f, "%14s  %-12s (+%" PRIu32 " more reference%s into it)\n", "", "", all - n,
              all - n > 1 ? "s" : "");
  }
}

/* "paths": [...], "references": N of object i. */
static void paths_json(Out *o, const LjmHeapGraph *g, Paths *p, uint32_t i)
{
  char path[PATH_MAX_LEN];
  uint32_t all, n = retainers(g, p, i, &all);
  fprintf(o->f, ", \"paths\": [");
  for (uint32_t k = 0; k < n; k++) {
    if (k) fprintf(o->f, ", ");
    jstr(o, ljm_heapgraph_path_via(g, p->edges[k], path, sizeof(path)));
  }
  fprintf(o->f, "], \"references\": %" PRIu32, all);
}

static void summary_json(Out *o, const LjmHeapGraph *g, const Figures *f, const uint32_t *top,
                         uint32_t ntop, Paths *p)
{
  char path[PATH_MAX_LEN];
  fprintf(o->f, "{\"build\": ");
  jstr(o, g->build ? g->build : "");
  fprintf(o->f, ", \"gc_total\": %" PRIu64 ", \"objects\": %" PRIu64 ", \"bytes\": %" PRIu64,
          g->gctotal, f->objects, f->bytes);
  process_json(o, g);
  fprintf(o->f, ", \"types\": [");
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
    jstr(o, type_name(g, p, top[i]));
    fprintf(o->f, ", \"retained_bytes\": %" PRIu64, ob->retained);
    paths_json(o, g, p, top[i]);
    fprintf(o->f, "}");
  }
  fprintf(o->f, "]}\n");
}

/* The retainers the summary lists: of a type name the predicate accepts. */
typedef struct TypeFilter {
  const LjmHeapGraph *g;
  Paths *p;
  LjmHeapLabelMatch match;
  void *ud;
} TypeFilter;

static int type_kept(void *ud, uint32_t i)
{
  TypeFilter *t = ud;
  return t->match(t->ud, type_name(t->g, t->p, i));
}

static int summary_view(const LjmHeapGraph *g, uint32_t top, uint32_t paths,
                           LjmHeapLabelMatch match, void *ud, int json, FILE *f, char *err,
                           size_t errlen)
{
  Figures fig;
  Paths p;
  figures(g, &fig);
  uint32_t *idx = malloc(((size_t)top + 1) * sizeof(*idx));
  if (!idx || paths_init(&p, g, paths)) {
    free(idx);
    return oom(err, errlen);
  }
  TypeFilter tf = { g, &p, match, ud };
  uint32_t ntop = ljm_heapgraph_top_retainers_of(g, idx, top, match ? type_kept : NULL, &tf);
  Out o = { f, { 0 }, { 0 } };
  if (json) summary_json(&o, g, &fig, idx, ntop, &p);
  else summary_text(&o, g, &fig, idx, ntop, &p);
  out_free(&o);
  paths_free(&p);
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

/* "process": the changes both snapshots know, null when neither. */
static void process_diff_json(FILE *f, const LjmHeapGraph *old, const LjmHeapGraph *g)
{
  int rss = g->rss && old->rss, mal = g->malloc_held && old->malloc_held;
  fprintf(f, ", \"process\": ");
  if (!rss && !mal) {
    fprintf(f, "null");
    return;
  }
  fprintf(f, "{");
  if (rss) fprintf(f, "\"rss\": %" PRId64, (int64_t)(g->rss - old->rss));
  if (mal)
    fprintf(f, "%s\"malloc_in_use\": %" PRId64 ", \"malloc_held\": %" PRId64, rss ? ", " : "",
            (int64_t)(g->malloc_in_use - old->malloc_in_use), (int64_t)(g->malloc_held - old->malloc_held));
  fprintf(f, "}");
}

/* An example's path after its container's (".key5002"), or all of it. */
static const char *inside(const char *container, const char *path)
{
  size_t n = strlen(container);
  return !strncmp(container, path, n) && path[n] ? path + n : path;
}

static int growth_view(const LjmHeapGraph *old, const LjmHeapGraph *g, uint32_t top,
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
  /* The rows counted under none come first; of those, the ones that
  ** changed (retainers that stayed the same say nothing here). */
  uint32_t ng = 0, *row = malloc(((size_t)top + 1) * sizeof(*row));
  if (!row) {
    ljm_heapgraph_growth_free(gr, nall);
    return oom(err, errlen);
  }
  for (uint32_t i = 0; i < nall && ng < top && gr[i].container == LJM_HEAP_NONE; i++)
    if (gr[i].diff || gr[i].grown_bytes) row[ng++] = i;
  int64_t dobj = (int64_t)(fn.objects - fo.objects), dbytes = (int64_t)(fn.bytes - fo.bytes);
  int64_t dgc = (int64_t)(g->gctotal - old->gctotal);
  Out o = { f, { 0 }, { 0 } };
  if (json) {
    fprintf(f, "{\"objects\": %" PRId64 ", \"bytes\": %" PRId64 ", \"gc_total\": %" PRId64,
            dobj, dbytes, dgc);
    process_diff_json(f, old, g);
    fprintf(f, ", \"types\": [");
    for (int i = 0; i < d.n; i++) {
      fprintf(f, "%s{\"type\": ", i ? ", " : "");
      jstr(&o, ljh_type_name((LjhType)d.order[i]));
      fprintf(f, ", \"count\": %" PRId64 ", \"bytes\": %" PRId64 "}", d.count[d.order[i]],
              d.bytes[d.order[i]]);
    }
    fprintf(f, "], \"retainers\": [");
    for (uint32_t i = 0; i < ng; i++) {
      const LjmHeapGrowth *x = &gr[row[i]];
      fprintf(f, "%s{\"path\": ", i ? ", " : "");
      jstr(&o, x->path);
      fprintf(f, ", \"type\": ");
      jstr(&o, x->type);
      fprintf(f, ", \"retained_bytes\": %" PRId64, x->diff);
      if (x->made) fprintf(f, ", \"before\": null, \"after\": null");
      else fprintf(f, ", \"before\": %" PRIu64 ", \"after\": %" PRIu64, x->old_retained,
                   x->new_retained);
      fprintf(f, ", \"entries\": %" PRId64 ", \"grown\": {\"count\": %" PRIu32
              ", \"bytes\": %" PRId64 ", \"examples\": [", x->made ? 0 : x->entries, x->grown,
              x->grown_bytes);
      for (int k = 0; k < 2 && x->example[k] != LJM_HEAP_NONE; k++) {
        fprintf(f, "%s{\"path\": ", k ? ", " : "");
        jstr(&o, gr[x->example[k]].path);
        fprintf(f, ", \"retained_bytes\": %" PRId64 "}", gr[x->example[k]].diff);
      }
      fprintf(f, "]}}");
    }
    fprintf(f, "]}\n");
  } else {
    fprintf(f, "HEAP GROWTH\n%+" PRId64 " objects, %+" PRId64 " bytes (the VM counted %+" PRId64
            ")\n", dobj, dbytes, dgc);
    if (g->rss && old->rss)
      fprintf(f, "process: RSS %+" PRId64 " bytes", (int64_t)(g->rss - old->rss));
    if (g->malloc_held && old->malloc_held)
      fprintf(f, "%sglibc malloc %+" PRId64 " in use, %+" PRId64 " held", g->rss && old->rss ? ", " : "process: ",
              (int64_t)(g->malloc_in_use - old->malloc_in_use),
              (int64_t)(g->malloc_held - old->malloc_held));
    if ((g->rss && old->rss) || (g->malloc_held && old->malloc_held)) fprintf(f, "\n");
    fprintf(f, "\n%-12s %12s %14s\n", "type", "objects", "bytes");
    for (int i = 0; i < d.n; i++)
      fprintf(f, "%-12s %+12" PRId64 " %+14" PRId64 "\n", ljh_type_name((LjhType)d.order[i]),
              d.count[d.order[i]], d.bytes[d.order[i]]);
    fprintf(f, "\nRETAINERS BY GROWTH (what grew inside one counted under it)\n%14s  %-12s %s\n",
            "retained", "type", "path (before -> after)");
    for (uint32_t i = 0; i < ng; i++) {
      const LjmHeapGrowth *x = &gr[row[i]];
      if (x->made)
        fprintf(f, "%+14" PRId64 "  %-12s %s\n", x->diff, x->type, x->path);
      else
        fprintf(f, "%+14" PRId64 "  %-12s %s (%" PRIu64 " -> %" PRIu64 ")\n", x->diff, x->type,
                x->path, x->old_retained, x->new_retained);
      if (!x->grown && !x->entries) continue;
      fprintf(f, "%14s  %-12s ", "", "");
      if (x->made) fprintf(f, "%" PRIu32 " inside changed by %+" PRId64 " bytes", x->grown,
                           x->grown_bytes);
      else fprintf(f, "%+" PRId64 " entries", x->entries);
      for (int k = 0; k < 2 && x->example[k] != LJM_HEAP_NONE; k++)
        fprintf(f, "%s %s (%+" PRId64 ")", k ? "," : ", e.g.", inside(x->path, gr[x->example[k]].path),
                gr[x->example[k]].diff);
      fprintf(f, "\n");
    }
  }
  out_free(&o);
  free(row);
  ljm_heapgraph_growth_free(gr, nall);
  return 0;
}

/* -- Paths -------------------------------------------------------------------- */

static int paths_view(const LjmHeapGraph *g, LjmHeapLabelMatch match, void *ud,
                         const char *pattern, uint32_t top, uint32_t paths, int json, FILE *f,
                         char *err, size_t errlen)
{
  Paths p;
  char path[PATH_MAX_LEN];
  if (paths_init(&p, g, paths)) return oom(err, errlen);
  Out o = { f, { 0 }, { 0 } };
  uint32_t shown = 0, matched = 0;
  if (json) fprintf(f, "{\"matches\": [");
  /* Objects whose type name matches first (--path-to Point: the tables of
  ** that __name, before a string "Point"), then those whose label does. */
  for (int pass = 1; pass <= 2; pass++)
    for (uint32_t i = 1; i < g->nobj; i++) {
      if (ljm_heap_matches(g, p.memo, i, match, ud) != pass) continue;
      if (++matched > top) continue;
      shown++;
      const LjmHeapObj *ob = &g->obj[i];
      const char *label = ljm_heapgraph_label(g, i), *tn = type_name(g, &p, i);
      if (json) {
        fprintf(f, "%s{\"label\": ", shown > 1 ? ", " : "");
        jstr(&o, label);
        fprintf(f, ", \"type\": ");
        jstr(&o, tn);
        fprintf(f, ", \"size\": %" PRIu64 ", \"retained_bytes\": %" PRIu64, ob->size,
                ob->retained);
        paths_json(&o, g, &p, i);
        fprintf(f, "}");
        continue;
      }
      fprintf(f, "%s%s%s (%" PRIu64 " bytes, retains %" PRIu64 "):\n", tn, *label ? " " : "",
              label, ob->size, ob->retained);
      uint32_t all, n = retainers(g, &p, i, &all);
      for (uint32_t k = 0; k < n; k++)
        fprintf(f, "  %s\n", ljm_heapgraph_path_via(g, p.edges[k], path, sizeof(path)));
      if (!all) fprintf(f, "  (only weakly reachable)\n");
      if (all > n)
        fprintf(f, "  (+%" PRIu32 " more reference%s into it)\n", all - n, all - n > 1 ? "s" : "");
    }
  if (json)
    fprintf(f, "], \"matched\": %" PRIu32 "}\n", matched);
  else if (matched > shown)
    fprintf(f, "(%" PRIu32 " more objects match; --top N shows more)\n", matched - shown);
  else if (!matched)
    fprintf(f, "no object's type name or label matches '%s'\n", pattern);
  out_free(&o);
  paths_free(&p);
  return 0;
}

static int heapreport_write(const LjmHeapGraph *g, const LjmExportOptions *o, FILE *out, char *err,
                            size_t errlen)
{
  if (o->base) return growth_view(o->base, g, o->top, o->json, out, err, errlen);
  if (o->pattern)
    return paths_view(g, o->match, o->match_ud, o->pattern, o->top, o->paths, o->json,
                                out, err, errlen);
  return summary_view(g, o->top, o->paths, o->match, o->match_ud, o->json, out, err,
                                errlen);
}

const LjmExporter ljm_exporter_heapreport = {
  .name = "heapreport", .command = "heap", .reads = LJM_READS_SNAPSHOT,
  .summary = "what a heap snapshot holds and what keeps it (ljm heap)",
  .write_heap = heapreport_write,
};
