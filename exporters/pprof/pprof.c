/* pprof.c -- the pprof exporter: a gzip-compressed perftools Profile.
**
** ljm has no call stacks, so each site becomes a short stack (innermost
** first), named the way pprof's views expect (a qualified function name
** without the file in it, file and lines in their own fields):
**
**   Lua site       [module.function at line]    "cache.Cache:put" in cache.lua:26
**   built-in       [function]                   "move" in [builtin]
**   TRACE site     [TRACE [n], <start site>]    "TRACE [3]" in [JIT], called from
**                                               the Lua line the trace starts at
**   C site         [C function]                 "lj_cf_package_require" in [C]
**   INTERNAL       [INTERNAL]                   in [LuaJIT VM]
**
** module is the chunk's file name without directories and ".lua" (Go's
** package.Function): graph nodes split at the dot into module and function,
** -top keeps functions of different files apart, and no name carries a dot
** of a file name or a run-specific address. One Function per Lua prototype
** (system_name "chunk:linedefined", start_line linedefined), one per C
** symbol, trace number and INTERNAL; one Location per distinct (function,
** line). Each site with a non-zero figure gives one Sample [alloc_objects,
** alloc_space, inuse_objects, inuse_space, temp_objects]; their sums are
** the model's totals. temp_objects (temporary allocations, LjmFigures) is
** there when every profile counted them: exact streams, not snapshots.
** All Locations point at one pseudo Mapping so that pprof does not ask for
** the main binary.
**
** Labels (rec.label): a node's blocks made under a label set are a Sample
** of their own carrying the set's labels as string labels (key, value), so
** that -tags, -tagfocus=plugin=auth, -tagignore and -tagroot=plugin read
** them; the (other) set, where the recorder folded sets past its limit,
** has each key of the stream's sets with the value "(other)", as `ljm
** report --by KEY` lists it. A node's sample without labels holds the rest
** of its figures.
**
** Several profiles (ljm convert FILE..., the workers of one server) make one
** Profile: each model's samples are added in turn, Functions and Locations
** shared by name, so that their sums are the sums of the models' totals;
** the first profile's comments come first, then a line per other profile.
*/
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "exporters/common/frames.h"
#include "exporters/common/sampled.h"
#include "exporters/common/state.h"
#include "exporters/common/utf8.h"
#include "exporters/ljm_exporter.h"
#include "exporters/pprof/profile.pb-c.h"
#include "model/ljm_model_load.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Label PbLabel;

#define NVALUES 5
#define NVALUES_NO_TEMP 4  /* without temp_objects */
#define SITEFRAMES 2  /* a site on its own: at most a trace and its start */
#define NAME_MAX_BYTES 200  /* names shown to people */
#define KEY_MAX_BYTES 1024  /* unique names (system_name), comments */

/* -- Growable arrays and hash maps ----------------------------------------- */

/* arr (elements of size sz) reallocated so that index n fits, or NULL. */
static void *grow_raw(void *arr, size_t *cap, size_t n, size_t sz)
{
  size_t nc = *cap ? *cap * 2 : 64;
  while (nc <= n) nc *= 2;
  void *q = realloc(arr, nc * sz);
  if (q) *cap = nc;
  return q;
}

/* Makes index n of array field b->arr (capacity b->cap) valid: 1, or 0 when
** out of memory (the array is kept). */
#define GROW(b, arr, cap, n)                                             \
  ((n) < (b)->cap ||                                                     \
   (((b)->tmp = grow_raw((b)->arr, &(b)->cap, (n), sizeof *(b)->arr)) && \
    ((b)->arr = (b)->tmp, 1)))

static uint64_t hash_bytes(const char *s, size_t n)
{
  uint64_t h = 1469598103934665603ull;  /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static uint64_t hash_u64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/* Open-addressing map from a 64-bit hash + key check to a value > 0. */
typedef struct Slot {
  uint64_t h;
  uint64_t key;   /* strings: index into the owner's table; else the key */
  uint64_t val;   /* 0: empty */
} Slot;

typedef struct Map {
  Slot *slot;
  size_t cap, n;  /* cap is a power of two */
} Map;

static int map_grow(Map *m)
{
  size_t nc = m->cap ? m->cap * 2 : 256;
  Slot *ns = calloc(nc, sizeof(Slot));
  if (!ns) return -1;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slot[i].val) continue;
    size_t j = m->slot[i].h & (nc - 1);
    while (ns[j].val) j = (j + 1) & (nc - 1);
    ns[j] = m->slot[i];
  }
  free(m->slot);
  m->slot = ns;
  m->cap = nc;
  return 0;
}

/* -- Builder state ------------------------------------------------------ */

