/* ht_events.h -- the '+' and '-' lines of a heaptrack file and the
** allocation infos ('a' records) they index.
**
** An allocation info is a (size, trace node) pair, written just before its
** first use; '+ i' allocates one block of info i, '- i' frees one. Two
** readers constrain the indices:
**
**   heaptrack_gui   requires every index to be used by a '+' for the first
**                   time in the order 0, 1, 2, ... (its parser appends a
**                   counter only when index == counters so far; anything
**                   else indexes past the end and crashes).
**   heaptrack       counts a '-' as temporary when the line before it was a
**                   '+' with the same index; but it resets that memory to 0
**                   after every '-', so a '- 0' right after another '-' is
**                   always counted temporary, wrongly.
**
** So index 0 is the info of the very first '+' and is used by that one line
** only: later blocks of the same (size, trace) get a second index, made by
** their own first '+'. A '- 0' is only needed for that first block, and it
** is written where heaptrack counts it right: after a '+' of another index.
** When the block is freed right after another '-', the free is moved back to
** just after the latest '+' that is not followed by its own free and after
** which no '+' raised the peak (so the peak and its moment do not change),
** or else held back until just after a later such '+', as long as the '+'
** lines it passes stay below the peak so far. Only if neither is possible
** is it written in place, and heaptrack counts one temporary allocation too
** many (ht_events_test counts how often: rarely, on adversarial sequences).
*/
#ifndef HT_EVENTS_H
#define HT_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/heaptrack/ht_text.h"

typedef struct HtInfo HtInfo;

/* A place in the text: just after a '+' line. */
typedef struct HtSpot {
  size_t end;                /* offset in text->buf */
  uint64_t flushes;          /* text->flushes then; valid while equal */
  int ok;                    /* 0: no such place */
} HtSpot;
typedef struct HtTraceCache HtTraceCache;

typedef struct HtEvents {
  HtText *text;
  HtInfo *info;              /* (size, trace) -> index, open addressing */
  size_t capinfo, ninfo;     /* ninfo: 'a' records written */
  HtTraceCache *cache;       /* per trace node: its last (size, index) */
  size_t capcache;
  /* index 0: the first '+' */
  uint64_t size0;
  uint32_t trace0;
  int have0;                 /* index 0 is assigned */
  /* the line before the next one */
  char prev_mode;            /* '+', '-' or 0 */
  uint64_t prev_idx;
  /* where a '- 0' may be moved back to: just after a '+' */
  HtSpot spot;               /* the latest such place */
  HtSpot spot_before;        /* the one before the last '+', if that '+'
                                may be passed */
  /* a '- 0' held back */
  int pending;
  uint64_t live, max;        /* live bytes as written; their maximum */
  uint64_t misplaced;        /* '- 0' written where it counts as temporary */
  int oom;
  int bad;                   /* a '-' matched no earlier '+' (a bug) */
} HtEvents;

/* Starts writing event lines into t. */
void ht_events_init(HtEvents *e, HtText *t);
/* One allocated block of 'size' bytes whose leaf trace node is 'trace'. */
void ht_events_plus(HtEvents *e, uint64_t size, uint32_t trace);
/* One freed block, allocated earlier with the same size and trace node. */
void ht_events_minus(HtEvents *e, uint64_t size, uint32_t trace);
/* Writes a free still held back; call once after the last event. */
void ht_events_finish(HtEvents *e);
/* Frees the tables (not the text). */
void ht_events_free(HtEvents *e);

#endif
