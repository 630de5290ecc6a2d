/* ljm_heapgraph.c -- the reference graph of a heap snapshot, its
** dominator tree (semi-NCA: Georgiadis, Tarjan and Werneck's variant of
** Lengauer-Tarjan, "Finding dominators in practice", 2006) and shortest
** paths (breadth first from the root). */
#include "ljm_heapgraph.h"
#include "ljm_hmap.h"

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

static uint32_t edge_end(const LjmHeapGraph *g, uint32_t i)
{
  return i + 1 < g->nobj ? g->obj[i + 1].first_edge : g->nref;
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

static int name_is(const LjmHeapGraph *g, const LjmHeapRef *r, const char *name)
{
  return r->kind == LJH_EDGE_NAME && !strcmp(g->labels + r->what, name);
}

/* "... local NAME": a named local of a thread's frame (rec_snap.c). */
static const char *local_name(const LjmHeapGraph *g, const LjmHeapRef *r)
{
  if (r->kind != LJH_EDGE_NAME || g->obj[r->from].type != LJH_THREAD) return NULL;
  const char *l = strstr(g->labels + r->what, " local ");
  return l ? l + 7 : NULL;
}

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

/* -- Paths in Lua notation --------------------------------------------------- */

static int is_name(const char *s)
{
  static const char *const reserved[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
    "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
  };
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (const char *p = s; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
  for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
    if (!strcmp(s, reserved[i])) return 0;
  return 1;
}

/* One step of a path: the reference e, as it reads after its source. */
static void step(const LjmHeapGraph *g, const LjmHeapRef *r, int first, char *out, size_t len)
{
  switch (r->kind) {
  case LJH_EDGE_NAME: {
    const char *name = g->labels + r->what;
    if (first || name[0] == '[') snprintf(out, len, "%s", name);
    else if (!strcmp(name, "value") && g->obj[r->from].type == LJH_UPVAL) out[0] = '\0';
    else snprintf(out, len, "<%s>", name);
    break;
  }
  case LJH_EDGE_STRKEY: {
    const char *k = ljm_heapgraph_label(g, (uint32_t)r->what);
    if (is_name(k)) snprintf(out, len, ".%s", k);
    else snprintf(out, len, "[\"%s\"]", k);
    break;
  }
  case LJH_EDGE_INDEX:
    snprintf(out, len, "[%llu]", (unsigned long long)r->what);
    break;
  case LJH_EDGE_OBJKEY: {  /* as tostring() shows the key: objects never move */
    const LjmHeapObj *k = &g->obj[r->what];
    snprintf(out, len, "[%s: 0x%llx]", ljh_type_name((LjhType)k->type), (unsigned long long)k->addr);
    break;
  }
  default: {  /* the key object itself: a string by its text */
    const LjmHeapObj *k = &g->obj[r->to];
    if (k->type == LJH_STR)
      snprintf(out, len, "<key \"%s\">", ljm_heapgraph_label(g, r->to));
    else
      snprintf(out, len, "<key %s: 0x%llx>", ljh_type_name((LjhType)k->type), (unsigned long long)k->addr);
  }
  }
}

/* The references of object i's shortest path into edges, object first;
** returns how many (its depth). */
static uint32_t chain(const LjmHeapGraph *g, uint32_t i, uint32_t *edges)
{
  uint32_t n = 0, depth = g->obj[i].depth;
  for (uint32_t v = i; v != 0 && n < depth; v = g->ref[g->obj[v].parent].from)
    edges[n++] = g->obj[v].parent;
  return n;
}

/* Copies piece after buf[0..*at) if it fits in len (with the NUL). */
static int append(char *buf, size_t len, size_t *at, const char *piece)
{
  size_t m = strlen(piece);
  if (*at + m + 1 > len) return 0;
  memcpy(buf + *at, piece, m + 1);
  *at += m;
  return 1;
}

#define ELIDE_MIN 128  /* a buffer this short is cut instead */

/* A path's references, object first: all n of them (tail), or only its two
** ends (tail: the steps nearest the object; head: those nearest the root,
** both object first) around steps never read. */
typedef struct Steps {
  const uint32_t *tail, *head;
  uint32_t ntail, nhead, n;
} Steps;

/* Whether step x was read (empty steps, an upvalue's value, could run
** into the gap otherwise). */
static int known(const Steps *p, uint32_t x)
{
  return x < p->ntail || x >= p->n - p->nhead;
}

static uint32_t edge_at(const Steps *p, uint32_t x)
{
  return x < p->ntail ? p->tail[x] : p->head[x - (p->n - p->nhead)];
}

/* Whether r is the registry's _LOADED (package.loaded). */
static int is_loaded(const LjmHeapGraph *g, const LjmHeapRef *r)
{
  return g->registry && r->from == g->registry && r->kind == LJH_EDGE_STRKEY &&
         !strcmp(ljm_heapgraph_label(g, (uint32_t)r->what), "_LOADED");
}

/* Step x of p as it reads; the registry's _LOADED right after the root
** reads as package.loaded, the name Lua code knows it by. */
static void step_at(const LjmHeapGraph *g, const Steps *p, uint32_t x, char *out, size_t len)
{
  const LjmHeapRef *r = &g->ref[edge_at(p, x)];
  if (x + 1 == p->n && p->n >= 2 && r->from == 0 && known(p, x - 1) && r->to == g->registry &&
      is_loaded(g, &g->ref[edge_at(p, x - 1)])) {
    snprintf(out, len, "package.loaded");
    return;
  }
  if (x + 2 == p->n && known(p, x + 1) && g->ref[edge_at(p, x + 1)].from == 0 && is_loaded(g, r)) {
    out[0] = '\0';
    return;
  }
  step(g, r, x + 1 == p->n, out, len);
}

/* Writes the path p (object first, root last) into buf, root first, in Lua
** notation. A path longer than buf keeps its root end and its
** object end, the steps between counted: "_G.a.next<... 299850 steps ...>.next.v".
** Costs O(len), not O(n): a path may be a million steps deep. */
static void render(const LjmHeapGraph *g, const Steps *p, char *buf, size_t len)
{
  uint32_t n = p->n;
  size_t at = 0;
  char piece[160];
  uint32_t k = n;  /* edges[k - 1] is the next step from the root end */
  buf[0] = '\0';
  for (; k > 0 && known(p, k - 1); k--) {
    step_at(g, p, k - 1, piece, sizeof(piece));
    if (!append(buf, len, &at, piece)) break;
  }
  if (k == 0) return;
  if (len < ELIDE_MIN) {  /* too short for both ends: cut */
    size_t m = strlen(piece);
    if (at + m + 1 > len) m = len - 1 - at;
    memcpy(buf + at, piece, m);
    buf[at + m] = '\0';
    return;
  }
  /* The root end in the first half. */
  at = 0;
  buf[0] = '\0';
  for (k = n; k > 0 && known(p, k - 1); k--) {
    step_at(g, p, k - 1, piece, sizeof(piece));
    if (!append(buf, len / 2, &at, piece)) break;
  }
  /* The object end in what is left after the marker: steps edges[t - 1 .. 0]. */
  char mark[48];
  size_t room = len - 1 - at - sizeof(mark), used = 0;
  uint32_t t = 0;
  for (; t < k && known(p, t); t++) {
    step_at(g, p, t, piece, sizeof(piece));
    size_t m = strlen(piece);
    if (used + m > room) break;
    used += m;
  }
  snprintf(mark, sizeof(mark), "<... %u steps ...>", (unsigned)(k - t));
  append(buf, len, &at, mark);
  while (t > 0) {
    t--;
    step_at(g, p, t, piece, sizeof(piece));
    append(buf, len, &at, piece);
  }
}

/* Writes the path of object v, then step e when it is not LJM_HEAP_NONE. */
static void path_of(const LjmHeapGraph *g, uint32_t v, uint32_t e, char *buf, size_t len)
{
  uint32_t x = e != LJM_HEAP_NONE, d = g->obj[v].depth + x;
  /* At most LJM_HEAP_PATH_HEAD steps of each end: buf shows fewer. */
  if (len > LJM_HEAP_PATH_HEAD || d <= 2 * LJM_HEAP_PATH_HEAD) {
    uint32_t *edges = malloc((size_t)d * sizeof(*edges) + 1);
    if (!edges) return;
    if (x) edges[0] = e;
    Steps p = { edges, NULL, x + chain(g, v, edges + x), 0, 0 };
    p.n = p.ntail;
    render(g, &p, buf, len);
    free(edges);
    return;
  }
  uint32_t *tail = malloc(2 * (size_t)LJM_HEAP_PATH_HEAD * sizeof(*tail));
  if (!tail) return;
  Steps p = { tail, tail + LJM_HEAP_PATH_HEAD, 0, 0, d };
  if (x) tail[p.ntail++] = e;
  for (; p.ntail < LJM_HEAP_PATH_HEAD; v = g->ref[g->obj[v].parent].from)
    tail[p.ntail++] = g->obj[v].parent;
  p.nhead = chain(g, g->head[v], tail + LJM_HEAP_PATH_HEAD);
  render(g, &p, buf, len);
  free(tail);
}

const char *ljm_heapgraph_path(const LjmHeapGraph *g, uint32_t i, char *buf, size_t len)
{
  if (!len) return buf;
  buf[0] = '\0';
  if (i == 0) snprintf(buf, len, "(root)");
  else if (g->obj[i].parent == LJM_HEAP_NONE) snprintf(buf, len, "(only weakly reachable)");
  else path_of(g, i, LJM_HEAP_NONE, buf, len);
  return buf;
}

const char *ljm_heapgraph_path_via(const LjmHeapGraph *g, uint32_t e, char *buf, size_t len)
{
  if (!len) return buf;
  buf[0] = '\0';
  path_of(g, g->ref[e].from, e, buf, len);
  return buf;
}

const char *ljm_heapgraph_path_below(const LjmHeapGraph *g, uint32_t i, uint32_t a, uint32_t max,
                                     char *buf, size_t len)
{
  uint32_t edges[16], n = 0, v = i;
  if (!len) return buf;
  buf[0] = '\0';
  if (max > 16) max = 16;
  while (v != a && v != 0 && g->obj[v].parent != LJM_HEAP_NONE && n < max) {
    edges[n++] = g->obj[v].parent;
    v = g->ref[g->obj[v].parent].from;
  }
  int more = v != a;
  size_t at = 0;
  if (more) at = (size_t)snprintf(buf, len, "...");
  if (at >= len) return buf;
  Steps p = { edges, NULL, n, 0, n };
  render(g, &p, buf + at, len - at);
  if (buf[at] == '.') memmove(buf + at, buf + at + 1, strlen(buf + at));
  return buf;
}

/* Whether object v has a strong path (the root has the empty one). */
static int reached(const LjmHeapGraph *g, uint32_t v)
{
  return v == 0 || g->obj[v].parent != LJM_HEAP_NONE;
}

/* A retainer's place in the order: the penalty and length of the path
** through it, then its index; computed once per reference (a penalty may
** read a long name). */
static uint64_t retainer_key(const LjmHeapGraph *g, uint32_t e)
{
  const LjmHeapRef *r = &g->ref[e];
  uint64_t cost = (uint64_t)g->obj[r->from].cost + (uint64_t)ljm_heapgraph_penalty(g, r);
  return cost << 32 | g->obj[r->from].depth;  /* cost < 2^17 */
}

uint32_t ljm_heapgraph_retainers(const LjmHeapGraph *g, const LjmHeapPreds *p, uint32_t i,
                                 uint32_t *out, uint32_t max)
{
  if (i == 0 || i >= g->nobj || g->obj[i].parent == LJM_HEAP_NONE) return 0;
  uint32_t n = 0, kept = 0, own = g->obj[i].parent;
  uint64_t *key = max > 1 ? malloc((size_t)max * sizeof(*key)) : NULL;
  if (max) out[kept++] = own;
  for (uint32_t k = p->start[i]; k < p->start[i + 1]; k++) {
    uint32_t e = p->edge[k];
    if (!reached(g, g->ref[e].from)) continue;
    n++;
    if (e == own || !key) continue;
    /* Insertion into the best max - 1 after the path's own: by key, then
    ** by index (edges come in index order: a later one goes after). */
    uint64_t ke = retainer_key(g, e);
    uint32_t at = kept;
    while (at > 1 && ke < key[at - 1]) at--;
    if (at >= max) continue;
    if (kept < max) kept++;
    memmove(out + at + 1, out + at, (size_t)(kept - 1 - at) * sizeof(*out));
    memmove(key + at + 1, key + at, (size_t)(kept - 1 - at) * sizeof(*key));
    out[at] = e;
    key[at] = ke;
  }
  free(key);
  return n;
}

/* A table's or userdata's metatable __name, or NULL; memo as
** ljm_heapgraph_type_name has it (0 not looked at, 1 none, else the
** string's index + 2). */
static const char *metatable_name(const LjmHeapGraph *g, uint32_t i, uint32_t *memo)
{
  for (uint32_t e = g->obj[i].first_edge; e < edge_end(g, i); e++) {
    const LjmHeapRef *r = &g->ref[e];
    if (!name_is(g, r, "metatable")) continue;
    uint32_t mt = r->to, found = 1;
    if (memo && memo[mt]) return memo[mt] > 1 ? ljm_heapgraph_label(g, memo[mt] - 2) : NULL;
    for (uint32_t k = g->obj[mt].first_edge; k < edge_end(g, mt); k++) {
      const LjmHeapRef *m = &g->ref[k];
      if (m->kind == LJH_EDGE_STRKEY && g->obj[m->to].type == LJH_STR &&
          !strcmp(ljm_heapgraph_label(g, (uint32_t)m->what), "__name")) {
        found = m->to + 2;
        break;
      }
    }
    if (memo) memo[mt] = found;
    return found > 1 ? ljm_heapgraph_label(g, found - 2) : NULL;
  }
  return NULL;
}

const char *ljm_heapgraph_type_name(const LjmHeapGraph *g, uint32_t i, uint32_t *memo)
{
  const char *mt = NULL;
  if (g->obj[i].type == LJH_TAB || g->obj[i].type == LJH_UDATA) mt = metatable_name(g, i, memo);
  return mt && *mt ? mt : ljh_type_name((LjhType)g->obj[i].type);
}

/* The name step r gives what it reaches: a string key, a local's or an
** upvalue's name, or NULL. */
static const char *step_name(const LjmHeapGraph *g, const LjmHeapRef *r)
{
  if (r->kind == LJH_EDGE_STRKEY) return ljm_heapgraph_label(g, (uint32_t)r->what);
  const char *l = local_name(g, r);
  if (l) return l;
  if (r->kind == LJH_EDGE_NAME && !strncmp(g->labels + r->what, "upvalue ", 8)) {
    const char *u = g->labels + r->what + 8;
    return *u >= '0' && *u <= '9' ? NULL : u;  /* "upvalue 3": no name */
  }
  return NULL;
}

const char *ljm_heapgraph_func_name(const LjmHeapGraph *g, uint32_t i, char *buf, size_t len)
{
  if (!len) return buf;
  buf[0] = '\0';
  if (i == 0 || i >= g->nobj || g->obj[i].parent == LJM_HEAP_NONE) return buf;
  const LjmHeapRef *r = &g->ref[g->obj[i].parent];
  /* Through an upvalue: its value's name is the upvalue's. */
  if (g->obj[r->from].type == LJH_UPVAL && g->obj[r->from].parent != LJM_HEAP_NONE)
    r = &g->ref[g->obj[r->from].parent];
  uint32_t t = r->from;
  const LjmHeapRef *up = t && g->obj[t].parent != LJM_HEAP_NONE ? &g->ref[g->obj[t].parent] : NULL;
  if (r->kind == LJH_EDGE_INDEX) {  /* package.loaders[2]: the table's key and the index */
    const char *tn = up ? step_name(g, up) : NULL;
    if (tn) snprintf(buf, len, "%s[%llu]", tn, (unsigned long long)r->what);
    return buf;
  }
  const char *name = step_name(g, r);
  if (!name) return buf;
  /* The table's own key, unless the table is _G or package.loaded. */
  if (r->kind == LJH_EDGE_STRKEY && up && up->kind == LJH_EDGE_STRKEY && up->from != 0 &&
      !is_loaded(g, up) && *ljm_heapgraph_label(g, (uint32_t)up->what))
    snprintf(buf, len, "%s.%s", ljm_heapgraph_label(g, (uint32_t)up->what), name);
  else
    snprintf(buf, len, "%s", name);
  return buf;
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
        Steps sp = { edge, NULL, l, 0, l };
        render(g, &sp, buf, 4096);
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
