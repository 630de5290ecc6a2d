/* rec_stream.h -- one ljm stream: its buffer and what it has announced.
**
** The stream layer knows the byte format (ljm-format.md §1.3-1.4): the
** leading symtab, event records, and the symtab events (0x08, 0x0C,
** 0x10) that announce a prototype, C symbol or trace before the first
** event that refers to it.
*/
#ifndef REC_STREAM_H
#define REC_STREAM_H

#include "rec_attr.h"
#include "rec_buf.h"
#include "rec_map.h"

/* Allocation event kinds (low two header bits). */
#define REC_EV_ALLOC   1
#define REC_EV_FREE    2
#define REC_EV_REALLOC 3

typedef struct RecStream {
  RecBuf out;        /* output buffer and sink */
  RecMap protos;     /* prototype -> identity it was announced with */
  RecMap traces;     /* trace number -> identity it was announced with */
  RecMap cfuncs;     /* C addresses already checked for a name */
  size_t csym_objs;  /* C-symbol cache objects already written */
  const GCproto *last_pt;  /* last prototype seen announced (fast path) */
} RecStream;

/* Initialises the stream and its buffer; 0 or ENOMEM. */
int rec_stream_init(RecStream *s, size_t bufsize, RecSinkFn sink, void *ud);
void rec_stream_free(RecStream *s);
/* Writes the ljs section (every live prototype and trace of g, every C
** symbol of the process) and the ljm prologue. */
void rec_stream_begin(RecStream *s, global_State *g);
/* Writes one allocation event, announcing its location first if new. */
void rec_stream_event(RecStream *s, global_State *g, const RecLoc *loc,
                      int ev, const void *optr, uint64_t osize,
                      const void *nptr, uint64_t nsize);
/* Writes the epilogue and flushes; returns the sticky sink error. */
int rec_stream_end(RecStream *s);

#endif
