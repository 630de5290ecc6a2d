/* heapprofile.c -- Chrome's sampling heap profile (.heapprofile): the JSON
** that DevTools' Memory panel ("Allocation sampling") saves and loads, and
** that V8's inspector returns for HeapProfiler.getSamplingProfile:
**
**   {"head": node, "samples": [{"size", "nodeId", "ordinal"}, ...]}
**   node := {"callFrame": {"functionName", "scriptId", "url", "lineNumber",
**            "columnNumber"}, "selfSize", "id", "children": [node, ...]}
**
** The tree is the call tree of frames (exporters/common/frames.h names,
** root first) under a "(root)" head, as V8 builds it: one node per distinct
** frame path, "selfSize" the bytes of the chosen figure whose path ends
** there. The figure is inuse_bytes by default, what V8's sampling profiler
** reports (allocations still alive when the profile is taken); --value
** alloc_bytes gives every allocation (V8's "include objects collected by
** GC" flags), peak_bytes what was live at the peak. Sizes are bytes, so the
** count kinds take their byte twin (alloc_count -> alloc_bytes, inuse_count
** -> inuse_bytes). Nodes with nothing below them are left out.
**
** Samples: one per node with a selfSize, holding all of it (the sum of the
** samples of a node is its selfSize, as in V8); ordinals 1, 2, ... follow
** the stream order of the node's first call-tree node.
**
** callFrame as V8 fills it: lineNumber and columnNumber are 0-based, -1 when
** unknown; scriptId is a decimal string, "0" for frames without a script
** (DevTools groups functions by name, scriptId, line and column, so each
** file gets its own id); url is the Lua chunk's file ('@file', '=name'), ""
** otherwise. A line frame ("app.lua:9") has its line, a function frame the
** line it is defined on (line 1 for a main chunk), the file frame of a
** standard stream's site line 1; frames without a url have no position
** (DevTools would print "file:0" for a url at line -1).
*/
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/buf.h"
#include "exporters/common/frames.h"
#include "exporters/common/json_str.h"
#include "exporters/common/uniq.h"
#include "exporters/common/state.h"
#include "exporters/common/value.h"
#include "exporters/ljm_exporter.h"

#define HP_NONE UINT32_MAX

typedef struct HpState {
  LjmExportBase base;
} HpState;

static void *hp_begin(const LjmExportOptions *o, FILE *out, char *err, size_t errlen)
{
  if (o->value == LJM_VALUE_TEMP_COUNT) {  /* selfSize is bytes; temporaries have none */
    snprintf(err, errlen, "a .heapprofile shows bytes, and temporary allocations have no byte "
             "figure; use --value temp_count with pprof, folded, svg, speedscope or markdown");
    return NULL;
  }
  return ljm_export_state_new(sizeof(HpState), o, out, err, errlen);
}

/* The figure selfSize holds (see the top of the file). */
static LjmValueKind hp_kind(LjmValueKind v)
{
  switch (v) {
  case LJM_VALUE_ALLOC_BYTES:
  case LJM_VALUE_ALLOC_COUNT: return LJM_VALUE_ALLOC_BYTES;
  case LJM_VALUE_PEAK_BYTES: return LJM_VALUE_PEAK_BYTES;
  default: return LJM_VALUE_INUSE_BYTES;
  }
}

/* -- The tree ---------------------------------------------------------------- */

typedef struct HpNode {
  uint32_t frame;        /* callFrame index; HP_NONE for the root */
  uint32_t parent;
  uint32_t first, last, next;  /* children in creation order */
  uint64_t self;
  uint32_t ordinal;      /* 0: no sample yet */
} HpNode;

typedef struct HpTree {
  HpNode *n;
  size_t len, cap;
  uint32_t *slots;       /* (parent, frame) -> child index + 1 */
  size_t nslots;
} HpTree;

/* Mixes every bit of both halves into the low ones (splitmix64's finalizer):
** a deep chain has few frames and many parents, so no half may be dropped. */
static size_t edge_hash(uint32_t parent, uint32_t frame, size_t cap)
{
  uint64_t k = (uint64_t)parent << 32 | frame;
  k = (k ^ (k >> 30)) * 0xBF58476D1CE4E5B9ull;
  k = (k ^ (k >> 27)) * 0x94D049BB133111EBull;
  return (size_t)(k ^ (k >> 31)) & (cap - 1);
}

