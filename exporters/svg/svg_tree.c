/* svg_tree.c -- the merged frame tree a flame graph draws, with its layout. */
#include "exporters/svg/svg_tree.h"

#include <stdlib.h>
#include <string.h>

#include "exporters/common/frames.h"
#include "exporters/common/value.h"

/* One node's path, its frames cleaned into the tree's name buffer; the
** frames of all paths sit in one array (first .. first + n). */
typedef struct SvgPath {
  size_t first, n;
  uint64_t value;
} SvgPath;

typedef struct SvgFrame {
  size_t off, len;
  LjmSiteKind kind;
} SvgFrame;

typedef struct Paths {
  SvgPath *p;
  size_t np;
  SvgFrame *f;
  size_t nf, capf;
  const char *base;  /* names buffer, set once it stops moving */
} Paths;

static const Paths *cmp_paths;  /* qsort has no context argument */

static int frame_cmp(const SvgFrame *a, const SvgFrame *b)
{
  const char *base = cmp_paths->base;
  size_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(base + a->off, base + b->off, n);
  if (c) return c;
  return (a->len > b->len) - (a->len < b->len);
}

/* Frame by frame; a path sorts before the longer paths it is a prefix of. */
static int path_cmp(const void *pa, const void *pb)
{
  const SvgPath *a = pa, *b = pb;
  const SvgFrame *fa = cmp_paths->f + a->first, *fb = cmp_paths->f + b->first;
  for (size_t i = 0; i < a->n && i < b->n; i++) {
    int c = frame_cmp(&fa[i], &fb[i]);
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

/* Collects the paths of all nodes with a non-zero figure of their own. */
static int collect(SvgTree *t, const LjmModel *m, LjmValueKind k, Paths *ps)
{
  size_t n = ljm_model_nnodes(m);
  LjmFrames fr = {0};
  memset(ps, 0, sizeof(*ps));
  ps->p = calloc(n ? n : 1, sizeof(*ps->p));
  if (!ps->p) return -1;
  for (uint32_t id = 0; id < n; id++) {
    uint64_t v = ljm_value_get(&ljm_model_node(m, id)->self, k);
    if (v == 0) continue;
    ljm_frames_of(m, id, &fr);
    SvgPath *p = &ps->p[ps->np++];
    p->first = ps->nf;
    p->n = fr.n;
    p->value = v;
    for (size_t i = 0; i < fr.n; i++) {
      if (ps->nf == ps->capf) {
        size_t cap = ps->capf ? ps->capf * 2 : 256;
        SvgFrame *f = realloc(ps->f, cap * sizeof(*f));
        if (!f) goto oom;
        ps->f = f;
        ps->capf = cap;
      }
      SvgFrame *f = &ps->f[ps->nf++];
      f->off = t->names.len;
      ljm_frame_clean(&t->names, ljm_frame_s(&fr, i), fr.len[i], 0);
      f->len = t->names.len - f->off;
      f->kind = fr.kind[i];
    }
  }
  if (t->names.oom || fr.oom) goto oom;
  ljm_frames_free(&fr);
  ps->base = t->names.p;
  return 0;
oom:
  ljm_frames_free(&fr);
  free(ps->p);
  free(ps->f);
  memset(ps, 0, sizeof(*ps));
  return -1;
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
  Paths ps;
  uint32_t *stack = NULL;  /* node of each depth, last path */
  size_t capstack = 0;
  memset(t, 0, sizeof(*t));
  ljm_buf_puts(&t->names, "all");
  if (collect(t, m, k, &ps) < 0) goto oom;
  if (node_add(t, 0, 3, LJM_SITE_INTERNAL, 0, 0) < 0) goto oom;
  cmp_paths = &ps;
  qsort(ps.p, ps.np, sizeof(*ps.p), path_cmp);
  for (size_t i = 0; i < ps.np; i++) {
    const SvgPath *p = &ps.p[i];
    const SvgFrame *f = ps.f + p->first;
    if (p->n + 1 > capstack) {
      size_t cap = (p->n + 1) * 2;
      uint32_t *s2 = realloc(stack, cap * sizeof(*s2));
      if (!s2) goto oom;
      stack = s2;
      capstack = cap;
    }
    stack[0] = 0;
    size_t same = 0;  /* frames shared with the previous path */
    if (i) {
      const SvgPath *q = &ps.p[i - 1];
      const SvgFrame *g = ps.f + q->first;
      while (same < p->n && same < q->n && frame_cmp(&f[same], &g[same]) == 0) same++;
    }
    for (size_t d = same; d < p->n; d++) {
      if (node_add(t, f[d].off, f[d].len, f[d].kind, stack[d], (uint32_t)d + 1) < 0)
        goto oom;
      stack[d + 1] = (uint32_t)(t->n - 1);
    }
    t->nodes[stack[p->n]].self += p->value;
  }
  if (layout(t) < 0) goto oom;
  free(ps.p);
  free(ps.f);
  free(stack);
  return 0;
oom:
  free(ps.p);
  free(ps.f);
  free(stack);
  svg_tree_free(t);
  return -1;
}

void svg_tree_free(SvgTree *t)
{
  free(t->nodes);
  ljm_buf_free(&t->names);
  memset(t, 0, sizeof(*t));
}
