/* svg_tree.c -- the merged frame tree a flame graph draws, with its layout. */
#include "exporters/svg/svg_tree.h"

#include <stdlib.h>
#include <string.h>

#include "exporters/common/frames.h"
#include "exporters/common/value.h"

/* One site's path, its frames cleaned into a shared buffer. */
typedef struct SvgPath {
  size_t n;
  size_t off[LJM_FRAMES_MAX], len[LJM_FRAMES_MAX];
  LjmSiteKind kind[LJM_FRAMES_MAX];  /* per frame */
  const char *base;  /* names buffer, set once it stops moving */
  uint64_t value;
} SvgPath;

static int frame_cmp(const SvgPath *a, size_t i, const SvgPath *b, size_t j)
{
  size_t n = a->len[i] < b->len[j] ? a->len[i] : b->len[j];
  int c = memcmp(a->base + a->off[i], b->base + b->off[j], n);
  if (c) return c;
  return (a->len[i] > b->len[j]) - (a->len[i] < b->len[j]);
}

/* Frame by frame; a path sorts before the longer paths it is a prefix of. */
static int path_cmp(const void *pa, const void *pb)
{
  const SvgPath *a = pa, *b = pb;
  for (size_t i = 0; i < a->n && i < b->n; i++) {
    int c = frame_cmp(a, i, b, i);
    if (c) return c;
  }
  return (a->n > b->n) - (a->n < b->n);
}

static int node_add(SvgTree *t, size_t off, size_t len, LjmSiteKind kind,
                    uint32_t parent, uint32_t depth)
{
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    SvgNode *p = realloc(t->nodes, cap * sizeof(*p));
    if (!p) return -1;
    t->nodes = p;
    t->cap = cap;
  }
  SvgNode *nd = &t->nodes[t->n++];
  memset(nd, 0, sizeof(*nd));
  nd->name_off = off;
  nd->name_len = len;
  nd->kind = kind;
  nd->parent = parent;
  nd->depth = depth;
  if (depth > t->maxdepth) t->maxdepth = depth;
  return 0;
}

/* Collects the paths of all sites with a non-zero figure. */
static SvgPath *collect(SvgTree *t, const LjmModel *m, LjmValueKind k,
                        size_t *np)
{
  size_t n = ljm_model_nsites(m), np_ = 0;
  SvgPath *p = calloc(n ? n : 1, sizeof(*p));
  if (!p) return NULL;
  for (uint32_t id = 0; id < n; id++) {
    const LjmSite *s = ljm_model_site(m, id);
    uint64_t v = ljm_value_get(&s->fig, k);
    LjmFrames f = { 0 };
    if (v == 0) continue;
    ljm_frames_of(m, s, &f);
    p[np_].n = f.n;
    for (size_t i = 0; i < f.n; i++) {
      p[np_].off[i] = t->names.len;
      ljm_frame_clean(&t->names, f.s[i], f.len[i], 0);
      p[np_].len[i] = t->names.len - p[np_].off[i];
      p[np_].kind[i] = f.kind[i];
    }
    ljm_frames_free(&f);
    p[np_].value = v;
    np_++;
  }
  if (t->names.oom) { free(p); return NULL; }
  for (size_t i = 0; i < np_; i++) p[i].base = t->names.p;
  *np = np_;
  return p;
}

/* Sums totals bottom-up, then lays children out left to right. Nodes are
** in preorder, so parents come before their children. */
static int layout(SvgTree *t)
{
  for (size_t i = t->n; i-- > 1;) {
    SvgNode *nd = &t->nodes[i];
    nd->total += nd->self;
    t->nodes[nd->parent].total += nd->total;
  }
  t->nodes[0].total += t->nodes[0].self;
  uint64_t *cursor = malloc(t->n * sizeof(*cursor));  /* next free x */
  if (!cursor) return -1;
  cursor[0] = 0;
  for (size_t i = 1; i < t->n; i++) {
    SvgNode *nd = &t->nodes[i];
    nd->x = cursor[nd->parent];
    cursor[nd->parent] += nd->total;
    cursor[i] = nd->x;
  }
  free(cursor);
  return 0;
}

int svg_tree_build(SvgTree *t, const LjmModel *m, LjmValueKind k)
{
  size_t np = 0;
  uint32_t stack[LJM_FRAMES_MAX + 1];  /* node of each depth, last path */
  memset(t, 0, sizeof(*t));
  ljm_buf_puts(&t->names, "all");
  SvgPath *p = collect(t, m, k, &np);
  if (!p || node_add(t, 0, 3, LJM_SITE_INTERNAL, 0, 0) < 0) goto oom;
  qsort(p, np, sizeof(*p), path_cmp);
  stack[0] = 0;
  for (size_t i = 0; i < np; i++) {
    size_t same = 0;  /* frames shared with the previous path */
    if (i)
      while (same < p[i].n && same < p[i - 1].n &&
             frame_cmp(&p[i], same, &p[i - 1], same) == 0)
        same++;
    for (size_t d = same; d < p[i].n; d++) {
      if (node_add(t, p[i].off[d], p[i].len[d], p[i].kind[d], stack[d],
                   (uint32_t)d + 1) < 0)
        goto oom;
      stack[d + 1] = (uint32_t)(t->n - 1);
    }
    t->nodes[stack[p[i].n]].self += p[i].value;
  }
  if (layout(t) < 0) goto oom;
  free(p);
  return 0;
oom:
  free(p);
  svg_tree_free(t);
  return -1;
}

void svg_tree_free(SvgTree *t)
{
  free(t->nodes);
  ljm_buf_free(&t->names);
  memset(t, 0, sizeof(*t));
}
