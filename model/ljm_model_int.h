/* ljm_model_int.h -- internal: the model's state, shared by its parts. */
#ifndef LJM_MODEL_INT_H
#define LJM_MODEL_INT_H

#include <stdint.h>

#include "model/ljm_addrmap.h"
#include "model/ljm_csyms.h"
#include "decoder/ljm_decoder.h"
#include "model/ljm_hmap.h"
#include "model/ljm_model_load.h"
#include "model/ljm_strtab.h"

#define NONE UINT32_MAX

/* A Lua prototype as last defined at its address. */
typedef struct Proto {
  uint32_t chunk;     /* chunk name (strtab id) */
  uint32_t shown;     /* what names show: the chunk (cut to
                         LJM_NAME_SHOWN_MAX bytes) or its alias */
  uint64_t firstline;
  int aliased;        /* shown is an alias: no '@' or '=' to strip */
  uint32_t defname;   /* the stream's definition name (0x25), or NONE */
} Proto;

/* A function as names tell it apart: its chunk and definition line. */
typedef struct FnId {
  uint32_t chunk;
  uint64_t firstline;
} FnId;

/* Longest chunk or C symbol name shown in a site's names; a longer one
** shows its first bytes and "...": each site costs a bounded amount
** whatever one name costs in the stream. */
#define LJM_NAME_SHOWN_MAX 512

/* s as shown: itself, or when longer than LJM_NAME_SHOWN_MAX its first
** bytes and "..." written into cut (LJM_NAME_SHOWN_MAX + 3 bytes); *len
** becomes the shown length. */
const char *ljm_model_shown(const char *s, size_t *len, char *cut);
/* Interns s as ljm_model_shown shows it. */
uint32_t ljm_model_intern_shown(LjmModel *m, const char *s, size_t len);

typedef struct Trace {
  uint64_t proto, line;  /* start location */
} Trace;

/* A location id as the reference defines it: (addr, line, traceno). */
typedef struct Loc {
  uint64_t addr, line, traceno;
  uint32_t name_gen;   /* symbol generation the cached name belongs to */
  uint32_t name;       /* cached name (strtab id) */
  uint32_t site;       /* site of (this loc, cached name) */
  uint32_t group[3];   /* reference row per section, or NONE */
} Loc;

/* Reference row: events of one loc in one section. */
typedef struct Group {
  uint32_t loc, name;
  uint64_t num, first_seen;
  double alloc, free;
  uint32_t prim_first;   /* first primary (Overrides) entry, chained */
  uint32_t nprim;
  uint32_t last_prim, last_owner;  /* most recent entry and its owner loc */
} Group;

/* An "Overrides" entry: blocks of owner 'loc' freed or moved by a group. */
typedef struct Prim {
  uint32_t name;
  uint32_t next;        /* next entry of the same group, or NONE */
  uint64_t count;
  double allocated, freed;
} Prim;

/* What a site or node held at the last peak: its live figures are copied
** here before they first change after the live total reached a new peak
** (epoch), so at the end the snapshot of the last epoch is the peak. */
typedef struct PeakSnap {
  uint64_t epoch;        /* peak epoch when the snapshot was taken */
  uint64_t count, bytes; /* live figures then */
} PeakSnap;

/* Keeps f's live figures in s before they change in epoch 'epoch'. */
static inline void peak_touch(PeakSnap *s, uint64_t epoch, const LjmFigures *f)
{
  if (s->epoch != epoch) {
    s->epoch = epoch;
    s->count = f->inuse_count;
    s->bytes = f->inuse_bytes;
  }
}

/* Sets f's peak figures once decoding is over: the snapshot of the last
** epoch, or the live figures if they never changed after it. */
static inline void peak_finish(const PeakSnap *s, uint64_t epoch, LjmFigures *f)
{
  if (epoch == 0) {
    f->peak_count = f->peak_bytes = 0;
  } else if (s->epoch == epoch) {
    f->peak_count = s->count;
    f->peak_bytes = s->bytes;
  } else {
    f->peak_count = f->inuse_count;
    f->peak_bytes = f->inuse_bytes;
  }
}