typedef struct Builder {
  char **str;             /* string table; str[0] = "" */
  size_t nstr, capstr;
  Map strmap;             /* string -> index + 1 */
  PbFunction *fn;         /* fn[i].id == i + 1 */
  size_t nfn, capfn;
  Map fnmap;              /* system_name string index -> function id */
  PbLocation *loc;        /* loc[i].id == i + 1 */
  PbLine *line;           /* one Line per Location */
  size_t nloc, caploc, capline;
  Map locmap;             /* (function id, line) -> location id */
  PbSample *smp;
  uint64_t *ids;          /* location ids of all samples, one after another */
  size_t *first;          /* each sample's first id */
  size_t nids, capfirst;
  int64_t *vals;          /* NVALUES per sample */
  size_t nsmp, capsmp, capids, capvals;
  LjmBuf clean;           /* the name being cleaned */
  LjmBuf qual;            /* a qualified function name */
  uint64_t *node_loc;     /* location of each stack node's frame, 0: not yet
                             (the model being added) */
  uint32_t *smp_lab;      /* each sample's first label + 1 (0: none) */
  uint32_t *smp_nlab;     /* each sample's number of labels */
  PbLabel *lab;           /* the labels of the sets samples carry */
  size_t nlab, caplab, capsmp_lab, capsmp_nlab;
  uint32_t *set_lab;      /* per set of the model being added: its first
                             label + 1 (0: not made yet) */
  uint32_t *set_nlab;     /* per set: how many labels */
  void *tmp;              /* for GROW */
  int oom;
} Builder;

/* Index of the cleaned string s[0..n) in the string table. */
static int64_t str_n(Builder *b, const char *s, size_t n, size_t max)
{
  if (b->oom) return 0;
  LjmBuf *t = &b->clean;
  ljm_buf_reset(t);
  ljm_text_clean(t, s, n, LJM_CLEAN_BRACKETS | LJM_CLEAN_SPACE, max);
  if (t->oom) return b->oom = 1, 0;
  size_t len = t->len;
  if (len == 0) return 0;
  if (b->strmap.n * 2 >= b->strmap.cap && map_grow(&b->strmap))
    return b->oom = 1, 0;
  uint64_t h = hash_bytes(t->p, len);
  size_t j = h & (b->strmap.cap - 1);
  for (Slot *sl; (sl = &b->strmap.slot[j])->val; j = (j + 1) & (b->strmap.cap - 1))
    if (sl->h == h && strcmp(b->str[sl->key], t->p) == 0) return (int64_t)sl->key;
  char *c;
  if (!GROW(b, str, capstr, b->nstr) || !(c = malloc(len + 1))) return b->oom = 1, 0;
  memcpy(c, t->p, len + 1);
  b->str[b->nstr] = c;
  b->strmap.slot[j] = (Slot){h, b->nstr, 1};
  b->strmap.n++;
  return (int64_t)b->nstr++;
}

/* Index of a name shown to people / of a unique name or comment. */
static int64_t str(Builder *b, const char *s)
{
  return str_n(b, s, strlen(s), NAME_MAX_BYTES);
}

static int64_t key(Builder *b, const char *s)
{
  return str_n(b, s, strlen(s), KEY_MAX_BYTES);
}

/* Frame kinds keep equal names of different kinds apart (a C symbol "move"
** and the bytecode built-in chunk "move"). */
enum { FK_PROTO = 0, FK_C, FK_TRACE, FK_INTERNAL, FK_LABEL };
_Static_assert(FK_LABEL < 8, "function() keys kinds in 3 bits");
/* Markers of a real stack have no function: named frames of the VM's. */
#define FK_MARK FK_INTERNAL

/* Function id for (kind, system_name string index); created with the other
** fields on first use. */
static uint64_t function(Builder *b, int kind, int64_t sys, int64_t name,
                         int64_t file, int64_t start)
{
  if (b->oom) return 0;
  if (b->fnmap.n * 2 >= b->fnmap.cap && map_grow(&b->fnmap)) return b->oom = 1, 0;
  uint64_t key = (uint64_t)sys << 3 | (uint64_t)kind;  /* kind < 8 */
  uint64_t h = hash_u64(key);
  size_t j = h & (b->fnmap.cap - 1);
  for (Slot *sl; (sl = &b->fnmap.slot[j])->val; j = (j + 1) & (b->fnmap.cap - 1))
    if (sl->key == key) return sl->val;
  if (!GROW(b, fn, capfn, b->nfn)) return b->oom = 1, 0;
  PbFunction *f = &b->fn[b->nfn];
  perftools__profiles__function__init(f);
  f->id = b->nfn + 1;
  f->name = name;
  f->system_name = sys;
  f->filename = file;
  f->start_line = start;
  b->fnmap.slot[j] = (Slot){h, key, f->id};
  b->fnmap.n++;
  return b->nfn++ + 1;
}

