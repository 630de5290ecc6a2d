/* ljm_heapgraph.c -- the reference graph of a heap snapshot, its
** dominator tree (semi-NCA: Georgiadis, Tarjan and Werneck's variant of
** Lengauer-Tarjan, "Finding dominators in practice", 2006), shortest
** paths (breadth first from the root), retained sizes by type and the
** largest retainers. Paths in Lua notation: ljm_heappaths.c; every
** shortest path and the growth between snapshots: ljm_heapgrowth.c. */
#include "model/ljm_heapgraph.h"
#include "model/ljm_heapgraph_int.h"
#include "model/ljm_hmap.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Loader {
  LjmHeapGraph *g;
  uint32_t capobj, capref;
  int oom;
} Loader;

/* Until resolved, a reference's from and to hold its target's address
** (a side array of addresses cost 8 bytes per reference at the peak). */
static void set_target(LjmHeapRef *r, uint64_t addr)
{
  r->from = (uint32_t)addr;
  r->to = (uint32_t)(addr >> 32);
}

static uint64_t target(const LjmHeapRef *r)
{
  return (uint64_t)r->to << 32 | r->from;
}

static uint32_t label_add(Loader *ld, const char *s, size_t len)
{
  LjmHeapGraph *g = ld->g;
  if (g->nlabels + len + 1 > g->caplabels) {
    size_t cap = g->caplabels ? g->caplabels : 1 << 16;
    while (cap < g->nlabels + len + 1) cap *= 2;
    char *l = cap <= UINT32_MAX ? realloc(g->labels, cap) : NULL;
    if (!l) {
      ld->oom = 1;
      return 0;
    }
    g->labels = l;
    g->caplabels = cap;
  }
  uint32_t at = (uint32_t)g->nlabels;
  memcpy(g->labels + at, s, len);
  g->labels[at + len] = '\0';
  g->nlabels += len + 1;
  return at;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elt)
{
  if (need <= *cap) return 1;
  uint64_t nc = *cap ? (uint64_t)*cap * 2 : 1024;
  while (nc < need) nc *= 2;
  if (nc > UINT32_MAX) return 0;
  void *q = realloc(*p, nc * elt);
  if (!q) return 0;
  *p = q;
  *cap = (uint32_t)nc;
  return 1;
}

static void on_header(void *ud, const char *build, size_t len, uint64_t gctotal)
{
  Loader *ld = ud;
  free(ld->g->build);
  ld->g->build = strndup(build, len);
  ld->g->gctotal = gctotal;
}

static void on_field(void *ud, const char *name, size_t len, uint64_t bytes)
{
  LjmHeapGraph *g = ((Loader *)ud)->g;
  if (len == 3 && !memcmp(name, "rss", 3)) g->rss = bytes;
  else if (len == 13 && !memcmp(name, "malloc_in_use", 13)) g->malloc_in_use = bytes;
  else if (len == 11 && !memcmp(name, "malloc_held", 11)) g->malloc_held = bytes;
  else if (len == 8 && !memcmp(name, "recorder", 8)) g->recorder = bytes;
  else if (len == 12 && !memcmp(name, "recorder_rss", 12)) g->recorder_rss = bytes;
}

static void on_object(void *ud, LjhType type, uint64_t addr, uint64_t size, const char *label,
                      size_t len, const LjhEdge *edges, size_t n)
{
  Loader *ld = ud;
  LjmHeapGraph *g = ld->g;
  if (ld->oom) return;
  if (n > UINT32_MAX - g->nref || !grow((void **)&g->obj, &ld->capobj, g->nobj + 1, sizeof(*g->obj)) ||
      !grow((void **)&g->ref, &ld->capref, g->nref + (uint32_t)n, sizeof(*g->ref))) {
    ld->oom = 1;
    return;
  }
  LjmHeapObj *o = &g->obj[g->nobj];
  memset(o, 0, sizeof(*o));
  o->addr = addr;
  o->size = size;
  o->type = (uint8_t)type;
  o->label = label_add(ld, label, len);
  o->first_edge = g->nref;
  o->idom = o->parent = LJM_HEAP_NONE;
  for (size_t i = 0; i < n; i++) {
    LjmHeapRef *r = &g->ref[g->nref];
    set_target(r, edges[i].target);
    r->kind = edges[i].kind;
    r->weak = edges[i].weak;
    r->what = edges[i].key;  /* STRKEY, OBJKEY: an address until resolved */
    if (edges[i].kind == LJH_EDGE_NAME) r->what = label_add(ld, edges[i].name, edges[i].len);
    g->nref++;
  }
  g->nobj++;
}

