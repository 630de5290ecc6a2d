/* ljm_heapflame.c -- a heap snapshot as an event model: the heap as a
** flame graph (ljm_model_load.h, ljm_model_load_heap).
**
** Every object is one allocation, live at the end, whose call stack is its
** place in the dominator tree: the frames from the root down to it are the
** steps of its path below each dominator ("_G", "sessions", "[1..50]",
** "buf"). So a frame's total is what the objects under it retain, and the
** whole adds up to the snapshot's bytes. Elements of one array (integer
** keys of one table) that have the same type name are one frame, their
** subtrees merged by frame name: 5000 sessions make one "[1..5000]", not
** 5000 slivers. Below FLAME_DEPTH frames, all is one frame, "(deeper)".
** What the JIT compiler holds is one frame at the root, "JIT compiler":
** its traces in one frame below it, its buffers each in one.
** The model is fed through the callbacks the decoder calls, each frame name
** being a "C function" at an address of its own.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_heapgraph.h"
#include "model/ljm_hmap.h"
#include "model/ljm_model_int.h"
#include "model/ljm_strtab.h"

#define LABEL_STEPS 4     /* path steps a frame name shows at most */
/* Frames deeper than this are one, "(deeper)": a million-element list would
** otherwise be a million frames deep, and each of its stacks printed whole
** (folded, Markdown) a line of hundreds of frames per object. */
#define FLAME_DEPTH 64
#define LABEL_MAX 256

/* The id of frame name s (model/ljm_strtab.h), added when new;
** LJM_HMAP_NONE out of memory. */
static uint32_t name_id(LjmStrtab *t, const char *s)
{
  uint32_t id = ljm_strtab_intern(t, s, strlen(s));
  return id == UINT32_MAX ? LJM_HMAP_NONE : id;
}

/* A frame of the graph. */
typedef struct Frame {
  uint32_t parent;      /* LJM_HMAP_NONE: outermost */
  uint32_t name;        /* name id (a folded array: its key, "[]" and a type name) */
  uint64_t lo, hi;      /* a folded array: the indexes it holds */
  uint32_t depth;       /* 1: outermost */
  uint8_t folded;
} Frame;

typedef struct Flame {
  LjmStrtab names;
  Frame *f;
  uint32_t n, cap;
  LjmHmap by_key;       /* parent << 32 | name -> frame */
  uint32_t *of;         /* object -> its frame */
  int oom;
} Flame;

/* The frame called name under parent (LJM_HMAP_NONE: outermost). */
static uint32_t frame_of(Flame *fl, uint32_t parent, uint32_t name)
{
  uint64_t key = (uint64_t)parent << 32 | name;
  uint32_t id = ljm_hmap_get(&fl->by_key, key);
  if (id != LJM_HMAP_NONE) return id;
  if (fl->n == fl->cap) {
    uint32_t nc = fl->cap ? fl->cap * 2 : 1024;
    Frame *nf = nc > fl->cap ? realloc(fl->f, (size_t)nc * sizeof(*nf)) : NULL;
    if (!nf) return LJM_HMAP_NONE;
    fl->f = nf;
    fl->cap = nc;
  }
  if (fl->n == LJM_HMAP_NONE - 1 || ljm_hmap_put(&fl->by_key, key, fl->n)) return LJM_HMAP_NONE;
  uint32_t depth = parent == LJM_HMAP_NONE ? 1 : fl->f[parent].depth + 1;
  fl->f[fl->n] = (Frame){ parent, name, UINT64_MAX, 0, depth, 0 };
  return fl->n++;
}

/* The objects parents first: the dominator tree breadth first, then the
** objects no strong path reaches. */
static uint32_t *dominator_order(const LjmHeapGraph *g)
{
  uint32_t n = g->nobj;
  uint32_t *start = calloc((size_t)n + 2, sizeof(*start));
  uint32_t *child = malloc(((size_t)n + 1) * sizeof(*child));
  uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));
  if (!start || !child || !order) {
    free(start);
    free(child);
    free(order);
    return NULL;
  }
  for (uint32_t v = 1; v < n; v++)
    if (g->obj[v].idom != LJM_HEAP_NONE) start[g->obj[v].idom + 2]++;
  for (uint32_t v = 0; v < n; v++) start[v + 2] += start[v + 1];
  for (uint32_t v = 1; v < n; v++)
    if (g->obj[v].idom != LJM_HEAP_NONE) child[start[g->obj[v].idom + 1]++] = v;
  /* start[v] .. start[v + 1]: v's children. */
  uint32_t head = 0, tail = 0;
  order[tail++] = 0;
  while (head < tail) {
    uint32_t v = order[head++];
    for (uint32_t k = start[v]; k < start[v + 1]; k++) order[tail++] = child[k];
  }
  for (uint32_t v = 1; v < n; v++)
    if (g->obj[v].idom == LJM_HEAP_NONE) order[tail++] = v;
  free(start);
  free(child);
  return order;
}