/* Location id for (function, line). */
static uint64_t location(Builder *b, uint64_t fid, int64_t line)
{
  if (b->oom || !fid) return 0;
  if (b->locmap.n * 2 >= b->locmap.cap && map_grow(&b->locmap)) return b->oom = 1, 0;
  uint64_t key = fid << 32 ^ (uint64_t)line;
  uint64_t h = hash_u64(key);
  size_t j = h & (b->locmap.cap - 1);
  for (Slot *sl; (sl = &b->locmap.slot[j])->val; j = (j + 1) & (b->locmap.cap - 1))
    if (sl->key == key && b->line[sl->val - 1].function_id == fid &&
        b->line[sl->val - 1].line == line)
      return sl->val;
  if (!GROW(b, loc, caploc, b->nloc) || !GROW(b, line, capline, b->nloc))
    return b->oom = 1, 0;
  PbLine *ln = &b->line[b->nloc];
  perftools__profiles__line__init(ln);
  ln->function_id = fid;
  ln->line = line;
  PbLocation *l = &b->loc[b->nloc];
  perftools__profiles__location__init(l);
  l->id = b->nloc + 1;
  l->mapping_id = 1;
  b->locmap.slot[j] = (Slot){h, key, l->id};
  b->locmap.n++;
  return b->nloc++ + 1;
}

/* -- Sites to stacks ---------------------------------------------------- */

/* "module.function" of a Lua site: the file's last component without ".lua". */
static void qualified(LjmBuf *q, const LjmSite *s)
{
  const char *file = s->file, *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  size_t bl = strlen(base);
  if (bl > 4 && strcmp(base + bl - 4, ".lua") == 0) bl -= 4;
  ljm_buf_reset(q);
  if (bl && s->func_from != LJM_FUNC_BUILTIN) {
    ljm_buf_put(q, base, bl);
    ljm_buf_putc(q, '.');
  }
  ljm_buf_puts(q, s->func);
}

/* Location of a Lua site: its prototype's function at its current line. */
static uint64_t lua_frame(Builder *b, const LjmSite *s)
{
  /* Unique names: a prototype is its chunk plus the line it is defined on. */
  size_t cl = strlen(s->chunk);
  int keep = cl < 1000 ? (int)cl : 1000;
  char *sys = malloc((size_t)keep + 24);
  if (!sys) return b->oom = 1, 0;
  /* Built-ins written in bytecode are "defined" on line -1 (2^64-1). */
  int64_t first = s->func_from == LJM_FUNC_BUILTIN ? -1 : (int64_t)s->func_line;
  snprintf(sys, (size_t)keep + 24, "%.*s:%" PRId64, keep, s->chunk, first);
  qualified(&b->qual, s);
  int64_t name = str_n(b, b->qual.p, b->qual.len, NAME_MAX_BYTES);
  uint64_t f = function(b, FK_PROTO, key(b, sys), name, str(b, *s->file ? s->file : "?"),
                        first > 0 ? first : 0);
  free(sys);
  return location(b, f, s->line > 0 ? s->line : 0);
}

/* Location of a site that has no source: a C function, a trace, INTERNAL. */
static uint64_t other_frame(Builder *b, int kind, const char *name, const char *file)
{
  int64_t nm = str(b, name);
  return location(b, function(b, kind, nm, nm, str(b, file), 0), 0);
}

/* Appends the frames of site s (innermost first) to ids; returns the count. */
static size_t site_frames(Builder *b, const LjmModel *m, const LjmSite *s,
                          uint64_t *ids)
{
  size_t n = 0;
  switch (s->kind) {
  case LJM_SITE_LUA:
    ids[n++] = lua_frame(b, s);
    break;
  case LJM_SITE_TRACE:
    ids[n++] = other_frame(b, FK_TRACE, s->func, "[JIT]");
    if (s->trace_start != LJM_NO_SITE && s->trace_start < ljm_model_nsites(m)) {
      const LjmSite *st = ljm_model_site(m, s->trace_start);
      if (st->kind == LJM_SITE_LUA) ids[n++] = lua_frame(b, st);
      else if (st->kind == LJM_SITE_C) ids[n++] = other_frame(b, FK_C, st->func, "[C]");
    }
    break;
  case LJM_SITE_C:
    ids[n++] = other_frame(b, FK_C, s->func, "[C]");
    break;
  case LJM_SITE_LABEL:
    ids[n++] = other_frame(b, FK_LABEL, s->func, "[label]");
    break;
  default:
    ids[n++] = other_frame(b, FK_INTERNAL, "INTERNAL", "[LuaJIT VM]");
    break;
  }
  return n;
}