/* -- Addresses to indexes --------------------------------------------------- */

typedef struct AddrMap {
  uint64_t *key;
  uint32_t *val;
  size_t cap;
} AddrMap;

/* Every bit of the address counts: a hash of only some bits would send
** addresses that differ in the others (objects 2^40 apart) to one slot,
** and probing would turn quadratic. */
static size_t am_slot(const AddrMap *m, uint64_t a)
{
  return (size_t)ljm_hash64(a) & (m->cap - 1);
}

static int am_build(AddrMap *m, const LjmHeapGraph *g)
{
  m->cap = 16;
  while (m->cap < 2 * (size_t)g->nobj + 2) m->cap *= 2;
  m->key = malloc(m->cap * sizeof(*m->key));
  m->val = malloc(m->cap * sizeof(*m->val));
  if (!m->key || !m->val) return 0;
  memset(m->val, 0xff, m->cap * sizeof(*m->val));
  for (uint32_t i = 0; i < g->nobj; i++) {
    size_t j = am_slot(m, g->obj[i].addr);
    while (m->val[j] != LJM_HEAP_NONE && m->key[j] != g->obj[i].addr) j = (j + 1) & (m->cap - 1);
    if (m->val[j] == LJM_HEAP_NONE) {  /* a repeated address keeps its first object */
      m->key[j] = g->obj[i].addr;
      m->val[j] = i;
    }
  }
  return 1;
}

static uint32_t am_get(const AddrMap *m, uint64_t a)
{
  size_t j = am_slot(m, a);
  while (m->val[j] != LJM_HEAP_NONE) {
    if (m->key[j] == a) return m->val[j];
    j = (j + 1) & (m->cap - 1);
  }
  return LJM_HEAP_NONE;
}

/* Resolves targets and keys; drops references to unknown addresses. */
static int resolve(Loader *ld)
{
  LjmHeapGraph *g = ld->g;
  AddrMap m;
  memset(&m, 0, sizeof(m));
  if (!am_build(&m, g)) {
    free(m.key);
    free(m.val);
    return 0;
  }
  uint32_t w = 0, oi = 0;
  for (uint32_t r = 0; r < g->nref; r++) {
    LjmHeapRef ref = g->ref[r];
    while (oi < g->nobj && g->obj[oi].first_edge <= r) g->obj[oi++].first_edge = w;
    uint32_t to = am_get(&m, target(&ref));
    int keyed = ref.kind == LJH_EDGE_STRKEY || ref.kind == LJH_EDGE_OBJKEY;
    uint32_t key = keyed ? am_get(&m, ref.what) : 0;
    if (to == LJM_HEAP_NONE || to == 0 || key == LJM_HEAP_NONE) {
      g->dangling++;
      continue;
    }
    ref.from = oi - 1;  /* obj[0] starts at reference 0: oi >= 1 */
    ref.to = to;
    if (keyed) ref.what = key;
    g->ref[w++] = ref;
  }
  while (oi < g->nobj) g->obj[oi++].first_edge = w;
  g->nref = w;
  free(m.key);
  free(m.val);
  /* The arrays grew by doubling: give back what the graph does not use. */
  LjmHeapRef *r = realloc(g->ref, (size_t)w * sizeof(*r) + 1);
  if (r) g->ref = r;
  LjmHeapObj *o = realloc(g->obj, (size_t)g->nobj * sizeof(*o));
  if (o) g->obj = o;
  return 1;
}


