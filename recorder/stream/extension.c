/* extension.c -- the extension items of an extended stream. */
#include "recorder/stream/extension.h"

#include <errno.h>

#include "recorder/vm/func_names.h"
#include <stdlib.h>
#include <string.h>

/* -- Definition names (0x25) --------------------------------------------- */

/* Names waiting at most: a program that loads code over and over defines
** functions it never calls; past this, their names are dropped. */
#define DEFNAMES_MAX (1u << 20)

/* A name waiting for its prototype's announcement. */
typedef struct DefName {
  uint64_t id;               /* the prototype's identity when named */
  size_t len;
  char name[];
} DefName;

static void defnames_clear(RecExt *x)
{
  size_t i;
  if (!x->dnames.e) return;
  for (i = 0; i <= x->dnames.mask; i++)
    if (x->dnames.e[i].key) free((void *)(uintptr_t)x->dnames.e[i].val);
  rec_map_clear(&x->dnames);
}

static uint32_t uleb_len(uint64_t v)
{
  uint32_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/* 0x25 len proto name. */
static void put_defname(RecStream *s, const GCproto *pt, const char *name, size_t len)
{
  RecBuf *b = &s->out;
  uint64_t a = (uint64_t)(uintptr_t)pt;
  rec_buf_need(b, 24);
  rec_buf_byte(b, REC_IT_DEFNAME);
  rec_buf_uleb(b, uleb_len(a) + len);
  rec_buf_uleb(b, a);
  rec_buf_raw(b, name, len);
}

/* rec_def_names' callback: the name now if the stream knows the child,
** else when it announces it. */
static void on_defname(void *ud, const GCproto *child, const char *name, size_t len)
{
  RecStream *s = ud;
  RecExt *x = s->ext;
  uint64_t key = (uint64_t)(uintptr_t)child, id = rec_lj_proto_id(child);
  RecMapEntry *e = rec_map_get(&s->protos, key);
  DefName *d;
  if (e && e->val == id) {
    put_defname(s, child, name, len);
    return;
  }
  if (x->dnames.n >= DEFNAMES_MAX && !rec_map_get(&x->dnames, key)) return;
  if (!(d = malloc(sizeof(*d) + len))) return;
  d->id = id;
  d->len = len;
  memcpy(d->name, name, len);
  if ((e = rec_map_get(&x->dnames, key))) {
    free((void *)(uintptr_t)e->val);
    e->val = (uint64_t)(uintptr_t)d;
  } else if (rec_map_put(&x->dnames, key, (uint64_t)(uintptr_t)d)) {
    free(d);
  }
}

void rec_ext_proto(RecStream *s, const GCproto *pt)
{
  RecExt *x = s->ext;
  uint64_t key = (uint64_t)(uintptr_t)pt;
  RecMapEntry *e = x->dnames.n ? rec_map_get(&x->dnames, key) : NULL;
  if (e) {
    DefName *d = (DefName *)(uintptr_t)e->val;
    if (d->id == rec_lj_proto_id(pt)) put_defname(s, pt, d->name, d->len);
    free(d);
    rec_map_del(&x->dnames, key);
  }
  rec_def_names(pt, on_defname, s);
}

void rec_ext_protos(RecStream *s, global_State *g)
{
  GCobj *o;
  for (o = gcref(g->gc.root); o; o = gcref(o->gch.nextgc))
    if (o->gch.gct == (uint8_t)~LJ_TPROTO && !isdead(g, o))  /* a dead one's strings may be gone */
      rec_def_names(&o->pt, on_defname, s);
}

/* The extension at the standard stream's seams (stream/standard.h). */
static void ext_start(RecStream *s)
{
  s->ext->t0 = rec_time_now_ns();  /* the symtab is at time 0 */
}

static void ext_begin(RecStream *s, global_State *g)
{
  rec_ext_begin(s);
  rec_ext_protos(s, g);
}

static const RecStreamHooks ext_hooks = {ext_start, ext_begin, rec_ext_proto, rec_ext_end,
                                         rec_ext_free};

int rec_ext_init(RecStream *s, uint32_t depth)
{
  RecExt *x = calloc(1, sizeof(*x));
  if (!x) return ENOMEM;
  x->sel = UINT32_MAX;
  x->depth = depth;
  x->tk.fd = -1;
  rec_map_init(&x->dnames);
  s->ext = x;
  x->type_cur = REC_TYPE_INTERNAL;
  s->ext_flags = (uint8_t)(REC_EXT_TIME | REC_EXT_TYPES | (depth ? REC_EXT_STACKS : 0));
  s->hooks = &ext_hooks;
  return 0;
}

void rec_ext_free(RecStream *s)
{
  RecExt *x = s->ext;
  if (!x) return;
  rec_ticker_stop(&x->tk);
  free(x->tab);
  free(x->nid);
  defnames_clear(x);
  rec_map_free(&x->dnames);
  free(x);
  s->ext = NULL;
  s->hooks = NULL;
  s->ext_flags = 0;
}

/* Microseconds since the stream began, never going down. */
static uint64_t now_us(const RecExt *x)
{
  uint64_t us = (rec_time_now_ns() - x->t0) / 1000u;
  return us < x->last_us ? x->last_us : us;
}

static int rss_due(const RecExt *x, uint64_t us)
{
  return !x->rss_written || us - x->rss_us >= REC_RSS_US;
}

static void put_mark(RecStream *s, uint64_t us, uint64_t rss)
{
  RecExt *x = s->ext;
  RecBuf *b = &s->out;
  /* a mark between allocator calls (a host's poll): the type of the event
  ** before, if the capture layer has not written it, goes first, internal */
  if (x->type_wait) rec_ext_type(s, REC_TYPE_NONE);
  x->last_us = us;
  rec_buf_need(b, 22);
  rec_buf_byte(b, REC_IT_MARK);
  rec_buf_uleb(b, us);
  if (rss && rss_due(x, us)) {
    rec_buf_byte(b, REC_IT_RSS);
    rec_buf_uleb(b, rss);
    x->rss_us = us;
    x->rss_written = 1;
  }
}

/* A sampled stream, or an exact one whose ticker could not start: every
** event looks at the clock (rec_ext_mark); the flag stays raised. */
static void clocked(RecExt *x)
{
  x->clocked = 1;
  atomic_store_explicit(&x->tk.tick, 1, memory_order_relaxed);
}

void rec_ext_begin(RecStream *s)
{
  RecExt *x = s->ext;
  if (s->sample_rate) {
    x->tk.fd = rec_time_statm();
    clocked(x);
  } else if (rec_ticker_start(&x->tk)) {
    clocked(x);  /* the statm descriptor stays open (or is -1) */
  }
  put_mark(s, now_us(x), x->clocked ? rec_time_rss(x->tk.fd) : atomic_load(&x->tk.rss));
}

void rec_ext_type(RecStream *s, uint8_t t)
{
  RecExt *x = s->ext;
  int kind = x->type_wait;
  x->type_wait = 0;
  if (kind == REC_EV_ALLOC) {
    if (t == REC_TYPE_NONE) t = REC_TYPE_INTERNAL;
    if (t == x->type_cur) return;
    x->type_cur = t;
  } else if (kind != REC_EV_REALLOC || t == REC_TYPE_NONE) {
    return;
  }
  rec_buf_need(&s->out, 3);
  rec_buf_byte(&s->out, REC_IT_TYPE);
  rec_buf_byte(&s->out, 1);  /* the body's length */
  rec_buf_byte(&s->out, t);
}

void rec_ext_end(RecStream *s)
{
  RecExt *x = s->ext;
  uint64_t us;
  if (!x) return;
  rec_ext_type(s, REC_TYPE_NONE);  /* the last event, not judged: internal */
  us = now_us(x);  /* the end: a program idle since its last event shows so */
  if (us - x->last_us >= REC_TICK_US) put_mark(s, us, 0);
  rec_ticker_stop(&x->tk);
}

void rec_ext_forked(RecStream *s, int close_fds)
{
  if (s->ext) rec_ticker_forked(&s->ext->tk, close_fds);
}

__attribute__((noinline, cold)) void rec_ext_mark(RecStream *s)
{
  RecExt *x = s->ext;
  uint64_t us = now_us(x);
  if (x->clocked) {  /* the ticker's period, measured at the event */
    if (us - x->last_us >= REC_TICK_US)
      put_mark(s, us, rss_due(x, us) ? rec_time_rss(x->tk.fd) : 0);
    return;
  }
  atomic_store_explicit(&x->tk.tick, 0, memory_order_relaxed);
  put_mark(s, us, atomic_load_explicit(&x->tk.rss, memory_order_relaxed));
}

/* -- Labels -------------------------------------------------------------- */

/* 0x26..0x28 len:U body: the length first. */
static void put_labels_item(RecBuf *b, uint8_t h, uint64_t id, const uint8_t *body, uint32_t len)
{
  rec_buf_need(b, 21);
  rec_buf_byte(b, h);
  rec_buf_uleb(b, uleb_len(id) + len);
  rec_buf_uleb(b, id);
  if (len) rec_buf_raw(b, (const char *)body, len);
}

__attribute__((noinline)) void rec_ext_labels(RecStream *s, uint32_t set, const uint8_t *def,
                                              uint32_t len, uint64_t folded)
{
  RecExt *x = s->ext;
  if (set && set <= REC_LABEL_SETS && !(x->ldef[set / 8] & (1u << (set % 8)))) {
    put_labels_item(&s->out, REC_IT_LABELS, set, def, len);
    x->ldef[set / 8] |= (uint8_t)(1u << (set % 8));
  }
  if (folded != x->lfolded) {
    put_labels_item(&s->out, REC_IT_LFOLDED, folded, NULL, 0);
    x->lfolded = folded;
  }
  if (set != x->lsel) put_labels_item(&s->out, REC_IT_LSELECT, set, NULL, 0);
  x->lsel = set;
}

/* -- The trie ------------------------------------------------------------ */

static size_t node_hash(uint32_t parent, uint8_t kind, uint64_t a, uint64_t ident,
                        uint32_t line)
{
  uint64_t h = (uint64_t)parent * 0x9e3779b97f4a7c15ull;
  h ^= a + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
  h ^= ident + ((uint64_t)line << 8) + kind + (h << 6) + (h >> 2);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h;
}

static int grow(RecExt *x)
{
  size_t nsz = x->tab ? (x->mask + 1) * 2 : 1024, i;
  RecNode *nt = calloc(nsz, sizeof(*nt));
  if (!nt) return ENOMEM;
  for (i = 0; x->tab && i <= x->mask; i++) {
    RecNode *e = &x->tab[i];
    size_t k;
    if (!e->id) continue;
    for (k = node_hash(e->parent, e->kind, e->a, e->ident, e->line) & (nsz - 1); nt[k].id;
         k = (k + 1) & (nsz - 1)) {
    }
    nt[k] = *e;
  }
  free(x->tab);
  x->tab = nt;
  x->mask = nsz - 1;
  return 0;
}

/* Announces what a new node names and writes the node. */
static void write_node(RecStream *s, global_State *g, uint32_t parent, const RecNode *k)
{
  RecBuf *b = &s->out;
  switch (k->kind) {
  case REC_FR_LUA: {
    const GCproto *pt = (const GCproto *)(uintptr_t)k->a;
    RecMapEntry *e = rec_map_get(&s->protos, k->a);
    if (!e || e->val != k->ident) rec_stream_announce_proto(s, pt);
    break;
  }
  case REC_FR_C: rec_stream_announce_cfunc(s, g, k->a); break;
  case REC_FR_TRACE: rec_stream_announce_trace(s, g, (int32_t)k->a); break;
  default: break;
  }
  rec_buf_need(b, 40);
  rec_buf_byte(b, REC_IT_NODE);
  rec_buf_uleb(b, parent);
  rec_buf_byte(b, k->kind);
  switch (k->kind) {
  case REC_FR_LUA:
    b->p = rec_uleb_put_addr(b->p, k->a);
    rec_buf_uleb(b, k->line);
    break;
  case REC_FR_C: b->p = rec_uleb_put_addr(b->p, k->a); break;
  case REC_FR_TRACE: rec_buf_uleb(b, k->a); break;
  default: break;
  }
}

/* The node of frame (kind, a, ident, line) under parent; written the
** first time. Returns 0 only when out of memory (the stack then ends). */
static uint32_t intern(RecStream *s, global_State *g, uint32_t parent, uint8_t kind,
                       uint64_t a, uint64_t ident, uint32_t line)
{
  RecExt *x = s->ext;
  RecNode *e;
  size_t i;
  if ((x->used + 1) * 4 > (x->tab ? x->mask + 1 : 0) * 3 && grow(x)) return 0;
  for (i = node_hash(parent, kind, a, ident, line) & x->mask;; i = (i + 1) & x->mask) {
    e = &x->tab[i];
    if (!e->id) break;
    if (e->parent == parent && e->kind == kind && e->a == a && e->ident == ident &&
        e->line == line)
      return e->id;
  }
  e->parent = parent;
  e->kind = kind;
  e->a = a;
  e->ident = ident;
  e->line = line;
  e->id = ++x->next_id;
  x->used++;
  write_node(s, g, parent, e);
  return e->id;
}

/* The node of frame f, below a tail-call mark when it was tail-called. */
static uint32_t intern_frame(RecStream *s, global_State *g, uint32_t parent,
                             const RecFrame *f, int tail_ok)
{
  if (f->tail && tail_ok) parent = intern(s, g, parent, REC_FR_TAIL, 0, 0, 0);
  return intern(s, g, parent, f->kind, f->a, f->ident, f->line);
}

uint32_t rec_ext_stack(RecStream *s, global_State *g, const RecWalk *w)
{
  RecExt *x = s->ext;
  uint32_t n = w->n, j, parent;
  int cut = w->prev[0].kind == REC_FR_TRUNC;
  if (x->depth < w->depth && n - (uint32_t)cut > x->depth) {
    /* This stream keeps fewer frames than the walk: its own cut, no
    ** reuse (rare: several extended recordings with other limits). */
    x->nvalid = 0;
    parent = intern(s, g, 0, REC_FR_TRUNC, 0, 0, 0);
    for (j = n - x->depth; j < n; j++)
      parent = intern_frame(s, g, parent, &w->prev[j], j > n - x->depth);
    return parent;
  }
  if (x->nid_cap < w->cap) {
    uint32_t *nn = realloc(x->nid, w->cap * sizeof(uint32_t));
    if (!nn) {
      x->nvalid = 0;
      return 0;
    }
    x->nid = nn;
    x->nid_cap = w->cap;
  }
  j = w->same < x->nvalid ? w->same : x->nvalid;
  parent = j ? x->nid[j - 1] : 0;
  for (; j < n; j++) {
    parent = intern_frame(s, g, parent, &w->prev[j], 1);
    x->nid[j] = parent;
  }
  x->nvalid = n;
  return parent;
}