static int64_t clamp(uint64_t v) { return v > INT64_MAX ? INT64_MAX : (int64_t)v; }

/* Location of one frame of a real stack. */
static uint64_t stack_frame(Builder *b, const LjmModel *m, const LjmNode *nd)
{
  switch (nd->kind) {
  case LJM_NODE_RESUME: return other_frame(b, FK_MARK, "[coroutine]", "[LuaJIT VM]");
  case LJM_NODE_TAIL: return other_frame(b, FK_MARK, "[tail call]", "[LuaJIT VM]");
  case LJM_NODE_CUT: return other_frame(b, FK_MARK, "[...]", "[LuaJIT VM]");
  default: break;
  }
  const LjmSite *s = ljm_model_site(m, nd->site);
  switch (s->kind) {
  case LJM_SITE_LUA: return lua_frame(b, s);
  case LJM_SITE_TRACE: return other_frame(b, FK_TRACE, s->func, "[JIT]");
  case LJM_SITE_C: return other_frame(b, FK_C, s->func, "[C]");
  case LJM_SITE_LABEL: return other_frame(b, FK_LABEL, s->func, "[label]");
  default: return other_frame(b, FK_INTERNAL, "INTERNAL", "[LuaJIT VM]");
  }
}

/* The labels of the (other) set: each key the stream's sets have (the
** first OTHER_KEYS_MAX) and the labels from first on lack, with the value
** "(other)", so that a key's tags add up to its figures as `ljm report
** --by KEY` counts them. */
#define OTHER_KEYS_MAX 64
static int other_labels(Builder *b, const LjmModel *m, size_t first)
{
  for (uint32_t set = 1; set < LJM_MODEL_SETS; set++) {
    unsigned n = ljm_model_label_count(m, set);
    for (unsigned k = 0; k < n; k++) {
      LjmStr key, value;
      ljm_model_label(m, set, k, &key, &value);
      int64_t ks = str_n(b, key.s, key.len, NAME_MAX_BYTES);
      size_t i = first;
      while (i < b->nlab && b->lab[i].key != ks) i++;
      if (i < b->nlab) continue;
      if (i - first == OTHER_KEYS_MAX) return 0;  /* bounded: a sample per node carries them */
      if (!GROW(b, lab, caplab, b->nlab)) return -1;
      perftools__profiles__label__init(&b->lab[b->nlab]);
      b->lab[b->nlab].key = ks;
      b->lab[b->nlab++].str = str(b, "(other)");
    }
  }
  return 0;
}

/* The labels of set (made once per set; their number in set_nlab): 0, or
** -1 when out of memory. */
static int set_labels(Builder *b, const LjmModel *m, uint32_t set)
{
  if (b->set_lab[set]) return 0;
  size_t first = b->nlab;
  unsigned n = ljm_model_label_count(m, set);  /* the (other) set: none, or its type */
  if (!GROW(b, lab, caplab, b->nlab + n)) return -1;
  for (unsigned k = 0; k < n; k++) {
    PbLabel *l = &b->lab[b->nlab++];
    LjmStr key, value;
    perftools__profiles__label__init(l);
    ljm_model_label(m, set, k, &key, &value);
    l->key = str_n(b, key.s, key.len, NAME_MAX_BYTES);
    l->str = str_n(b, value.s, value.len, NAME_MAX_BYTES);
  }
  if (ljm_model_label_other(m, set) && other_labels(b, m, first)) return -1;
  b->set_lab[set] = (uint32_t)first + 1;
  b->set_nlab[set] = (uint32_t)(b->nlab - first);
  return 0;
}