/* -- Each object's references in one order --------------------------------------- */

/* Bytes of two labels compared at most: a hostile snapshot's labels may be
** a MiB long and alike (a string's label is its first 64 bytes). */
#define LABEL_CMP 256

/* Two objects by label, then address. */
static int obj_cmp(const LjmHeapGraph *g, uint32_t a, uint32_t b)
{
  if (a == b) return 0;
  int c = strncmp(ljm_heapgraph_label(g, a), ljm_heapgraph_label(g, b), LABEL_CMP);
  if (c) return c;
  return g->obj[a].addr < g->obj[b].addr ? -1 : g->obj[a].addr > g->obj[b].addr;
}

/* A table's entries: by kind (the array's indexes first, as the snapshot
** lists them), then by key or index, then by target. */
static int entry_cmp(const void *pa, const void *pb, void *ud)
{
  static const uint8_t rank[] = {[LJH_EDGE_INDEX] = 0, [LJH_EDGE_STRKEY] = 1,
                                 [LJH_EDGE_OBJKEY] = 2, [LJH_EDGE_KEY] = 3};
  const LjmHeapGraph *g = ud;
  const LjmHeapRef *a = pa, *b = pb;
  int c = 0;
  if (a->kind != b->kind) return rank[a->kind] < rank[b->kind] ? -1 : 1;
  if (a->kind == LJH_EDGE_INDEX) c = a->what < b->what ? -1 : a->what > b->what;
  else if (a->kind != LJH_EDGE_KEY) c = obj_cmp(g, (uint32_t)a->what, (uint32_t)b->what);
  return c ? c : obj_cmp(g, a->to, b->to);
}

static void sort_entries(const LjmHeapGraph *g, LjmHeapRef *e, uint32_t n)
{
  if (n > 16) {
    uint32_t k = 1;
    while (k < n && entry_cmp(&e[k - 1], &e[k], (void *)g) <= 0) k++;
    if (k < n) qsort_r(e, n, sizeof(*e), entry_cmp, (void *)g);
    return;
  }
  for (uint32_t k = 1; k < n; k++) {  /* most tables have a few entries */
    LjmHeapRef x = e[k];
    uint32_t j = k;
    for (; j > 0 && entry_cmp(&e[j - 1], &x, (void *)g) > 0; j--) e[j] = e[j - 1];
    e[j] = x;
  }
}

/* Sorts each run of table entries (the references between named ones).
** The snapshot lists a table's hash part in its hash order, which a VM that
** seeds its string hashes changes from run to run; paths follow the first
** of equally good ones, so they would too, and so would the heap flame
** graph's frames. Named references (roots, upvalues, stack slots, the
** metatable) come in an order of the VM's structures: kept. */
static int canonical_order(LjmHeapGraph *g)
{
  for (uint32_t i = 0; i < g->nobj; i++) {
    uint32_t k = g->obj[i].first_edge, end = edge_end(g, i);
    while (k < end) {
      if (g->ref[k].kind == LJH_EDGE_NAME) {
        k++;
        continue;
      }
      uint32_t run = k;
      while (k < end && g->ref[k].kind != LJH_EDGE_NAME) k++;
      sort_entries(g, &g->ref[run], k - run);
    }
  }
  return 1;
}

/* -- Paths from the roots ------------------------------------------------------ */



int ljm_heapgraph_penalty(const LjmHeapGraph *g, const LjmHeapRef *r)
{
  if (r->from == 0)
    return name_is(g, r, "_G") || name_is(g, r, "registry") || name_is(g, r, "main thread") ||
           name_is(g, r, "current thread") ? 0 : 2;
  if (r->from == g->registry)
    return r->kind == LJH_EDGE_STRKEY && !strcmp(ljm_heapgraph_label(g, (uint32_t)r->what), "_LOADED")
               ? 0 : 2;
  if (g->obj[r->from].type == LJH_THREAD && r->kind == LJH_EDGE_NAME)
    return local_name(g, r) ? 1 : name_is(g, r, "env") ? 0 : 2;
  return 0;
}

