/* heapsub.c -- the picked objects of a heap view and their retainers, level
** by level (breadth first, so the nearest are drawn when max cuts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/heapsub.h"
#include "exporters/common/utf8.h"
#include "exporters/common/value.h"

#define LABEL_SHOWN 40  /* bytes of an object's label a node shows */
#define STEP_SHOWN 60   /* bytes of a reference's name an edge shows */
#define PATH_SHOWN 80   /* bytes of an object's path from the roots a node shows */

int ljm_heap_matches(const LjmHeapGraph *g, uint32_t *memo, uint32_t i, LjmHeapLabelMatch match,
                     void *ud)
{
  if (g->obj[i].type == LJH_INTERNAL) return 0;
  if (match(ud, ljm_heapgraph_type_name(g, i, memo))) return 1;
  return match(ud, ljm_heapgraph_label(g, i)) ? 2 : 0;
}

typedef struct Walk {
  LjmHeapSub *s;
  const LjmHeapGraph *g;
  const LjmExportOptions *o;
  uint32_t *node_of;  /* per object: its node + 1, 0 when not drawn */
  uint32_t capedge;
} Walk;

static void add_node(Walk *w, uint32_t obj, uint32_t level)
{
  LjmHeapSub *s = w->s;
  s->node[s->nnode] = (LjmHeapSubNode){ obj, level, 0, 0 };
  w->node_of[obj] = ++s->nnode;
}

static int add_edge(Walk *w, uint32_t from, uint32_t to, uint32_t ref)
{
  LjmHeapSub *s = w->s;
  if (s->nedge == w->capedge) {
    uint32_t cap = w->capedge ? w->capedge * 2 : 64;
    LjmHeapSubEdge *e = realloc(s->edge, (size_t)cap * sizeof(*e));
    if (!e) return -1;
    s->edge = e;
    w->capedge = cap;
  }
  s->edge[s->nedge++] = (LjmHeapSubEdge){ from, to, ref };
  return 0;
}

typedef struct TypeKeep {
  const LjmHeapGraph *g;
  uint32_t *memo;
  const LjmExportOptions *o;
} TypeKeep;

static int type_kept(void *ud, uint32_t i)
{
  TypeKeep *t = ud;
  return t->o->match(t->o->match_ud, ljm_heapgraph_type_name(t->g, i, t->memo));
}

/* The view's own objects, level 0: at most s->max of them. */
static int pick(Walk *w, uint32_t want)
{
  LjmHeapSub *s = w->s;
  const LjmHeapGraph *g = w->g;
  const LjmExportOptions *o = w->o;
  if (o->pattern && o->match) {
    for (int pass = 1; pass <= 2; pass++)
      for (uint32_t i = 1; i < g->nobj; i++) {
        if (ljm_heap_matches(g, s->memo, i, o->match, o->match_ud) != pass) continue;
        s->matched++;
        if (s->nnode < want) add_node(w, i, 0);
      }
  } else {
    uint32_t *idx = malloc(((size_t)want + 1) * sizeof(*idx));
    if (!idx) return -1;
    TypeKeep tk = { g, s->memo, o };
    uint32_t n = ljm_heapgraph_top_retainers_of(g, idx, want, o->match ? type_kept : NULL, &tk);
    for (uint32_t k = 0; k < n; k++) add_node(w, idx[k], 0);
    s->matched = n;
    free(idx);
  }
  s->picked = s->nnode;
  return 0;
}

/* Each node in turn: the references into it, best first, their sources
** added as nodes of the next level while there is room. */
static int expand(Walk *w, const LjmHeapPreds *preds, uint32_t *refs, uint32_t per)
{
  LjmHeapSub *s = w->s;
  const LjmHeapGraph *g = w->g;
  for (uint32_t q = 0; q < s->nnode; q++) {
    uint32_t obj = s->node[q].obj;
    if (obj == 0) continue;  /* the roots: nothing refers to them */
    int deep = s->node[q].level >= s->depth;
    uint32_t all = ljm_heapgraph_retainers(g, preds, obj, refs, deep ? 0 : per);
    uint32_t shown = deep ? 0 : all < per ? all : per, drawn = 0;
    for (uint32_t k = 0; k < shown; k++) {
      uint32_t from = g->ref[refs[k]].from;
      if (!w->node_of[from]) {
        if (s->nnode == s->max) {
          s->cut++;
          continue;
        }
        add_node(w, from, s->node[q].level + 1);
      }
      if (add_edge(w, w->node_of[from] - 1, q, refs[k])) return -1;
      drawn++;
    }
    s->node[q].more = all - drawn;
  }
  return 0;
}

/* Nodes whose objects share an address (two objects of a hostile snapshot):
** marked, so that their names differ. */
typedef struct AddrNode {
  uint64_t addr;
  uint32_t k;
} AddrNode;

static int by_addr(const void *a, const void *b)
{
  uint64_t x = ((const AddrNode *)a)->addr, y = ((const AddrNode *)b)->addr;
  return x < y ? -1 : x > y;
}

static int mark_shared(LjmHeapSub *s, const LjmHeapGraph *g)
{
  AddrNode *p = malloc(((size_t)s->nnode + 1) * sizeof(*p));
  if (!p) return -1;
  uint32_t n = 0;
  for (uint32_t k = 0; k < s->nnode; k++)
    if (s->node[k].obj) p[n++] = (AddrNode){ g->obj[s->node[k].obj].addr, k };
  qsort(p, n, sizeof(*p), by_addr);
  for (uint32_t k = 1; k < n; k++)
    if (p[k].addr == p[k - 1].addr) s->node[p[k].k].shared = s->node[p[k - 1].k].shared = 1;
  free(p);
  return 0;
}

