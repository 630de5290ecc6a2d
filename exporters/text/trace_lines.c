/* trace_lines.c -- rows with traces charged to their start lines (see the
** header). Everything is sorted and merged by name: O(n log n) in the rows
** and overrides, no recursion. */
#include "exporters/text/trace_lines.h"

#include <stdlib.h>
#include <string.h>

static const char TRACE[] = "TRACE [", STARTED[] = " started at ";

LjmStr ljm_trace_line_of(LjmStr s)
{
  if (s.len < sizeof(TRACE) - 1 || memcmp(s.s, TRACE, sizeof(TRACE) - 1)) return s;
  for (size_t i = sizeof(TRACE) - 1; i + sizeof(STARTED) - 1 <= s.len; i++)
    if (s.s[i] == ']') {
      if (memcmp(s.s + i + 1, STARTED, sizeof(STARTED) - 1)) return s;
      size_t at = i + sizeof(STARTED);
      return (LjmStr){ s.s + at, s.len - at };
    }
  return s;
}

static int cmp_str(const void *a, const void *b) { return ljm_str_cmp(a, b); }

static int cmp_name_first(const void *pa, const void *pb)
{
  const LjmRow *a = pa, *b = pb;
  int c = ljm_str_cmp(&a->name, &b->name);
  if (c) return c;
  return (a->first_seen > b->first_seen) - (a->first_seen < b->first_seen);
}

static int cmp_heap_name(const void *pa, const void *pb)
{
  return ljm_str_cmp(&((const LjmHeapLine *)pa)->name, &((const LjmHeapLine *)pb)->name);
}

double ljm_trace_share(const LjmModel *m)
{
  const LjmRow *rows;
  size_t n = ljm_model_rows(m, LJM_SEC_ALLOC, &rows);
  uint64_t all = 0, traced = 0;
  for (size_t i = 0; i < n; i++) {
    all += rows[i].num;
    if (rows[i].name.len >= sizeof(TRACE) - 1 && !memcmp(rows[i].name.s, TRACE, sizeof(TRACE) - 1))
      traced += rows[i].num;
  }
  return all ? (double)traced / (double)all : 0;
}

/* Section sec's rows renamed, merged by name and sorted; overrides go to
** t->names from *used on. */
static int merge_section(const LjmModel *m, LjmSection sec, LjmTraceLines *t, size_t *used)
{
  const LjmRow *src;
  size_t n = ljm_model_rows(m, sec, &src), k = 0;
  LjmRow *r = malloc((n + 1) * sizeof(*r));
  if (!r) return -1;
  for (size_t i = 0; i < n; i++) {
    r[i] = src[i];
    r[i].name = ljm_trace_line_of(src[i].name);
  }
  if (n) qsort(r, n, sizeof(*r), cmp_name_first);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    LjmRow out = r[i];
    LjmStr *ov = t->names + *used;
    out.num = 0;
    out.alloc = out.free = 0;
    out.noverrides = 0;
    for (; j < n && !ljm_str_cmp(&r[j].name, &out.name); j++) {
      out.num += r[j].num;
      out.alloc += r[j].alloc;
      out.free += r[j].free;
      for (size_t o = 0; o < r[j].noverrides; o++) ov[out.noverrides++] = ljm_trace_line_of(r[j].overrides[o]);
    }
    qsort(ov, out.noverrides, sizeof(*ov), cmp_str);
    out.overrides = ov;
    *used += out.noverrides;
    r[k++] = out;  /* k <= i: never overwrites a row still to be read */
    i = j;
  }
  if (k) qsort(r, k, sizeof(*r), ljm_row_order);
  t->rows[sec] = r;
  t->nrows[sec] = k;
  return 0;
}

int ljm_trace_lines_build(const LjmModel *m, LjmTraceLines *t)
{
  memset(t, 0, sizeof(*t));
  size_t nov = 0, used = 0;
  for (int sec = 0; sec < 3; sec++) {
    const LjmRow *rows;
    size_t n = ljm_model_rows(m, (LjmSection)sec, &rows);
    for (size_t i = 0; i < n; i++) nov += rows[i].noverrides;
  }
  t->names = malloc((nov + 1) * sizeof(*t->names));
  if (!t->names) return -1;
  for (int sec = 0; sec < 3; sec++)
    if (merge_section(m, (LjmSection)sec, t, &used)) goto oom;
  const LjmHeapLine *src;
  size_t n = ljm_model_heap_summary(m, &src), k = 0;
  if (!(t->heap = malloc((n + 1) * sizeof(*t->heap)))) goto oom;
  for (size_t i = 0; i < n; i++) {
    t->heap[i] = src[i];
    t->heap[i].name = ljm_trace_line_of(src[i].name);
  }
  if (n) qsort(t->heap, n, sizeof(*t->heap), cmp_heap_name);
  for (size_t i = 0; i < n;) {
    LjmHeapLine out = t->heap[i];
    size_t j = i + 1;
    for (; j < n && !ljm_str_cmp(&t->heap[j].name, &out.name); j++) {
      out.dbytes += t->heap[j].dbytes;
      out.nalloc += t->heap[j].nalloc;
      out.nfree += t->heap[j].nfree;
    }
    t->heap[k++] = out;
    i = j;
  }
  if (k) qsort(t->heap, k, sizeof(*t->heap), ljm_heap_line_order);
  t->nheap = k;
  return 0;
oom:
  ljm_trace_lines_free(t);
  return -1;
}

void ljm_trace_lines_free(LjmTraceLines *t)
{
  for (int sec = 0; sec < 3; sec++) free(t->rows[sec]);
  free(t->heap);
  free(t->names);
  memset(t, 0, sizeof(*t));
}