/* What the JIT compiler holds, one frame at the root: its traces (each
** with its machine code and snapshots) in one frame below it, its buffers
** by name. A JIT-heavy program holds thousands of traces: one frame each
** would be thousands of slivers at the root. */
#define JIT_FRAME "JIT compiler"
#define JIT_TRACES "traces"

/* Is v, held by the root, the JIT's: a trace, or one of its buffers? */
static int jit_held(const LjmHeapGraph *g, uint32_t v)
{
  static const char *const bufs[] = {"trace array", "IR buffer", "snapshot buffers"};
  if (g->obj[v].type == LJH_TRACE) return 1;
  if (g->obj[v].type != LJH_INTERNAL) return 0;
  const char *l = ljm_heapgraph_label(g, v);
  for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
    if (!strcmp(l, bufs[i])) return 1;
  return 0;
}

/* Places object v (its dominator's frame known) in the graph. */
static void place(Flame *fl, const LjmHeapGraph *g, uint32_t v, uint32_t *memo)
{
  char label[LABEL_MAX];
  uint32_t d = g->obj[v].idom, parent = d == 0 || d == LJM_HEAP_NONE ? LJM_HMAP_NONE : fl->of[d];
  if (d == 0 && jit_held(g, v)) {
    uint32_t jn = name_id(&fl->names, JIT_FRAME);
    uint32_t jf = jn == LJM_HMAP_NONE ? LJM_HMAP_NONE : frame_of(fl, LJM_HMAP_NONE, jn);
    uint32_t tn = name_id(&fl->names, g->obj[v].type == LJH_TRACE ? JIT_TRACES
                                                                   : ljm_heapgraph_label(g, v));
    uint32_t f = jf == LJM_HMAP_NONE || tn == LJM_HMAP_NONE ? LJM_HMAP_NONE
                                                            : frame_of(fl, jf, tn);
    if (f == LJM_HMAP_NONE) fl->oom = 1;
    else fl->of[v] = f;
    return;
  }
  const LjmHeapRef *r = g->obj[v].parent != LJM_HEAP_NONE ? &g->ref[g->obj[v].parent] : NULL;
  int elem = r && d != 0 && d != LJM_HEAP_NONE && r->from == d && r->kind == LJH_EDGE_INDEX;
  if (d == LJM_HEAP_NONE)
    snprintf(label, sizeof(label), "(not strongly reachable)");
  else if (elem)  /* an array element: all of one type share a frame */
    snprintf(label, sizeof(label), "[]%s", ljm_heapgraph_type_name(g, v, memo));
  else
    ljm_heapgraph_path_below(g, v, d, LABEL_STEPS, label, sizeof(label));
  if (d == 0 && !strncmp(label, "TRACE [", 7)) {
    /* Reached first through a trace's constants: under the JIT's frame, by
    ** what it is rather than by trace numbers, which change from run to run. */
    uint32_t jn = name_id(&fl->names, JIT_FRAME);
    parent = jn == LJM_HMAP_NONE ? LJM_HMAP_NONE : frame_of(fl, LJM_HMAP_NONE, jn);
    if (parent == LJM_HMAP_NONE) {
      fl->oom = 1;
      return;
    }
    snprintf(label, sizeof(label), "held by traces: %s", ljm_heapgraph_type_name(g, v, memo));
  }
  if (parent != LJM_HMAP_NONE && fl->f[parent].depth >= FLAME_DEPTH) {
    elem = 0;  /* everything deeper in one frame below the last */
    snprintf(label, sizeof(label), "(deeper)");
  }
  uint32_t name = name_id(&fl->names, label);
  uint32_t f = name == LJM_HMAP_NONE ? LJM_HMAP_NONE
               : parent != LJM_HMAP_NONE && fl->f[parent].depth > FLAME_DEPTH ? parent
                                                                             : frame_of(fl, parent, name);
  if (f == LJM_HMAP_NONE) {
    fl->oom = 1;
    return;
  }
  if (elem) {
    Frame *x = &fl->f[f];
    x->folded = 1;
    if (r->what < x->lo) x->lo = r->what;
    if (r->what > x->hi) x->hi = r->what;
  }
  fl->of[v] = f;
}