/* Objects an anonymous or local step reaches, waiting for their round. */
typedef struct Seeds {
  uint32_t *e;  /* the references that reach them */
  uint32_t n, cap;
} Seeds;

static int seeds_push(Seeds *s, uint32_t e)
{
  if (!grow((void **)&s->e, &s->cap, s->n + 1, sizeof(*s->e))) return 0;
  s->e[s->n++] = e;
  return 1;
}

/* Each object's path: Dijkstra's order on (penalty, depth), in rounds of
** one penalty each. A round is a breadth-first search merged, by depth,
** with the objects steps of penalty 1 and 2 reached in the two rounds
** before it (each list already in depth order), so the whole is linear. */
static int paths(LjmHeapGraph *g)
{
  /* An object is queued once, and once more when a shorter path replaces
  ** the one it was queued by. */
  uint32_t *queue = malloc(2 * (size_t)g->nobj * sizeof(*queue));
  uint8_t *seen = calloc(g->nobj, 1);  /* 1 reached, 2 its references followed */
  Seeds pend[3][2];
  memset(pend, 0, sizeof(pend));
  int ok = 0;
  if (!queue || !seen) goto done;
  uint32_t head = 0, tail = 0;
  queue[tail++] = 0;
  seen[0] = 1;
  g->obj[0].depth = 0;
  g->obj[0].cost = 0;
  g->obj[0].parent = LJM_HEAP_NONE;
  for (uint64_t round = 0;; round++) {
    Seeds *a = &pend[round % 3][0], *b = &pend[round % 3][1];
    uint32_t ia = 0, ib = 0;
    uint16_t cost = round > 65535 ? 65535 : (uint16_t)round;
    for (;;) {
      /* The least deep of the three fronts; the queue's first on ties. */
      uint32_t v = LJM_HEAP_NONE, e = LJM_HEAP_NONE, best = UINT32_MAX;
      while (head < tail && seen[queue[head]] == 2) head++;
      if (head < tail) {
        v = queue[head];
        best = g->obj[v].depth;
      }
      Seeds *from = NULL;
      uint32_t *at = NULL;
      if (ia < a->n && g->obj[g->ref[a->e[ia]].from].depth + 1 < best) {
        from = a;
        at = &ia;
        best = g->obj[g->ref[a->e[ia]].from].depth + 1;
      }
      if (ib < b->n && g->obj[g->ref[b->e[ib]].from].depth + 1 < best) {
        from = b;
        at = &ib;
      }
      if (from) {
        e = from->e[(*at)++];
        v = g->ref[e].to;
        uint32_t d = g->obj[g->ref[e].from].depth + 1;
        /* Reached before by a path as good; or in this round by a longer one
        ** not followed yet, which this one replaces (its queue entry is then
        ** skipped, and the object queued again here). */
        if (seen[v] == 2 || (seen[v] == 1 && g->obj[v].depth <= d)) continue;
        g->obj[v].parent = e;
        g->obj[v].depth = g->obj[g->ref[e].from].depth + 1;
        g->obj[v].cost = cost;
        queue[tail++] = v;
      } else if (v == LJM_HEAP_NONE) {
        break;
      } else {
        head++;
      }
      seen[v] = 2;
      for (uint32_t k = g->obj[v].first_edge; k < edge_end(g, v); k++) {
        const LjmHeapRef *r = &g->ref[k];
        if (r->weak || seen[r->to]) continue;
        int pen = ljm_heapgraph_penalty(g, r);
        if (pen) {
          if (!seeds_push(&pend[(round + (unsigned)pen) % 3][pen - 1], k)) goto done;
          continue;
        }
        seen[r->to] = 1;
        g->obj[r->to].parent = k;
        g->obj[r->to].depth = g->obj[v].depth + 1;
        g->obj[r->to].cost = cost;
        queue[tail++] = r->to;
      }
    }
    a->n = b->n = 0;
    if (!pend[(round + 1) % 3][0].n && !pend[(round + 1) % 3][1].n && !pend[(round + 2) % 3][0].n &&
        !pend[(round + 2) % 3][1].n)
      break;
  }
  /* Parents come before their children in the queue. */
  if (!(g->head = malloc((size_t)g->nobj * sizeof(*g->head)))) goto done;
  for (uint32_t k = 0; k < g->nobj; k++) g->head[k] = k;  /* the unreached too */
  for (uint32_t k = 1; k < tail; k++) {
    uint32_t v = queue[k];
    if (g->obj[v].depth > LJM_HEAP_PATH_HEAD) g->head[v] = g->head[g->ref[g->obj[v].parent].from];
  }
  ok = 1;
done:
  for (int i = 0; i < 3; i++) {
    free(pend[i][0].e);
    free(pend[i][1].e);
  }
  free(seen);
  free(queue);
  return ok;
}

