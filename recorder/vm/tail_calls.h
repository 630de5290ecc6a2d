/* tail_calls.h -- tail calls proven from the bytecode (call stacks).
**
** The stack walker (vm/stack_walk.c) asks here about each Lua-linked frame
** whose contents it fills in; the rules are in vm/tail_calls.c.
*/
#ifndef REC_TAILCALL_H
#define REC_TAILCALL_H

#include "recorder/vm/unit.h"

#include <stdint.h>

#include "recorder/vm/stack_walk.h"

/* Was frame j of w->prev (outermost first) reached by a tail call from
** frame j-1? Sets its tail flag, and dep when a register decided it. */
REC_API void rec_tailcall_check(RecWalk *w, global_State *g, uint32_t j);

#endif
