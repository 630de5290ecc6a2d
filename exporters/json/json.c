/* json.c -- the model as one JSON document (schema: exporters/json/SCHEMA.md).
**
** Written by hand with fprintf: the document is flat and its field names
** are the model's own. Strings are made valid UTF-8 (bad bytes become
** U+FFFD) and escaped per RFC 8259.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "exporters/common/state.h"
#include "exporters/common/utf8.h"
#include "exporters/common/value.h"
#include "exporters/ljm_exporter.h"

typedef struct JsonState {
  LjmExportBase base;
} JsonState;

static void *json_begin(const LjmExportOptions *o, FILE *out, char *err,
                        size_t errlen)
{
  return ljm_export_state_new(sizeof(JsonState), o, out, err, errlen);
}

/* Writes s[0..len) as a JSON string; plain runs are copied in one go. */
static void json_str(FILE *f, const char *s, size_t len)
{
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t run = 0;
  if (!s) len = 0;
  putc('"', f);
  for (size_t i = 0; i < len;) {
    uint32_t cp;
    size_t n = ljm_utf8_decode(p + i, len - i, &cp);
    char esc[8];
    const char *rep = NULL;
    if (cp == LJM_UTF8_BAD) rep = "\\ufffd";
    else if (cp == '"') rep = "\\\"";
    else if (cp == '\\') rep = "\\\\";
    else if (cp == '\n') rep = "\\n";
    else if (cp == '\r') rep = "\\r";
    else if (cp == '\t') rep = "\\t";
    else if (cp < 0x20 || cp == 0x7F) {
      snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
      rep = esc;
    }
    if (rep) {
      fwrite(p + run, 1, i - run, f);
      fputs(rep, f);
      run = i + n;
    }
    i += n;
  }
  fwrite(p + run, 1, len - run, f);
  putc('"', f);
}

static void json_cstr(FILE *f, const char *s)
{
  size_t n = 0;
  if (s) while (s[n]) n++;
  json_str(f, s, n);
}

/* LjmFuncFrom as a JSON value. */
static const char *func_from_name(LjmFuncFrom k)
{
  switch (k) {
  case LJM_FUNC_SOURCE: return "\"source\"";
  case LJM_FUNC_MAIN: return "\"main\"";
  case LJM_FUNC_BUILTIN: return "\"builtin\"";
  case LJM_FUNC_ANONYMOUS: return "\"anonymous\"";
  case LJM_FUNC_UNKNOWN: return "\"unknown\"";
  case LJM_FUNC_DEFINED: return "\"defined\"";
  default: return "null";
  }
}

static const char *kind_name(LjmSiteKind k)
{
  switch (k) {
  case LJM_SITE_LUA: return "lua";
  case LJM_SITE_C: return "c";
  case LJM_SITE_TRACE: return "trace";
  case LJM_SITE_LABEL: return "label";
  default: return "internal";
  }
}

/* Writes 'key' (already quoted, with its ':' and any ',') and v. Numbers
** are formatted by hand: fprintf per figure shows up with many sites. */
static void json_num(FILE *f, const char *key, uint64_t v)
{
  char buf[LJM_NUM_MAX];
  fputs(key, f);
  fputs(ljm_fmt_u64(buf, v), f);
}

/* temp_count: a number where the model counted temporaries, else null. */
static void json_temp(FILE *f, const LjmModel *m, const LjmFigures *g)
{
  if (ljm_model_totals(m)->temporaries) json_num(f, ",\"temp_count\":", g->temp_count);
  else fputs(",\"temp_count\":null", f);
}

/* The nine figures, as members of an object already opened. */
static void json_figures(FILE *f, const LjmModel *m, const LjmFigures *g)
{
  json_num(f, "\"alloc_count\":", g->alloc_count);
  json_num(f, ",\"alloc_bytes\":", g->alloc_bytes);
  json_num(f, ",\"free_count\":", g->free_count);
  json_num(f, ",\"free_bytes\":", g->free_bytes);
  json_num(f, ",\"inuse_count\":", g->inuse_count);
  json_num(f, ",\"inuse_bytes\":", g->inuse_bytes);
  json_num(f, ",\"peak_count\":", g->peak_count);
  json_num(f, ",\"peak_bytes\":", g->peak_bytes);
  json_temp(f, m, g);
}

