/* unit.h -- linkage of the files that read LuaJIT's internals.
**
** Those files are compiled together as one translation unit, once per
** LuaJIT flavour (capture/flavour_unit.c): what they share is static, so that
** several flavours' copies live side by side in one program and each is
** reached only through its RecFlavour table (capture/flavour.h).
*/
#ifndef REC_UNIT_H
#define REC_UNIT_H

/* Functions and data shared between those files. */
#define REC_API static

#endif
