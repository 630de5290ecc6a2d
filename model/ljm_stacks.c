/* ljm_stacks.c -- the call tree: nodes of stream stacks or of sites, their
** figures, the owners of live blocks in extended streams, RSS samples. */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_model_int.h"

uint32_t ljm_stacks_node_new(LjmModel *m, uint32_t parent, uint32_t site, LjmNodeKind kind)
{
  if (m->nnodes == m->capnodes) {
    uint32_t cap = m->capnodes;
    LjmNode *n = ljm_model_grow(m, m->nodes, &cap, sizeof(*n));
    if (!n) return NONE;
    m->nodes = n;
    if (m->stacks) {
      cap = m->capnodes;
      uint32_t *x = ljm_model_grow(m, m->node_fig, &cap, sizeof(*x));
      if (!x) return NONE;
      m->node_fig = x;
    }
    m->capnodes = cap;
  }
  uint32_t id = m->nnodes++;
  LjmNode *n = &m->nodes[id];
  memset(n, 0, sizeof(*n));
  if (m->stacks) m->node_fig[id] = NONE;
  n->parent = parent == NONE ? LJM_NO_NODE : parent;
  n->site = site == NONE ? LJM_NO_SITE : site;
  n->kind = kind;
  n->depth = parent == NONE ? 1 : m->nodes[parent].depth + 1;
  return id;
}

uint32_t ljm_stacks_site_node(LjmModel *m, uint32_t site)
{
  if (site >= m->capsite_node) {
    uint32_t *p = ljm_model_cover(m, m->site_node, &m->capsite_node, site, sizeof(*p), 64, 0xff);
    if (!p) return NONE;
    m->site_node = p;
  }
  if (m->site_node[site] == NONE)
    m->site_node[site] = ljm_stacks_node_new(m, NONE, site, LJM_NODE_FRAME);
  return m->site_node[site];
}

/* The site a frame stands for, named as an event at that place would be. */
static uint32_t frame_site(LjmModel *m, const LjmRawFrame *f)
{
  uint32_t li;
  switch (f->kind) {
  case LJM_FRAME_LUA: li = ljm_model_loc(m, f->addr, f->line, 0); break;
  case LJM_FRAME_C: li = ljm_model_loc(m, f->addr, 0, 0); break;
  case LJM_FRAME_TRACE: li = ljm_model_loc(m, 0, 0, f->traceno); break;
  default: return NONE;
  }
  return li == NONE ? NONE : ljm_names_site_of(m, li);
}

void ljm_stacks_on_node(LjmModel *m, uint32_t id, uint32_t parent, const LjmRawFrame *f)
{
  if (m->oom) return;
  if (id != m->nstream + 1) return;  /* the decoder numbers them in order */
  if (m->nstream == m->capstream) {
    uint32_t *p = ljm_model_grow(m, m->stream_node, &m->capstream, sizeof(*p));
    if (!p) return;
    m->stream_node = p;
  }
  LjmNodeKind kind = f->kind == LJM_FRAME_RESUME ? LJM_NODE_RESUME
                     : f->kind == LJM_FRAME_TAIL ? LJM_NODE_TAIL
                     : f->kind == LJM_FRAME_CUT  ? LJM_NODE_CUT
                                                 : LJM_NODE_FRAME;
  uint32_t site = kind == LJM_NODE_FRAME ? frame_site(m, f) : NONE;
  uint32_t p = parent ? m->stream_node[parent - 1] : NONE;
  uint32_t n = ljm_stacks_node_new(m, p, site, kind);
  if (n != NONE) m->nodes[n].stream_id = id;
  m->stream_node[m->nstream++] = n;
}

uint32_t ljm_stacks_leaf_node(LjmModel *m, uint32_t n, uint32_t site)
{
  uint64_t key = (uint64_t)n << 32 | site;
  if (key == m->last_leaf_key && m->last_leaf != NONE) return m->last_leaf;
  uint32_t c = ljm_hmap_get(&m->leaf_by_key, key);
  if (c == NONE) {
    c = ljm_stacks_node_new(m, n, site, LJM_NODE_FRAME);
    if (c == NONE) return NONE;
    if (ljm_hmap_put(&m->leaf_by_key, key, c) != 0) {
      m->oom = 1;
      return NONE;
    }
  }
  m->last_leaf_key = key;
  return m->last_leaf = c;
}