int ljm_heap_sub(LjmHeapSub *s, const LjmHeapGraph *g, const LjmExportOptions *o)
{
  memset(s, 0, sizeof(*s));
  s->depth = o->depth ? o->depth : LJM_HEAP_DEPTH_DEFAULT;
  s->max = o->max_objects ? o->max_objects : LJM_HEAP_DRAWN_DEFAULT;
  if (g->nobj == 0) return 0;
  uint32_t per = o->paths, want = o->top < s->max ? o->top : s->max;
  Walk w = { s, g, o, NULL, 0 };
  LjmHeapPreds preds;
  memset(&preds, 0, sizeof(preds));
  uint32_t *refs = malloc(((size_t)per + 1) * sizeof(*refs));
  w.node_of = calloc(g->nobj, sizeof(*w.node_of));
  s->memo = calloc((size_t)g->nobj + 1, sizeof(*s->memo));
  s->node = malloc((size_t)s->max * sizeof(*s->node));
  int rc = -1;
  if (refs && w.node_of && s->memo && s->node && ljm_heapgraph_preds(g, &preds) == 0 &&
      pick(&w, want) == 0 && expand(&w, &preds, refs, per) == 0 && mark_shared(s, g) == 0)
    rc = 0;
  ljm_heapgraph_preds_free(&preds);
  free(refs);
  free(w.node_of);
  if (rc) ljm_heap_sub_free(s);
  return rc;
}

void ljm_heap_sub_free(LjmHeapSub *s)
{
  free(s->node);
  free(s->edge);
  free(s->memo);
  memset(s, 0, sizeof(*s));
}

void ljm_heap_sub_title(const LjmHeapSub *s, const LjmExportOptions *o, LjmBuf *b)
{
  ljm_buf_puts(b, "what retains ");
  if (o->pattern && o->match) {
    ljm_buf_puts(b, "the objects whose type name or label matches '");
    ljm_text_clean(b, o->pattern, strlen(o->pattern), 0, STEP_SHOWN);
    ljm_buf_printf(b, "' (%u of %u)", s->picked, s->matched);
  } else {
    ljm_buf_printf(b, "the %u largest retainers%s", s->picked,
                   o->match ? " of the types --top names" : "");
  }
  ljm_buf_printf(b, ", %u level%s, at most %u objects", s->depth, s->depth == 1 ? "" : "s", s->max);
  if (s->cut)
    ljm_buf_printf(b, " (%u reference%s from objects past the most left out)", s->cut,
                   s->cut == 1 ? "" : "s");
}

void ljm_heap_sub_node_text(const LjmHeapSub *s, const LjmHeapGraph *g, uint32_t k, LjmBuf *b)
{
  const LjmHeapSubNode *n = &s->node[k];
  if (n->obj == 0) {
    ljm_buf_puts(b, "roots");
    return;
  }
  const LjmHeapObj *ob = &g->obj[n->obj];
  const char *label = ljm_heapgraph_label(g, n->obj);
  char size[32], kept[32], path[PATH_SHOWN + 32];
  const char *type = ljm_heapgraph_type_name(g, n->obj, s->memo);
  ljm_text_clean(b, type, strlen(type), 0, LABEL_SHOWN);
  if (*label) {
    ljm_buf_putc(b, ' ');
    ljm_text_clean(b, label, strlen(label), 0, LABEL_SHOWN);
  }
  ljm_heapgraph_path(g, n->obj, path, sizeof(path));
  ljm_buf_putc(b, '\n');
  ljm_text_clean(b, path, strlen(path), 0, PATH_SHOWN);
  ljm_buf_printf(b, "\n%s, retains %s", ljm_fmt_human(size, sizeof(size), (double)ob->size),
                 ljm_fmt_human(kept, sizeof(kept), (double)ob->retained));
  if (n->more) ljm_buf_printf(b, "\n+%u more reference%s in", n->more, n->more == 1 ? "" : "s");
}

void ljm_heap_sub_edge_text(const LjmHeapSub *s, const LjmHeapGraph *g, uint32_t k, LjmBuf *b)
{
  char step[200];
  ljm_heapgraph_step(g, s->edge[k].ref, step, sizeof(step));
  ljm_text_clean(b, step, strlen(step), 0, STEP_SHOWN);
}

int ljm_heap_sub_draw(const LjmHeapGraph *g, const LjmExportOptions *o, FILE *f,
                      const LjmHeapDraw *d, char *err, size_t errlen)
{
  LjmHeapSub s;
  if (ljm_heap_sub(&s, g, o)) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  LjmBuf b = { 0 };
  ljm_heap_sub_title(&s, o, &b);
  d->begin(f, ljm_buf_str(&b));
  for (uint32_t k = 0; k < s.nnode; k++) {
    ljm_buf_reset(&b);
    ljm_heap_sub_node_text(&s, g, k, &b);
    d->node(f, g, &s, k, ljm_buf_str(&b));
  }
  for (uint32_t k = 0; k < s.nedge; k++) {
    ljm_buf_reset(&b);
    ljm_heap_sub_edge_text(&s, g, k, &b);
    d->edge(f, g, &s, k, ljm_buf_str(&b));
  }
  d->end(f, g, &s);
  int oom = b.oom;
  ljm_buf_free(&b);
  ljm_heap_sub_free(&s);
  if (oom) snprintf(err, errlen, "out of memory");
  return oom ? -1 : 0;
}
