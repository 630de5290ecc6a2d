/* rec_cname.h -- Lua-side names of C functions ("string.rep").
**
** Debian's luajit and libluajit are stripped: their internal functions
** (package loaders, library functions) have no ELF symbol. Before a
** recording starts, the library tables reachable from package.loaded
** are walked (public API only, outside the allocator) and each C
** function's address is remembered under its Lua name; a C-attributed
** event whose address no ELF symbol covers is announced with that name.
*/
#ifndef REC_CNAME_H
#define REC_CNAME_H

#include "rec_unit.h"

#include <stdint.h>

#include <lua.h>

/* Collects the names of the C functions reachable from package.loaded
** (one level: "string.rep", "package.loaders[2]", "require"). Keeps the
** first name seen for an address; call only outside the allocator. */
REC_API void rec_cname_scan(lua_State *L);
/* The name remembered for addr, or NULL. */
REC_API const char *rec_cname_get(uint64_t addr);
/* The name of a built-in written in assembler whose C handler is at
** addr ("coroutine.resume"), or NULL; for stack frames only. */
REC_API const char *rec_cname_get_ff(uint64_t addr);
/* Adds such a name unless addr has one (the function coroutine.wrap
** returns, which no library table holds). */
REC_API void rec_cname_add_ff(uint64_t addr, const char *name);

#endif
