/* ljm_heapgrowth.c -- every shortest path to an object, and what grew
** between two snapshots of one process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_heapgraph.h"
#include "model/ljm_heapgraph_int.h"
#include "model/ljm_hmap.h"

/* -- All shortest paths ------------------------------------------------------ */

/* Every shortest path to object i, depth first from i back to the root,
** with an explicit stack: a path is as deep as the heap's longest chain
** (a million-element list), far beyond what the C stack holds. */
uint32_t ljm_heapgraph_all_paths(const LjmHeapGraph *g, const LjmHeapPreds *p, uint32_t i,
                                 uint32_t max, void (*cb)(void *ud, const char *path), void *ud)
{
  if (i >= g->nobj || (i != 0 && g->obj[i].parent == LJM_HEAP_NONE)) return 0;
  if (g->obj[i].depth > 2 * LJM_HEAP_PATH_HEAD) {
    /* Each path would cost its whole depth: deeper than both ends a path
    ** shows, one shortest path is written (in O(LJM_HEAP_PATH_HEAD)). */
    char *one = max ? malloc(4096) : NULL;
    if (one) cb(ud, ljm_heapgraph_path(g, i, one, 4096));
    free(one);
    return 1;
  }
  size_t levels = (size_t)g->obj[i].depth + 1;
  /* Level l (l steps back from i): object node[l], the index of its next
  ** predecessor to try next[l]; edge[l] the reference from node[l + 1] into
  ** node[l], so edge[0..l) is the path so far, object first. */
  uint32_t *node = malloc(levels * sizeof(uint32_t)), *next = malloc(levels * sizeof(uint32_t));
  uint32_t *edge = malloc(levels * sizeof(uint32_t));
  char *buf = malloc(4096);
  uint32_t found = 0, l = 0;
  if (!node || !next || !edge || !buf) goto done;
  node[0] = i;
  next[0] = p->start[i];
  for (;;) {
    uint32_t v = node[l];
    if (v == 0) {
      if (++found <= max) {
        LjmHeapSteps sp = { edge, NULL, l, 0, l };
        ljm_heapgraph_render(g, &sp, buf, 4096);
        cb(ud, buf);
      }
    } else {
      uint32_t d = g->obj[v].depth, from = LJM_HEAP_NONE, e = 0;
      while (found <= max && next[l] < p->start[v + 1]) {
        e = p->edge[next[l]++];
        from = g->ref[e].from;
        if ((g->obj[from].parent != LJM_HEAP_NONE || from == 0) &&  /* not weakly reached */
            g->obj[from].depth + 1 == d && l + 1 < levels &&
            (uint32_t)g->obj[from].cost + (uint32_t)ljm_heapgraph_penalty(g, &g->ref[e]) ==
                g->obj[v].cost)
          break;
        from = LJM_HEAP_NONE;
      }
      if (from != LJM_HEAP_NONE) {  /* one step nearer the root */
        edge[l++] = e;
        node[l] = from;
        next[l] = p->start[from];
        continue;
      }
    }
    if (l == 0 || found > max) break;
    l--;  /* back to the object one step farther */
  }
done:
  free(node);
  free(next);
  free(edge);
  free(buf);
  return found;
}

/* -- Growth between two snapshots --------------------------------------------- */

/* Whether object i of a and object j of b are at the same address with the
** same type. */
static int same_object(const LjmHeapGraph *a, uint32_t i, const LjmHeapGraph *b, uint32_t j)
{
  return a->obj[i].addr == b->obj[j].addr && a->obj[i].type == b->obj[j].type;
}

