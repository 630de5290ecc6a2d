/* ljm_model.h -- the event model of one ljm profile: what exporters read.
**
** A model is filled by the decoder (ljm_decoder.h) and then only read.
** Exporters include this header and nothing else from decoder/.
**
** Three views of the same stream:
**
**   sites        every distinct resolved location (a Lua line, a C function,
**                a JIT trace, INTERNAL) with one set of figures (LjmFigures),
**                defined once here and used by every exporter;
**   live heap    a true live-heap replay: in-use objects at the end, the peak
**                of live bytes and which sites held it, and, for streaming
**                exporters, every allocation event with its resolved site;
**   reference    the per-section aggregation ("Overrides") and HEAP SUMMARY of
**                Tarantool's memprof report, quirks included, for the text
**                report (doc/ljm-format.md, "What the reference report prints").
*/
#ifndef LJM_MODEL_H
#define LJM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LjmModel LjmModel;

#define LJM_NO_SITE UINT32_MAX

/* -- Sites ------------------------------------------------------------- */

typedef enum LjmSiteKind {
  LJM_SITE_INTERNAL = 0, /* VM-internal work: GC, JIT compiler, stack growth */
  LJM_SITE_LUA,          /* a line of a known Lua prototype */
  LJM_SITE_C,            /* a C function, named by symbol or unnamed */
  LJM_SITE_TRACE,        /* a JIT-compiled trace */
  LJM_SITE_LABEL         /* a label's value, the root frame of a grouped
                            tree (ljm_model_group_by): name and func
                            "KEY=value"; no events of its own */
} LjmSiteKind;

/* Figures of one site, or of the whole profile (LjmTotals.fig).
** alloc_*: ALLOC and REALLOC events made at the site and their new sizes
**   (the '+' totals of the text report's ALLOCATIONS and REALLOCATIONS).
** free_*: FREE events made at the site and their old sizes.
** inuse_*: objects allocated during the profile and live at its end,
**   charged to the site that last (re)allocated them.
** peak_*: objects the site held at the moment the live total first reached
**   its maximum (LjmTotals.peak_event).
** temp_count: its blocks freed right after they were made (temporary
**   allocations, heaptrack's rule): the free comes next after the
**   allocation, no other block allocated or freed between, where blocks
**   are told apart by stack (site in a standard stream) and size, as
**   heaptrack tells them. A reallocation frees before it allocates. Counted
**   in exact streams only (LjmTotals.temporaries).
** Frees and reallocs of objects allocated before the profile started cannot
** be attributed: they take nothing away from any live figure. */
typedef struct LjmFigures {
  uint64_t alloc_count, alloc_bytes;
  uint64_t free_count, free_bytes;
  uint64_t inuse_count, inuse_bytes;
  uint64_t peak_count, peak_bytes;
  uint64_t temp_count;
} LjmFigures;

/* a += b, figure by figure. */
static inline void ljm_figures_add(LjmFigures *a, const LjmFigures *b)
{
  a->alloc_count += b->alloc_count;
  a->alloc_bytes += b->alloc_bytes;
  a->free_count += b->free_count;
  a->free_bytes += b->free_bytes;
  a->inuse_count += b->inuse_count;
  a->inuse_bytes += b->inuse_bytes;
  a->peak_count += b->peak_count;
  a->peak_bytes += b->peak_bytes;
  a->temp_count += b->temp_count;
}

/* Where a Lua site's function name (LjmSite.func) comes from. */
typedef enum LjmFuncFrom {
  LJM_FUNC_NONE = 0,    /* not a Lua site */
  LJM_FUNC_SOURCE,      /* its definition line in its source file: "Cache:put" */
  LJM_FUNC_MAIN,        /* a chunk's main function: "main chunk" */
  LJM_FUNC_BUILTIN,     /* a library function written in bytecode: "move" */
  LJM_FUNC_ANONYMOUS,   /* the source was read, the line names nothing */
  LJM_FUNC_UNKNOWN,     /* the source was not readable */
  LJM_FUNC_DEFINED      /* named by the stream: the bytecode that defines
                           it ("make_tables", "M.new", "Obj:m") */
} LjmFuncFrom;

