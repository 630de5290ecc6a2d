/* gen_symtab.h -- the leading "ljs" v3 section of the benchmark stream.
**
** A real profile's symtab holds ~5700 C symbols (~123 KB) plus the Lua
** prototypes alive at start; the decoder must index all of them, so the
** benchmark needs one of realistic size. It is either copied from a real
** stream (e.g. testdata/v3/empty.ljm) or synthesised deterministically.
*/
#ifndef GEN_SYMTAB_H
#define GEN_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "bench/gen_out.h"

/* A Lua prototype to list in the symtab. */
typedef struct GenProto {
  uint64_t addr;
  const char *chunk;
  uint64_t firstline;
} GenProto;

/* Writes prologue, entries and the final byte: the given protos first, then
** with copy_from the entries of that stream's symtab (its prototypes and C
** symbols), else synthesised ones (the 8 bytecode built-ins and C symbols
** of an executable and its libraries placed around exe_base and lib_base).
** Returns 0, or -1 with a message in err. */
int gen_symtab_write(GenOut *o, const char *copy_from, const GenProto *protos,
                     size_t nprotos, uint64_t exe_base, uint64_t lib_base,
                     char *err, size_t errlen);

#endif