/* One Sample per call-tree node with a figure of its own: a site on its
** own (standard streams), or a real stack, leaf first; f its figures, set
** their label set (0: none). */
static void add_sample(Builder *b, const LjmModel *m, uint32_t id, const LjmFigures *f,
                       uint32_t set)
{
  const LjmNode *nd = ljm_model_node(m, id);
  if (!f->alloc_count && !f->alloc_bytes && !f->inuse_count && !f->inuse_bytes &&
      !f->temp_count)
    return;
  size_t i = b->nsmp, need = b->nids + LJM_FRAMES_SHOWN_MAX + 2 + SITEFRAMES;
  if (!GROW(b, smp, capsmp, i) || !GROW(b, first, capfirst, i) ||
      !GROW(b, smp_lab, capsmp_lab, i) || !GROW(b, smp_nlab, capsmp_nlab, i) ||
      (set && set_labels(b, m, set)) ||
      !GROW(b, ids, capids, need) || !GROW(b, vals, capvals, (i + 1) * NVALUES)) {
    b->oom = 1;
    return;
  }
  uint64_t *ids = b->ids + b->nids;
  size_t n = 0;
  if (ljm_model_node_alone(m, id)) {  /* below its label's root when grouped */
    n = site_frames(b, m, ljm_model_site(m, nd->site), ids);
    if (nd->parent != LJM_NO_NODE) ids[n++] = stack_frame(b, m, ljm_model_node(m, nd->parent));
  } else {
    /* The innermost frames, below a "[...]" one as frames.h cuts paths. */
    uint32_t k = id;
    for (; k != LJM_NO_NODE && n < LJM_FRAMES_SHOWN_MAX; k = ljm_model_node(m, k)->parent) {
      if (!b->node_loc[k]) b->node_loc[k] = stack_frame(b, m, ljm_model_node(m, k));
      ids[n++] = b->node_loc[k];  /* made once per node, not once per path */
    }
    if (k != LJM_NO_NODE) {  /* cut: a grouped path keeps its label on top */
      uint32_t root = ljm_model_node_group(m, id);
      if (k != root) ids[n++] = other_frame(b, FK_MARK, "[...]", "[LuaJIT VM]");
      if (root != LJM_NO_NODE) ids[n++] = stack_frame(b, m, ljm_model_node(m, root));
    }
  }
  b->first[i] = b->nids;
  b->smp_lab[i] = set ? b->set_lab[set] : 0;
  b->smp_nlab[i] = set ? b->set_nlab[set] : 0;
  b->nids += n;
  int64_t *v = b->vals + i * NVALUES;
  v[0] = clamp(f->alloc_count);
  v[1] = clamp(f->alloc_bytes);
  v[2] = clamp(f->inuse_count);
  v[3] = clamp(f->inuse_bytes);
  v[4] = clamp(f->temp_count);
  perftools__profiles__sample__init(&b->smp[i]);
  b->smp[i].n_location_id = n;
  b->nsmp++;
}

static void sub_figures(LjmFigures *a, const LjmFigures *b)
{
  a->alloc_count -= b->alloc_count;
  a->alloc_bytes -= b->alloc_bytes;
  a->inuse_count -= b->inuse_count;
  a->inuse_bytes -= b->inuse_bytes;
  a->temp_count -= b->temp_count;
}

/* The samples of a stream with label sets: each node's blocks under each
** set, then its unlabelled rest. */
static void add_labelled(Builder *b, const LjmModel *m, size_t nn)
{
  LjmFigures *rest = malloc((nn ? nn : 1) * sizeof(*rest));
  if (!b->set_lab) b->set_lab = malloc(LJM_MODEL_SETS * sizeof(*b->set_lab));
  if (!b->set_nlab) b->set_nlab = malloc(LJM_MODEL_SETS * sizeof(*b->set_nlab));
  if (!rest || !b->set_lab || !b->set_nlab) {
    free(rest);
    b->oom = 1;
    return;
  }
  memset(b->set_lab, 0, LJM_MODEL_SETS * sizeof(*b->set_lab));  /* this model's sets */
  for (uint32_t i = 0; i < nn; i++) rest[i] = *ljm_model_node_self(m, i);
  uint32_t no = ljm_model_nowners(m), node, set;
  for (uint32_t o = 0; o < no && !b->oom; o++) {
    const LjmFigures *f = ljm_model_owner_label_figures(m, o, &node, &set);
    if (!f || node >= nn) continue;
    add_sample(b, m, node, f, set);
    sub_figures(&rest[node], f);
  }
  for (uint32_t i = 0; i < nn && !b->oom; i++) add_sample(b, m, i, &rest[i], 0);
  free(rest);
}

/* -- Output ------------------------------------------------------------- */

/* Writes buf gzip-compressed to out; 0 or -1. */
static int write_gzip(FILE *out, const uint8_t *buf, size_t len, char *err,
                      size_t errlen)
{
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    snprintf(err, errlen, "pprof: zlib initialisation failed");
    return -1;
  }
  uint8_t chunk[65536];
  int rc = Z_OK;
  z.next_in = (uint8_t *)buf;
  while (rc == Z_OK || rc == Z_BUF_ERROR) {
    if (z.avail_in == 0 && len) {  /* zlib counts input in 32 bits */
      z.avail_in = len > (1u << 30) ? 1u << 30 : (uInt)len;
      len -= z.avail_in;
    }
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    rc = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
    size_t have = sizeof chunk - z.avail_out;
    if (have && fwrite(chunk, 1, have, out) != have) {
      snprintf(err, errlen, "pprof: write failed: %s", strerror(errno));
      deflateEnd(&z);
      return -1;
    }
  }
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    snprintf(err, errlen, "pprof: zlib error %d", rc);
    return -1;
  }
  return 0;
}

