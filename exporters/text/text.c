/* text.c -- the Tarantool memprof report (doc/ljm-format.md), byte for
** byte; rows with equal keys come in the model's documented order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/sampled.h"
#include "exporters/common/state.h"
#include "exporters/ljm_exporter.h"
#include "exporters/text/by_label.h"
#include "exporters/text/bytes_fmt.h"
#include "exporters/text/trace_lines.h"

typedef struct TextState {
  LjmExportBase base;
  int sampled;  /* estimates: shown to 3 significant digits */
  int lines;    /* --traces=lines: the rows of tl */
  LjmTraceLines tl;
} TextState;

/* n to 3 significant digits (a sampled stream's estimates are no closer). */
static double round3(double n)
{
  double scale = 1;
  if (n < 1000) return n;
  while (n >= 1000 * scale) scale *= 10;
  return (double)(uint64_t)(n / scale + 0.5) * scale;
}

static unsigned long long count3(const TextState *t, uint64_t n)
{
  return t->sampled ? (unsigned long long)round3((double)n) : (unsigned long long)n;
}

static void put_str(FILE *out, LjmStr s) { fwrite(s.s, 1, s.len, out); }

static void put_bytes(const TextState *t, double n)
{
  char buf[64];
  ljm_fmt_bytes(buf, sizeof(buf), t->sampled ? round3(n) : n, t->base.o.human_readable);
  fputs(buf, t->base.out);
}

static void put_section(const TextState *t, const LjmModel *m, LjmSection sec,
                        const char *title)
{
  const LjmRow *rows = t->tl.rows[sec];
  size_t n = t->lines ? t->tl.nrows[sec] : ljm_model_rows(m, sec, &rows);
  fprintf(t->base.out, "%s\n", title);
  for (size_t i = 0; i < n; i++) {
    const LjmRow *r = &rows[i];
    put_str(t->base.out, r->name);
    fprintf(t->base.out, ": %llu events\t+", count3(t, r->num));
    put_bytes(t, r->alloc);
    fputs("\t-", t->base.out);
    put_bytes(t, r->free);
    fputc('\n', t->base.out);
    if (r->noverrides) {
      fputs("\tOverrides:\n", t->base.out);
      for (size_t k = 0; k < r->noverrides; k++) {
        fputs("\t\t", t->base.out);
        put_str(t->base.out, r->overrides[k]);
        fputc('\n', t->base.out);
      }
      fputc('\n', t->base.out);
    }
  }
  fputc('\n', t->base.out);
}

static void put_summary(const TextState *t, const LjmModel *m)
{
  const LjmHeapLine *lines = t->tl.heap;
  size_t n = t->lines ? t->tl.nheap : ljm_model_heap_summary(m, &lines);
  fputs("HEAP SUMMARY:\n", t->base.out);
  for (size_t i = 0; i < n; i++) {
    put_str(t->base.out, lines[i].name);
    fputs(" holds ", t->base.out);
    put_bytes(t, lines[i].dbytes);
    fprintf(t->base.out, ": %llu allocs, %llu frees\n", count3(t, lines[i].nalloc),
            count3(t, lines[i].nfree));
  }
  fputc('\n', t->base.out);
}

/* A row of the temporaries' section. */
typedef struct TempRow {
  LjmStr name;
  uint64_t temp, alloc;
} TempRow;

static int temp_by_name(const void *a, const void *b)
{
  return ljm_str_cmp(&((const TempRow *)a)->name, &((const TempRow *)b)->name);
}

/* Most temporaries first, then by name. */
static int temp_order(const void *a, const void *b)
{
  const TempRow *x = a, *y = b;
  if (x->temp != y->temp) return x->temp > y->temp ? -1 : 1;
  return ljm_str_cmp(&x->name, &y->name);
}

