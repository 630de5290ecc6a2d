/* ljm_recipe.c -- expands recipes (ljm_recipe.h) into extended ljm streams
** and heap snapshots: long names, deep and wide stack trees, long reference
** chains, sizes near 2^64, all from a few bytes.
**
** Stream ops (arguments in ljm_recipe.h's letters):
**   PROTO v v v     addr, name length, firstline: a prototype (symtab entry
**                   before EVENTS, else a 0x08 item)
**   CFUNC v v       addr, name length: a C symbol (0x01 / 0x0C)
**   TRACE v v v     traceno, proto, line (0x02 / 0x10)
**   EVENTS          starts the event section (any item below does too)
**   CHAIN c b b v   depth, frame kind, flags, name length: a chain of stack
**                   nodes; flags 1 below the cursor (else from the root),
**                   2 each node named (0x24), 4 the leaf selected and an
**                   allocation there, 8 an allocation at every node
**   FAN c b b v     width, kind, flags, name length: children of the cursor
**                   (a wide tree); flags 2 named, 4 an allocation at each
**   SELECT v        a 0x21 selection of any node
**   ALLOC c v b b   count, size, source, flags: allocations at new addresses;
**                   flags 1 each on another node, 2 each freed, 4 realloc'd,
**                   8 all at one address, 16 with 4: marked 0x31 (with the
**                   flags byte's 4, SAMPLED, the version byte's bits 2..6
**                   are the log2 of the rate written right after the header;
**                   with its 8, TYPES, every third is followed by a type
**                   item 0x29, 1 to 14, or 0, an error, for size 0)
**   NAME v b v      node, what, name length: one 0x24 item
**   TIME c v v      count, step, rss: time marks and RSS samples
**   RAW r           bytes as they are
**   RESERVED b v v  header 0x25 + b % 11, declared length, bytes written
**   END             the end marker; later ops are ignored
**   REPEAT c b      the last b ops (at most 16) again, c times (nested twice)
**   UNWIND c        cursor to its c-th ancestor
** Heap ops:
**   CHAIN c b v b v   count, type, size, edge kind, label length: a chain
**   FAN c b v b v     a table with count references to leaves
**   CYCLE c v         a chain whose last object refers to its first
**   DIAMOND c v       count layers of two objects, each referring to both
**                     of the next (2^count shortest paths)
**   INTERNAL c v      VM internals of a size
**   DANGLE c          one object with count references to no object
**   RAW r             bytes as they are
**   REPEAT c b        as for streams
**   KEYS c            tables chained through string keys (STRKEY/OBJKEY)
**   LABEL v           one string object with a label of that length
**   END               the end byte; later ops are ignored
** Every structure hangs off the root (one named root reference each), at
** addresses of its own: A(k, i) = 2^20 + k * 2^40 + 16 i.
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz/ljm_recipe.h"

const uint64_t ljr_interesting[31] = {
  0x7f, 0x80, 0xff, 0x3fff, 0x4000, 0xffff, 0x10000, 4095, 4096, 4097,
  (1u << 20) - 1, 1u << 20, (1u << 20) + 1, 1u << 24, (1ull << 31) - 1, 1ull << 31,
  (1ull << 32) - 1, 1ull << 32, (1ull << 32) + 1, (1ull << 53) + 1, (1ull << 56) - 1,
  1ull << 56, (1ull << 56) + 1, (1ull << 62) - 1, 1ull << 62, (1ull << 63) - 1,
  1ull << 63, (1ull << 63) + 1, UINT64_MAX - 1, UINT64_MAX, UINT64_MAX / 3,
};

enum { S_PROTO, S_CFUNC, S_TRACE, S_EVENTS, S_CHAIN, S_FAN, S_SELECT, S_ALLOC,
       S_NAME, S_TIME, S_RAW, S_RESERVED, S_END, S_REPEAT, S_UNWIND, S_NOPS };
enum { H_CHAIN, H_FAN, H_CYCLE, H_DIAMOND, H_INTERNAL, H_DANGLE, H_RAW, H_REPEAT,
       H_KEYS, H_LABEL, H_END, H_NOPS };

static const LjrOp stream_ops[S_NOPS] = {
  {"proto", "vvv"}, {"cfunc", "vv"}, {"trace", "vvv"}, {"events", ""},
  {"chain", "cbbv"}, {"fan", "cbbv"}, {"select", "v"}, {"alloc", "cvbb"},
  {"name", "vbv"}, {"time", "cvv"}, {"raw", "r"}, {"reserved", "bvv"},
  {"end", ""}, {"repeat", "cb"}, {"unwind", "c"},
};
static const LjrOp heap_ops[H_NOPS] = {
  {"chain", "cbvbv"}, {"fan", "cbvbv"}, {"cycle", "cv"}, {"diamond", "cv"},
  {"internal", "cv"}, {"dangle", "c"}, {"raw", "r"}, {"repeat", "cb"},
  {"keys", "c"}, {"label", "v"}, {"end", ""},
};

const LjrOp *ljr_ops(int kind, size_t *n)
{
  *n = kind == LJR_HEAP ? H_NOPS : S_NOPS;
  return kind == LJR_HEAP ? heap_ops : stream_ops;
}

size_t ljr_ops_start(int kind) { return kind == LJR_HEAP ? 5 : 6; }

int ljr_kind(const uint8_t *data, size_t size)
{
  if (size < 4 || memcmp(data, LJR_MAGIC, 3) != 0) return LJR_NONE;
  return data[3] == 'H' ? LJR_HEAP : LJR_STREAM;
}

/* ---- Reading a recipe: missing bytes are 0. */