static int tree_grow_slots(HpTree *t)
{
  size_t cap = t->nslots ? t->nslots * 2 : 1024;
  uint32_t *s = calloc(cap, sizeof(*s));
  if (!s) return -1;
  for (size_t p = 0; p < t->len; p++)
    for (uint32_t c = t->n[p].first; c != HP_NONE; c = t->n[c].next) {
      size_t j = edge_hash((uint32_t)p, t->n[c].frame, cap);
      while (s[j]) j = (j + 1) & (cap - 1);
      s[j] = c + 1;
    }
  free(t->slots);
  t->slots = s;
  t->nslots = cap;
  return 0;
}

static uint32_t tree_add(HpTree *t, uint32_t frame)
{
  if (t->len == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    HpNode *n = realloc(t->n, cap * sizeof(*n));
    if (!n) return HP_NONE;
    t->n = n;
    t->cap = cap;
  }
  HpNode *x = &t->n[t->len];
  memset(x, 0, sizeof(*x));
  x->frame = frame;
  x->parent = x->first = x->last = x->next = HP_NONE;
  return (uint32_t)t->len++;
}

/* The child of parent for frame, made when missing; HP_NONE when out of memory. */
static uint32_t tree_child(HpTree *t, uint32_t parent, uint32_t frame)
{
  if ((t->len + 1) * 2 > t->nslots && tree_grow_slots(t) != 0) return HP_NONE;
  size_t j = edge_hash(parent, frame, t->nslots);
  for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
    uint32_t c = t->slots[j] - 1;
    if (t->n[c].frame == frame && t->n[c].parent == parent) return c;
  }
  uint32_t c = tree_add(t, frame);
  if (c == HP_NONE) return HP_NONE;
  t->n[c].parent = parent;
  HpNode *p = &t->n[parent];
  if (p->last == HP_NONE) p->first = c;
  else t->n[p->last].next = c;
  p->last = c;
  t->slots[j] = c + 1;
  return c;
}

static void tree_free(HpTree *t)
{
  free(t->n);
  free(t->slots);
}

/* -- Writing ------------------------------------------------------------------ */

static void put_u64(FILE *f, uint64_t v)
{
  char buf[LJM_NUM_MAX];
  fputs(ljm_fmt_u64(buf, v), f);
}

static const char hp_root_frame[] =
    "{\"functionName\":\"(root)\",\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":-1,"
    "\"columnNumber\":-1}";

static void write_node(FILE *f, const HpTree *t, const LjmUniq *frames, uint32_t i)
{
  const HpNode *x = &t->n[i];
  fputs("{\"callFrame\":", f);
  if (x->frame == HP_NONE) fputs(hp_root_frame, f);
  else {
    size_t len;
    const char *item = ljm_uniq_item(frames, x->frame, &len);
    fwrite(item, 1, len, f);
  }
  fputs(",\"selfSize\":", f);
  put_u64(f, x->self);
  fputs(",\"id\":", f);
  put_u64(f, (uint64_t)i + 1);
  fputs(",\"children\":[", f);
}

/* The tree depth first, without recursion (stacks can be deep). */
static int write_tree(FILE *f, const HpTree *t, const LjmUniq *frames)
{
  uint32_t *stack = malloc(t->len * sizeof(*stack));
  uint32_t *cursor = malloc(t->len * sizeof(*cursor));
  if (!stack || !cursor) {
    free(stack);
    free(cursor);
    return -1;
  }
  size_t depth = 0;
  stack[depth++] = 0;
  cursor[0] = t->n[0].first;
  write_node(f, t, frames, 0);
  while (depth) {
    uint32_t top = stack[depth - 1], c = cursor[top];
    if (c == HP_NONE) {
      fputs("]}", f);
      depth--;
      continue;
    }
    if (c != t->n[top].first) putc(',', f);
    putc('\n', f);
    cursor[top] = t->n[c].next;
    cursor[c] = t->n[c].first;
    stack[depth++] = c;
    write_node(f, t, frames, c);
  }
  free(stack);
  free(cursor);
  return 0;
}

