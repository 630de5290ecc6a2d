/* vm_info.h -- what the running VM says of itself through the public API,
** for the build-match check and for a refusal a user can act on. */
#ifndef REC_VM_H
#define REC_VM_H

#include <stddef.h>

#include "lua.h"

/* The VM's version string (jit.version: "LuaJIT 2.1.1787165859") into
** buf; 0 when the host has not loaded the jit library (neither the global
** nor package.loaded has it). Raw reads: no metamethod of the host runs. */
size_t rec_vm_version(lua_State *L, char *buf, size_t n);

/* The file the VM's code lives in (the executable or libluajit), or "". */
const char *rec_vm_library(void);

#endif