typedef struct Rd {
  const uint8_t *p, *end;
} Rd;

static uint8_t rb(Rd *r) { return r->p < r->end ? *r->p++ : 0; }

static uint64_t rc(Rd *r)
{
  uint8_t c = rb(r);
  return c < 32 ? c : (uint64_t)(16 + (c & 15)) << (c >> 4);
}

static uint64_t rv(Rd *r)
{
  uint8_t k = rb(r);
  if (k < 0xE0) return k;
  if (k > 0xE0) return ljr_interesting[k - 0xE1];
  uint64_t v = 0;
  for (int s = 0; s < 70; s += 7) {
    uint8_t b = rb(r);
    v |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) break;
  }
  return v;
}

/* ---- Writing: stops adding items once the budget is spent. */

typedef struct Out {
  uint8_t *p;
  size_t n, cap, budget;
  int oom;
  int dry;           /* only count the bytes (a first pass) */
} Out;

static int full(const Out *o) { return o->oom || o->n >= o->budget; }

static void w_reserve(Out *o, size_t more)
{
  if (o->dry || o->oom || o->n + more <= o->cap) return;
  size_t cap = o->cap ? o->cap : 4096;
  while (cap < o->n + more) cap *= 2;
  uint8_t *p = realloc(o->p, cap);
  if (!p) { o->oom = 1; return; }
  o->p = p;
  o->cap = cap;
}

static void w_byte(Out *o, uint8_t b)
{
  w_reserve(o, 1);
  if (o->dry) o->n++;
  else if (!o->oom) o->p[o->n++] = b;
}

static void w_uleb(Out *o, uint64_t v)
{
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    w_byte(o, c | (v ? 0x80 : 0));
  } while (v);
}

static size_t uleb_len(uint64_t v)
{
  size_t n = 1;
  while (v >>= 7) n++;
  return n;
}

/* n bytes of a name (as many as the budget allows): characters that need
** escaping in every format, bytes that are no UTF-8, a multi-byte one. */
static void w_fill(Out *o, uint64_t n, uint64_t seed)
{
  static const char alpha[] = "abc;d e\"f<g>&h'i\\j\nk\tl:m/n|o\x7f\xc3\xa9p\x01q\xffr";
  size_t room = o->budget > o->n ? o->budget - o->n : 0;
  size_t k = n < room ? (size_t)n : room;
  w_reserve(o, k);
  if (o->dry) { o->n += k; return; }
  if (o->oom) return;
  for (size_t i = 0; i < k; i++) o->p[o->n++] = (uint8_t)alpha[(i + seed) % (sizeof(alpha) - 1)];
}

