/* extension.h -- the extension items of an extended stream.
**
** decoder/EXTENSION.md: the event section of a stream with stacks starts
** "ljm" 3 0x03 0 0 (STACKS|TIME), one with time marks only "ljm" 3 0x02
** 0 0 (TIME; a sampled stream adds 0x04). Stack nodes (0x20) form a trie
** per stream, written once each, parents first, after the symbol entries
** they name; a selection (0x21) precedes each event whose stack differs
** from the last one; time marks (0x22) come at the first event 5 ms after
** the last (the ticker or the clock, base/clock.h) and at the end, each
** followed by an RSS sample (0x23) at most every REC_RSS_US. Each
** prototype's definition name (0x25) follows its announcement, or its
** parent's when that comes later. Every extended stream has allocation
** types (flag 0x08): an allocation event is followed by its block's type
** (0x29) when that differs from the last allocation's, a reallocation by
** its new block's when one is proved (else it keeps its old block's), as
** the next allocator call judges them (vm/alloc_type.h), or a host's poll
** (is_running); a time mark or the stream's end written before either
** makes it internal. Nothing comes between an event and its type.
*/
#ifndef REC_EXT_H
#define REC_EXT_H

#include "recorder/vm/unit.h"

#include "recorder/base/clock.h"
#include "recorder/stream/standard.h"
#include "recorder/vm/alloc_type.h"
#include "recorder/vm/stack_walk.h"

#define REC_IT_NODE 0x20
#define REC_IT_SELECT 0x21
#define REC_IT_MARK 0x22
#define REC_IT_RSS 0x23
#define REC_IT_DEFNAME 0x25  /* a prototype's definition name */
#define REC_RSS_US 100000u   /* RSS samples at most every 100 ms */
#define REC_IT_LABELS 0x26   /* a label set's definition */
#define REC_IT_LSELECT 0x27  /* the label set of later events */
#define REC_IT_LFOLDED 0x28  /* label sets folded into (other) so far */
#define REC_IT_TYPE 0x29     /* the type of the block the event before made */
/* Labels: ids 1..REC_LABEL_SETS - 1, REC_LABEL_SETS the (other) set; at
** most REC_LABEL_PAIRS pairs a set, keys and values cut to their limits
** (one ULEB128 byte each). */
#define REC_LABEL_SETS 4096
#define REC_LABEL_PAIRS 16
#define REC_LABEL_KEY_MAX 63
#define REC_LABEL_VALUE_MAX 127

typedef struct RecNode {     /* trie entry: (parent, frame) -> id */
  uint64_t a, ident;
  uint32_t parent, line;
  uint32_t id;               /* 0: empty slot */
  uint8_t kind;
} RecNode;

typedef struct RecExt {
  RecNode *tab;              /* open addressing, a power of two */
  size_t mask, used;
  uint32_t next_id;          /* last id given */
  uint32_t *nid;             /* node of each frame of rec_walk.prev */
  uint32_t nid_cap;
  uint32_t nvalid;           /* nid entries that hold for rec_walk.prev */
  uint32_t sel;              /* selected node, UINT32_MAX before the first */
  uint32_t leaf;             /* the pending event's node (rec_ext_pre) */
  uint32_t depth;            /* innermost frames kept */
  RecTicker tk;
  uint64_t t0;               /* clock at the start of the stream (ns) */
  uint64_t last_us;          /* last mark */
  uint64_t rss_us;           /* mark of the last RSS sample written */
  int rss_written;
  int clocked;               /* no ticker: every event reads the clock */
  RecMap dnames;             /* prototype -> its name (DefName), until announced */
  uint32_t lsel;             /* label set last selected (0x27), 0: none */
  uint64_t lfolded;          /* folded count last written (0x28) */
  uint8_t ldef[REC_LABEL_SETS / 8 + 1];  /* label sets defined (0x26) */
  uint8_t type_cur;          /* the last allocation's type (REC_TYPE_*) */
  uint8_t type_wait;         /* the last event is an (re)allocation not judged yet:
                                REC_EV_ALLOC or REC_EV_REALLOC, else 0 */
} RecExt;