uint32_t ljm_stacks_event_node(LjmModel *m, uint32_t stack, uint32_t site)
{
  if (!stack || stack > m->nstream) return ljm_stacks_site_node(m, site);
  uint32_t n = m->stream_node[stack - 1];
  if (n == NONE) return n;
  uint32_t ns = m->nodes[n].site;
  if (ns != LJM_NO_SITE && ljm_names_same_place(m, ns, site)) return n;
  return ljm_stacks_leaf_node(m, n, site);
}

/* The ctx of (site, node) without labels: a small direct-mapped cache, then
** the map. */
static uint32_t plain_ctx(LjmModel *m, uint32_t site, uint32_t node)
{
  /* Events take turns between a few stacks. */
  uint32_t ci = (site * 0x9E3779B1u + node * 0x85EBCA6Bu) >> 26;
  uint32_t hit = m->ctx_cache[ci];
  if (hit < m->nctxs && m->ctxs[hit].site == site && m->ctxs[hit].node == node &&
      m->ctxs[hit].slice == m->slice)  /* labelled ctxs never enter the cache */
    return hit;
  /* The map holds each pair's latest ctx: older slices take no new blocks. */
  uint64_t key = (uint64_t)site << 32 | node;
  uint32_t c = ljm_hmap_get(&m->ctx_by_key, key);
  if (c == NONE || m->ctxs[c].slice != m->slice) {
    if (m->nctxs == m->capctxs) {
      Ctx *p = ljm_model_grow(m, m->ctxs, &m->capctxs, sizeof(*p));
      if (!p) return NONE;
      m->ctxs = p;
    }
    c = m->nctxs++;
    m->ctxs[c] = (Ctx){ site, node, m->slice, 0 };
    if (ljm_hmap_put(&m->ctx_by_key, key, c) != 0) {
      m->oom = 1;
      return NONE;
    }
  }
  return m->ctx_cache[ci] = c;
}

/* The ctx of (site, node) with labels: its unlabelled ctx and the set pick
** it. */
static __attribute__((noinline)) uint32_t labelled_ctx(LjmModel *m, uint32_t site, uint32_t node,
                                                       uint32_t labels)
{
  uint32_t c0 = plain_ctx(m, site, node);
  if (c0 == NONE) return NONE;
  uint64_t key = (uint64_t)c0 << 16 | labels;  /* labels < LJM_MODEL_SETS <= 65536 */
  uint32_t c = ljm_hmap_get(&m->ctx_by_label, key);
  if (c != NONE) return c;
  if (m->nctxs == m->capctxs) {
    Ctx *p = ljm_model_grow(m, m->ctxs, &m->capctxs, sizeof(*p));
    if (!p) return NONE;
    m->ctxs = p;
  }
  c = m->nctxs++;
  m->ctxs[c] = m->ctxs[c0];
  m->ctxs[c].labels = labels;
  if (ljm_hmap_put(&m->ctx_by_label, key, c) != 0) {
    m->oom = 1;
    return NONE;
  }
  return c;
}

uint32_t ljm_stacks_ctx(LjmModel *m, uint32_t site, uint32_t node, uint32_t labels)
{
  if (node == NONE) return NONE;
  if (__builtin_expect(labels != 0, 0)) return labelled_ctx(m, site, node, labels);
  return plain_ctx(m, site, node);
}

void ljm_stacks_on_rss(LjmModel *m, uint64_t time, uint64_t bytes)
{
  if (m->nrss == m->caprss) {
    LjmRssSample *p = ljm_model_grow(m, m->rss, &m->caprss, sizeof(*p));
    if (!p) return;
    m->rss = p;
  }
  m->rss[m->nrss++] = (LjmRssSample){ time, bytes };
}

/* Whether node id is the root of a grouped tree (ljm_model_group_by). */
static int label_root(const LjmModel *m, uint32_t id)
{
  const LjmNode *n = &m->nodes[id];
  return n->kind == LJM_NODE_FRAME && n->site != LJM_NO_SITE &&
         m->sites[n->site].kind == LJM_SITE_LABEL;
}