/* -- The exporter ------------------------------------------------------- */

/* Comment lines: the first profile's (at most COMMENTS_FIRST), then a line
** per profile merged into it (at most MERGED_SHOWN, then one "and N more"). */
#define COMMENTS_FIRST 6
#define MERGED_SHOWN 32
#define COMMENTS_MAX (COMMENTS_FIRST + MERGED_SHOWN + 1)

typedef struct State {
  LjmExportBase base;
  Builder b;
  int started;               /* b made (begin_profile) */
  size_t nmodels;            /* profiles added so far */
  int64_t cm[COMMENTS_MAX];  /* comment string indices */
  size_t ncm;
  int snapshot;              /* the first profile is a heap snapshot */
  uint64_t duration;         /* the longest recording's (usec) */
  uint64_t sample_rate;      /* the first sampled profile's */
  const char *no_temp;       /* why a profile did not count temporaries, or NULL */
  uint64_t sum[NVALUES];     /* the profiles' totals so far, each at most
                                LJM_TOTAL_MAX: pprof's int64 sums stay exact */
} State;

static const char *default_type(LjmValueKind k)
{
  switch (k) {
  case LJM_VALUE_ALLOC_COUNT: return "alloc_objects";
  case LJM_VALUE_INUSE_BYTES: return "inuse_space";
  case LJM_VALUE_INUSE_COUNT: return "inuse_objects";
  case LJM_VALUE_TEMP_COUNT: return "temp_objects";
  default: return "alloc_space";
  }
}

static void *pprof_begin(const LjmExportOptions *o, FILE *out, char *err,
                         size_t errlen)
{
  if (o->value == LJM_VALUE_PEAK_BYTES) {
    snprintf(err, errlen, "pprof has no peak column; use --value alloc_bytes, "
             "alloc_count, inuse_bytes or inuse_count");
    return NULL;
  }
  return ljm_export_state_new(sizeof(State), o, out, err, errlen);
}

static void builder_free(Builder *b)
{
  for (size_t i = 0; i < b->nstr; i++) free(b->str[i]);
  free(b->str);
  free(b->strmap.slot);
  free(b->fn);
  free(b->fnmap.slot);
  free(b->loc);
  free(b->line);
  free(b->locmap.slot);
  free(b->smp);
  free(b->ids);
  free(b->first);
  free(b->vals);
  ljm_buf_free(&b->clean);
  ljm_buf_free(&b->qual);
  free(b->node_loc);
  free(b->smp_lab);
  free(b->smp_nlab);
  free(b->lab);
  free(b->set_lab);
  free(b->set_nlab);
}

/* The comment lines of the first profile: source, stream versions, peak, a
** time window, truncation, and whether the figures are estimates. */
static size_t comments(Builder *b, const LjmModel *m, const char *src, int64_t *c)
{
  const LjmStreamInfo *si = ljm_model_stream(m);
  const LjmTotals *t = ljm_model_totals(m);
  char line[512];
  size_t n = 0;
  if (si->snapshot) {  /* every object in use at the snapshot, under what retains it */
    snprintf(line, sizeof line, "LuaJIT heap snapshot %s", src);
    c[n++] = key(b, line);
    snprintf(line, sizeof line, "%" PRIu64 " objects, %" PRIu64 " bytes in use at the "
             "snapshot, each under the path that retains it (inuse_space)",
             t->fig.inuse_count, t->fig.inuse_bytes);
    c[n++] = str(b, line);
    return n;
  }
  snprintf(line, sizeof line, "LuaJIT memprof profile %s", src);
  c[n++] = key(b, line);
  snprintf(line, sizeof line, "stream: ljs v%d, ljm v%d%s, %" PRIu64 " events",
           si->ljs_version, si->ljm_version, si->gzip ? ", gzip" : "", t->events);
  c[n++] = str(b, line);
  snprintf(line, sizeof line, "peak live: %" PRIu64 " bytes in %" PRIu64 " objects",
           t->fig.peak_bytes, t->fig.peak_count);
  c[n++] = str(b, line);
  if (si->windowed) {
    snprintf(line, sizeof line, "window: %.6f s to %.6f s of the recording, memory in use at "
             "its start carried in", si->window_from / 1e6, si->window_to / 1e6);
    c[n++] = str(b, line);
  }
  if (si->truncated) {
    snprintf(line, sizeof line, "stream cut at byte %" PRIu64, si->truncated_at);
    c[n++] = str(b, line);
  }
  if (ljm_sampled_note(m, line, sizeof line)) c[n++] = str(b, line);
  if (ljm_filter_line(m, line, sizeof line)) c[n++] = str(b, line);
  return n;
}