/* -- Predecessors -------------------------------------------------------------- */

int ljm_heapgraph_preds(const LjmHeapGraph *g, LjmHeapPreds *p)
{
  p->start = calloc((size_t)g->nobj + 1, sizeof(uint32_t));
  p->edge = NULL;
  uint32_t *pos = malloc(((size_t)g->nobj + 1) * sizeof(uint32_t));
  if (!p->start || !pos) goto fail;
  for (uint32_t e = 0; e < g->nref; e++)
    if (!g->ref[e].weak) p->start[g->ref[e].to + 1]++;
  for (uint32_t v = 0; v < g->nobj; v++) p->start[v + 1] += p->start[v];
  p->edge = malloc((size_t)p->start[g->nobj] * sizeof(uint32_t) + 1);
  if (!p->edge) goto fail;
  memcpy(pos, p->start, ((size_t)g->nobj + 1) * sizeof(uint32_t));
  for (uint32_t e = 0; e < g->nref; e++)
    if (!g->ref[e].weak) p->edge[pos[g->ref[e].to]++] = e;
  free(pos);
  return 0;
fail:
  free(pos);
  ljm_heapgraph_preds_free(p);
  return -1;
}

void ljm_heapgraph_preds_free(LjmHeapPreds *p)
{
  free(p->start);
  free(p->edge);
  p->start = p->edge = NULL;
}

/* -- Dominators (semi-NCA) ---------------------------------------------------- */

