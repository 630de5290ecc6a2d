/* func_names.h -- function names from the bytecode that defines them,
** and the names of locals and upvalues (debug info). The names of
** functions are written once per prototype (stream/extension.c) as the definition
** name item of decoder/EXTENSION.md, so that a profile names its
** functions the same wherever it is converted.
*/
#ifndef REC_FNAME_H
#define REC_FNAME_H

#include "recorder/vm/unit.h"

#include <stddef.h>

#include "recorder/vm/lj.h"

/* Calls fn(ud, child, name, len) for each function prototype pt defines
** and names (vm/func_names.c): "make_tables", "M.new", "Obj:m", "on_x". The
** name is NUL-terminated, at most 255 bytes, valid during the call. Reads
** the bytecode only: call it for any live prototype. */
typedef void (*RecDefNameFn)(void *ud, const GCproto *child, const char *name, size_t len);
REC_API void rec_def_names(const GCproto *pt, RecDefNameFn fn, void *ud);

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