static void json_stream(FILE *f, const LjmModel *m, const LjmStreamInfo *si)
{
  fputs("\"stream\":{\"path\":", f);
  json_cstr(f, si->path);
  fprintf(f,
          ",\"gzip\":%s,\"zstd\":%s,\"ljs_version\":%d,\"ljm_version\":%d"
          ",\"bytes\":%" PRIu64 ",\"truncated\":%s",
          si->gzip ? "true" : "false", si->zstd ? "true" : "false", si->ljs_version, si->ljm_version,
          si->bytes, si->truncated ? "true" : "false");
  if (si->truncated) fprintf(f, ",\"truncated_at\":%" PRIu64, si->truncated_at);
  else fputs(",\"truncated_at\":null", f);
  fprintf(f, ",\"trailing\":%" PRIu64, si->trailing);
  fprintf(f, ",\"stacks\":%s,\"timed\":%s,\"duration_us\":",
          si->ext_flags & 1 ? "true" : "false", si->ext_flags & 2 ? "true" : "false");
  if (si->duration == LJM_NO_TIME_US) fputs("null", f);
  else fprintf(f, "%" PRIu64, si->duration);
  /* a window: its bounds in the recording's time; every other time counts from its start */
  if (si->windowed)
    fprintf(f, ",\"window_us\":[%" PRIu64 ",%" PRIu64 "]", si->window_from, si->window_to);
  else fputs(",\"window_us\":null", f);
  /* sampled: every figure of the file is an estimate (EXTENSION.md) */
  if (si->sample_rate) fprintf(f, ",\"sample_rate\":%" PRIu64, si->sample_rate);
  else fputs(",\"sample_rate\":null", f);
  fprintf(f, ",\"snapshot\":%s", si->snapshot ? "true" : "false");
  /* the filters that chose the blocks every figure is of (ljm_model_filter_note) */
  char filter[1024];
  if (ljm_model_filter_note(m, filter, sizeof(filter))) {
    fputs(",\"filter\":", f);
    json_cstr(f, filter);
    fprintf(f, ",\"filtered_out_events\":%" PRIu64 "}", ljm_model_filter_dropped(m));
  } else {
    fputs(",\"filter\":null,\"filtered_out_events\":0}", f);
  }
}

/* A time in usec, or null. */
static void json_time(FILE *f, const char *key, uint64_t t)
{
  fputs(key, f);
  if (t == LJM_NO_TIME_US) fputs("null", f);
  else json_num(f, "", t);
}

static const char *node_kind(LjmNodeKind k)
{
  switch (k) {
  case LJM_NODE_RESUME: return "resume";
  case LJM_NODE_TAIL: return "tail";
  case LJM_NODE_CUT: return "cut";
  default: return "frame";
  }
}

/* The seven figures of a label set's or an owner's blocks (no peaks). */
static void json_label_figures(FILE *f, const LjmModel *m, const LjmFigures *g)
{
  json_num(f, ",\"alloc_count\":", g->alloc_count);
  json_num(f, ",\"alloc_bytes\":", g->alloc_bytes);
  json_num(f, ",\"free_count\":", g->free_count);
  json_num(f, ",\"free_bytes\":", g->free_bytes);
  json_num(f, ",\"inuse_count\":", g->inuse_count);
  json_num(f, ",\"inuse_bytes\":", g->inuse_bytes);
  json_temp(f, m, g);
}

/* The stream's label sets, set 0 (no labels) first; [] without any. */
static void json_label_sets(FILE *f, const LjmModel *m)
{
  fputs("\"label_sets\":[", f);
  int first = 1;
  for (uint32_t set = 0; set < LJM_MODEL_SETS; set++) {
    const LjmFigures *g = ljm_model_label_figures(m, set);
    if (!g) break;  /* a stream without label sets */
    if (set && !ljm_model_label_defined(m, set)) continue;
    json_num(f, first ? "\n{\"id\":" : ",\n{\"id\":", set);
    first = 0;
    fprintf(f, ",\"other\":%s,\"labels\":{", ljm_model_label_other(m, set) ? "true" : "false");
    unsigned n = ljm_model_label_count(m, set);
    for (unsigned i = 0; i < n; i++) {
      LjmStr k, v;
      ljm_model_label(m, set, i, &k, &v);
      if (i) fputc(',', f);
      json_str(f, k.s, k.len);
      fputc(':', f);
      json_str(f, v.s, v.len);
    }
    fputc('}', f);
    json_label_figures(f, m, g);
    fputc('}', f);
  }
  fputs(first ? "]" : "\n]", f);
}