/* The line of a profile merged into the first: its source, events, peak,
** where it was cut. */
static int64_t merged_comment(Builder *b, const LjmModel *m, const char *src)
{
  const LjmStreamInfo *si = ljm_model_stream(m);
  const LjmTotals *t = ljm_model_totals(m);
  char line[1900], cut[64] = "", note[256] = "", filter[1024] = "";
  if (si->truncated)
    snprintf(cut, sizeof cut, ", stream cut at byte %" PRIu64, si->truncated_at);
  if (ljm_sampled_note(m, note + 2, sizeof note - 2)) memcpy(note, "; ", 2);
  if (ljm_filter_line(m, filter + 2, sizeof filter - 2)) memcpy(filter, "; ", 2);
  snprintf(line, sizeof line, "merged: LuaJIT memprof profile %.500s, %" PRIu64 " events, peak "
           "live %" PRIu64 " bytes%s%s%s", src, t->events, t->fig.peak_bytes, cut, note, filter);
  return key(b, line);
}

/* Adds model m's samples (and its comment lines) to the profile. */
static int add_model(State *st, const LjmModel *m, char *err, size_t errlen)
{
  Builder *b = &st->b;
  const LjmStreamInfo *si = ljm_model_stream(m);
  const char *src = st->nmodels == 0 && st->base.o.in_path ? st->base.o.in_path
                    : si->path ? si->path : "?";
  const LjmFigures *tf = &ljm_model_totals(m)->fig;
  const uint64_t add[NVALUES] = { tf->alloc_count, tf->alloc_bytes, tf->inuse_count,
                                  tf->inuse_bytes, tf->temp_count };
  for (int k = 0; k < NVALUES; k++) {
    if (add[k] > LJM_TOTAL_MAX - st->sum[k]) {
      snprintf(err, errlen, "%s: the merged figures would pass 2^62, past what pprof's sums "
               "hold exactly; merge fewer profiles", src);
      return -1;
    }
  }
  for (int k = 0; k < NVALUES; k++) st->sum[k] += add[k];
  if (!st->started) {
    if (!GROW(b, str, capstr, 0) || !(b->str[0] = calloc(1, 1))) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    b->nstr = 1;
    st->started = 1;
  }
  if (st->nmodels == 0) {
    st->ncm = comments(b, m, src, st->cm);
    st->snapshot = si->snapshot;
  } else if (st->nmodels <= MERGED_SHOWN) {
    st->cm[st->ncm++] = merged_comment(b, m, src);
  }
  st->nmodels++;
  if (!si->snapshot && si->duration > st->duration) st->duration = si->duration;
  if (!st->sample_rate) st->sample_rate = si->sample_rate;
  if (!st->no_temp) st->no_temp = ljm_temp_refusal(m);

  size_t nn = ljm_model_nnodes(m);
  free(b->node_loc);  /* per model: its nodes */
  if (!(b->node_loc = calloc(nn ? nn : 1, sizeof(*b->node_loc)))) b->oom = 1;
  if (si->label_sets && !b->oom) add_labelled(b, m, nn);
  else
    for (uint32_t i = 0; i < nn && !b->oom; i++) add_sample(b, m, i, ljm_model_node_self(m, i), 0);
  if (b->oom) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  return 0;
}

/* A profile merged into the output (several FILEs): its samples are added
** to the first's, functions and locations shared by name. */
static int pprof_add(void *vst, const LjmModel *m, char *err, size_t errlen)
{
  return add_model(vst, m, err, errlen);
}