/* Figures of a node events end at (extended streams): few nodes have any. */
typedef struct NodeFig {
  LjmFigures self;
  PeakSnap snap;                  /* its peak snapshot */
  uint64_t first_time, last_time; /* LJM_NO_TIME_US: none */
} NodeFig;

/* Owner of a live block in an extended stream or with slices: the site,
** the stack (the site's own node in a standard stream) and the slice. */
typedef struct Ctx {
  uint32_t site, node;
  uint64_t slice;
  uint32_t labels;   /* label set of its blocks (0: none) */
} Ctx;

/* A label set of the stream (ljm_labels.c): pairs[first .. first+n). */
typedef struct LabelSet {
  uint32_t first, n;
  uint8_t defined;
  uint8_t other;     /* the stream's (other) set, or a typed set of it */
} LabelSet;

/* Source text of a chunk (ljm_sources.c); text NULL: not readable. */
typedef struct SrcText {
  char *text;
  size_t len;
  uint32_t *lines;      /* offset of each line's start */
  uint32_t nlines;
  int owned;            /* text was read from a file (else: the chunk name) */
} SrcText;

/* Site bookkeeping beside the public LjmSite. */
typedef struct SiteX {
  uint32_t loc, name;
  PeakSnap snap;
} SiteX;


/* What one event counts for: the allocated half (nc events, nb bytes),
** the freed half as the stream gives it (oc, ob) and as the model
** remembered the block (obb). 1 and the sizes in an exact stream; the
** estimates of a sampled one (ljm_sample.c). */
typedef struct LjmWeights {
  uint64_t nc, nb, oc, ob, obb;
} LjmWeights;