/* Figures per allocation type; [] for a stream without types. */
static void json_types(FILE *f, const LjmModel *m)
{
  fputs("\"types\":[", f);
  int first = 1;
  LjmFigures g;
  for (unsigned t = 1; t < LJM_TYPES; t++) {
    if (!ljm_model_type_figures(m, t, &g) || (!g.alloc_count && !g.free_count && !g.inuse_count))
      continue;
    fputs(first ? "\n{\"type\":" : ",\n{\"type\":", f);
    first = 0;
    json_cstr(f, ljm_type_name(t));
    json_label_figures(f, m, &g);
    fputc('}', f);
  }
  fputs(first ? "]" : "\n]", f);
}

/* A node's share of a label set: the figures of its owners with that set. */
typedef struct NodeSet {
  uint32_t node, set;
  LjmFigures fig;
} NodeSet;

static int nodeset_order(const void *a, const void *b)
{
  const NodeSet *x = a, *y = b;
  if (x->node != y->node) return x->node < y->node ? -1 : 1;
  return x->set < y->set ? -1 : x->set > y->set;
}

/* The (node, set) shares, sorted by node then set, owners of one pair
** summed; *n gets their number. NULL with *n 0 when there are none or
** memory ran out (*oom set). */
static NodeSet *node_sets(const LjmModel *m, size_t *n, int *oom)
{
  uint32_t no = ljm_model_nowners(m);
  size_t k = 0;
  NodeSet *v = NULL;
  *n = 0;
  for (uint32_t o = 0; o < no; o++) {
    uint32_t node, set;
    const LjmFigures *g = ljm_model_owner_label_figures(m, o, &node, &set);
    if (!g) continue;
    if (!v && !(v = malloc((size_t)no * sizeof(*v)))) {
      *oom = 1;
      return NULL;
    }
    v[k++] = (NodeSet){ node, set, *g };
  }
  if (!k) return v;
  qsort(v, k, sizeof(*v), nodeset_order);
  size_t w = 0;
  for (size_t i = 0; i < k; i++) {
    if (w && v[w - 1].node == v[i].node && v[w - 1].set == v[i].set) {
      ljm_figures_add(&v[w - 1].fig, &v[i].fig);
    } else {
      v[w++] = v[i];
    }
  }
  *n = w;
  return v;
}

static void json_node(FILE *f, const LjmModel *m, uint32_t id, const LjmNode *n,
                      const NodeSet **ns, const NodeSet *end)
{
  json_num(f, "{\"id\":", id);
  fputs(",\"parent\":", f);
  if (n->parent == LJM_NO_NODE) fputs("null", f);
  else json_num(f, "", n->parent);
  fprintf(f, ",\"kind\":\"%s\",\"site\":", node_kind(n->kind));
  if (n->site == LJM_NO_SITE) fputs("null", f);
  else json_num(f, "", n->site);
  json_num(f, ",\"depth\":", n->depth);
  fputs(",\"stream_id\":", f);
  if (n->stream_id) json_num(f, "", n->stream_id);
  else fputs("null", f);
  uint64_t first, last;
  ljm_model_node_times(m, id, &first, &last);
  json_time(f, ",\"first_us\":", first);
  json_time(f, ",\"last_us\":", last);
  fputs(",\"self\":{", f);
  json_figures(f, m, ljm_model_node_self(m, id));
  fputs("},\"total\":{", f);
  json_figures(f, m, ljm_model_node_total(m, id));
  fputs("},\"labels\":[", f);
  for (int k = 0; *ns < end && (*ns)->node == id; (*ns)++) {
    const LjmFigures *g = &(*ns)->fig;
    if (!(g->alloc_count | g->free_count | g->inuse_count | g->temp_count))
      continue;  /* a free's empty owner */
    json_num(f, k++ ? ",{\"set\":" : "{\"set\":", (*ns)->set);
    json_label_figures(f, m, &(*ns)->fig);
    fputc('}', f);
  }
  fputs("]}", f);
}

static void json_rss(FILE *f, const LjmModel *m)
{
  const LjmRssSample *r;
  size_t n = ljm_model_rss(m, &r);
  fputs("\"rss\":[", f);
  for (size_t i = 0; i < n; i++) {
    json_time(f, i ? ",{\"time_us\":" : "{\"time_us\":", r[i].time);
    json_num(f, ",\"bytes\":", r[i].bytes);
    fputc('}', f);
  }
  fputc(']', f);
}

static void json_totals(FILE *f, const LjmModel *m, const LjmTotals *t)
{
  fputs("\"totals\":{", f);
  json_figures(f, m, &t->fig);
  fprintf(f,
          ",\"events\":%" PRIu64 ",\"allocs\":%" PRIu64 ",\"reallocs\":%" PRIu64
          ",\"frees\":%" PRIu64 ",\"peak_event\":%" PRIu64
          ",\"unattributed_frees\":%" PRIu64 "}",
          t->events, t->allocs, t->reallocs, t->frees, t->peak_event,
          t->unattributed_frees);
}

