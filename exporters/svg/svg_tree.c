/* svg_tree.c -- the merged frame tree a flame graph draws, with its layout. */
#include "exporters/svg/svg_tree.h"

#include <stdlib.h>
#include <string.h>

#include "exporters/common/frames.h"
#include "exporters/common/value.h"

#define NONE UINT32_MAX

/* A frame of the tree while it is built, found again through a hash of
** (parent, name). */
typedef struct Vtx {
  size_t off, len;   /* cleaned name in the tree's name buffer */
  LjmSiteKind kind;
  uint32_t parent;
  uint64_t self;
} Vtx;

typedef struct Build {
  Vtx *v;
  size_t n, cap;
  uint32_t *slots;   /* vertex + 1, open addressing */
  size_t nslots;
  const LjmBuf *names;
} Build;

static uint64_t name_hash(const char *s, size_t len, uint32_t parent)
{
  uint64_t h = 0xcbf29ce484222325ull ^ parent;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;  /* every bit into the low ones */
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

static int slots_grow(Build *b)
{
  size_t cap = b->nslots ? b->nslots * 2 : 1024;
  uint32_t *s = calloc(cap, sizeof(*s));
  if (!s) return -1;
  for (size_t i = 1; i < b->n; i++) {
    size_t j = (size_t)name_hash(b->names->p + b->v[i].off, b->v[i].len, b->v[i].parent) &
               (cap - 1);
    while (s[j]) j = (j + 1) & (cap - 1);
    s[j] = (uint32_t)i + 1;
  }
  free(b->slots);
  b->slots = s;
  b->nslots = cap;
  return 0;
}

/* The child of parent named names[off..], made when new (else the name
** just cleaned is dropped again); NONE when out of memory. */
static uint32_t child(Build *b, LjmBuf *names, uint32_t parent, size_t off, LjmSiteKind kind)
{
  size_t len = names->len - off;
  if (names->oom) return NONE;
  if ((b->n + 1) * 2 > b->nslots && slots_grow(b) != 0) return NONE;
  size_t j = (size_t)name_hash(names->p + off, len, parent) & (b->nslots - 1);
  for (; b->slots[j]; j = (j + 1) & (b->nslots - 1)) {
    const Vtx *c = &b->v[b->slots[j] - 1];
    if (c->parent == parent && c->len == len && memcmp(names->p + c->off, names->p + off, len) == 0) {
      names->len = off;
      return b->slots[j] - 1;
    }
  }
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    Vtx *v = realloc(b->v, cap * sizeof(*v));
    if (!v) return NONE;
    b->v = v;
    b->cap = cap;
  }
  uint32_t c = (uint32_t)b->n++;
  b->v[c] = (Vtx){ off, len, kind, parent, 0 };
  b->slots[j] = c + 1;
  return c;
}

/* Merges every node's frames into b, walking the nodes once, parents
** first: each node's step (frames.h) goes below its parent's frame. */
static int merge(Build *b, LjmBuf *names, const LjmModel *m, LjmValueKind k)
{
  size_t n = ljm_model_nnodes(m);
  LjmFrames fr = {0};
  uint32_t *at = malloc((n ? n : 1) * sizeof(*at));  /* node -> frame its children go below */
  int rc = -1;
  if (!at) return -1;
  b->names = names;
  for (uint32_t id = 0; id < n; id++) {
    const LjmNode *nd = ljm_model_node(m, id);
    at[id] = NONE;
    uint32_t cur = nd->parent == LJM_NO_NODE ? 0 : at[nd->parent];
    uint64_t self = ljm_value_get(ljm_model_node_self(m, id), k);
    if (cur == NONE || ljm_value_get(ljm_model_node_total(m, id), k) == 0) continue;
    size_t through = ljm_frames_step(m, id, &fr);
    if (fr.oom) goto done;
    size_t upto = self ? fr.n : through;
    for (size_t i = 0; i < upto; i++) {
      size_t off = names->len;
      ljm_frame_clean(names, ljm_frame_s(&fr, i), fr.len[i], 0);
      if ((cur = child(b, names, cur, off, fr.kind[i])) == NONE) goto done;
      if (i + 1 == through) at[id] = cur;
    }
    if (!through) at[id] = nd->parent == LJM_NO_NODE ? 0 : at[nd->parent];
    b->v[cur].self += self;
  }
  rc = 0;
done:
  ljm_frames_free(&fr);
  free(at);
  return rc;
}

