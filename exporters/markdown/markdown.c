/* markdown.c -- a Markdown table of sites, largest first (like Crystal's MemProf).
**
**   | Allocations | Total size | Context |
**   |---:|---:|:---|
**   | 1,200 | 76,800 | `append (test.lua:14)` |
**
** The pair of columns follows --value: alloc_* (default) shows allocations,
** inuse_* live objects, peak_bytes objects held at the peak. With
** allocations, a profile that counts temporary allocations (LjmFigures)
** has a Temporary column too, and temp_count sorts the rows by it. Rows are sorted
** by the chosen figure, then the other one, descending, then by name. Rows
** are call-tree nodes: sites of a standard stream; stacks of an extended
** one, whose Context lists the frames innermost first, joined by <br>
** (like Crystal's MemProf).
** --min-bytes hides rows below a size, --top keeps the first N; a footer
** says what was hidden. Names go in code spans, so only '|' needs escaping.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/sampled.h"
#include "exporters/common/buf.h"
#include "exporters/common/frames.h"
#include "exporters/common/state.h"
#include "exporters/common/utf8.h"
#include "exporters/common/value.h"
#include "exporters/ljm_exporter.h"

typedef struct MdState {
  LjmExportBase base;
} MdState;

typedef struct MdRow {
  const LjmSite *s;    /* the node's site: names break ties */
  uint32_t id;         /* the node */
  uint64_t count, bytes;
  uint64_t temp;       /* temporary allocations */
  uint64_t key, key2;  /* chosen figure, the other one */
} MdRow;

static void *md_begin(const LjmExportOptions *o, FILE *out, char *err,
                      size_t errlen)
{
  return ljm_export_state_new(sizeof(MdState), o, out, err, errlen);
}