/* Whether reference e of a and reference f of b are the same step: the
** same kind under the same name, key string or index, or an object key at
** the same address with the same type (LuaJIT never moves an object, so
** within one process that is the same key unless it was freed and its
** memory reused by an object of its type). */
static int same_step(const LjmHeapGraph *a, const LjmHeapRef *e, const LjmHeapGraph *b,
                     const LjmHeapRef *f)
{
  if (e->kind != f->kind) return 0;
  switch (e->kind) {
  case LJH_EDGE_NAME:
    return !strcmp(a->labels + e->what, b->labels + f->what);
  case LJH_EDGE_STRKEY:
    return !strcmp(ljm_heapgraph_label(a, (uint32_t)e->what), ljm_heapgraph_label(b, (uint32_t)f->what));
  case LJH_EDGE_INDEX:
    return e->what == f->what;
  case LJH_EDGE_OBJKEY:  /* the value under that key */
    return same_object(a, (uint32_t)e->what, b, (uint32_t)f->what);
  case LJH_EDGE_KEY:  /* the key object itself: a string by its text */
    if (a->obj[e->to].type == LJH_STR && b->obj[f->to].type == LJH_STR)
      return !strcmp(ljm_heapgraph_label(a, e->to), ljm_heapgraph_label(b, f->to));
    return same_object(a, e->to, b, f->to);
  default:
    return 0;
  }
}

#define FOLLOW_UNSET (LJM_HEAP_NONE - 1)

/* The object of b at the shortest path of object i of a, or LJM_HEAP_NONE.
** memo[v] keeps the answer for every object v of a on the way (FOLLOW_UNSET:
** not yet), so the candidates' paths cost the objects on them once, not
** once per candidate (a million-step chain's 2000 deepest objects). */
static uint32_t follow(const LjmHeapGraph *a, uint32_t i, const LjmHeapGraph *b, uint32_t *memo,
                       uint32_t *up)
{
  if (a->obj[i].parent == LJM_HEAP_NONE || !b->nobj) return LJM_HEAP_NONE;
  uint32_t n = 0, v = i;
  memo[0] = 0;
  while (memo[v] == FOLLOW_UNSET) {  /* up to an object already followed */
    up[n++] = v;
    v = a->ref[a->obj[v].parent].from;
  }
  uint32_t w = memo[v];
  while (n > 0) {  /* and down again, one step each */
    v = up[--n];
    const LjmHeapRef *e = &a->ref[a->obj[v].parent];
    uint32_t next = LJM_HEAP_NONE;
    for (uint32_t k = w == LJM_HEAP_NONE ? 0 : b->obj[w].first_edge;
         w != LJM_HEAP_NONE && k < edge_end(b, w); k++)
      if (!b->ref[k].weak && same_step(a, e, b, &b->ref[k])) {
        next = b->ref[k].to;
        break;
      }
    w = memo[v] = next;
  }
  return w;
}

static int by_growth(const void *a, const void *b)
{
  const LjmHeapGrowth *x = a, *y = b;
  int cx = x->container != LJM_HEAP_NONE, cy = y->container != LJM_HEAP_NONE;
  if (cx != cy) return cx - cy;
  if (x->diff != y->diff) return x->diff < y->diff ? 1 : -1;
  return strcmp(x->path, y->path);
}

static int by_growth_path(const void *a, const void *b)
{
  return strcmp(((const LjmHeapGrowth *)a)->path, ((const LjmHeapGrowth *)b)->path);
}

static const LjmHeapGrowth *sort_rows;

static int by_row(const void *a, const void *b)
{
  int c = by_growth(&sort_rows[*(const uint32_t *)a], &sort_rows[*(const uint32_t *)b]);
  if (c) return c;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void ljm_heapgraph_growth_free(LjmHeapGrowth *g, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++) free(g[i].path);
  free(g);
}

