/* by_label.c -- ljm report --by KEY: the figures of each value of a label. */
#include "exporters/text/by_label.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ljm_decoder.h"
#include "exporters/text/bytes_fmt.h"
#include "model/ljm_hmap.h"

typedef struct ValueRow {
  LjmStr value;       /* s NULL: "(none)" or "(other)" (name) */
  const char *name;
  LjmFigures fig;
} ValueRow;

static int row_order(const void *a, const void *b)
{
  const ValueRow *x = a, *y = b;
  if (x->fig.inuse_bytes != y->fig.inuse_bytes) return x->fig.inuse_bytes > y->fig.inuse_bytes ? -1 : 1;
  if (x->fig.alloc_bytes != y->fig.alloc_bytes) return x->fig.alloc_bytes > y->fig.alloc_bytes ? -1 : 1;
  LjmStr p = x->value.s ? x->value : (LjmStr){ x->name, strlen(x->name) };
  LjmStr q = y->value.s ? y->value : (LjmStr){ y->name, strlen(y->name) };
  return ljm_str_cmp(&p, &q);
}

static int same(const ValueRow *r, const LjmStr *v, const char *name)
{
  if (!v) return !r->value.s && r->name == name;
  return r->value.s && r->value.len == v->len && !memcmp(r->value.s, v->s, v->len);
}

/* The row of a value (v NULL: the row named name), made on first use:
** found by the value's hash, another hash on a collision. */
static size_t row_of(LjmHmap *by, ValueRow *rows, size_t *n, const LjmStr *v, const char *name)
{
  uint64_t h = 1469598103934665603ull;
  const char *s = v ? v->s : name;
  size_t len = v ? v->len : strlen(name);
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  h ^= v ? 0 : 0x9e3779b97f4a7c15ull;  /* "(none)" is not a value "(none)" */
  for (;; h = ljm_hash64(h + 1)) {
    uint32_t i = ljm_hmap_get(by, h);
    if (i == LJM_HMAP_NONE) {
      if (ljm_hmap_put(by, h, (uint32_t)*n)) return SIZE_MAX;
      rows[*n].value = v ? *v : (LjmStr){ NULL, 0 };
      rows[*n].name = name;
      return (*n)++;
    }
    if (same(&rows[i], v, name)) return i;
  }
}

static double r3(double n, int round3)
{
  double scale = 1;
  if (!round3 || n < 1000) return n;
  while (n >= 1000 * scale) scale *= 10;
  return (double)(uint64_t)(n / scale + 0.5) * scale;
}

static void put_cell(FILE *out, double n, int bytes, int human, int round3)
{
  char buf[64];
  if (bytes) ljm_fmt_bytes(buf, sizeof(buf), r3(n, round3), human);
  else snprintf(buf, sizeof(buf), "%.0f", r3(n, round3));
  fprintf(out, " %12s", buf);
}

int ljm_by_label_write(FILE *out, const LjmModel *m, const char *key, int human, int round3,
                       char *err, size_t errlen)
{
  static const char none[] = "(none)", other[] = "(other)";
  size_t klen = strlen(key), n = 0;
  int types = !strcmp(key, "type");
  if (types && !ljm_model_stream(m)->types) {
    snprintf(err, errlen, "--by type: the profile has no allocation types (every --time, "
             "--stacks or --sample recording has them)");
    return -1;
  }
  if (!ljm_model_stream(m)->label_sets && !ljm_model_stream(m)->types) {
    snprintf(err, errlen, "--by %s: the profile has no labels (they are recorded with "
             "rec.label into a --time, --stacks or --sample recording)", key);
    return -1;
  }
  ValueRow *rows = calloc(LJM_MODEL_SETS, sizeof(*rows));  /* a row per set at most */
  LjmHmap by;
  if (!rows || ljm_hmap_init(&by)) {
    free(rows);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (uint32_t set = 0; set < LJM_MODEL_SETS; set++) {
    const LjmFigures *f = ljm_model_label_figures(m, set);
    if (!f || (!f->alloc_count && !f->free_count && !f->inuse_count)) continue;
    LjmStr v;
    const char *name = NULL;
    int has = set && ljm_model_label_value(m, set, key, klen, &v);  /* a typed set: its type */
    if (!has) name = ljm_model_label_other(m, set) ? other : none;
    size_t i = row_of(&by, rows, &n, has ? &v : NULL, name);
    if (i == SIZE_MAX) {
      ljm_hmap_free(&by);
      free(rows);
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    ljm_figures_add(&rows[i].fig, f);
  }
  ljm_hmap_free(&by);
  qsort(rows, n, sizeof(*rows), row_order);
  int temp = ljm_model_totals(m)->temporaries;  /* exact streams: temporary allocations too */
  if (types)
    fputs("BY TYPE (what the VM allocated each block for; a block counts for its type):\n", out);
  else
    fprintf(out, "BY LABEL %s (a block counts for the labels it was allocated under):\n", key);
  fprintf(out, " %12s %12s %12s %12s %12s %12s", "in use", "blocks", "allocated", "allocs",
          "freed", "frees");
  if (temp) fprintf(out, " %12s", "temporary");
  fprintf(out, "  %s\n", key);
  for (size_t i = 0; i < n; i++) {
    const LjmFigures *f = &rows[i].fig;
    put_cell(out, (double)f->inuse_bytes, 1, human, round3);
    put_cell(out, (double)f->inuse_count, 0, human, round3);
    put_cell(out, (double)f->alloc_bytes, 1, human, round3);
    put_cell(out, (double)f->alloc_count, 0, human, round3);
    put_cell(out, (double)f->free_bytes, 1, human, round3);
    put_cell(out, (double)f->free_count, 0, human, round3);
    if (temp) put_cell(out, (double)f->temp_count, 0, human, round3);
    fputs("  ", out);
    if (rows[i].value.s) {  /* bytes as recorded: control characters shown escaped */
      for (size_t k = 0; k < rows[i].value.len; k++) {
        unsigned char c = (unsigned char)rows[i].value.s[k];
        if (c < 0x20 || c == 0x7f) fprintf(out, "\\x%02x", c);
        else fputc(c, out);
      }
    } else {
      fputs(rows[i].name, out);
    }
    fputc('\n', out);
  }
  uint64_t folded = ljm_model_stream(m)->labels_folded;
  if (folded)
    fprintf(out, "(other): %llu label changes found the recorder's %d label sets taken\n",
            (unsigned long long)folded, LJM_LABEL_SETS - 1);
  fputc('\n', out);
  free(rows);
  return 0;
}