static int row_cmp(const void *a, const void *b)
{
  const MdRow *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  if (x->key2 != y->key2) return x->key2 < y->key2 ? 1 : -1;
  size_t n = x->s->name_len < y->s->name_len ? x->s->name_len : y->s->name_len;
  int c = memcmp(x->s->name, y->s->name, n);
  if (c) return c;
  if (x->s->name_len != y->s->name_len)
    return x->s->name_len < y->s->name_len ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Count and bytes shown for kind k. */
static void row_pair(const LjmFigures *f, LjmValueKind k, uint64_t *count,
                     uint64_t *bytes)
{
  if (k == LJM_VALUE_INUSE_BYTES || k == LJM_VALUE_INUSE_COUNT) {
    *count = f->inuse_count;
    *bytes = f->inuse_bytes;
  } else if (k == LJM_VALUE_PEAK_BYTES) {
    *count = f->peak_count;
    *bytes = f->peak_bytes;
  } else {
    *count = f->alloc_count;
    *bytes = f->alloc_bytes;
  }
}

/* What the count column counts, for the footer. */
static const char *count_word(LjmValueKind k)
{
  if (k == LJM_VALUE_INUSE_BYTES || k == LJM_VALUE_INUSE_COUNT)
    return "live objects";
  if (k == LJM_VALUE_PEAK_BYTES) return "objects at peak";
  return "allocations";
}

static const char *header_of(LjmValueKind k, int temp)
{
  if (temp) return "| Allocations | Temporary | Total size | Context |\n|---:|---:|---:|:---|";
  if (k == LJM_VALUE_INUSE_BYTES || k == LJM_VALUE_INUSE_COUNT)
    return "| Live objects | Live size | Context |\n|---:|---:|:---|";
  if (k == LJM_VALUE_PEAK_BYTES)
    return "| Objects at peak | Size at peak | Context |\n|---:|---:|:---|";
  return "| Allocations | Total size | Context |\n|---:|---:|:---|";
}

/* Longest run of backticks in s. */
static size_t max_ticks(const char *s, size_t len)
{
  size_t best = 0, run = 0;
  for (size_t i = 0; i < len; i++) {
    run = s[i] == '`' ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

/* Appends s[0..len) as a code span that survives inside a table cell:
** cleaned text, '|' escaped, a fence longer than any backtick run in it,
** and padding when the text starts or ends with a backtick or a space. */
static void md_code(LjmBuf *b, const char *s, size_t len)
{
  LjmBuf t = {0};
  ljm_text_clean(&t, s, len, 0, LJM_CLEAN_NO_CAP);
  if (t.oom) { b->oom = 1; ljm_buf_free(&t); return; }
  const char *p = t.p ? t.p : "";
  size_t fence = max_ticks(p, t.len) + 1;
  int pad = t.len && (p[0] == '`' || p[0] == ' ' || p[t.len - 1] == '`' ||
                      p[t.len - 1] == ' ');
  for (size_t i = 0; i < fence; i++) ljm_buf_putc(b, '`');
  if (pad) ljm_buf_putc(b, ' ');
  for (size_t i = 0; i < t.len; i++) {
    if (p[i] == '|') ljm_buf_putc(b, '\\');
    ljm_buf_putc(b, p[i]);
  }
  if (pad) ljm_buf_putc(b, ' ');
  for (size_t i = 0; i < fence; i++) ljm_buf_putc(b, '`');
  ljm_buf_free(&t);
}

/* The Context cell of a node: its site's label, or for a real stack its
** frames from the innermost out (at most LJM_FRAMES_SHOWN_MAX, then
** "[...]"), each a code span, joined by <br>. */
static void md_context(LjmBuf *b, LjmBuf *label, const LjmModel *m, uint32_t id)
{
  int stacks = ljm_model_stacked(m);
  uint32_t root = ljm_model_node_group(m, id);
  for (unsigned k = 0; id != LJM_NO_NODE; k++) {
    if (k == LJM_FRAMES_SHOWN_MAX && id != root) {  /* a grouped path keeps its label */
      ljm_buf_puts(b, "<br>");
      md_code(b, "[...]", 5);
      if (root == LJM_NO_NODE) return;
      id = root;
    }
    const LjmNode *nd = ljm_model_node(m, id);
    ljm_buf_reset(label);
    switch (nd->kind) {
    case LJM_NODE_RESUME: ljm_buf_puts(label, "[coroutine]"); break;
    case LJM_NODE_TAIL: ljm_buf_puts(label, "[tail call]"); break;
    case LJM_NODE_CUT: ljm_buf_puts(label, "[...]"); break;
    default: ljm_site_label(label, m, ljm_model_site(m, nd->site)); break;
    }
    if (k) ljm_buf_puts(b, "<br>");
    md_code(b, label->p ? label->p : "", label->len);
    if (!stacks) return;
    id = nd->parent;
  }
}

static int md_write(MdState *st, const LjmModel *m, char *err, size_t errlen)
{
  size_t n = ljm_model_nnodes(m), nr = 0, shown = 0;
  MdRow *rows = n ? calloc(n, sizeof(*rows)) : NULL;
  LjmBuf b = {0}, label = {0};
  char c1[LJM_THOUSANDS_MAX], c2[LJM_THOUSANDS_MAX];
  uint64_t hid_count = 0, hid_bytes = 0, all_count = 0, all_bytes = 0;
  LjmValueKind k = ljm_value_resolve(st->base.value);
  int by_count = !ljm_value_is_bytes(k), by_temp = k == LJM_VALUE_TEMP_COUNT;
  int temp = ljm_model_totals(m)->temporaries &&
             (by_temp || k == LJM_VALUE_ALLOC_BYTES || k == LJM_VALUE_ALLOC_COUNT);
  uint64_t all_temp = 0, hid_temp = 0;
  if (by_temp && !temp) {
    snprintf(err, errlen, "--value temp_count: %s", ljm_temp_refusal(m));
    free(rows);
    return -1;
  }
  if (n && !rows) goto oom;
  for (uint32_t id = 0; id < n; id++) {
    MdRow *r = &rows[nr];
    const LjmNode *nd = ljm_model_node(m, id);
    if (nd->kind != LJM_NODE_FRAME) continue;  /* markers never allocate */
    r->s = ljm_model_site(m, nd->site);
    r->id = id;
    row_pair(ljm_model_node_self(m, id), k, &r->count, &r->bytes);
    r->temp = ljm_model_node_self(m, id)->temp_count;
    /* (in a window, a block carried in and freed first is a temporary
    ** of a row that allocated nothing in it) */
    if (by_temp ? r->temp == 0 : r->count == 0 && r->bytes == 0 && !(temp && r->temp)) continue;
    r->key = by_temp ? r->temp : by_count ? r->count : r->bytes;
    r->key2 = by_temp ? r->count : by_count ? r->bytes : r->count;
    all_count += r->count;
    all_bytes += r->bytes;
    all_temp += r->temp;
    nr++;
  }
  if (nr) qsort(rows, nr, sizeof(*rows), row_cmp);

  ljm_buf_puts(&b, "# LuaJIT memory profile ");
  md_code(&b, st->base.o.in_path ? st->base.o.in_path : "-",
          strlen(st->base.o.in_path ? st->base.o.in_path : "-"));
  ljm_buf_printf(&b, "\n\nSites by %s, largest first.\n\n",
                 ljm_value_snapshot_title(m, st->base.value)
                     ? ljm_value_snapshot_title(m, st->base.value)
                     : ljm_value_kind_name(st->base.value));
  {
    char note[1024];
    if (ljm_sampled_note(m, note, sizeof(note))) ljm_buf_printf(&b, "Figures are %s.\n\n", note);
    if (ljm_filter_line(m, note, sizeof(note))) ljm_buf_printf(&b, "Filter: %s.\n\n", note);
  }
  ljm_buf_printf(&b, "%s\n", header_of(k, temp));
  for (size_t i = 0; i < nr; i++) {
    const MdRow *r = &rows[i];
    if (r->bytes < st->base.o.min_bytes || (st->base.o.top && shown >= st->base.o.top)) {
      hid_count += r->count;
      hid_bytes += r->bytes;
      hid_temp += r->temp;
      continue;
    }
    ljm_buf_printf(&b, "| %s | ", ljm_fmt_thousands(c1, r->count));
    if (temp) ljm_buf_printf(&b, "%s | ", ljm_fmt_thousands(c1, r->temp));
    ljm_buf_printf(&b, "%s | ", ljm_fmt_thousands(c2, r->bytes));
    md_context(&b, &label, m, r->id);
    ljm_buf_puts(&b, " |\n");
    shown++;
  }
  ljm_buf_printf(&b, "\nTotal: %s %s", ljm_fmt_thousands(c1, all_count), count_word(k));
  if (temp) ljm_buf_printf(&b, " (%s temporary)", ljm_fmt_thousands(c1, all_temp));
  ljm_buf_printf(&b, ", %s bytes in %zu sites", ljm_fmt_thousands(c2, all_bytes), nr);
  if (shown < nr) {
    ljm_buf_printf(&b, "; %zu hidden by --min-bytes/--top (%s %s, ",
                   nr - shown, ljm_fmt_thousands(c1, hid_count), count_word(k));
    if (temp) ljm_buf_printf(&b, "%s temporary, ", ljm_fmt_thousands(c1, hid_temp));
    ljm_buf_printf(&b, "%s bytes)", ljm_fmt_thousands(c2, hid_bytes));
  }
  ljm_buf_puts(&b, ".\n");
  if (b.oom || label.oom) goto oom;
  fwrite(b.p, 1, b.len, st->base.out);
  free(rows);
  ljm_buf_free(&b);
  ljm_buf_free(&label);
  return 0;
oom:
  snprintf(err, errlen, "out of memory");
  free(rows);
  ljm_buf_free(&b);
  ljm_buf_free(&label);
  return -1;
}

static int md_finish(void *p, const LjmModel *m, char *err, size_t errlen)
{
  MdState *st = p;
  int rc = md_write(st, m, err, errlen);
  free(st);
  return rc;
}

const LjmExporter ljm_exporter_markdown = {
  .name = "markdown", .command = "convert", .reads = LJM_READS_PROFILE | LJM_READS_SNAPSHOT,
  .summary = "Markdown table of sites by size (--min-bytes, --top)",
  .suffixes = (const char *const[]){".md", ".markdown", NULL}, .begin = md_begin,
  .finish = md_finish,
};