static void json_symbols(FILE *f, const LjmTotals *t)
{
  fprintf(f,
          "\"symbols\":{\"protos\":%" PRIu64 ",\"cfuncs\":%" PRIu64
          ",\"traces\":%" PRIu64 ",\"symtab_events\":%" PRIu64 "}",
          t->protos, t->cfuncs, t->traces, t->symtab_events);
}

static void json_site(FILE *f, const LjmModel *m, uint32_t id, const LjmSite *s)
{
  json_num(f, "{\"id\":", id);
  fputs(",\"kind\":\"", f);
  fputs(kind_name(s->kind), f);
  fputs("\",\"name\":", f);
  json_str(f, s->name, s->name_len);
  fputs(",\"func\":", f);
  json_cstr(f, s->func);
  fputs(",\"func_from\":", f);
  fputs(func_from_name(s->func_from), f);
  fputs(",\"file\":", f);
  json_cstr(f, s->file);
  fputs(",\"chunk\":", f);
  json_cstr(f, s->chunk);
  if (s->line < 0) fprintf(f, ",\"line\":%" PRId64, s->line);
  else json_num(f, ",\"line\":", (uint64_t)s->line);
  json_num(f, ",\"func_line\":", s->func_line);
  fprintf(f, ",\"addr\":\"0x%" PRIx64 "\",\"symbol_addr\":\"0x%" PRIx64 "\"",
          s->addr, s->symbol_addr);
  json_num(f, ",\"traceno\":", s->traceno);
  fputs(",\"trace_start\":", f);
  /* Only traces have a start; the field is unspecified for other kinds. */
  if (s->kind != LJM_SITE_TRACE || s->trace_start == LJM_NO_SITE)
    fputs("null", f);
  else json_num(f, "", s->trace_start);
  fputc(',', f);
  json_figures(f, m, &s->fig);
  fputc('}', f);
}

static void json_aliases(FILE *f, const LjmModel *m)
{
  const LjmAlias *a;
  size_t n = ljm_model_aliases(m, &a);
  fputs("\"aliases\":[", f);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "%s{\"name\":\"function_alias_%u\",\"text\":", i ? "," : "",
            a[i].number);
    json_str(f, a[i].text.s, a[i].text.len);
    fputc('}', f);
  }
  fputc(']', f);
}

static int json_finish(void *p, const LjmModel *m, char *err, size_t errlen)
{
  JsonState *st = p;
  FILE *f = st->base.out;
  size_t n = ljm_model_nsites(m);
  fputs("{\"format\":\"ljmkit-json\",\"version\":2,\n", f);
  json_stream(f, m, ljm_model_stream(m));
  fputs(",\n", f);
  json_totals(f, m, ljm_model_totals(m));
  fputs(",\n", f);
  json_symbols(f, ljm_model_totals(m));
  fputs(",\n", f);
  json_aliases(f, m);
  fputs(",\n\"sites\":[", f);
  for (uint32_t id = 0; id < n; id++) {
    fputs(id ? ",\n" : "\n", f);
    json_site(f, m, id, ljm_model_site(m, id));
  }
  fputs("\n],\n", f);
  json_label_sets(f, m);
  fputs(",\n", f);
  json_types(f, m);
  fputs(",\n\"group_by\":", f);
  if (ljm_model_group_key(m)) json_cstr(f, ljm_model_group_key(m));
  else fputs("null", f);
  fputs(",\n\"nodes\":[", f);
  size_t nn = ljm_model_nnodes(m), nsets;
  int oom = 0;
  NodeSet *sets = node_sets(m, &nsets, &oom), *end = sets ? sets + nsets : NULL;
  const NodeSet *at = sets;
  for (uint32_t id = 0; id < nn && !oom; id++) {
    fputs(id ? ",\n" : "\n", f);
    json_node(f, m, id, ljm_model_node(m, id), &at, end);
  }
  free(sets);
  fputs("\n],\n", f);
  json_rss(f, m);
  fputs("}\n", f);
  free(st);
  if (oom) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  return 0;
}

const LjmExporter ljm_exporter_json = {
  .name = "json", .command = "convert", .reads = LJM_READS_PROFILE | LJM_READS_SNAPSHOT,
  .summary = "JSON: stream facts, totals and per-site figures (exporters/json/SCHEMA.md)",
  .suffixes = (const char *const[]){".json", NULL}, .begin = json_begin, .finish = json_finish,
};
