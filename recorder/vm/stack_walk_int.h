/* stack_walk_int.h -- what the stack walker's files share (vm/stack_walk.c,
** vm/resumer.c, vm/tail_calls.c); not for the rest of the recorder.
*/
#ifndef REC_STACK_INT_H
#define REC_STACK_INT_H

#include "recorder/vm/unit.h"

#include <stdint.h>

#include "recorder/vm/lj.h"
#include "recorder/vm/stack_walk.h"

/* Generation of the caches keyed by bytecode PC (lines, call sites):
** bumped whenever a prototype is freed, since a new one may reuse its
** PCs, and when walking starts or stops; vm/stack_walk.c. */
REC_API uint32_t rec_stack_gen;

/* The thread a frame of the walk belongs to (RecFrame.aux, vm/stack_walk.h). */
#define AUX_THREAD(aux) ((aux) & ~(uintptr_t)REC_AUX_MASK)

/* Is frame slot f inside thread L's stack? */
static inline int rec_in_stack(lua_State *L, cTValue *f)
{
  cTValue *lo = tvref(L->stack) + 1 + LJ_FR2;
  return f >= lo && f < tvref(L->stack) + L->stacksize;
}

#endif