static void w_str(Out *o, uint64_t n, uint64_t seed)
{
  w_uleb(o, n);
  w_fill(o, n, seed);
}

/* ---- Streams. */

#define MAX_NODES (4u << 20)

typedef struct SGen {
  Out o;
  unsigned ver, flags, rate_log;
  int in_events, ended;
  uint32_t *parent;           /* parent[id] of stack nodes 1..nnodes */
  uint32_t nnodes, capnodes, cursor;
  uint64_t proto[4], cfunc[4], trace[4];
  unsigned nproto, ncfunc, ntrace;
  uint64_t addr, time;
  uint64_t steps;             /* ops run and ancestors walked: bounds REPEAT */
} SGen;

static void s_events(SGen *g)
{
  if (g->in_events) return;
  g->in_events = 1;
  w_byte(&g->o, 0x80);
  w_byte(&g->o, 'l'); w_byte(&g->o, 'j'); w_byte(&g->o, 'm');
  w_byte(&g->o, (uint8_t)g->ver);
  w_byte(&g->o, (uint8_t)g->flags);
  w_byte(&g->o, 0); w_byte(&g->o, 0);
  if (g->flags & 4) {  /* SAMPLED: the rate first */
    w_byte(&g->o, 0x30);
    w_uleb(&g->o, 1ull << g->rate_log);
  }
}

static void remember(uint64_t *list, unsigned *n, uint64_t v) { list[(*n)++ % 4] = v; }

static uint64_t known(const uint64_t *list, unsigned n, uint64_t i, uint64_t dflt)
{
  return n ? list[i % (n < 4 ? n : 4)] : dflt;
}

/* A new node (id returned, 0 when no more fit) with a frame of 'kind'. */
static uint32_t s_node(SGen *g, uint32_t parent, unsigned kind, uint64_t i)
{
  if (g->nnodes + 1 >= MAX_NODES || full(&g->o)) return 0;
  if (g->nnodes + 1 >= g->capnodes) {
    uint32_t cap = g->capnodes ? g->capnodes * 2 : 1024;
    uint32_t *p = realloc(g->parent, cap * sizeof(*p));
    if (!p) { g->o.oom = 1; return 0; }
    g->parent = p;
    g->capnodes = cap;
  }
  kind %= 8;
  if (kind == 0) kind = 1 + i % 6;
  w_byte(&g->o, 0x20);
  w_uleb(&g->o, parent);
  w_byte(&g->o, (uint8_t)(kind == 7 ? 1 : kind));
  switch (kind) {
  case 1: w_uleb(&g->o, known(g->proto, g->nproto, i, 0x1000)); w_uleb(&g->o, i + 1); break;
  case 7: w_uleb(&g->o, 0x1000 + 16 * i); w_uleb(&g->o, 1); break;  /* distinct functions */
  case 2: w_uleb(&g->o, known(g->cfunc, g->ncfunc, i, 0x2000 + i)); break;
  case 3: w_uleb(&g->o, known(g->trace, g->ntrace, i, 1)); break;
  default: break;
  }
  uint32_t id = ++g->nnodes;
  g->parent[id] = parent;
  return id;
}

static void s_name(SGen *g, uint64_t node, unsigned what, uint64_t len)
{
  w_byte(&g->o, 0x24);
  w_uleb(&g->o, uleb_len(node) + uleb_len(what) + len);
  w_uleb(&g->o, node);
  w_uleb(&g->o, what);
  w_fill(&g->o, len, node);
}