struct LjmModel {
  LjmStrtab str;
  /* symbols */
  LjmHmap proto_by_addr;  Proto *protos;  uint32_t nprotos, capprotos;
  LjmHmap trace_by_no;    Trace *traces;  uint32_t ntraces, captraces;
  LjmCsyms csyms;         /* names in str's arena, not interned */
  LjmHmap alias_by_chunk; LjmAlias *aliases; uint32_t naliases, capaliases;
  uint32_t gen;           /* bumped whenever a symbol change may rename a loc */
  /* locations and sites */
  Loc *locs;  uint32_t nlocs, caplocs;
  uint32_t *loc_slots;  uint32_t loc_mask;
#define LOC_CACHE 64
  uint32_t loc_cache[LOC_CACHE];  /* recently used locs, or NONE */
  LjmSite *sites;  SiteX *sitex;  uint32_t nsites, capsites;
  LjmHmap site_by_key;    /* (loc << 32 | name) -> site */
  /* live heap */
  LjmAddrmap blocks;
  uint64_t live_count, live_bytes, epoch;
  /* reference aggregation */
  Group *groups[3];  uint32_t ngroups[3], capgroups[3];
  Prim *prims;  uint32_t nprims, capprims;
  LjmHmap prim_by_key;
  /* results */
  LjmTotals totals;
  LjmStreamInfo info;
  const LjmListener *listener;
  LjmListener listener_copy;
  void *listener_ud;
  int oom;                /* an allocation failed: decoding stops */
  int bad;                /* an event with impossible figures: decoding stops */
  LjmDiag bad_diag;       /* where and why */
  uint64_t sum_alloc, sum_free;  /* running byte totals, for the limits */
  uint64_t sum_count;     /* estimated events (sampled streams), for the limit */
  double rate;            /* sampled stream: its rate in bytes, else 0 */
  LjmProgressFn progress; void *progress_ud;
  /* finished views */
  LjmRow *rows[3];
  LjmStr *override_names;
  LjmHeapLine *heap;  size_t nheap;
  uint32_t id_internal, id_trace, id_cfunc;  /* interned constants */
  /* call stacks (ljm_stacks.c); in a standard stream node i is site i */
  int stacks;             /* the stream has stacks */
  int ctx_owners;         /* stacks or slices: blocks are owned by ctxs */
  int typed;              /* allocation types: blocks are in typed sets */
  uint32_t slice_events;  /* ljm_model_set_slices; 0: none */
  int reference_only;     /* ljm_model_set_reference_only */
  /* Temporaries (LjmFigures.temp_count): the last line of heaptrack's
  ** sequence (a block's free, then a reallocation's dropped block, then the
  ** new block) was the new block tmp_node made of tmp_size bytes. */
  int tmp_plus;  uint32_t tmp_node;  uint64_t tmp_size;
  int path;               /* 0 before the first event, then PATH_* (ljm_model.c) */
  uint64_t slice, slice_no, slice_time;  /* the current slice and what makes it */
  LjmNode *nodes;  uint32_t nnodes, capnodes;
  uint32_t *node_fig;  /* node -> its figures (figs), NONE when it has none */
  NodeFig *figs;  uint32_t nfigs, capfigs;
  LjmFigures *node_total;  /* ljm_model_node_total's sums, made on first use */
  uint32_t *stream_node;  uint32_t nstream, capstream;  /* stream id - 1 -> node */
  uint32_t *site_node;  uint32_t capsite_node;  /* site -> its own node, or NONE */
  /* (stream node, site) -> the leaf an event of another site than its
  ** stack's innermost frame hangs under that frame; the last one used */
  LjmHmap leaf_by_key;  uint64_t last_leaf_key;  uint32_t last_leaf;
  /* (function text, file name) -> the function (fnids) that shows it */
  LjmHmap fn_by_text;  FnId *fnids;  uint32_t nfnids, capfnids;
  Ctx *ctxs;  uint32_t nctxs, capctxs;  LjmHmap ctx_by_key;
  LjmHmap ctx_by_label;  /* (ctx without labels << 16 | label set) -> ctx */
  /* labels (ljm_labels.c): sets by id, their pairs (strtab ids, key then
  ** value), figures per set; allocated at the first set */
  LabelSet *lsets;  uint32_t *lpairs;  uint32_t nlpairs, caplpairs;
  LjmFigures *label_fig;
  /* figures of the ctxs with labels, by ctx id (others' stay zero): a
  ** node's share per label set, for pprof's sample labels */
  LjmFigures *ctx_fig;  uint32_t capctx_fig;
  /* the label filter (ljm_model_label_filter): its terms, whether each set
  ** passes (0 not known yet, 1 no, 2 yes) */
  char **lterms;  uint32_t nlterms;
  uint8_t *lmatch;
  /* the block filter (ljm_filter.c): whether any filter is set; the blocks
  ** it left out by address (size: FILTER_BY_LABEL or FILTER_BY_OTHER,
  ** site: the block's label set), whose frees and reallocations follow
  ** them; the events it left out */
  int filtering;
  LjmAddrmap lexcluded;  int lexcluded_init;
  uint64_t ldropped;
  /* --size: the range (inclusive); --function, --source and their
  ** negations: compiled, their kinds, the masks of the regexes that must
  ** match (fpos) and must not (fneg); per site and per node (by id, in
  ** order: a parent before its children) the regexes a frame matches,
  ** FILTER_KNOWN once computed */
  int fsize;  uint64_t fsize_min, fsize_max;
  struct FilterRe *fre;  uint32_t nfre;  uint32_t fpos, fneg;
  uint32_t *fsite_mask;  uint32_t capfsite_mask;
  uint32_t *fnode_mask;  uint32_t capfnode_mask, fnode_done;
  /* --lifetime, --lived, --site-leaked (ljm_fates.c): the events the
  ** filter has seen (an event's ordinal, the same in both readings); the
  ** first reading's state, or the second's fates; per site whether it
  ** passes --site-leaked (0 not known yet, 1 no, 2 yes) */
  uint64_t fordinal;
  LjmMarkFn mark_fn;  void *mark_ud;  uint64_t mark_at;  /* ljm_model_set_mark */
  struct FateScan *fscan;
  LjmFates *fates;
  uint8_t *fsite_ok;  uint32_t capfsite_ok;
  /* --group-by (ljm_group.c): the key, each set's root node (NONE: not
  ** made yet), the roots by name (strtab id), each node's copy under a root
  ** ((root << 32 | node) -> copy), the last copy made or found, the copies
** made, scratch */
  char *gkey;  uint32_t *groot;  LjmHmap groot_by_name, gcopy;
  uint64_t glast_key;  uint32_t glast;  uint64_t gcopies;
  uint32_t *gpath;  uint32_t capgpath;
  uint32_t *groot_of;  uint32_t capgroot_of;  /* node -> its root, NONE: none */
  /* a stream with time marks and no stacks: each site's first and last
  ** event time (2 per site, LJM_NO_TIME_US for none), as nodes' with stacks */
  uint64_t *site_time;  uint32_t capsite_time;
#define CTX_CACHE 64
  uint32_t ctx_cache[CTX_CACHE];  /* recently used ctxs by (site, node) hash */
  LjmRssSample *rss;  uint32_t nrss, caprss;
  /* a time window (ljm_window.c): set, its bounds, 1 once it started, 1
  ** once it ended, the events before it (for a sampled block's coin) */
  int win;  uint64_t win_from, win_to;  int win_in, win_out;  uint64_t win_before;
  /* source files, for function names (ljm_sources.c) */
  int use_sources;
  char **src_dirs;  size_t nsrc_dirs;
  LjmHmap src_by_chunk;  SrcText *srcs;  uint32_t nsrcs, capsrcs;
  uint32_t src_missing;  const char *src_missing_example;  /* files not found */
};