/* Packs the profile and writes it gzip-compressed. */
static int write_profile(State *st, char *err, size_t errlen)
{
  Builder *b = &st->b;
  int rc = -1;
  uint8_t *buf = NULL;
  static const char *const types[NVALUES][2] = {
    {"alloc_objects", "count"}, {"alloc_space", "bytes"},
    {"inuse_objects", "count"}, {"inuse_space", "bytes"}, {"temp_objects", "count"}};
  const size_t nv = st->no_temp ? NVALUES_NO_TEMP : NVALUES;
  if (st->no_temp && st->base.o.value == LJM_VALUE_TEMP_COUNT) {
    snprintf(err, errlen, "--value temp_count: %s", st->no_temp);
    return -1;
  }
  PbValueType vt[NVALUES], period_type;
  PbValueType *vtp[NVALUES];
  for (int i = 0; i < NVALUES; i++) {
    perftools__profiles__value_type__init(&vt[i]);
    vt[i].type = str(b, types[i][0]);
    vt[i].unit = str(b, types[i][1]);
    vtp[i] = &vt[i];
  }
  perftools__profiles__value_type__init(&period_type);
  period_type.type = str(b, "space");
  period_type.unit = str(b, "bytes");

  PbMapping map;
  PbMapping *mapp = &map;
  perftools__profiles__mapping__init(&map);
  map.id = 1;
  map.filename = str(b, "luajit");
  map.has_functions = map.has_filenames = map.has_line_numbers = 1;

  if (st->nmodels > MERGED_SHOWN + 1) {
    char line[64];
    snprintf(line, sizeof line, "merged: and %zu more profiles", st->nmodels - 1 - MERGED_SHOWN);
    st->cm[st->ncm++] = str(b, line);
  }
  /* A snapshot's objects are all in use: its default view is theirs. */
  int64_t dst = str(b, st->snapshot && st->base.o.value == LJM_VALUE_DEFAULT
                           ? "inuse_space" : default_type(st->base.o.value));
  if (b->oom) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }

  /* Pointer arrays only now: the element arrays no longer move. */
  PbSample **sp = malloc((b->nsmp + 1) * sizeof *sp);
  PbLocation **lp = malloc((b->nloc + 1) * sizeof *lp);
  PbLine **lnp = malloc((b->nloc + 1) * sizeof *lnp);
  PbFunction **fp = malloc((b->nfn + 1) * sizeof *fp);
  PbLabel **labp = malloc((b->nlab + 1) * sizeof *labp);
  if (!sp || !lp || !lnp || !fp || !labp) {
    snprintf(err, errlen, "out of memory");
    goto out_ptrs;
  }
  for (size_t i = 0; i < b->nsmp; i++) {
    b->smp[i].location_id = b->ids + b->first[i];
    b->smp[i].value = b->vals + i * NVALUES;
    b->smp[i].n_value = nv;
    if (b->smp_lab[i]) {
      b->smp[i].n_label = b->smp_nlab[i];
      b->smp[i].label = labp + b->smp_lab[i] - 1;
    }
    sp[i] = &b->smp[i];
  }
  for (size_t i = 0; i < b->nlab; i++) labp[i] = &b->lab[i];
  for (size_t i = 0; i < b->nloc; i++) {
    lnp[i] = &b->line[i];
    b->loc[i].n_line = 1;
    b->loc[i].line = &lnp[i];
    lp[i] = &b->loc[i];
  }
  for (size_t i = 0; i < b->nfn; i++) fp[i] = &b->fn[i];

  PbProfile p;
  perftools__profiles__profile__init(&p);
  p.n_sample_type = nv;
  p.sample_type = vtp;
  p.n_sample = b->nsmp;
  p.sample = sp;
  p.n_mapping = 1;
  p.mapping = &mapp;
  p.n_location = b->nloc;
  p.location = lp;
  p.n_function = b->nfn;
  p.function = fp;
  p.n_string_table = b->nstr;
  p.string_table = b->str;
  p.period_type = &period_type;
  /* Go's heap profiles: values already scaled, the mean sampling interval
  ** in bytes as the period (1: every allocation). */
  p.period = st->sample_rate ? (int64_t)st->sample_rate : 1;
  p.n_comment = st->ncm;
  p.comment = st->cm;
  /* A recording with time marks: its length (with a window, the window's;
  ** merged, the longest). */
  if (st->duration < (uint64_t)INT64_MAX / 1000)
    p.duration_nanos = (int64_t)(st->duration * 1000);
  p.default_sample_type = dst;

  size_t len = perftools__profiles__profile__get_packed_size(&p);
  buf = malloc(len ? len : 1);
  if (!buf) {
    snprintf(err, errlen, "out of memory");
    goto out_ptrs;
  }
  perftools__profiles__profile__pack(&p, buf);
  rc = write_gzip(st->base.out, buf, len, err, errlen);

out_ptrs:
  free(sp);
  free(lp);
  free(lnp);
  free(fp);
  free(labp);
  free(buf);
  return rc;
}

static int pprof_finish(void *vst, const LjmModel *m, char *err, size_t errlen)
{
  State *st = vst;
  int rc = add_model(st, m, err, errlen);
  if (!rc) rc = write_profile(st, err, errlen);
  builder_free(&st->b);
  free(st);
  return rc;
}

const LjmExporter ljm_exporter_pprof = {
  .name = "pprof", .command = "convert", .reads = LJM_READS_PROFILE | LJM_READS_SNAPSHOT,
  .summary = "pprof heap profile (gzipped protobuf) for go tool pprof",
  .suffixes = (const char *const[]){".pb.gz", ".pprof", NULL}, .binary = 1, .begin = pprof_begin,
  .add = pprof_add, .finish = pprof_finish,
};