/* One resolved location. All strings are NUL-terminated and owned by the
** model; 'name' may in theory hold NUL bytes, so name_len is its length.
** 'name' is what the reference report prints; the other strings are for
** viewers and carry no run-specific address. */
typedef struct LjmSite {
  LjmSiteKind kind;
  const char *name;      /* text report name: "@test.lua:14", "INTERNAL",
                            "TRACE [3] started at @x.lua:7", "io_file_iter:0x56..",
                            "CFUNC 0x10", "function_alias_1:4" */
  size_t name_len;
  const char *func;      /* function for viewers. Lua: "Cache:put" (named by
                            its source), "main chunk", "move" (built-in),
                            "function <test.lua:5>" (anonymous, or no source);
                            another function showing the same text in a file
                            of the same name: "helper <util.lua:12>", "main
                            chunk <stages/init.lua>"; C: the symbol ("lj_cf_package_require")
                            or "unknown C function"; "TRACE [3]"; "INTERNAL" */
  LjmFuncFrom func_from; /* Lua: where 'func' comes from */
  const char *file;      /* Lua: chunk name without its '@'/'=' prefix, the
                            alias of a multi-line chunk, or "[builtin]"; "" when none */
  const char *chunk;     /* Lua: chunk name verbatim, or alias; "" when none */
  uint64_t func_line;    /* Lua: line the function is defined on (0: main chunk) */
  int64_t line;          /* Lua: current line; 0 when none */
  uint64_t addr;         /* prototype or C function address of the event */
  uint64_t symbol_addr;  /* C: address of the symbol that names it, else 0 */
  uint64_t traceno;      /* TRACE: trace number */
  uint32_t trace_start;  /* TRACE: site of the trace's start location (a Lua
                            line or C symbol), or LJM_NO_SITE when unknown */
  LjmFigures fig;
} LjmSite;

/* The library name of a function LuaJIT implements in bytecode, from the
** chunk name its prototype carries ("len" -> "string.len", "move" ->
** "table.move"), or NULL for another name. */
const char *ljm_builtin_name(const char *chunk, size_t len);

/* Number of sites; site ids are 0 .. n-1 in order of first use. */
size_t ljm_model_nsites(const LjmModel *m);
/* Site by id (id < ljm_model_nsites). */
const LjmSite *ljm_model_site(const LjmModel *m, uint32_t id);

/* -- Whole-profile figures and stream facts ---------------------------- */

typedef struct LjmTotals {
  LjmFigures fig;         /* sums over all sites; peak_* at the peak moment */
  uint64_t events;        /* allocation events (ALLOC + REALLOC + FREE) */
  uint64_t allocs, reallocs, frees;
  uint64_t peak_event;    /* 0-based index (among allocation events) of the
                             event after which live bytes first hit the peak
                             (with a window: also 0 when that is its start) */
  uint64_t unattributed_frees;  /* frees/reallocs of unknown blocks */
  uint64_t protos, cfuncs, traces;  /* symbol entries seen (incl. re-dumps) */
  uint64_t symtab_events;  /* 0x08/0x0C/0x10 events in the event stream */
  int temporaries;        /* 1: temp_count figures are counted; 0: not (a
                             sampled stream, whose events between samples
                             are unknown, or ljm_model_set_reference_only) */
} LjmTotals;

/* -- Call stacks ---------------------------------------------------------
** An extended stream (ljm record --stacks, decoder/EXTENSION.md) gives each
** event its call stack; the stacks form a tree of nodes, caller side first.
** A standard stream has no stacks: there every site is a node of its own
** (depth 1, node id == site id), and so is the site of an event that came
** without a stack, so every exporter draws both kinds of stream one way. */

#define LJM_NO_NODE UINT32_MAX

typedef enum LjmNodeKind {
  LJM_NODE_FRAME = 0,   /* a frame: 'site' is what runs there */
  LJM_NODE_RESUME,      /* coroutine boundary: the frames above ran in a
                           coroutine the frames below resumed */
  LJM_NODE_TAIL,        /* tail call(s) between the frames below and above */
  LJM_NODE_CUT          /* outermost frames left out (a depth limit) */
} LjmNodeKind;