static void s_alloc(SGen *g, uint64_t size, unsigned src, unsigned flags, uint64_t i)
{
  static const uint8_t hdr[4] = { 0x04, 0x08, 0x0C, 0x10 };
  uint8_t h = hdr[src % 4];
  uint64_t addr = flags & 8 ? 0x10000 : (g->addr += 16);
  if ((flags & 20) == 20) w_byte(&g->o, 0x31);  /* its new block left the sample */
  w_byte(&g->o, h | (flags & 4 ? 3 : 1));
  switch (src % 4) {
  case 1: w_uleb(&g->o, known(g->proto, g->nproto, i, 0x1000)); w_uleb(&g->o, i % 1000); break;
  case 2: w_uleb(&g->o, known(g->cfunc, g->ncfunc, i, 0x2000)); break;
  case 3: w_uleb(&g->o, known(g->trace, g->ntrace, i, 1)); if (g->ver == 2) w_uleb(&g->o, 0); break;
  default: break;
  }
  if (flags & 4) { w_uleb(&g->o, addr); w_uleb(&g->o, size); addr += 8; }
  w_uleb(&g->o, addr);
  w_uleb(&g->o, size);
  if ((g->flags & 8) && i % 3 == 0) {  /* TYPES: its type */
    w_byte(&g->o, 0x29);
    w_byte(&g->o, 1);
    w_byte(&g->o, (uint8_t)(size ? 1 + (i / 3 + size) % 14 : 0));
  }
  if (flags & 2) {
    w_byte(&g->o, 0x06);
    w_uleb(&g->o, addr);
    w_uleb(&g->o, size);
  }
}

static void s_select(SGen *g, uint64_t node)
{
  w_byte(&g->o, 0x21);
  w_uleb(&g->o, node);
}

static void s_run(SGen *g, const uint8_t *p, const uint8_t *end, int nest);

/* One op at r; returns 0 to stop (END). */
static int s_op(SGen *g, Rd *r, const uint8_t *const *starts, int nlast, const uint8_t *here,
                int nest)
{
  unsigned code = rb(r) % S_NOPS;
  Out *o = &g->o;
  if (code != S_PROTO && code != S_CFUNC && code != S_TRACE && code != S_RAW &&
      code != S_REPEAT)
    s_events(g);
  switch (code) {
  case S_PROTO: {
    uint64_t addr = rv(r), len = rv(r), line = rv(r);
    remember(g->proto, &g->nproto, addr);
    w_byte(o, g->in_events ? 0x08 : 0x00);
    w_uleb(o, addr);
    w_str(o, len, addr);
    w_uleb(o, line);
    break;
  }
  case S_CFUNC: {
    uint64_t addr = rv(r), len = rv(r);
    remember(g->cfunc, &g->ncfunc, addr);
    w_byte(o, g->in_events ? 0x0C : 0x01);
    w_uleb(o, addr);
    w_str(o, len, addr);
    break;
  }
  case S_TRACE: {
    uint64_t no = rv(r), proto = rv(r), line = rv(r);
    remember(g->trace, &g->ntrace, no);
    w_byte(o, g->in_events ? 0x10 : (g->ver == 2 ? 0x01 : 0x02));
    w_uleb(o, no);
    if (g->ver == 2) w_uleb(o, 0);
    w_uleb(o, proto);
    w_uleb(o, line);
    break;
  }
  case S_EVENTS: break;
  case S_CHAIN: case S_FAN: {
    uint64_t n = rc(r);
    unsigned kind = rb(r), flags = rb(r);
    uint64_t len = rv(r);
    int chain = code == S_CHAIN;
    uint32_t at = chain && !(flags & 1) ? 0 : g->cursor, leaf = at;
    for (uint64_t i = 0; i < n && !full(o); i++) {
      uint32_t id = s_node(g, chain ? leaf : at, kind, i);
      if (!id) break;
      leaf = id;
      if (flags & 2) s_name(g, id, 1 + i % 6, len);
      if ((flags & 8) || (!chain && (flags & 4))) {
        s_select(g, id);
        s_alloc(g, 1 + i % 64, 1, 0, i);
      }
    }
    if (chain) {
      g->cursor = leaf;
      if (flags & 4) {
        s_select(g, leaf);
        s_alloc(g, 32, 1, 0, 0);
      }
    }
    break;
  }
  case S_SELECT: s_select(g, rv(r)); break;
  case S_ALLOC: {
    uint64_t n = rc(r), size = rv(r);
    unsigned src = rb(r), flags = rb(r);
    for (uint64_t i = 0; i < n && !full(o); i++) {
      if ((flags & 1) && g->nnodes) s_select(g, 1 + (i * 7919) % g->nnodes);
      s_alloc(g, size, src, flags, i);
    }
    break;
  }
  case S_NAME: {
    uint64_t node = rv(r);
    unsigned what = rb(r);
    s_name(g, node, what, rv(r));
    break;
  }
  case S_TIME: {
    uint64_t n = rc(r), step = rv(r), rss = rv(r);
    for (uint64_t i = 0; i < n && !full(o); i++) {
      w_byte(o, 0x22);
      w_uleb(o, g->time += step);
      w_byte(o, 0x23);
      w_uleb(o, rss + i);
    }
    break;
  }
  case S_RAW: {
    unsigned n = rb(r);
    for (unsigned i = 0; i < n && r->p < r->end; i++) w_byte(o, *r->p++);
    break;
  }
  case S_RESERVED: {
    unsigned h = rb(r);
    uint64_t declared = rv(r), len = rv(r);
    w_byte(o, (uint8_t)(0x25 + h % 11));
    w_uleb(o, declared);
    w_fill(o, len, 0);
    break;
  }
  case S_END:
    w_byte(o, 0x80);
    g->ended = 1;
    return 0;
  case S_REPEAT: {
    /* The k ops before this one, n more times. */
    uint64_t n = rc(r);
    unsigned k = rb(r) % 16 + 1;
    if (nest >= 2 || (int)k > nlast) break;
    const uint8_t *from = starts[(nlast - (int)k) % 16];
    for (uint64_t i = 0; i < n && !full(o) && !g->ended; i++) s_run(g, from, here, nest + 1);
    break;
  }
  case S_UNWIND: {
    uint64_t n = rc(r);
    for (uint64_t i = 0; i < n && g->cursor; i++, g->steps++) g->cursor = g->parent[g->cursor];
    break;
  }
  }
  return 1;
}