/* Appends the top candidates of `from`, each matched in `other` by path;
** tmemo: from's type names (ljm_heapgraph_type_name). */
static int add_candidates(const LjmHeapGraph *from, const LjmHeapGraph *other, int from_is_new,
                          uint32_t max, LjmHeapGrowth *gr, uint32_t *k, uint32_t *tmemo)
{
  uint32_t *top = malloc((size_t)max * sizeof(*top) + 1);
  uint32_t *memo = malloc((size_t)from->nobj * sizeof(*memo) + 1);
  uint32_t *up = malloc((size_t)from->nobj * sizeof(*up) + 1);
  char buf[1024];
  if (!top || !memo || !up) {
    free(top);
    free(memo);
    free(up);
    return -1;
  }
  for (uint32_t i = 0; i < from->nobj; i++) memo[i] = FOLLOW_UNSET;
  uint32_t n = ljm_heapgraph_top_retainers(from, top, max);
  for (uint32_t i = 0; i < n; i++) {
    LjmHeapGrowth *x = &gr[*k];
    uint32_t o = follow(from, top[i], other, memo, up);
    uint64_t mine = from->obj[top[i]].retained, theirs = o == LJM_HEAP_NONE ? 0 : other->obj[o].retained;
    x->path = strdup(ljm_heapgraph_path(from, top[i], buf, sizeof(buf)));
    if (!x->path) {
      free(top);
      free(memo);
      free(up);
      return -1;
    }
    x->type = ljm_heapgraph_type_name(from, top[i], tmemo);
    x->new_obj = from_is_new ? top[i] : o;
    x->old_obj = from_is_new ? o : top[i];
    x->new_retained = from_is_new ? mine : theirs;
    x->old_retained = from_is_new ? theirs : mine;
    x->diff = (int64_t)(x->new_retained - x->old_retained);
    (*k)++;
  }
  free(top);
  free(memo);
  free(up);
  return 0;
}

/* A row's container: the object its path steps from, in the newer
** snapshot where it is there (*in_new set), else in the older. */
static uint32_t container_of(const LjmHeapGraph *old, const LjmHeapGraph *new_,
                             const LjmHeapGrowth *x, int *in_new)
{
  const LjmHeapGraph *g = x->new_obj != LJM_HEAP_NONE ? new_ : old;
  uint32_t o = x->new_obj != LJM_HEAP_NONE ? x->new_obj : x->old_obj;
  *in_new = g == new_;
  if (o == LJM_HEAP_NONE || g->obj[o].parent == LJM_HEAP_NONE) return LJM_HEAP_NONE;
  uint32_t c = g->ref[g->obj[o].parent].from;
  return c ? c : LJM_HEAP_NONE;
}

/* Rows by object: (graph, object) -> row, for finding containers. */
typedef struct RowKey {
  uint64_t key;  /* in_new << 32 | object */
  uint32_t row;
} RowKey;