static const Build *cmp_build;  /* qsort has no context argument */

static int vtx_cmp(const void *pa, const void *pb)
{
  const Vtx *a = &cmp_build->v[*(const uint32_t *)pa], *b = &cmp_build->v[*(const uint32_t *)pb];
  const char *base = cmp_build->names->p;
  size_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(base + a->off, base + b->off, n);
  if (c) return c;
  return (a->len > b->len) - (a->len < b->len);
}

static int node_add(SvgTree *t, const Vtx *v, uint32_t parent, uint32_t depth)
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
  nd->name_off = v->off;
  nd->name_len = v->len;
  nd->kind = v->kind;
  nd->parent = parent;
  nd->depth = depth;
  nd->self = v->self;
  if (depth > t->maxdepth) t->maxdepth = depth;
  return 0;
}

/* Writes b's frames into t in preorder, children sorted by name, without
** recursion (stacks can be deep). */
static int preorder(SvgTree *t, const Build *b)
{
  size_t n = b->n;
  uint32_t *kids = malloc(n * sizeof(*kids));    /* children, grouped by parent */
  uint32_t *start = calloc(n + 1, sizeof(*start));
  uint32_t *stack = malloc(n * sizeof(*stack));  /* vertex, then its next child */
  uint32_t *next = malloc(n * sizeof(*next));
  uint32_t *out = malloc(n * sizeof(*out));      /* vertex -> tree node */
  int rc = -1;
  if (!kids || !start || !stack || !next || !out) goto done;
  for (size_t i = 1; i < n; i++) start[b->v[i].parent + 1]++;
  for (size_t i = 0; i < n; i++) start[i + 1] += start[i];
  for (size_t i = 0; i < n; i++) next[i] = start[i];
  for (size_t i = 1; i < n; i++) kids[next[b->v[i].parent]++] = (uint32_t)i;
  cmp_build = b;
  for (size_t i = 0; i < n; i++)
    if (start[i + 1] - start[i] > 1)
      qsort(kids + start[i], start[i + 1] - start[i], sizeof(*kids), vtx_cmp);
  for (size_t i = 0; i < n; i++) next[i] = start[i];
  size_t depth = 0;
  if (node_add(t, &b->v[0], 0, 0) < 0) goto done;
  out[0] = 0;
  stack[depth++] = 0;
  while (depth) {
    uint32_t top = stack[depth - 1];
    if (next[top] == start[top + 1]) {
      depth--;
      continue;
    }
    uint32_t c = kids[next[top]++];
    if (node_add(t, &b->v[c], out[top], (uint32_t)depth) < 0) goto done;
    out[c] = (uint32_t)(t->n - 1);
    stack[depth++] = c;
  }
  rc = 0;
done:
  free(kids);
  free(start);
  free(stack);
  free(next);
  free(out);
  return rc;
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
  Build b;
  memset(t, 0, sizeof(*t));
  memset(&b, 0, sizeof(b));
  ljm_buf_puts(&t->names, "all");
  b.v = malloc(256 * sizeof(*b.v));
  if (!b.v) goto oom;
  b.cap = 256;
  b.n = 1;
  b.v[0] = (Vtx){ 0, 3, LJM_SITE_INTERNAL, 0, 0 };
  if (merge(&b, &t->names, m, k) < 0 || t->names.oom) goto oom;
  if (preorder(t, &b) < 0 || layout(t) < 0) goto oom;
  free(b.v);
  free(b.slots);
  return 0;
oom:
  free(b.v);
  free(b.slots);
  svg_tree_free(t);
  return -1;
}

void svg_tree_free(SvgTree *t)
{
  free(t->nodes);
  ljm_buf_free(&t->names);
  memset(t, 0, sizeof(*t));
}