/* ljm_model.c: the decoder callbacks that build a model, and what comes
** before and after them (ljm_model_load; ljm_heapflame.c calls them too). */
const LjmCallbacks *ljm_model_callbacks(void);
void ljm_model_begin(LjmModel *m, const char *path);
LjmStatus ljm_model_end(LjmModel *m, LjmStatus st, LjmDiag *diag);

/* ljm_symbols.c: symbol table updates from the decoder. */
void ljm_sym_proto(LjmModel *m, uint64_t addr, const char *chunk, size_t len,
                   uint64_t firstline);
void ljm_sym_cfunc(LjmModel *m, uint64_t addr, const char *name, size_t len);
void ljm_sym_trace(LjmModel *m, uint64_t traceno, uint64_t proto, uint64_t line);
/* The definition name of the prototype last announced at addr (0x25). */
void ljm_sym_proto_name(LjmModel *m, uint64_t addr, const char *name, size_t len);
/* Prototype at addr, or NULL. */
const Proto *ljm_sym_find_proto(const LjmModel *m, uint64_t addr);

/* ljm_names.c: the name of a location under the current symbols, and the
** site that (loc, name) stands for (created on first use). */
uint32_t ljm_names_site_of(LjmModel *m, uint32_t loc);
/* Once decoding is over: sites described before their function's
** definition name arrived take it. */
void ljm_names_finish(LjmModel *m);
/* Are sites a and b the same place (location and reference name)? */
static inline int ljm_names_same_place(const LjmModel *m, uint32_t a, uint32_t b);
/* A site of kind LJM_SITE_LABEL named by strtab id 'name'; NONE when out
** of memory. */
uint32_t ljm_names_label_site(LjmModel *m, uint32_t name);
/* Formats a double the way LuaJIT's "%d" does (used for names and reports). */
int ljm_fmt_lua_int(char *buf, size_t len, double n);

/* ljm_sources.c: line 'line' (1-based) of a chunk's source, NULL when not
** readable or when sources are off; whether the source is readable. */
const char *ljm_sources_line(LjmModel *m, uint32_t chunk, uint64_t line, size_t *len);
int ljm_sources_readable(LjmModel *m, uint32_t chunk);
void ljm_sources_free(LjmModel *m);