/* Folded arrays get their names: "[1..5000]", or "[7]" for one index. */
static void name_folded(Flame *fl)
{
  char label[64];
  for (uint32_t i = 0; i < fl->n && !fl->oom; i++) {
    Frame *x = &fl->f[i];
    if (!x->folded) continue;
    if (x->lo == x->hi) snprintf(label, sizeof(label), "[%" PRIu64 "]", x->lo);
    else snprintf(label, sizeof(label), "[%" PRIu64 "..%" PRIu64 "]", x->lo, x->hi);
    uint32_t name = name_id(&fl->names, label);
    if (name == LJM_HMAP_NONE) fl->oom = 1;
    else x->name = name;
  }
}

/* A frame name's address as a C function: one per name. */
static uint64_t name_addr(uint32_t name)
{
  return ((uint64_t)name + 1) << 4;
}

static void flame_free(Flame *fl)
{
  ljm_strtab_free(&fl->names);
  free(fl->f);
  ljm_hmap_free(&fl->by_key);
  free(fl->of);
}

LjmStatus ljm_model_load_heap(LjmModel *m, const LjmHeapGraph *g, const char *path, LjmDiag *diag)
{
  LjmDiag scratch;
  if (!diag) diag = &scratch;
  memset(diag, 0, sizeof(*diag));
  Flame fl;
  memset(&fl, 0, sizeof(fl));
  uint32_t *order = dominator_order(g);
  uint32_t *memo = calloc((size_t)g->nobj + 1, sizeof(*memo));
  fl.of = malloc(((size_t)g->nobj + 1) * sizeof(*fl.of));
  if (!order || !memo || !fl.of || ljm_hmap_init(&fl.by_key) || ljm_strtab_init(&fl.names))
    fl.oom = 1;
  for (uint32_t k = 1; k < g->nobj && !fl.oom; k++) place(&fl, g, order[k], memo);
  name_folded(&fl);
  free(memo);
  ljm_model_begin(m, path);
  m->info.snapshot = 1;
  const LjmCallbacks *cb = ljm_model_callbacks();
  if (!fl.oom) {
    cb->on_versions(m, 3, 3);
    cb->on_flags(m, LJM_EXT_STACKS);
    /* Each name once, as a C function; then the frames, parents first. */
    uint8_t *used = calloc((size_t)fl.names.n + 1, 1);
    if (!used) fl.oom = 1;
    for (uint32_t i = 0; i < fl.n && used; i++) {
      uint32_t nm = fl.f[i].name;
      if (!used[nm]) {
        const LjmStrEntry *e = ljm_strtab_get(&fl.names, nm);
        cb->on_cfunc(m, name_addr(nm), e->s, e->len, 0);
        used[nm] = 1;
      }
      LjmRawFrame fr = { LJM_FRAME_C, name_addr(nm), 0, 0 };
      cb->on_stack_node(m, i + 1, fl.f[i].parent == LJM_HMAP_NONE ? 0 : fl.f[i].parent + 1, &fr);
    }
    free(used);
    /* Every object an allocation in its frame, at an address of its own. */
    for (uint32_t k = 1; k < g->nobj && !fl.oom && !cb->stopped(m); k++) {
      uint32_t v = order[k], f = fl.of[v];
      LjmRawEvent ev;
      memset(&ev, 0, sizeof(ev));
      ev.kind = LJM_RAW_ALLOC;
      ev.loc.source = LJM_SRC_C;
      ev.loc.addr = name_addr(fl.f[f].name);
      ev.naddr = ((uint64_t)v + 1) << 4;
      ev.nsize = g->obj[v].size;
      ev.stack = f + 1;
      ev.time = LJM_NO_TIME;
      cb->on_event(m, &ev);
    }
  }
  free(order);
  if (fl.oom) m->oom = 1;
  flame_free(&fl);
  return ljm_model_end(m, LJM_OK, diag);
}