static int hp_write(HpState *st, const LjmModel *m, char *err, size_t errlen)
{
  FILE *f = st->base.out;
  LjmValueKind kind = hp_kind(st->base.o.value);
  LjmUniq urls, frames;
  HpTree t;
  LjmFrames fr;
  LjmBuf tmp = {0};
  uint32_t *samples = NULL, nsamples = 0, *at = NULL;
  int rc = -1;
  memset(&urls, 0, sizeof(urls));
  memset(&frames, 0, sizeof(frames));
  memset(&t, 0, sizeof(t));
  memset(&fr, 0, sizeof(fr));
  if (tree_add(&t, HP_NONE) == HP_NONE) goto oom;
  /* Nodes in id order, parents first: each one's step (frames.h) goes below
  ** the tree node its parent's children hang under (at[parent]). */
  size_t nn = ljm_model_nnodes(m);
  if (!(at = malloc((nn ? nn : 1) * sizeof(*at)))) goto oom;
  for (uint32_t id = 0; id < nn; id++) {
    const LjmNode *nd = ljm_model_node(m, id);
    uint32_t cur = nd->parent == LJM_NO_NODE ? 0 : at[nd->parent];
    uint64_t v = ljm_value_get(ljm_model_node_self(m, id), kind);
    at[id] = HP_NONE;
    if (cur == HP_NONE || ljm_value_get(ljm_model_node_total(m, id), kind) == 0) continue;
    size_t through = ljm_frames_step(m, id, &fr);
    if (fr.oom) goto oom;
    if (!through) at[id] = cur;
    for (size_t i = 0; i < (v ? fr.n : through); i++) {
      uint32_t script = 0;
      if (fr.file[i]) {
        size_t start = urls.b.len;
        ljm_json_name(&urls.b, &tmp, fr.file[i], strlen(fr.file[i]));
        uint32_t u = ljm_uniq_add(&urls, start);
        if (u == LJM_UNIQ_NONE) goto oom;
        script = u + 1;
      }
      size_t start = frames.b.len;
      ljm_buf_puts(&frames.b, "{\"functionName\":");
      ljm_json_name(&frames.b, &tmp, ljm_frame_s(&fr, i), fr.len[i]);
      ljm_buf_printf(&frames.b, ",\"scriptId\":\"%" PRIu32 "\",\"url\":", script);
      if (script) {
        size_t len;
        const char *url = ljm_uniq_item(&urls, script - 1, &len);
        ljm_buf_put(&frames.b, url, len);
      } else
        ljm_buf_puts(&frames.b, "\"\"");
      if (script)  /* a file frame has no line of its own: its first */
        ljm_buf_printf(&frames.b, ",\"lineNumber\":%" PRId64 ",\"columnNumber\":0}",
                       fr.line[i] > 0 ? fr.line[i] - 1 : 0);
      else
        ljm_buf_puts(&frames.b, ",\"lineNumber\":-1,\"columnNumber\":-1}");
      uint32_t k = ljm_uniq_add(&frames, start);
      if (k == LJM_UNIQ_NONE || (cur = tree_child(&t, cur, k)) == HP_NONE) goto oom;
      if (i + 1 == through) at[id] = cur;
    }
    if (!v) continue;
    if (t.n[cur].self > UINT64_MAX - v) {
      snprintf(err, errlen, "figure overflows 64 bits");
      goto done;
    }
    t.n[cur].self += v;
    if (!t.n[cur].ordinal) t.n[cur].ordinal = ++nsamples;
  }
  if (nsamples && !(samples = malloc(nsamples * sizeof(*samples)))) goto oom;
  for (size_t i = 0; i < t.len; i++)
    if (t.n[i].ordinal) samples[t.n[i].ordinal - 1] = (uint32_t)i;

  fputs("{\"head\":", f);
  if (write_tree(f, &t, &frames) != 0) goto oom;
  fputs(",\n\"samples\":[", f);
  for (uint32_t i = 0; i < nsamples; i++) {
    fputs(i ? ",\n{\"size\":" : "\n{\"size\":", f);
    put_u64(f, t.n[samples[i]].self);
    fputs(",\"nodeId\":", f);
    put_u64(f, (uint64_t)samples[i] + 1);
    fputs(",\"ordinal\":", f);
    put_u64(f, (uint64_t)i + 1);
    putc('}', f);
  }
  fputs("]}\n", f);
  rc = 0;
  goto done;
oom:
  snprintf(err, errlen, "out of memory");
done:
  free(samples);
  free(at);
  ljm_uniq_free(&urls);
  ljm_uniq_free(&frames);
  tree_free(&t);
  ljm_frames_free(&fr);
  ljm_buf_free(&tmp);
  return rc;
}

static int hp_finish(void *p, const LjmModel *m, char *err, size_t errlen)
{
  HpState *st = p;
  int rc = hp_write(st, m, err, errlen);
  free(st);
  return rc;
}

const LjmExporter ljm_exporter_heapprofile = {
  .name = "heapprofile", .command = "convert", .reads = LJM_READS_PROFILE | LJM_READS_SNAPSHOT,
  .summary = "Chrome DevTools sampling heap profile (Memory panel), inuse_bytes by default",
  .suffixes = (const char *const[]){".heapprofile", NULL}, .begin = hp_begin, .finish = hp_finish,
};
