/* rec_attr.h -- which location an allocation is charged to.
**
** Reads the VM state the public API hides: g->vmstate, the running
** coroutine g->cur_L and its frames (see rec_attr.c for the rules).
*/
#ifndef REC_ATTR_H
#define REC_ATTR_H

#include <stdint.h>

#include "rec_lj.h"

/* Source kinds, already shifted as in the event header. */
#define REC_SRC_INT   0x04
#define REC_SRC_LFUNC 0x08
#define REC_SRC_CFUNC 0x0C
#define REC_SRC_TRACE 0x10

typedef struct RecLoc {
  uint8_t src;          /* REC_SRC_* */
  const GCproto *pt;    /* LFUNC: prototype */
  uint64_t line;        /* LFUNC: current line */
  uint64_t addr;        /* CFUNC: function address */
  int32_t traceno;      /* TRACE: trace number */
} RecLoc;

/* Location of an allocator call about to happen; ptr is the block being
** reallocated or freed (NULL for a new one). Never walks frames while a
** trace runs or the VM is outside a function state. */
void rec_attr(global_State *g, const void *ptr, RecLoc *loc);

#endif