/* ljm_stacks.c: nodes, the owners of live blocks, RSS samples. */
void ljm_stacks_on_node(LjmModel *m, uint32_t id, uint32_t parent, const LjmRawFrame *f);
/* Node of an event: its stream stack, or the site's own node (stack 0).
** An event charged to another site than its stack's innermost frame
** (INTERNAL work, a built-in's calling line, a C function below a Lua
** line) gets a leaf of its own site under that frame, so that per site
** the stacked figures equal the flat ones. */
uint32_t ljm_stacks_event_node(LjmModel *m, uint32_t stack, uint32_t site);
/* The leaf of site under node n, for an event charged to another site
** than n's (made on first use); NONE when out of memory. */
uint32_t ljm_stacks_leaf_node(LjmModel *m, uint32_t n, uint32_t site);
/* Appends a node (parent NONE: a root); its id, or NONE when out of memory. */
uint32_t ljm_stacks_node_new(LjmModel *m, uint32_t parent, uint32_t site, LjmNodeKind kind);
/* The node a site is on its own (standard streams: node id == site id). */
uint32_t ljm_stacks_site_node(LjmModel *m, uint32_t site);
/* Interned owner (site, node, label set, current slice) of a block
** (m->ctx_owners). */
uint32_t ljm_stacks_ctx(LjmModel *m, uint32_t site, uint32_t node, uint32_t labels);
void ljm_stacks_on_rss(LjmModel *m, uint64_t time, uint64_t bytes);

/* ljm_window.c: the time window's start: its peak is the live heap then, and
** a listener gets the blocks in use (LJM_EV_CARRIED). */
void ljm_window_start(LjmModel *m);
/* The figures of node n, made on first use; NULL when out of memory. */
NodeFig *ljm_stacks_fig(LjmModel *m, uint32_t n);
/* Node figures once decoding is over (peaks and totals). */
void ljm_stacks_finish(LjmModel *m);
void ljm_stacks_free(LjmModel *m);

/* ljm_group.c (ljm_model_group_by): the label set of an event's block (an
** allocation: the event's; a free or reallocation: its live block's, else
** none or the event's), and a node's copy under that set's root; NONE when
** out of memory. */
uint32_t ljm_group_set(LjmModel *m, const LjmRawEvent *ev, uint64_t okey);
uint32_t ljm_group_node(LjmModel *m, uint32_t node, uint32_t set);
void ljm_group_free(LjmModel *m);

/* ljm_labels.c: label sets from the decoder, freed with the model. */
int ljm_labels_init(LjmModel *m);
void ljm_labels_on_set(LjmModel *m, uint32_t id, const LjmLabel *l, unsigned n);
void ljm_labels_free(LjmModel *m);
/* The figures of ctx c (one with labels), made on first use; NULL when out
** of memory. */
LjmFigures *ljm_labels_ctx_fig(LjmModel *m, uint32_t c);
/* Whether a block allocated under label set 'set' passes the label filter. */
int ljm_labels_pass(LjmModel *m, uint32_t set);
/* The typed set of stream set 'base' and type t (1..LJM_TYPES - 1), defined
** at its first use (ljm_model.h, "Labels"). */
uint32_t ljm_labels_define_typed(LjmModel *m, uint32_t base, unsigned t);
static inline uint32_t ljm_labels_typed(LjmModel *m, uint32_t base, unsigned t)
{
  uint32_t id = base + LJM_TYPED_SET * t;
  return __builtin_expect(m->lsets && m->lsets[id].defined, 1) ? id
                                                               : ljm_labels_define_typed(m, base, t);
}
/* The label set of an event's new block (with types: its typed set; a
** filter's copy may carry one already); a free's is its block's. */
static inline uint32_t ljm_event_labels(LjmModel *m, const LjmRawEvent *ev)
{
  if (__builtin_expect(!m->typed, 1) || (ev->labels >= LJM_TYPED_SET && !ev->type))
    return ev->labels;
  return ljm_labels_typed(m, ev->labels % LJM_TYPED_SET,
                          ev->type ? ev->type : LJM_TYPE_INTERNAL);
}

/* ljm_filter.c: the block filter. The event the model takes for ev of
** site si (okey, nkey: its map keys): ev itself, *copy (a reallocation of
** which only one half passes, made a free or an allocation), or NULL when
** the filter leaves it out. */
const LjmRawEvent *ljm_filter_event(LjmModel *m, const LjmRawEvent *ev, uint32_t si,
                                    uint64_t okey, uint64_t nkey, LjmRawEvent *copy);
/* ljm_fates.c: the first reading's record of event ev (ordinal: its
** number among the events the filter sees); whether the block made by
** event 'ordinal' at site si passes the fates (the second reading), and
** whether a block the stream never showed made, freed at site si, does. */
void ljm_fates_event(LjmModel *m, const LjmRawEvent *ev, uint32_t si, uint64_t okey,
                     uint64_t nkey, uint64_t ordinal);