typedef struct LjmNode {
  uint32_t parent;      /* the caller's node, LJM_NO_NODE when outermost */
  uint32_t site;        /* FRAME: a Lua line (for a caller: the line of its
                           call), C function or trace; else LJM_NO_SITE */
  LjmNodeKind kind;
  uint32_t depth;       /* 1 when outermost */
  uint32_t stream_id;   /* its id in the stream (1, 2, ...), 0 for a
                           site's own node */
} LjmNode;  /* figures apart (below): most nodes of deep stacks have none */

/* An event charged to another site than its stack's innermost frame
** (INTERNAL work under Lua code, a built-in's calling line, a C function
** below a Lua line) ends at a leaf of its own site under that frame: a
** node of no stream (stream_id 0) whose parent is a frame of the stream.
** So per site, the nodes' self figures add up to the site's. */
int ljm_model_node_is_charge(const LjmModel *m, uint32_t id);
/* Whether node id is a site on its own (a stream without stacks, or an
** event that came without one): at the root, or in a grouped tree right
** below its label's root. */
int ljm_model_node_alone(const LjmModel *m, uint32_t id);
/* Whether nodes are paths of frames (a stream with stacks, or a grouped
** tree: ljm_model_group_by) rather than sites on their own. */
int ljm_model_stacked(const LjmModel *m);

/* Number of nodes; ids are 0 .. n-1, a parent before its children. */
size_t ljm_model_nnodes(const LjmModel *m);
/* Node by id (id < ljm_model_nnodes). */
const LjmNode *ljm_model_node(const LjmModel *m, uint32_t id);
/* Figures of the events whose stack ends at node id (zeros if none). */
const LjmFigures *ljm_model_node_self(const LjmModel *m, uint32_t id);
/* Its self figures plus every node's above it. The first call sums them for
** all nodes (64 bytes each; zeros for every node if that memory is missing). */
const LjmFigures *ljm_model_node_total(const LjmModel *m, uint32_t id);
/* Time (usec) of node id's first and last event, LJM_NO_TIME_US without
** time marks. */
void ljm_model_node_times(const LjmModel *m, uint32_t id, uint64_t *first, uint64_t *last);

/* Samples of the process's resident set size (extended streams). */
typedef struct LjmRssSample {
  uint64_t time;        /* usec since the stream began */
  uint64_t bytes;
} LjmRssSample;
size_t ljm_model_rss(const LjmModel *m, const LjmRssSample **samples);

#define LJM_NO_TIME_US UINT64_MAX

typedef struct LjmStreamInfo {
  const char *path;       /* as given ("-" for stdin) */
  int gzip;               /* input was gzip-compressed */
  int zstd;               /* input was zstd-compressed */
  int ljs_version;        /* 1..3, 0 if not read */
  int ljm_version;        /* 1..3, 0 if not read */
  uint64_t bytes;         /* stream bytes consumed (after decompression) */
  int truncated;          /* the stream stops before its 0x80 epilogue */
  uint64_t truncated_at;  /* byte offset where it stops */
  uint64_t trailing;      /* bytes after the epilogue (ignored) */
  unsigned ext_flags;     /* extension flags (EXTENSION.md): 0 standard,
                             1 stacks, 2 time marks and RSS */
  uint64_t duration;      /* last time mark (usec), LJM_NO_TIME_US if none;
                             with a window, the window's length */
  /* A time window (ljm_model_set_window): only the events dated in
  ** [window_from, window_to) of the recording count, and every time the
  ** model gives (events, marks, RSS, nodes' times, duration) counts from
  ** window_from. window_to is where it ends: the stream's last mark when
  ** that comes first. windowed 0: the whole stream. */
  int windowed;
  uint64_t window_from, window_to;
  uint64_t recorded;      /* the stream's last time mark (usec), window or
                             not; LJM_NO_TIME_US if none */
  uint64_t names_cut;     /* names longer than LJM_STRING_MAX, kept cut */
  uint64_t name_cut_at;   /* the first one: its offset and full length */
  uint64_t name_cut_len;
  int snapshot;           /* a heap snapshot (ljm_model_load_heap): every object
                             an allocation live at the end, under the path
                             that retains it; figures are what it held then */
  uint64_t sample_rate;   /* a sampled stream (EXTENSION.md, "Sampling"): one
                             byte in this many was sampled, and every figure
                             of the model is an estimate; 0: exact */
  uint32_t label_sets;    /* label sets the stream defined (0x26), and with
                             allocation types the (set, type) pairs in use */
  int types;              /* the stream has allocation types (0x29) */
  uint64_t labels_folded; /* label sets the recorder folded into (other) */
} LjmStreamInfo;