static int dominators(LjmHeapGraph *g)
{
  uint32_t n = g->nobj;
  size_t sz = (size_t)n * sizeof(uint32_t);
  uint32_t *pre = malloc(sz), *vert = malloc(sz), *dfspar = malloc(sz), *semi = malloc(sz);
  uint32_t *anc = malloc(sz), *stack = malloc(sz), *pos = malloc(sz);
  uint32_t *best = pos;  /* pos serves the search only, best what follows it */
  LjmHeapPreds p = {NULL, NULL};
  int ok = 0;
  if (!pre || !vert || !dfspar || !semi || !anc || !stack || !pos || ljm_heapgraph_preds(g, &p))
    goto done;
  memset(pre, 0xff, sz);
  /* Depth-first preorder over strong references. */
  uint32_t nv = 0, sp = 0;
  stack[sp++] = 0;
  pre[0] = nv;
  vert[nv++] = 0;
  dfspar[0] = LJM_HEAP_NONE;
  pos[0] = g->obj[0].first_edge;
  while (sp) {
    uint32_t v = stack[sp - 1];
    if (pos[v] == edge_end(g, v)) {
      sp--;
      continue;
    }
    const LjmHeapRef *r = &g->ref[pos[v]++];
    if (r->weak || pre[r->to] != LJM_HEAP_NONE) continue;
    pre[r->to] = nv;
    vert[nv++] = r->to;
    dfspar[r->to] = v;
    pos[r->to] = g->obj[r->to].first_edge;
    stack[sp++] = r->to;
  }
  /* Semidominators, in reverse preorder, with a path-compressed forest. */
  for (uint32_t i = 0; i < nv; i++) {
    uint32_t v = vert[i];
    semi[v] = i;
    anc[v] = LJM_HEAP_NONE;
    best[v] = v;
  }
  for (uint32_t i = nv - 1; i > 0; i--) {
    uint32_t w = vert[i];
    for (uint32_t k = p.start[w]; k < p.start[w + 1]; k++) {
      uint32_t v = g->ref[p.edge[k]].from, u;
      if (pre[v] == LJM_HEAP_NONE) continue;  /* its source is not reached either */
      if (anc[v] == LJM_HEAP_NONE) {
        u = v;
      } else {  /* eval(v): compress the path to the forest's root */
        uint32_t top = 0, x = v;
        while (anc[anc[x]] != LJM_HEAP_NONE) {
          stack[top++] = x;
          x = anc[x];
        }
        while (top) {
          x = stack[--top];
          if (semi[best[anc[x]]] < semi[best[x]]) best[x] = best[anc[x]];
          anc[x] = anc[anc[x]];
        }
        u = best[v];
      }
      if (semi[u] < semi[w]) semi[w] = semi[u];
    }
    anc[w] = dfspar[w];
  }
  /* Immediate dominators: the nearest common ancestor, in preorder. */
  for (uint32_t i = 1; i < nv; i++) {
    uint32_t w = vert[i], d = dfspar[w];
    while (pre[d] > semi[w]) d = g->obj[d].idom;
    g->obj[w].idom = d;
  }
  /* Retained sizes: children come after their dominator in preorder. No sum
  ** wraps: ljh_decode refuses sizes adding up to more than 2^62. */
  for (uint32_t i = 0; i < n; i++) g->obj[i].retained = g->obj[i].size;
  for (uint32_t i = nv - 1; i > 0; i--) {
    uint32_t w = vert[i];
    g->obj[g->obj[w].idom].retained += g->obj[w].retained;
  }
  ok = 1;
done:
  free(pre);
  free(vert);
  free(dfspar);
  free(semi);
  free(anc);
  free(stack);
  free(pos);
  ljm_heapgraph_preds_free(&p);
  return ok;
}

/* The registry: the root's reference of that name (for its _LOADED). */
static int find_registry(LjmHeapGraph *g)
{
  for (uint32_t e = g->obj[0].first_edge; e < edge_end(g, 0); e++)
    if (name_is(g, &g->ref[e], "registry") && g->obj[g->ref[e].to].type == LJH_TAB) {
      g->registry = g->ref[e].to;
      break;
    }
  return 1;
}

LjmStatus ljm_heapgraph_load(LjmHeapGraph *g, LjmInput *in, LjmDiag *diag)
{
  static const LjhCallbacks cb = {on_header, on_field, on_object};
  LjmDiag scratch;
  if (!diag) diag = &scratch;
  memset(g, 0, sizeof(*g));
  Loader ld;
  memset(&ld, 0, sizeof(ld));
  ld.g = g;
  LjmStatus st = ljh_decode(in, &cb, &ld, diag);
  /* The recorder's own buffers are in RSS and malloc's in use: the
  ** process figures are the program's without them. */
  if (g->recorder > g->malloc_in_use) g->recorder = g->malloc_in_use;
  g->malloc_in_use -= g->recorder;
  g->malloc_held = g->malloc_held > g->recorder ? g->malloc_held - g->recorder : 0;
  g->rss = g->rss > g->recorder_rss ? g->rss - g->recorder_rss : 0;
  int ok = !ld.oom && (!g->nobj || (resolve(&ld) && find_registry(g) && canonical_order(g) &&
                                      paths(g) && dominators(g)));
  if (!ok) {  /* a graph half resolved or analysed is no graph: drop it */
    ljm_heapgraph_free(g);
    snprintf(diag->msg, sizeof(diag->msg), "out of memory reading the snapshot");
    return LJM_ERROR;
  }
  return st;
}