int ljm_model_node_is_charge(const LjmModel *m, uint32_t id)
{
  const LjmNode *n = &m->nodes[id];
  return n->stream_id == 0 && n->parent != LJM_NO_NODE && !label_root(m, n->parent);
}

int ljm_model_node_alone(const LjmModel *m, uint32_t id)
{
  const LjmNode *n = &m->nodes[id];
  return n->kind == LJM_NODE_FRAME && n->stream_id == 0 && !label_root(m, id) &&
         !(m->info.ext_flags & LJM_EXT_STACKS) &&
         (n->parent == LJM_NO_NODE || label_root(m, n->parent));
}

int ljm_model_stacked(const LjmModel *m)
{
  return (m->info.ext_flags & LJM_EXT_STACKS) || (m->gkey && m->stacks);
}

NodeFig *ljm_stacks_fig(LjmModel *m, uint32_t n)
{
  uint32_t i = m->node_fig[n];
  if (i != NONE) return &m->figs[i];
  if (m->nfigs == m->capfigs) {
    NodeFig *p = ljm_model_grow(m, m->figs, &m->capfigs, sizeof(*p));
    if (!p) return NULL;
    m->figs = p;
  }
  i = m->node_fig[n] = m->nfigs++;
  memset(&m->figs[i], 0, sizeof(m->figs[i]));
  m->figs[i].first_time = m->figs[i].last_time = LJM_NO_TIME_US;
  return &m->figs[i];
}

void ljm_stacks_finish(LjmModel *m)
{
  for (uint32_t i = 0; i < m->nfigs; i++)
    peak_finish(&m->figs[i].snap, m->epoch, &m->figs[i].self);
}

static const LjmFigures no_figures;

const LjmFigures *ljm_model_node_self(const LjmModel *m, uint32_t id)
{
  if (!m->stacks) return &m->sites[m->nodes[id].site].fig;  /* node i is site i */
  uint32_t i = m->node_fig[id];
  return i == NONE ? &no_figures : &m->figs[i].self;
}

const LjmFigures *ljm_model_node_total(const LjmModel *m, uint32_t id)
{
  if (!m->stacks) return &m->sites[m->nodes[id].site].fig;
  if (!m->node_total) {  /* made once, on first use: most callers need none */
    LjmModel *w = (LjmModel *)m;
    LjmFigures *t = malloc((m->nnodes ? m->nnodes : 1) * sizeof(*t));
    if (!t) return &no_figures;
    for (uint32_t i = 0; i < m->nnodes; i++) t[i] = *ljm_model_node_self(m, i);
    /* Children come after their parents: one backward pass sums subtrees. */
    for (uint32_t i = m->nnodes; i-- > 0;)
      if (m->nodes[i].parent != LJM_NO_NODE) ljm_figures_add(&t[m->nodes[i].parent], &t[i]);
    w->node_total = t;
  }
  return &m->node_total[id];
}

void ljm_model_node_times(const LjmModel *m, uint32_t id, uint64_t *first, uint64_t *last)
{
  if (!m->stacks) {  /* node id is site id; times where the stream has them */
    int t = id < m->capsite_time;
    *first = t ? m->site_time[2 * id] : LJM_NO_TIME_US;
    *last = t ? m->site_time[2 * id + 1] : LJM_NO_TIME_US;
    return;
  }
  uint32_t i = m->node_fig[id];
  *first = i == NONE ? LJM_NO_TIME_US : m->figs[i].first_time;
  *last = i == NONE ? LJM_NO_TIME_US : m->figs[i].last_time;
}

void ljm_stacks_free(LjmModel *m)
{
  free(m->nodes);
  free(m->node_fig);
  free(m->figs);
  free(m->node_total);
  free(m->stream_node);
  free(m->site_node);
  free(m->ctxs);
  free(m->rss);
  ljm_hmap_free(&m->ctx_by_key);
  ljm_hmap_free(&m->ctx_by_label);
  ljm_hmap_free(&m->leaf_by_key);
}