const LjmTotals *ljm_model_totals(const LjmModel *m);
const LjmStreamInfo *ljm_model_stream(const LjmModel *m);

/* -- Streaming: every allocation event, resolved -------------------------
** A listener set before decoding sees each event in stream order, after
** the model applied it (sites and figures are up to date). A realloc
** carries both halves: the freed block (old_site) and the new one (site). */

typedef enum LjmEventKind {
  LJM_EV_ALLOC = 1,
  LJM_EV_FREE = 2,
  LJM_EV_REALLOC = 3,
  LJM_EV_CARRIED = 4   /* a time window's start (ljm_model_set_window): a
                          block allocated before it and in use then, given
                          as a new half (new_addr 0) that no figure counts
                          as an allocation; index: the window's first */
} LjmEventKind;

typedef struct LjmLiveEvent {
  LjmEventKind kind;
  uint64_t index;        /* 0-based among allocation events */
  uint64_t offset;       /* byte offset of the event header */
  uint32_t site;         /* where the event happened */
  uint32_t old_site;     /* FREE/REALLOC: owner of the freed block, or
                            LJM_NO_SITE (allocated before the profile) */
  uint64_t old_addr, old_size;  /* FREE/REALLOC: block given back; old_size
                            is the size the model remembered when known */
  uint64_t new_addr, new_size;  /* ALLOC/REALLOC: block handed out */
  uint32_t dropped_site; /* ALLOC/REALLOC over an address still live in the
                            model (a free the stream never showed): that
                            block's owner, else LJM_NO_SITE */
  uint64_t dropped_size;
  uint32_t node;         /* stack of the event (a node id) */
  uint32_t old_node;     /* stack that (re)allocated the freed block, or LJM_NO_NODE */
  uint32_t dropped_node; /* stack of the dropped block, or LJM_NO_NODE */
  uint64_t time;         /* usec (extended streams), else LJM_NO_TIME_US */
  /* Owners: what the model charges a live block to, numbered densely
  ** from 0: the site in a standard stream, a (site, node) pair in an
  ** extended one, and with slices (ljm_model_set_slices) a (site, node,
  ** slice) triple. LJM_NO_OWNER where the matching site is LJM_NO_SITE. */
  uint32_t owner;        /* of the new block (ALLOC/REALLOC) */
  uint32_t old_owner, dropped_owner;
  uint64_t slice;        /* this event's slice (from 1), 0 without slices */
  /* Blocks each half stands for: 1 (0 for a half the event lacks); in a
  ** sampled stream (LjmStreamInfo.sample_rate) the estimate, and then the
  ** sizes above are estimated bytes too. */
  uint64_t old_count, new_count, dropped_count;
  /* Temporary allocations (LjmFigures.temp_count) among the freed halves:
  ** LJM_TEMP_OLD, LJM_TEMP_DROPPED, or 0. */
  unsigned temp;
} LjmLiveEvent;

#define LJM_TEMP_OLD 1u
#define LJM_TEMP_DROPPED 2u

#define LJM_NO_OWNER UINT32_MAX

typedef struct LjmListener {
  void (*on_event)(void *ud, const LjmModel *m, const LjmLiveEvent *ev);
  /* Optional: each time mark of an extended stream (usec since the stream
  ** began), after the events before it; marks come even when nothing is
  ** allocated, so a listener can tell idle time from busy time. */
  void (*on_time)(void *ud, const LjmModel *m, uint64_t usec);
} LjmListener;