void ljm_heapgraph_free(LjmHeapGraph *g)
{
  free(g->head);
  free(g->build);
  free(g->obj);
  free(g->ref);
  free(g->labels);
  memset(g, 0, sizeof(*g));
}

static int by_bytes(const void *a, const void *b)
{
  const LjmHeapType *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
  return strcmp(ljh_type_name(x->type), ljh_type_name(y->type));
}

int ljm_heapgraph_types(const LjmHeapGraph *g, LjmHeapType *out, uint64_t *objects,
                        uint64_t *bytes)
{
  LjmHeapType t[LJH_NTYPES];
  memset(t, 0, sizeof(t));
  *objects = *bytes = 0;
  for (uint32_t i = 1; i < g->nobj; i++) {
    LjmHeapType *x = &t[g->obj[i].type < LJH_NTYPES ? g->obj[i].type : 0];
    x->type = (LjhType)g->obj[i].type;
    x->count++;
    x->bytes += g->obj[i].size;
    (*objects)++;
    *bytes += g->obj[i].size;
  }
  int n = 0;
  for (int i = LJH_STR; i < LJH_NTYPES; i++)
    if (t[i].count) out[n++] = t[i];
  qsort(out, (size_t)n, sizeof(*out), by_bytes);
  return n;
}

static const LjmHeapGraph *sort_graph;

static int by_retained(const void *a, const void *b)
{
  const LjmHeapObj *x = &sort_graph->obj[*(const uint32_t *)a];
  const LjmHeapObj *y = &sort_graph->obj[*(const uint32_t *)b];
  if (x->retained != y->retained) return x->retained < y->retained ? 1 : -1;
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Whether object a comes after object b in the retainers' order. */
static int after(const LjmHeapGraph *g, uint32_t a, uint32_t b)
{
  const LjmHeapObj *x = &g->obj[a], *y = &g->obj[b];
  if (x->retained != y->retained) return x->retained < y->retained;
  if (x->depth != y->depth) return x->depth > y->depth;
  return a > b;
}

/* Sifts heap[i] down a heap of n whose root is the last in order. */
static void sift(const LjmHeapGraph *g, uint32_t *heap, uint32_t n, uint32_t i)
{
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && after(g, heap[l], heap[m])) m = l;
    if (r < n && after(g, heap[r], heap[m])) m = r;
    if (m == i) return;
    uint32_t t = heap[i];
    heap[i] = heap[m];
    heap[m] = t;
    i = m;
  }
}

uint32_t ljm_heapgraph_top_retainers(const LjmHeapGraph *g, uint32_t *out, uint32_t max)
{
  return ljm_heapgraph_top_retainers_of(g, out, max, NULL, NULL);
}

uint32_t ljm_heapgraph_top_retainers_of(const LjmHeapGraph *g, uint32_t *out, uint32_t max,
                                        int (*keep)(void *ud, uint32_t i), void *ud)
{
  /* The best max in a heap whose root is the worst of them: n log max, not
  ** a sort of every object (10 M of them for --top 20). */
  uint32_t n = 0;
  for (uint32_t i = 1; i < g->nobj && max; i++) {
    if (g->obj[i].type == LJH_INTERNAL || g->obj[i].idom == LJM_HEAP_NONE) continue;
    if (keep && !keep(ud, i)) continue;
    if (n < max) {
      out[n++] = i;
      if (n == max)
        for (uint32_t k = n / 2; k-- > 0;) sift(g, out, n, k);
    } else if (after(g, out[0], i)) {
      out[0] = i;
      sift(g, out, n, 0);
    }
  }
  sort_graph = g;
  qsort(out, n, sizeof(*out), by_retained);
  return n;
}