/* Makes s an extended stream keeping depth frames of each stack, or
** (depth 0) one with time marks and no stacks; 0 or ENOMEM. Call after
** rec_stream_init(), before rec_stream_begin(). The standard stream then
** calls the four below at its seams (RecStreamHooks): */
REC_API int rec_ext_init(RecStream *s, uint32_t depth);
/* With rec_stream_free(): the trie, the names, the ticker. */
REC_API void rec_ext_free(RecStream *s);
/* After the event prologue: the first mark and RSS sample, the ticker
** (none for a sampled stream: its events read the clock, rec_ext_mark). */
REC_API void rec_ext_begin(RecStream *s);
/* After a prototype's announcement (0x08, or the leading symtab): its
** definition name (0x25) if its parent named it, and the names of the
** functions it defines, now for those announced, else when they are. */
REC_API void rec_ext_proto(RecStream *s, const GCproto *pt);
/* The same for every prototype of g's leading symtab, after the prologue. */
REC_API void rec_ext_protos(RecStream *s, global_State *g);
/* Before the epilogue: the last time mark; stops the ticker. */
REC_API void rec_ext_end(RecStream *s);
/* In a fork()ed child: forgets the ticker (rec_ticker_forked). */
REC_API void rec_ext_forked(RecStream *s, int close_fds);

/* Selects label set 'set' for the events that follow (0x27) if it is not
** selected: before it, the set's definition (0x26: def, len bytes of
** pairs; none for the (other) set) the first time, and the folded count
** (0x28) if it grew. */
REC_API void rec_ext_labels(RecStream *s, uint32_t set, const uint8_t *def, uint32_t len,
                            uint64_t folded);

/* The type t (REC_TYPE_*) of the block the stream's last event made, right
** after it: written for an allocation whose type is not the last
** allocation's, for a reallocation when one was proved (t not
** REC_TYPE_NONE). No-op when no event waits (type_wait). */
REC_API void rec_ext_type(RecStream *s, uint8_t t);

/* Cold and out-of-line parts of rec_ext_pre. */
REC_API void rec_ext_mark(RecStream *s);
REC_API uint32_t rec_ext_stack(RecStream *s, global_State *g, const RecWalk *w);

/* Before the real allocator runs, for each event of an extended stream:
** a time mark when the ticker asks for one (a sampled stream's flag stays
** raised: rec_ext_mark looks at the clock), and the nodes of the event's
** stack the stream has not written yet. Nodes announce the prototypes,
** traces and C functions they name, reading them: the allocator call may
** be the one that frees or moves them (a trace exit growing the trace
** array, a trace flush). The stack's leaf waits in x->leaf. */
static inline __attribute__((always_inline)) void
rec_ext_pre(RecStream *s, global_State *g, const RecWalk *w)
{
  RecExt *x = s->ext;
  if (__builtin_expect(atomic_load_explicit(&x->tk.tick, memory_order_relaxed), 0))
    rec_ext_mark(s);
  if (__builtin_expect(!w->known, 0)) {
    x->leaf = 0;
    x->nvalid = 0;
  } else if (w->same >= w->n && x->nvalid >= w->n && x->depth >= w->depth) {
    x->leaf = x->nid[w->n - 1];  /* the same stack as the last event */
  } else {
    x->leaf = rec_ext_stack(s, g, w);
  }
}

/* Before the real allocator runs, for each event of a stream with time
** marks and no stacks: the time mark, when one is due. */
static inline __attribute__((always_inline)) void rec_ext_tick(RecStream *s)
{
  if (__builtin_expect(atomic_load_explicit(&s->ext->tk.tick, memory_order_relaxed), 0))
    rec_ext_mark(s);
}

/* After the allocator succeeded, right before the event: its stack's
** selection, if it is not the last one written. */
static inline __attribute__((always_inline)) void rec_ext_select(RecStream *s)
{
  RecExt *x = s->ext;
  if (x->leaf != x->sel) {
    RecBuf *b = &s->out;
    rec_buf_need(b, 11);
    rec_buf_byte(b, REC_IT_SELECT);
    rec_buf_uleb(b, x->leaf);
    x->sel = x->leaf;
  }
}

#endif