/* Keeps only what the reference report reads (ljm_model_rows, the heap
** summary, aliases and the totals' event counts): sites' and nodes' figures,
** peaks and the live totals stay empty, so an exact stream loads faster.
** Call before decoding. */
void ljm_model_set_reference_only(LjmModel *m);

/* Registers a listener (at most one; NULL removes it). Call before decoding. */
void ljm_model_set_listener(LjmModel *m, const LjmListener *l, void *ud);
/* Cuts the stream into slices for a listener that places blocks in time:
** a slice is the events of one time mark within one stretch of 'events'
** events (index / events), numbered from 1. Blocks allocated in different
** slices get different owners, so a listener can tell which slice a freed
** block came from by its owner alone. 0 (the default): no slices. Call
** before decoding. */
void ljm_model_set_slices(LjmModel *m, uint32_t events);

/* -- Reference report data (Tarantool memprof semantics) ---------------- */

typedef enum LjmSection {
  LJM_SEC_ALLOC = 0,   /* ALLOCATIONS */
  LJM_SEC_REALLOC = 1, /* REALLOCATIONS */
  LJM_SEC_FREE = 2     /* DEALLOCATIONS */
} LjmSection;

typedef struct LjmStr {
  const char *s;
  size_t len;
} LjmStr;

/* -- Labels (EXTENSION.md, "Labels") ---------------------------------------
** Label set 0 is "no labels"; sets 1..LJM_LABEL_SETS are the stream's. A
** block belongs to the set its allocation was made under (a reallocation
** keeps it); a free counts for the block's set, a free of a block the
** stream never showed allocated for none (set 0). Figures mean what the
** sites' do: a reallocation is an allocation (of its new size), not a
** free; the sets' figures add up to the totals.
**
** A stream with allocation types (EXTENSION.md, "Allocation types") gives
** every block a type as a label too, "type=table", ...: the block of an
** event of set s and type t belongs to set s + LJM_TYPED_SET * t, made
** when first used, whose labels are the pair type=NAME then those of s
** (their own key "type", if any, left out). So views by label, groups,
** label filters and pprof's sample labels show types as they show labels.
** A reallocation keeps its old block's type unless the stream gives one. */
#define LJM_TYPED_SET (LJM_LABEL_SETS + 1)
#define LJM_MODEL_SETS (LJM_TYPED_SET * LJM_TYPES)  /* set ids: 0 .. LJM_MODEL_SETS - 1 */

/* Whether set id was defined, whether its stream labels are the (other)
** set where the recorder folded sets past its limit (a typed set's: its
** type's pair only), and its number of labels. */
int ljm_model_label_defined(const LjmModel *m, uint32_t set);
int ljm_model_label_other(const LjmModel *m, uint32_t set);
unsigned ljm_model_label_count(const LjmModel *m, uint32_t set);
/* Label i of a set (0-based): key and value. */
void ljm_model_label(const LjmModel *m, uint32_t set, unsigned i, LjmStr *key, LjmStr *value);
/* The value of key in a set: 1 and *value, or 0 when the set has no such key. */
int ljm_model_label_value(const LjmModel *m, uint32_t set, const char *key, size_t klen,
                          LjmStr *value);
/* The label set of an owner (LjmLiveEvent.owner, old_owner, ...): its
** blocks' (a reallocation's new block keeps its old block's); 0: none. */
uint32_t ljm_model_owner_labels(const LjmModel *m, uint32_t owner);
/* Figures of the blocks of a set: allocated and freed, in use at the end
** (no peaks); NULL for a stream without label sets. Estimates where the
** rest are. */
const LjmFigures *ljm_model_label_figures(const LjmModel *m, uint32_t set);
/* The figures of the blocks of allocation type t (LjmType, 1..LJM_TYPES - 1)
** as the typed sets' summed: 1 and *out, or 0 for a stream without types. */
int ljm_model_type_figures(const LjmModel *m, unsigned t, LjmFigures *out);
/* Keeps only the blocks whose labels pass term "KEY=VALUE" (KEY=(none): the
** key is not set; KEY=(other): the folded set), as if the others had never
** been recorded: their events, frees and reallocations are dropped. Terms
** add up (all must pass). Call before decoding; -1 for a term without
** "KEY=", or out of memory. */
int ljm_model_label_filter(LjmModel *m, const char *term);
/* The label filter's terms (their number). */
uint32_t ljm_model_label_filters(const LjmModel *m, const char *const **terms);