/* --temporary: each site's blocks freed right after they were made, a
** line per site that has any (--traces=lines: a trace's at the line it
** started at, merged with that line's own), before the reference's
** sections. */
static int put_temporaries(const TextState *t, const LjmModel *m, char *err, size_t errlen)
{
  const LjmTotals *tot = ljm_model_totals(m);
  size_t n = 0, ns = ljm_model_nsites(m);
  TempRow *v = malloc((ns ? ns : 1) * sizeof(*v));
  if (!v) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (uint32_t i = 0; i < ns; i++) {
    const LjmSite *s = ljm_model_site(m, i);
    if (!s->fig.temp_count && !t->lines) continue;
    LjmStr name = { s->name, s->name_len };
    v[n++] = (TempRow){ t->lines ? ljm_trace_line_of(name) : name, s->fig.temp_count,
                        s->fig.alloc_count };
  }
  if (t->lines && n) {  /* equal names merged */
    qsort(v, n, sizeof(*v), temp_by_name);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
      if (w && !ljm_str_cmp(&v[w - 1].name, &v[i].name)) {
        v[w - 1].temp += v[i].temp;
        v[w - 1].alloc += v[i].alloc;
      } else {
        v[w++] = v[i];
      }
    }
    n = 0;
    for (size_t i = 0; i < w; i++)
      if (v[i].temp) v[n++] = v[i];
  }
  qsort(v, n, sizeof(*v), temp_order);
  FILE *out = t->base.out;
  fprintf(out, "TEMPORARY ALLOCATIONS: %llu of %llu allocations (reallocations included) "
          "freed right after they were made\n",
          (unsigned long long)tot->fig.temp_count, (unsigned long long)tot->fig.alloc_count);
  for (size_t i = 0; i < n; i++) {
    put_str(out, v[i].name);
    fprintf(out, ": %llu temporary of %llu allocations (%.1f%%)\n", (unsigned long long)v[i].temp,
            (unsigned long long)v[i].alloc,
            v[i].alloc ? 100.0 * (double)v[i].temp / (double)v[i].alloc : 0.0);
  }
  fputc('\n', out);
  free(v);
  return 0;
}

/* Non-empty lines of each aliased chunk, numbered from 1 (doc/ljm-format.md,
** "ALIASES"). */
static void put_aliases(const TextState *t, const LjmModel *m)
{
  const LjmAlias *a;
  size_t n = ljm_model_aliases(m, &a);
  if (!n) return;
  fputs("ALIASES:\n", t->base.out);
  for (size_t i = 0; i < n; i++) {
    fprintf(t->base.out, "function_alias_%u:\n", a[i].number);
    const char *p = a[i].text.s, *end = p + a[i].text.len;
    unsigned k = 0;
    while (p < end) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      const char *stop = nl ? nl : end;
      if (stop > p) {
        fprintf(t->base.out, "%u\t| ", ++k);
        fwrite(p, 1, (size_t)(stop - p), t->base.out);
        fputc('\n', t->base.out);
      }
      p = nl ? nl + 1 : end;
    }
    fputs("\n\n", t->base.out);
  }
}

static void *text_begin(const LjmExportOptions *o, FILE *out, char *err, size_t errlen)
{
  return ljm_export_state_new(sizeof(TextState), o, out, err, errlen);
}

static int text_finish(void *st, const LjmModel *m, char *err, size_t errlen)
{
  TextState *t = st;
  char note[128];
  if (t->base.o.traces_as_lines) {
    if (ljm_trace_lines_build(m, &t->tl)) {
      snprintf(err, errlen, "out of memory");
      free(t);
      return -1;
    }
    t->lines = 1;
  }
  if (t->base.o.temporaries && !ljm_model_totals(m)->temporaries) {  /* nothing written */
    snprintf(err, errlen, "--temporary: %s", ljm_temp_refusal(m));
    ljm_trace_lines_free(&t->tl);
    free(t);
    return -1;
  }
  if (ljm_sampled_note(m, note, sizeof(note))) {  /* one line first; rows as the reference's */
    t->sampled = 1;
    fprintf(t->base.out, "SAMPLED: %s, rounded to 3 digits\n\n", note);
  }
  char filter[1024];
  if (ljm_filter_line(m, filter, sizeof(filter)))  /* which blocks the figures are of */
    fprintf(t->base.out, "FILTER: %s\n\n", filter);
  if (t->base.o.by_key && ljm_by_label_write(t->base.out, m, t->base.o.by_key,
                                             t->base.o.human_readable, t->sampled, err, errlen)) {
    ljm_trace_lines_free(&t->tl);
    free(t);
    return -1;
  }
  if (t->base.o.temporaries && put_temporaries(t, m, err, errlen)) {
    ljm_trace_lines_free(&t->tl);
    free(t);
    return -1;
  }
  if (!t->base.o.leak_only) {
    put_section(t, m, LJM_SEC_ALLOC, "ALLOCATIONS");
    put_section(t, m, LJM_SEC_REALLOC, "REALLOCATIONS");
    put_section(t, m, LJM_SEC_FREE, "DEALLOCATIONS");
  }
  put_summary(t, m);
  put_aliases(t, m);
  ljm_trace_lines_free(&t->tl);
  free(t);
  return 0;
}

const LjmExporter ljm_exporter_text = {
  .name = "text", .command = "convert", .reads = LJM_READS_PROFILE,
  .summary = "the Tarantool memprof text report (ljm report)",
  .suffixes = (const char *const[]){".txt", NULL}, .begin = text_begin, .finish = text_finish,
};
