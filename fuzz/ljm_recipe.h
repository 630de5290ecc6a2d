/* ljm_recipe.h -- fuzz inputs that are recipes: a few bytes that expand into
** a large, structurally valid extended ljm stream or heap snapshot.
**
**   recipe := "LJR" mode body
**   mode   := 'S' ver:b flags:b op*           stream (versions; the flags byte)
**           | 'H' gctotal:b op*               heap snapshot (gctotal in MiB)
**   op     := code:byte arg*                  code % number of ops; args per op
**   arg    := b  one byte
**           | c  a count: c < 32 ? c : (16 + (c & 15)) << (c >> 4)  (64 .. ~10^6)
**           | v  a value: k < 0xE0 ? k : k == 0xE0 ? ULEB128 follows
**                                 : an interesting value (2^32, 2^56, 2^64-1, ...)
**           | r  raw bytes: n:byte, then n bytes copied as they are
** Every byte string after the magic is a valid recipe (missing bytes read as
** 0), so libFuzzer's own mutations of a recipe stay recipes. The ops and
** their arguments are listed in ljm_recipe.c.
*/
#ifndef LJM_RECIPE_H
#define LJM_RECIPE_H

#include <stddef.h>
#include <stdint.h>

#define LJR_MAGIC "LJR"

enum { LJR_NONE = 0, LJR_STREAM, LJR_HEAP };

/* What data is: LJR_NONE (not a recipe), LJR_STREAM or LJR_HEAP. */
int ljr_kind(const uint8_t *data, size_t size);

/* Expands a recipe into *out (malloc'd, *outlen bytes; at most 'budget' bytes
** of items, plus the end marker). Returns 0, or -1 out of memory. */
int ljr_expand(const uint8_t *data, size_t size, size_t budget, uint8_t **out, size_t *outlen);

/* Argument signatures, for the mutator: the op table of a kind. */
typedef struct LjrOp {
  const char *name;
  const char *args;    /* one letter per argument: b c v r */
} LjrOp;
const LjrOp *ljr_ops(int kind, size_t *n);

/* Offset of the first op (after the header). */
size_t ljr_ops_start(int kind);

/* The interesting values of a 'v' argument (k = 0xE1 + index). */
extern const uint64_t ljr_interesting[31];

#endif