/* -- Filters: which blocks the figures are of (ljm_filter.c) -------------
** A block passes every filter set, or is left out as if never recorded:
** decided when it is allocated, its free follows it. A reallocation of
** which only one half passes counts as a free of its old block or as an
** allocation of its new one (which keeps the old block's labels; its size
** and stack are the reallocation's). A free or reallocation of a block the
** stream never showed allocated is judged as if it had been made there
** (a free: under no labels). Set before decoding. */

/* Keeps blocks of min to max bytes (inclusive): 0, or -1 when min > max or
** out of memory. */
int ljm_model_filter_size(LjmModel *m, uint64_t min, uint64_t max);
typedef enum LjmFrameFilter {
  LJM_FILTER_FUNCTION,      /* some frame's function name matches */
  LJM_FILTER_NOT_FUNCTION,  /* no frame's function name matches */
  LJM_FILTER_SOURCE,        /* some frame's source file matches */
  LJM_FILTER_NOT_SOURCE     /* no frame's source file matches */
} LjmFrameFilter;
#define LJM_FILTER_REGEX_MAX 16  /* frame regexes a model takes */
/* Keeps blocks whose allocation stack (without stacks: its site; a trace:
** the file it starts in) passes an extended regular expression (regcomp).
** 0, or -1 with the reason in err: the regex does not compile, too many
** (16), out of memory. */
int ljm_model_filter_frames(LjmModel *m, LjmFrameFilter kind, const char *regex, char *err,
                            size_t errlen);
/* NULL without filters, else one phrase for titles and headers: "only
** blocks allocated under plugin=a, of 64 B to 1 KiB, with a frame whose
** function matches 'parse'" (cut with "..." to len). */
const char *ljm_model_filter_note(const LjmModel *m, char *buf, size_t len);
/* The events the filters left out. */
uint64_t ljm_model_filter_dropped(const LjmModel *m);

