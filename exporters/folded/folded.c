/* folded.c -- folded stacks ("frame;frame;frame count") for flame graph tools.
**
** One line per call-tree node with its own figure (common/frames.h: a site
** of a standard stream, a stack of an extended one), root first, frames
** joined by ';', one space, then the chosen figure (--value, default
** alloc_bytes) as a positive integer. Lines are sorted bytewise, equal
** paths merged, zero lines left out (output-formats.md C.5), so both
** flamegraph.pl and speedscope read the file as it is.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/buf.h"
#include "exporters/common/frames.h"
#include "exporters/common/state.h"
#include "exporters/common/value.h"
#include "exporters/ljm_exporter.h"

typedef struct FoldedState {
  LjmExportBase base;
} FoldedState;

typedef struct FoldedLine {
  union { size_t off; const char *p; } stack;  /* offset while building */
  size_t len;
  uint64_t value;
} FoldedLine;

static void *folded_begin(const LjmExportOptions *o, FILE *out, char *err,
                          size_t errlen)
{
  return ljm_export_state_new(sizeof(FoldedState), o, out, err, errlen);
}

static int line_cmp(const void *a, const void *b)
{
  const FoldedLine *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->stack.p, y->stack.p, n);
  if (c) return c;
  return (x->len > y->len) - (x->len < y->len);
}

/* Sums v into *acc; returns 0 when the sum would not fit. */
static int add_value(uint64_t *acc, uint64_t v)
{
  if (*acc > UINT64_MAX - v) return 0;
  *acc += v;
  return 1;
}

static int folded_write(FoldedState *st, const LjmModel *m, char *err,
                        size_t errlen)
{
  size_t n = ljm_model_nnodes(m), nl = 0;
  FoldedLine *lines = n ? calloc(n, sizeof(*lines)) : NULL;
  LjmBuf b = {0};
  LjmFrames fr = {0};
  int rc = -1;
  if (n && !lines) goto oom;
  for (uint32_t id = 0; id < n; id++) {
    uint64_t v = ljm_value_get(ljm_model_node_self(m, id), st->base.value);
    if (v == 0) continue;
    lines[nl].stack.off = b.len;
    ljm_frames_folded(&b, m, id, &fr);
    lines[nl].len = b.len - lines[nl].stack.off;
    lines[nl].value = v;
    nl++;
  }
  if (b.oom) goto oom;
  for (size_t i = 0; i < nl; i++) lines[i].stack.p = b.p + lines[i].stack.off;
  if (nl) qsort(lines, nl, sizeof(*lines), line_cmp);
  for (size_t i = 0; i < nl;) {
    uint64_t v = lines[i].value;
    size_t j = i + 1;
    for (; j < nl && line_cmp(&lines[i], &lines[j]) == 0; j++)
      if (!add_value(&v, lines[j].value)) {
        snprintf(err, errlen, "figure overflows 64 bits");
        goto done;
      }
    fwrite(lines[i].stack.p, 1, lines[i].len, st->base.out);
    fprintf(st->base.out, " %" PRIu64 "\n", v);
    i = j;
  }
  rc = 0;
  goto done;
oom:
  snprintf(err, errlen, "out of memory");
done:
  free(lines);
  ljm_buf_free(&b);
  ljm_frames_free(&fr);
  return rc;
}

static int folded_finish(void *p, const LjmModel *m, char *err, size_t errlen)
{
  FoldedState *st = p;
  int rc = folded_write(st, m, err, errlen);
  free(st);
  return rc;
}

const LjmExporter ljm_exporter_folded = {
  .name = "folded", .command = "convert", .reads = LJM_READS_PROFILE | LJM_READS_SNAPSHOT,
  .summary = "folded stacks for flamegraph.pl and speedscope (one line per frame path)",
  .suffixes = (const char *const[]){".folded", ".collapsedstack.txt", NULL}, .begin = folded_begin,
  .finish = folded_finish,
};