static void s_run(SGen *g, const uint8_t *p, const uint8_t *end, int nest)
{
  Rd r = { p, end };
  const uint8_t *starts[16];  /* where the last 16 ops began */
  int nlast = 0;
  while (r.p < r.end && !full(&g->o) && !g->ended && g->steps++ < g->o.budget) {
    const uint8_t *here = r.p;
    if (!s_op(g, &r, starts, nlast, here, nest)) break;
    starts[nlast++ % 16] = here;
  }
}

static int expand_stream(const uint8_t *data, size_t size, Out *o)
{
  SGen g;
  memset(&g, 0, sizeof(g));
  g.o = *o;
  Rd r = { data + 4, data + size };
  unsigned vb = rb(&r), v = vb % 4;
  g.ver = v ? v : 3;
  g.rate_log = vb >> 2 & 31;
  g.flags = rb(&r);
  w_byte(&g.o, 'l'); w_byte(&g.o, 'j'); w_byte(&g.o, 's');
  w_byte(&g.o, (uint8_t)g.ver);
  w_byte(&g.o, 0); w_byte(&g.o, 0); w_byte(&g.o, 0);
  g.addr = 0x100000;
  s_run(&g, r.p, r.end, 0);
  if (!g.ended) {
    s_events(&g);
    w_byte(&g.o, 0x80);
  }
  free(g.parent);
  *o = g.o;
  return o->oom ? -1 : 0;
}

/* ---- Heap snapshots. */

typedef struct HGen {
  Out o;
  uint32_t k;        /* structures so far (each one root reference) */
  int ended;
  uint64_t steps;
} HGen;

static uint64_t A(uint32_t k, uint64_t i) { return (1u << 20) + ((uint64_t)k << 40) + 16 * i; }