/* --lifetime, --lived and --site-leaked need each block's fate before its
** allocation is counted: a first reading of the stream records it
** (ljm_model_fate_scan), the second keeps the blocks whose fate passes
** (ljm_model_filter_fates). Both readings need the same time window. */
typedef enum LjmLifetime {
  LJM_LIFETIME_ANY = 0,
  LJM_LIFETIME_LEAKED,     /* not freed by the end (of the window) */
  LJM_LIFETIME_TEMPORARY,  /* freed before any other block was allocated */
  LJM_LIFETIME_FREED       /* freed before the end */
} LjmLifetime;
typedef struct LjmFateSpec {
  LjmLifetime lifetime;
  int lived;  /* keep blocks that lived lived_min_us..lived_max_us (a block
                 in use at the end: until the end; needs time marks) */
  uint64_t lived_min_us, lived_max_us;
  int site_leaked;  /* keep blocks of sites (by name) where at least this
                       share of the blocks made in view is in use at the end */
  double site_leaked_pct;
} LjmFateSpec;
typedef struct LjmFates LjmFates;
/* The first reading: m follows every block (and keeps them all). Call
** before decoding; 0, or -1 when out of memory. */
int ljm_model_fate_scan(LjmModel *m, const LjmFateSpec *spec);
/* After the first reading: the fates (the caller's, until given to
** ljm_model_filter_fates or ljm_fates_free); NULL when out of memory. */
LjmFates *ljm_model_fates_take(LjmModel *m);
/* Whether the first reading saw time marks (--lived needs them). */
int ljm_fates_timed(const LjmFates *f);
/* The second reading keeps only the blocks whose fate passes; m owns f
** from then on. Call before decoding; 0, or -1 when out of memory. */
int ljm_model_filter_fates(LjmModel *m, LjmFates *f);
void ljm_fates_free(LjmFates *f);
/* The fates' phrase for ljm_model_filter_note ("that leaked, that lived 1
** s to 5 s, from sites where at least 50% of blocks leaked"), or NULL. */
const char *ljm_fates_note(const LjmFates *f, char *buf, size_t len);
/* A place in a reading, by the events the filters have seen (the ordinal
** the fates count, the same in every reading of a stream; only under a
** filter): ljm top takes an earlier refresh's figures there in a new
** reading. fn(ud, m) runs once `events` events were seen, before the next
** one is, with every event before it applied; it may set the next mark. */
typedef void (*LjmMarkFn)(void *ud, LjmModel *m);
void ljm_model_set_mark(LjmModel *m, uint64_t events, LjmMarkFn fn, void *ud);
/* After the reading: runs the marks left, at its end (a mark past the
** end runs there). */
void ljm_model_marks_due(LjmModel *m);
/* The events the filters have seen so far. */
uint64_t ljm_model_events_seen(const LjmModel *m);
/* Groups the call tree by label KEY: each event's stack is copied under a
** root node whose site (LJM_SITE_LABEL) is named "KEY=value", the value of
** KEY in its block's set ("KEY=(none)" without KEY, "KEY=(other)" for the
** folded set), so a tree view has one root per value and a root's total
** is that value's row of the report by KEY. A free and a reallocation go
** under their block's root. A stream without stacks gets a tree too: each
** site on its own below its root. Call before decoding; -1 when out of
** memory. The original nodes stay, without figures. */
int ljm_model_group_by(LjmModel *m, const char *key);
/* The label root a node of a grouped tree is below (itself for a root), or
** LJM_NO_NODE: what a path cut to its innermost frames keeps on top. */
uint32_t ljm_model_node_group(const LjmModel *m, uint32_t id);
/* The key given to ljm_model_group_by, or NULL. */
const char *ljm_model_group_key(const LjmModel *m);
/* Owners run from 0 to ljm_model_nowners(m) - 1 (see LjmLiveEvent). */
uint32_t ljm_model_nowners(const LjmModel *m);
/* An owner whose blocks carry labels: its call-tree node, its set, and its
** blocks' figures (allocated, freed, in use; no peaks): the node's share
** under that set. NULL for an owner without labels. */
const LjmFigures *ljm_model_owner_label_figures(const LjmModel *m, uint32_t owner,
                                                uint32_t *node, uint32_t *set);

/* One row of a section: all events of one location id. Byte sums are
** doubles because the reference sums Lua numbers (exact below 2^53). */
typedef struct LjmRow {
  LjmStr name;            /* name computed at the id's first event here */
  uint64_t num;           /* events */
  double alloc, free;     /* sum of new sizes, sum of old sizes */
  size_t noverrides;
  const LjmStr *overrides; /* owners of blocks it freed or moved, sorted
                              bytewise, duplicates kept */
  uint64_t first_seen;    /* event index of the id's first event here */
} LjmRow;

typedef struct LjmHeapLine {
  LjmStr name;
  double dbytes;          /* > 0 */
  uint64_t nalloc, nfree;
} LjmHeapLine;

/* Bytewise order of two names; of a name and its prefix, the prefix first. */
int ljm_str_cmp(const LjmStr *a, const LjmStr *b);
/* qsort orders of LjmRow (as ljm_model_rows sorts) and LjmHeapLine (as
** ljm_model_heap_summary sorts). */
int ljm_row_order(const void *a, const void *b);
int ljm_heap_line_order(const void *a, const void *b);

/* Rows of a section, sorted: events descending, then name bytewise
** ascending, then first appearance. The reference leaves ties unordered. */
size_t ljm_model_rows(const LjmModel *m, LjmSection sec, const LjmRow **rows);
/* HEAP SUMMARY lines (dbytes > 0), sorted: bytes descending, then name
** bytewise ascending. */
size_t ljm_model_heap_summary(const LjmModel *m, const LjmHeapLine **lines);

/* Aliases of multi-line chunk names ("function_alias_<number>"), in
** creation order; 'text' is the chunk text. */
typedef struct LjmAlias {
  unsigned number;
  LjmStr text;
} LjmAlias;
size_t ljm_model_aliases(const LjmModel *m, const LjmAlias **aliases);

#ifdef __cplusplus
}
#endif

#endif
