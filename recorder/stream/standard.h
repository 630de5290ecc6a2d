/* standard.h -- one ljm stream: its buffer and what it has announced.
**
** The stream layer knows the byte format (doc/ljm-format.md): the
** leading symtab, event records, and the symtab events (0x08, 0x0C,
** 0x10) that announce a prototype, C symbol or trace before the first
** event that refers to it.
*/
#ifndef REC_STREAM_H
#define REC_STREAM_H

#include "recorder/vm/unit.h"

#include "recorder/base/buffer.h"
#include "recorder/base/u64_map.h"
#include "recorder/vm/attribution.h"

/* A sampled stream (decoder/EXTENSION.md, "Sampling"): flag, the rate item
** that opens its event section, the mark of a reallocation whose new
** block is not in the sample. */
#define REC_EXT_SAMPLED 0x04
#define REC_IT_RATE 0x30
#define REC_IT_UNSAMPLED 0x31

/* Allocation event kinds (low two header bits). */
#define REC_EV_ALLOC   1
#define REC_EV_FREE    2
#define REC_EV_REALLOC 3

/* The prologue's flags of an extended stream (RecStream.ext_flags). */
#define REC_EXT_STACKS 0x01
#define REC_EXT_TIME 0x02
#define REC_EXT_TYPES 0x08  /* allocation types (0x29) follow allocations */

struct RecExt;
struct RecStream;

/* What an extension of the stream (stream/extension.h) adds at the
** standard stream's seams. */
typedef struct RecStreamHooks {
  void (*start)(struct RecStream *s);  /* before the leading symtab: its clock's zero */
  void (*begin)(struct RecStream *s, global_State *g);  /* after the prologue */
  void (*proto)(struct RecStream *s, const GCproto *pt);  /* after a prototype's announcement */
  void (*end)(struct RecStream *s);    /* before the epilogue */
  void (*free)(struct RecStream *s);
} RecStreamHooks;

typedef struct RecStream {
  RecBuf out;        /* output buffer and sink */
  struct RecExt *ext;  /* extension items (stream/extension.h), NULL: standard */
  const RecStreamHooks *hooks;  /* the extension's, NULL: standard */
  uint8_t ext_flags;  /* the extension's flags (REC_EXT_STACKS, REC_EXT_TIME) */
  uint64_t sample_rate;  /* sampled stream (capture/sampler.h): its rate, else 0 */
  RecMap protos;     /* prototype -> identity it was announced with */
  RecMap traces;     /* trace number -> identity it was announced with */
  RecMap cfuncs;     /* C addresses already checked for a name */
  size_t csym_objs;  /* C-symbol cache objects already written */
  const GCproto *last_pt;  /* last prototype seen announced (fast path) */
  uint8_t last_pt_len;     /* bytes of its address's ULEB128 in: */
  uint8_t last_pt_enc[16]; /* (written 16 bytes at a time) */
} RecStream;

/* Initialises the stream and its buffer; 0 or ENOMEM. */
REC_API int rec_stream_init(RecStream *s, size_t bufsize, RecSinkFn sink, void *ud);
REC_API void rec_stream_free(RecStream *s);
/* Writes the ljs section (every live prototype and trace of g, every C
** symbol of the process) and the ljm prologue. */
REC_API void rec_stream_begin(RecStream *s, global_State *g);
/* Writes the epilogue and flushes; returns the sticky sink error. */
REC_API int rec_stream_end(RecStream *s);

/* Cold parts of rec_stream_event (stream/standard.c): announce a location
** the stream may not know yet. */
REC_API void rec_stream_announce_proto(RecStream *s, const GCproto *pt);
REC_API void rec_stream_announce_trace(RecStream *s, global_State *g, int32_t n);
REC_API void rec_stream_announce_cfunc(RecStream *s, global_State *g, uint64_t addr);

/* Announces the event's location if the stream does not know it yet.
** Call it before the real allocator runs: the announcement reads the
** prototype or trace, and the allocator call may be the one that frees
** or moves it (the trace array growing in trace_findfree). Inline: it
** runs on every allocator call. */
static inline __attribute__((always_inline)) void
rec_stream_announce(RecStream *s, global_State *g, const RecLoc *loc)
{
  switch (loc->src) {
  case REC_SRC_LFUNC:
    /* Most events repeat the last prototype. */
    if (__builtin_expect(loc->pt != s->last_pt, 0))
      rec_stream_announce_proto(s, loc->pt);
    break;
  case REC_SRC_TRACE: rec_stream_announce_trace(s, g, loc->traceno); break;
  case REC_SRC_CFUNC: rec_stream_announce_cfunc(s, g, loc->addr); break;
  default: break;
  }
}

/* Writes one allocation event whose location rec_stream_announce() has
** announced; reads nothing of the VM. Inline: it runs on every
** allocator call. */
static inline __attribute__((always_inline)) void
rec_stream_event(RecStream *s, const RecLoc *loc, int ev, const void *optr,
                 uint64_t osize, const void *nptr, uint64_t nsize)
{
  /* Locals, not loc->..., b->p: byte stores may alias anything, so the
  ** compiler would reload every field after each of them. */
  RecBuf *b = &s->out;
  uint8_t src = loc->src, *p;
  rec_buf_need(b, REC_EVENT_MAX);
  p = b->p;
  *p++ = (uint8_t)(ev | src);
  if (src == REC_SRC_LFUNC) {
    /* The prototype's address, encoded when it became last_pt. */
    memcpy(p, s->last_pt_enc, sizeof(s->last_pt_enc));
    p += s->last_pt_len;
    p = rec_uleb_put(p, loc->line);
  } else if (src == REC_SRC_CFUNC) {
    p = rec_uleb_put(p, loc->addr);
  } else if (src == REC_SRC_TRACE) {
    p = rec_uleb_put(p, (uint64_t)loc->traceno);
  }
  if (ev != REC_EV_ALLOC) {
    /* The block may be last_pt going away: a new prototype at the same
    ** address must be checked again. */
    if (__builtin_expect(optr == (const void *)s->last_pt, 0)) s->last_pt = NULL;
    p = rec_uleb_put_addr(p, (uint64_t)(uintptr_t)optr);
    p = rec_uleb_put(p, osize);
  }
  if (ev != REC_EV_FREE) {
    p = rec_uleb_put_addr(p, (uint64_t)(uintptr_t)nptr);
    p = rec_uleb_put(p, nsize);
  }
  b->p = p;
}

/* The same, out of line (for more than one stream). */
REC_API void rec_stream_event_out(RecStream *s, const RecLoc *loc, int ev,
                                  const void *optr, uint64_t osize, const void *nptr,
                                  uint64_t nsize);

#endif