static void h_obj(HGen *g, unsigned type, uint64_t addr, uint64_t size, uint64_t label,
                  uint64_t nedges)
{
  w_byte(&g->o, (uint8_t)type);
  w_uleb(&g->o, addr);
  w_uleb(&g->o, size);
  w_str(&g->o, label, addr >> 4);
  w_uleb(&g->o, nedges);
}

static void h_edge(HGen *g, unsigned kind, uint64_t target, uint64_t what, uint64_t namelen)
{
  w_byte(&g->o, (uint8_t)kind);
  w_uleb(&g->o, target);
  switch (kind & 0x7f) {
  case 1: w_str(&g->o, namelen ? namelen : 1, what); break;
  case 2: case 3: case 4: w_uleb(&g->o, what); break;
  default: break;
  }
}

/* Object types 2..11 (not the root, not internals), tables most often. */
static unsigned h_type(unsigned b) { return b % 4 ? 3 : 2 + b / 4 % 10; }

/* Edge kinds 1..5, weak when 0x80 is set. */
static unsigned h_kind(unsigned b) { return (1 + (b & 0x7f) % 5) | (b & 0x80); }

static void h_run(HGen *g, const uint8_t *p, const uint8_t *end, int nest);

static int h_op(HGen *g, Rd *r, const uint8_t *const *starts, int nlast, const uint8_t *here,
                int nest)
{
  unsigned code = rb(r) % H_NOPS;
  Out *o = &g->o;
  uint32_t k = g->k;
  switch (code) {
  case H_CHAIN: case H_FAN: {
    uint64_t n = rc(r);
    unsigned type = h_type(rb(r));
    uint64_t size = rv(r);
    unsigned kind = h_kind(rb(r));
    uint64_t len = rv(r);
    if (n == 0) break;
    g->k++;
    if (code == H_CHAIN) {
      for (uint64_t i = 0; i < n && !full(o); i++) {
        h_obj(g, type, A(k, i), size, len, i + 1 < n);
        if (i + 1 < n) h_edge(g, kind, A(k, i + 1), (kind & 0x7f) == 3 ? i : A(k, i), len);
      }
    } else {
      h_obj(g, 3, A(k, 0), size, len, n);
      for (uint64_t i = 1; i <= n && !full(o); i++) h_edge(g, kind, A(k, i), i, len);
      for (uint64_t i = 1; i <= n && !full(o); i++) h_obj(g, type, A(k, i), size, len, 0);
    }
    break;
  }
  case H_CYCLE: {
    uint64_t n = rc(r) + 1, size = rv(r);
    g->k++;
    for (uint64_t i = 0; i < n && !full(o); i++) {
      h_obj(g, 3, A(k, i), size, 0, 1);
      h_edge(g, 3, A(k, (i + 1) % n), i, 0);
    }
    break;
  }
  case H_DIAMOND: {
    uint64_t n = rc(r), size = rv(r);
    g->k++;
    for (uint64_t i = 0; i < 2 * n && !full(o); i++) {
      int last = i + 2 >= 2 * n;
      /* Layer i / 2: both objects of the next layer; the first layer is
      ** one object (A(k, 0), what the root refers to) and A(k, 1). */
      h_obj(g, 3, A(k, i), size, 0, last ? 0 : 2);
      if (!last) {
        uint64_t next = (i / 2 + 1) * 2;
        h_edge(g, 3, A(k, next), 1, 0);
        h_edge(g, 3, A(k, next + 1), 2, 0);
      }
    }
    break;
  }
  case H_INTERNAL: {
    uint64_t n = rc(r), size = rv(r);
    g->k++;
    for (uint64_t i = 0; i < n && !full(o); i++) h_obj(g, 0x0C, A(k, i), size, 3, 0);
    break;
  }
  case H_DANGLE: {
    uint64_t n = rc(r);
    g->k++;
    h_obj(g, 3, A(k, 0), 64, 0, n);
    for (uint64_t i = 0; i < n && !full(o); i++) h_edge(g, 3, A(k + 1000000, i), i, 0);
    break;
  }
  case H_RAW: {
    unsigned n = rb(r);
    for (unsigned i = 0; i < n && r->p < r->end; i++) w_byte(o, *r->p++);
    break;
  }
  case H_REPEAT: {
    uint64_t n = rc(r);
    unsigned m = rb(r) % 16 + 1;
    if (nest >= 2 || (int)m > nlast) break;
    const uint8_t *from = starts[(nlast - (int)m) % 16];
    for (uint64_t i = 0; i < n && !full(o) && !g->ended; i++) h_run(g, from, here, nest + 1);
    break;
  }
  case H_KEYS: {
    /* Table i refers to table i + 1 under the string A(.., 2i + 1) (or, every
    ** other step, under that object as a key, and to the key itself). */
    uint64_t n = rc(r);
    g->k++;
    for (uint64_t i = 0; i < n && !full(o); i++) {
      uint64_t t = A(k, 2 * i), key = A(k, 2 * i + 1), next = A(k, 2 * i + 2);
      int last = i + 1 == n, obj = i & 1;
      h_obj(g, 3, t, 56, 0, last ? 0 : (obj ? 2 : 1));
      if (!last) {
        h_edge(g, obj ? 4 : 2, next, key, 0);
        if (obj) h_edge(g, 5, key, 0, 0);
      }
      h_obj(g, obj ? 3 : 2, key, 24, obj ? 0 : 4, 0);
    }
    break;
  }
  case H_LABEL: {
    uint64_t len = rv(r);
    g->k++;
    h_obj(g, 2, A(k, 0), 24 + len, len, 0);
    break;
  }
  case H_END:
    w_byte(o, 0x00);
    g->ended = 1;
    return 0;
  }
  return 1;
}

