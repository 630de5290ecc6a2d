/* rec_fname.h -- a Lua frame's function name, as LuaJIT's tracebacks
** derive it from the instruction that called it (lj_debug_funcname):
** "function 'alpha_outer'", "method 'gamma_leaf'", "field 'new'". Written
** once per stack node (rec_ext.c) as the name item of decoder/EXTENSION.md,
** so that names do not depend on where a profile is converted.
*/
#ifndef REC_FNAME_H
#define REC_FNAME_H

#include "rec_unit.h"

#include <stddef.h>

#include "rec_lj.h"

/* What the name is (the item's 'what', EXTENSION.md). */
#define REC_FN_GLOBAL 1
#define REC_FN_LOCAL 2
#define REC_FN_METHOD 3
#define REC_FN_FIELD 4
#define REC_FN_UPVALUE 5
#define REC_FN_META 6

/* Names function fn, called by instruction ins of the Lua function
** caller whose frame's registers start at base (a call, or an instruction
** that runs a metamethod). Returns REC_FN_* with name and len set, or 0
** when the bytecode names nothing, or names a global, local or upvalue
** that does not hold fn (a tail call since, or reassigned). A field or
** method is not checked: after an unproven tail call it names what the
** caller called, as LuaJIT's tracebacks do. Reads only live objects: call
** it before the real allocator runs. */
REC_API int rec_fname(global_State *g, const GCfunc *caller, const TValue *base,
                      const BCIns *ins, const GCfunc *fn, const char **name, size_t *len);

/* The local variable in register slot at instruction pc of pt (its debug
** info, as debug.getlocal reads it): 1 with *name set (NUL-terminated,
** inside the prototype), -1 for an internal one ("(for state)"), 0 for none. */
REC_API int rec_var_name(const GCproto *pt, BCPos pc, BCReg slot, const char **name);

/* The names of slots 0 .. n - 1 at instruction pc into out, as rec_var_name gives
** them one by one (NULL: none, or an internal one), in one pass over the
** debug info. */
REC_API void rec_var_names(const GCproto *pt, BCPos pc, const char **out, uint32_t n);

/* Upvalue idx's name in pt's debug info (NULL without it). */
REC_API const char *rec_uv_name(const GCproto *pt, uint32_t idx);

#endif