int ljm_fates_pass(LjmModel *m, uint64_t ordinal, uint32_t si);
int ljm_fates_unknown_pass(LjmModel *m, uint32_t si);
void ljm_fates_scan_free(LjmModel *m);
/* Makes the excluded-blocks map on the first filter: 0, or -1. */
int ljm_filter_init(LjmModel *m);
void ljm_filter_free(LjmModel *m);

/* ljm_refagg.c: the reference aggregation. Rows and Overrides entries are
** created out of line; the per-event part (ljm_refagg_event) is inline:
** every event goes through it. */
uint32_t ljm_refagg_group_new(LjmModel *m, int sec, uint32_t loc);
Prim *ljm_refagg_prim(LjmModel *m, int sec, uint32_t gi, uint32_t owner_site);
int ljm_refagg_finish(LjmModel *m);

/* Adds an event to its location's row in its section, and the block it
** freed (had_old; old_block's site is a site) to the row's Overrides. Sizes
** are below 2^56 here (LJM_SIZE_MAX), so converting them as signed numbers
** gives the same doubles. */
static inline __attribute__((always_inline)) void ljm_refagg_event(LjmModel *m, const LjmRawEvent *ev, uint32_t li,
                                    const LjmBlock *old_block, int had_old,
                                    const LjmWeights *w)
{
  static const int8_t sec_of[4] = { LJM_SEC_FREE, LJM_SEC_ALLOC, LJM_SEC_FREE, LJM_SEC_REALLOC };
  int sec = sec_of[ev->kind & 3];
  uint32_t gi = m->locs[li].group[sec];
  if (__builtin_expect(gi == NONE, 0) && (gi = ljm_refagg_group_new(m, sec, li)) == NONE) return;
  Group *g = &m->groups[sec][gi];
  g->num += ev->kind == LJM_RAW_FREE ? w->oc : w->nc;
  if (ev->kind != LJM_RAW_FREE) g->alloc += (double)(int64_t)w->nb;
  if (ev->kind != LJM_RAW_ALLOC) g->free += (double)(int64_t)w->ob;
  if (!had_old) return;
  /* A sweep frees many blocks of one owner in a row: try the last entry. */
  Prim *p;
  if (g->last_prim != NONE && g->last_owner == m->sitex[old_block->site].loc)
    p = &m->prims[g->last_prim];
  else if (!(p = ljm_refagg_prim(m, sec, gi, old_block->site)))
    return;
  if (ev->kind == LJM_RAW_REALLOC) p->allocated += (double)(int64_t)w->nb;
  p->freed += (double)(int64_t)w->obb;
  p->count += w->oc;
}

/* ljm_sample.c (decoder/EXTENSION.md, "Sampling"). Whether the count of a
** block of size bytes at addr, made by event index, is rounded up; and the
** count and bytes it stands for. A live block of a sampled stream keeps
** its coin in its size's top bit. */
#define LJM_SAMPLE_UP (1ull << 63)
int ljm_sample_coin(double rate, uint64_t size, uint64_t addr, uint64_t index);
void ljm_sample_weight(double rate, uint64_t size, int up, uint64_t *count, uint64_t *bytes);

/* ljm_model.c */
uint32_t ljm_model_loc(LjmModel *m, uint64_t addr, uint64_t line, uint64_t traceno);
uint32_t ljm_model_intern(LjmModel *m, const char *s, size_t len);
void *ljm_model_grow(LjmModel *m, void *arr, uint32_t *cap, size_t elem);
/* arr (*cap elements of elem bytes) grown to hold index i, doubling from
** first, its new elements' bytes set to fill; NULL (m->oom, arr kept)
** when out of memory. */
void *ljm_model_cover(LjmModel *m, void *arr, uint32_t *cap, uint32_t i, size_t elem,
                      uint32_t first, int fill);

static inline int ljm_names_same_place(const LjmModel *m, uint32_t a, uint32_t b)
{
  return a == b || (m->sitex[a].loc == m->sitex[b].loc && m->sitex[a].name == m->sitex[b].name);
}

#endif