static void h_run(HGen *g, const uint8_t *p, const uint8_t *end, int nest)
{
  Rd r = { p, end };
  const uint8_t *starts[16];
  int nlast = 0;
  while (r.p < r.end && !full(&g->o) && !g->ended && g->steps++ < g->o.budget) {
    const uint8_t *here = r.p;
    if (!h_op(g, &r, starts, nlast, here, nest)) break;
    starts[nlast++ % 16] = here;
  }
}

/* Two passes: the first counts the structures, whose heads the root must
** name before any object. */
static int expand_heap(const uint8_t *data, size_t size, Out *o)
{
  HGen g;
  memset(&g, 0, sizeof(g));
  Out probe = { NULL, 0, 0, o->budget, 0, 1 };
  g.o = probe;
  h_run(&g, data + 5, data + size, 0);
  uint32_t nroots = g.k;
  memset(&g, 0, sizeof(g));
  g.o = *o;
  w_byte(&g.o, 'l'); w_byte(&g.o, 'j'); w_byte(&g.o, 'h'); w_byte(&g.o, 1);
  w_str(&g.o, 4, 0);
  w_uleb(&g.o, (uint64_t)(size > 4 ? data[4] : 0) << 20);
  w_byte(&g.o, 0x01);
  w_uleb(&g.o, 0);
  w_uleb(&g.o, 0);
  w_uleb(&g.o, 0);
  w_uleb(&g.o, nroots);
  for (uint32_t k = 0; k < nroots; k++) h_edge(&g, 1, A(k, 0), k, 1 + k % 8);
  h_run(&g, data + 5, data + size, 0);
  if (!g.ended) w_byte(&g.o, 0x00);
  *o = g.o;
  return o->oom ? -1 : 0;
}

int ljr_expand(const uint8_t *data, size_t size, size_t budget, uint8_t **out, size_t *outlen)
{
  Out o = { NULL, 0, 0, budget, 0, 0 };
  int kind = ljr_kind(data, size);
  int rc = kind == LJR_HEAP ? expand_heap(data, size, &o) : expand_stream(data, size, &o);
  if (rc != 0) {
    free(o.p);
    return -1;
  }
  *out = o.p;
  *outlen = o.n;
  return 0;
}
