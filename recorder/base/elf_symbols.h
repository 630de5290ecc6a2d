/* elf_symbols.h -- names of C functions: ELF symbols of the loaded objects.
**
** A process-wide cache, filled from dl_iterate_phdr() and each object's
** .symtab (or .dynsym when stripped). Streams copy it into their symtab at
** start and announce objects loaded later before the first C-attributed
** event that needs them. Files are read with plain malloc/mmap, never
** through the Lua allocator.
*/
#ifndef REC_CSYM_H
#define REC_CSYM_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/base/buffer.h"

/* Objects whose file name starts with one of prefixes (NULL-terminated;
** the caller keeps the array) are listed without their symbols: a host's
** own libraries that hold no Lua-callable function (ljm record's
** exporters). Call before the first refresh. */
void rec_csym_hide(const char *const *prefixes);
/* Adds objects loaded since the last call; cheap when none were. */
void rec_csym_refresh(void);
/* Number of objects in the cache (they are never removed). */
size_t rec_csym_nobjs(void);
/* Writes the symbols of object i: header 0x01 (leading symtab) or 0x0C
** (event stream). */
void rec_csym_emit(RecBuf *b, size_t i, uint8_t hdr);
/* 1 if addr lies inside a known function symbol. */
int rec_csym_covers(uint64_t addr);
/* "<object basename>+0x<offset>" for an address inside a loaded object;
** returns 0 if none holds it. */
int rec_csym_describe(uint64_t addr, char *buf, size_t len);
/* Bytes of malloc'd memory the cache holds (the recorder's own). */
size_t rec_csym_bytes(void);
/* Frees the cache (tests). */
void rec_csym_reset(void);

#endif
