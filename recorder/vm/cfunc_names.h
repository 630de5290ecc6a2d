/* cfunc_names.h -- Lua-side names of C functions ("string.rep").
**
** Debian's luajit and libluajit are stripped: their internal functions
** (package loaders, library functions) have no ELF symbol. Before a
** recording starts, the library tables reachable from package.loaded
** are walked (public API only, outside the allocator) and each C
** function's address is remembered under its Lua name; a C-attributed
** event whose address no ELF symbol covers is announced with that name.
** An address no name covers reads the modules loaded since then.
*/
#ifndef REC_CNAME_H
#define REC_CNAME_H

#include "recorder/vm/unit.h"

#include <stdint.h>

#include <lua.h>

/* Collects the names of the C functions reachable from package.loaded
** (one level: "string.rep", "package.loaders[2]", "require"). Keeps the
** first name seen for an address; call only outside the allocator. */
REC_API void rec_cname_scan(lua_State *L);
/* The same names for modules loaded since (`require` of a C module), and
** for the tables a C module keeps in the registry ("lpeg-pattern.__mul"):
** reads registry._LOADED, its tables' and the registry's tables' hash
** parts directly, allocating
** nothing in the VM, so it may run inside the allocator (before the real
** allocator call, when no table is half-moved). Keeps names already known. */
struct global_State;
REC_API void rec_cname_rescan(struct global_State *g);
/* Bytes of malloc'd memory the names take (the recorder's own). */
REC_API size_t rec_cname_bytes(void);
/* The name remembered for addr, or NULL. */
REC_API const char *rec_cname_get(uint64_t addr);
/* The name of a built-in written in assembler whose C handler is at
** addr ("coroutine.resume"), or NULL; for stack frames only. */
REC_API const char *rec_cname_get_ff(uint64_t addr);
/* Adds such a name unless addr has one (the function coroutine.wrap
** returns, which no library table holds). */
REC_API void rec_cname_add_ff(uint64_t addr, const char *name);

#endif
