/* rec_stack_int.h -- what the stack walker's files share (rec_stack.c,
** rec_resumer.c, rec_tailcall.c); not for the rest of the recorder.
*/
#ifndef REC_STACK_INT_H
#define REC_STACK_INT_H

#include "rec_unit.h"

#include <stdint.h>

#include "rec_lj.h"
#include "rec_stack.h"

/* Generation of the caches keyed by bytecode PC (lines, call sites):
** bumped whenever a prototype is freed, since a new one may reuse its
** PCs, and when walking starts or stops; rec_stack.c. */
REC_API uint32_t rec_stack_gen;

/* The thread a frame of the walk belongs to (RecFrame.aux, rec_stack.h). */
#define AUX_THREAD(aux) ((aux) & ~(uintptr_t)REC_AUX_MASK)

/* Is frame slot f inside thread L's stack? */
static inline int rec_in_stack(lua_State *L, cTValue *f)
{
  cTValue *lo = tvref(L->stack) + 1 + LJ_FR2;
  return f >= lo && f < tvref(L->stack) + L->stacksize;
}

#endif