static int by_key(const void *a, const void *b)
{
  const RowKey *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

static uint32_t find_row(const RowKey *k, uint32_t n, uint64_t key)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (k[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && k[lo].key == key ? k[lo].row : LJM_HEAP_NONE;
}

static int64_t out_refs(const LjmHeapGraph *g, uint32_t o)
{
  int64_t n = 0;
  if (o == LJM_HEAP_NONE) return 0;
  for (uint32_t e = g->obj[o].first_edge; e < edge_end(g, o); e++)
    n += !g->ref[e].weak && g->ref[e].kind != LJH_EDGE_KEY;  /* an entry's value, not its key */
  return n;
}

static uint64_t magnitude(int64_t d)
{
  return d < 0 ? 0 - (uint64_t)d : (uint64_t)d;
}

/* Counts row x under row y: its growth, and among y's two examples when it
** changed more than one of them. */
static void count_under(LjmHeapGrowth *gr, uint32_t x, uint32_t y)
{
  gr[x].container = y;
  if (!gr[x].diff) return;  /* out of the list, but nothing to count */
  gr[y].grown++;
  gr[y].grown_bytes += gr[x].diff;
  uint32_t *ex = gr[y].example;
  if (ex[0] == LJM_HEAP_NONE || magnitude(gr[x].diff) > magnitude(gr[ex[0]].diff)) {
    ex[1] = ex[0];
    ex[0] = x;
  } else if (ex[1] == LJM_HEAP_NONE || magnitude(gr[x].diff) > magnitude(gr[ex[1]].diff)) {
    ex[1] = x;
  }
}

/* Groups the w rows of gr by container: a row of an object only one
** snapshot has (an entry added or dropped) whose path steps from another
** row's object dominating it (its growth is in the container's already) is
** counted under that row; rows whose container is no row, two or more,
** under a row made for it (gr has room for w more); rows below a row so
** counted are left out of the list too, not counted again. Returns the
** count of rows, or LJM_HEAP_NONE out of memory. */
static uint32_t group(const LjmHeapGraph *old, const LjmHeapGraph *new_, LjmHeapGrowth *gr, uint32_t w,
                      uint32_t *memo_old, uint32_t *memo_new)
{
  RowKey *keys = malloc((3 * (size_t)w + 2) * sizeof(*keys)), *orphan = keys + 2 * (size_t)w + 1;
  uint32_t *cand = malloc((4 * (size_t)w + 2) * sizeof(*cand)), *top = cand + 2 * (size_t)w + 1;
  uint32_t nk = 0, no = 0, n = w;
  char buf[1024];
  if (!keys || !cand) goto oom;
  /* A row by its object in each snapshot that has it. */
  for (uint32_t i = 0; i < w; i++) {
    gr[i].container = gr[i].example[0] = gr[i].example[1] = LJM_HEAP_NONE;
    gr[i].entries = out_refs(new_, gr[i].new_obj) - out_refs(old, gr[i].old_obj);
    if (gr[i].new_obj != LJM_HEAP_NONE) keys[nk++] = (RowKey){ 1ull << 32 | gr[i].new_obj, i };
    if (gr[i].old_obj != LJM_HEAP_NONE) keys[nk++] = (RowKey){ gr[i].old_obj, i };
  }
  qsort(keys, nk, sizeof(*keys), by_key);
  for (uint32_t i = 0; i < 2 * w; i++) cand[i] = LJM_HEAP_NONE;
  for (uint32_t i = 0; i < w; i++) {
    int in_new;
    uint32_t c = container_of(old, new_, &gr[i], &in_new);
    const LjmHeapGraph *g = in_new ? new_ : old;
    uint32_t o = in_new ? gr[i].new_obj : gr[i].old_obj;
    /* Entries added or dropped, dominated by their container. */
    if (c == LJM_HEAP_NONE || g->obj[o].idom != c ||
        (gr[i].old_obj != LJM_HEAP_NONE && gr[i].new_obj != LJM_HEAP_NONE))
      continue;
    uint64_t key = (uint64_t)in_new << 32 | c;
    uint32_t y = find_row(keys, nk, key);
    if (y == LJM_HEAP_NONE) orphan[no++] = (RowKey){ key, i };
    else if (y != i) cand[i] = y;
  }
  /* Rows sharing a container that is no row: two or more get one made. */
  qsort(orphan, no, sizeof(*orphan), by_key);
  for (uint32_t i = 0; i < no;) {
    uint32_t j = i;
    while (j < no && orphan[j].key == orphan[i].key) j++;
    if (j - i >= 2) {
      int in_new = (int)(orphan[i].key >> 32);
      const LjmHeapGraph *g = in_new ? new_ : old;
      uint32_t c = (uint32_t)orphan[i].key;
      LjmHeapGrowth *m = &gr[n];
      memset(m, 0, sizeof(*m));
      if (!(m->path = strdup(ljm_heapgraph_path(g, c, buf, sizeof(buf))))) goto oom;
      m->type = ljm_heapgraph_type_name(g, c, in_new ? memo_new : memo_old);
      m->made = 1;
      m->old_obj = in_new ? LJM_HEAP_NONE : c;
      m->new_obj = in_new ? c : LJM_HEAP_NONE;
      m->container = m->example[0] = m->example[1] = LJM_HEAP_NONE;
      for (uint32_t k = i; k < j; k++) cand[orphan[k].row] = n;
      n++;
    }
    i = j;
  }
  /* The row each one is shown under: the top of its chain (the chains
  ** follow dominators: no cycle), each found once (path compression). */
  for (uint32_t i = 0; i < n; i++) top[i] = LJM_HEAP_NONE;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t r = i;
    while (top[r] == LJM_HEAP_NONE && cand[r] != LJM_HEAP_NONE) r = cand[r];
    if (top[r] == LJM_HEAP_NONE) top[r] = r;  /* a row counted under none */
    r = top[r];
    for (uint32_t v = i; top[v] == LJM_HEAP_NONE; v = cand[v]) top[v] = r;
  }
  /* Counted under its container when that one is shown; else out of the
  ** list with it (its growth is in its container's, counted already). */
  for (uint32_t i = 0; i < n; i++) {
    uint32_t y = cand[i];
    if (y == LJM_HEAP_NONE) continue;
    if (cand[y] == LJM_HEAP_NONE) count_under(gr, i, y);
    else gr[i].container = top[i];
  }
  for (uint32_t i = w; i < n; i++) gr[i].diff = gr[i].grown_bytes;
  free(keys);
  free(cand);
  return n;
oom:
  free(keys);
  free(cand);
  return LJM_HEAP_NONE;
}

int ljm_heapgraph_growth(const LjmHeapGraph *old, const LjmHeapGraph *new_, uint32_t candidates,
                         LjmHeapGrowth **out, uint32_t *n)
{
  LjmHeapGrowth *gr = calloc(4 * (size_t)candidates + 1, sizeof(*gr));
  /* Type names of each snapshot: a metatable's keys looked at once. */
  uint32_t *memo_old = calloc((size_t)old->nobj + 1, sizeof(uint32_t));
  uint32_t *memo_new = calloc((size_t)new_->nobj + 1, sizeof(uint32_t));
  uint32_t k = 0;
  *out = NULL;
  *n = 0;
  if (!gr || !memo_old || !memo_new || add_candidates(new_, old, 1, candidates, gr, &k, memo_new) ||
      add_candidates(old, new_, 0, candidates, gr, &k, memo_old)) {
    if (gr) ljm_heapgraph_growth_free(gr, k);
    free(memo_old);
    free(memo_new);
    return -1;
  }
  /* A path among both tops once. */
  qsort(gr, k, sizeof(*gr), by_growth_path);
  uint32_t w = 0;
  for (uint32_t i = 0; i < k; i++) {
    if (w && !strcmp(gr[w - 1].path, gr[i].path)) {
      free(gr[i].path);
      continue;
    }
    gr[w++] = gr[i];
  }
  memset(gr + w, 0, (size_t)(k - w) * sizeof(*gr));  /* moved or freed */
  size_t cap = 4 * (size_t)candidates + 1;
  for (uint32_t i = 0; i < w; i++) gr[i].container = LJM_HEAP_NONE;
  uint32_t all = group(old, new_, gr, w, memo_old, memo_new);
  free(memo_old);
  free(memo_new);
  uint32_t *perm = malloc(((size_t)w * 2 + 1) * sizeof(*perm));
  LjmHeapGrowth *sorted = malloc(((size_t)w * 2 + 1) * sizeof(*sorted));
  if (all == LJM_HEAP_NONE || !perm || !sorted) {
    free(perm);
    free(sorted);
    ljm_heapgraph_growth_free(gr, (uint32_t)cap);
    return -1;
  }
  /* The final order (all <= w + w / 2), container and example indexes
  ** moved along. */
  for (uint32_t i = 0; i < all; i++) perm[i] = i;
  sort_rows = gr;
  qsort(perm, all, sizeof(*perm), by_row);
  uint32_t *pos = malloc(((size_t)all + 1) * sizeof(*pos));
  if (!pos) {
    free(perm);
    free(sorted);
    ljm_heapgraph_growth_free(gr, (uint32_t)cap);
    return -1;
  }
  for (uint32_t i = 0; i < all; i++) pos[perm[i]] = i;
  for (uint32_t i = 0; i < all; i++) {
    LjmHeapGrowth x = gr[perm[i]];
    if (x.container != LJM_HEAP_NONE) x.container = pos[x.container];
    for (int j = 0; j < 2; j++)
      if (x.example[j] != LJM_HEAP_NONE) x.example[j] = pos[x.example[j]];
    sorted[i] = x;
  }
  free(pos);
  free(perm);
  free(gr);
  *out = sorted;
  *n = all;
  return 0;
}
