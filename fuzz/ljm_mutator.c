/* ljm_mutator.c -- libFuzzer's custom mutator for ljm_fuzzer: writes and
** mutates recipes (ljm_recipe.h), and leaves other inputs to libFuzzer.
**
** Why recipes, not large inputs (-max_len raised): the sizes that break
** linear bounds (names of MiBs, chains of 10^5..10^6 stack nodes, 10^6-node
** trees, 300 000-object reference chains) are 1-30 MB as streams. libFuzzer
** mutates, hashes, compares and stores every input it keeps, so a corpus of
** such inputs would run a hundred times slower, and one byte flipped in
** 10 MB of stack nodes changes one node, not the shape. A recipe is 10-100
** bytes and each of its bytes is a shape parameter (a depth, a width, a name
** length, a size, a frame kind, which nodes carry events), so one mutation
** moves the whole expanded stream to another shape, coverage feedback ranks
** shapes, and -max_len stays 4096. The raw inputs (the corpus streams,
** libFuzzer's byte mutations) keep covering the grammar's corners; a recipe
** can splice raw bytes in too (its RAW op).
**
** Mutations: of a recipe, 1 in 4 is libFuzzer's own (any bytes after the
** magic are a valid recipe); otherwise one op is changed structurally: an
** argument set to a value from the distribution below (counts mostly small,
** 1 in 16 in 6.5e4..1e6; values small, near a limit, or near 2^64), an op
** inserted, deleted, duplicated, or the last ops repeated. Of any other
** input, 1 in 64 becomes a new random recipe (3 streams to 1 snapshot).
** LJM_FUZZ_RECIPES=0 turns all this off (libFuzzer's mutations only).
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/ljm_recipe.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

typedef struct Rng {
  uint64_t s;
} Rng;

static uint32_t rnd(Rng *r, uint32_t n)
{
  r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
  return n ? (uint32_t)((r->s >> 33) % n) : 0;
}

/* A count byte: mostly under 32; 1 in 4 up to ~60 000; 1 in 16 6.5e4..1e6
** (large expansions cost seconds each: they must stay rare). */
static uint8_t gen_count(Rng *r)
{
  uint32_t k = rnd(r, 16);
  if (k < 11) return (uint8_t)rnd(r, 32);
  if (k < 15) return (uint8_t)(32 + rnd(r, 0xC0 - 32));
  return (uint8_t)(0xC0 + rnd(r, 0x40));
}

/* A value: small, an interesting one, or any 64-bit number (ULEB128). */
static size_t gen_value(Rng *r, uint8_t *p)
{
  uint32_t k = rnd(r, 8);
  if (k < 4) {
    p[0] = (uint8_t)rnd(r, 0xE0);
    return 1;
  }
  if (k < 7) {
    p[0] = (uint8_t)(0xE1 + rnd(r, 31));
    return 1;
  }
  uint64_t v = ((uint64_t)rnd(r, 1u << 31) << 33) ^ rnd(r, 1u << 31);
  v >>= rnd(r, 64);
  size_t n = 0;
  p[n++] = 0xE0;
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    p[n++] = c | (v ? 0x80 : 0);
  } while (v);
  return n;
}

/* One argument of type t into p (at most 1 + 16 bytes for 'r', 11 'v'). */
static size_t gen_arg(Rng *r, char t, uint8_t *p)
{
  switch (t) {
  case 'c': p[0] = gen_count(r); return 1;
  case 'v': return gen_value(r, p);
  case 'r': {
    size_t n = rnd(r, 17);
    p[0] = (uint8_t)n;
    for (size_t i = 0; i < n; i++) p[1 + i] = (uint8_t)rnd(r, 256);
    return 1 + n;
  }
  default: p[0] = (uint8_t)rnd(r, 256); return 1;
  }
}

/* A whole op (at most 64 bytes). */
static size_t gen_op(Rng *r, int kind, uint8_t *p)
{
  size_t nops;
  const LjrOp *ops = ljr_ops(kind, &nops);
  unsigned code = rnd(r, (uint32_t)nops);
  size_t n = 0;
  p[n++] = (uint8_t)code;
  for (const char *a = ops[code].args; *a; a++) n += gen_arg(r, *a, p + n);
  return n;
}

/* Length of the argument of type t at p (bytes missing at the end count). */
static size_t arg_len(char t, const uint8_t *p, const uint8_t *end)
{
  if (p >= end) return 1;
  if (t == 'r') return 1 + (size_t)p[0];
  if (t != 'v' || p[0] != 0xE0) return 1;
  size_t n = 1;
  while (p + n < end && n < 11 && (p[n] & 0x80)) n++;
  return n + 1;
}

#define MAX_OPS 256

/* The offsets where ops start, and the end; returns the op count. */
static size_t op_bounds(int kind, const uint8_t *data, size_t size, size_t *at)
{
  size_t nops, n = 0, i = ljr_ops_start(kind);
  const LjrOp *ops = ljr_ops(kind, &nops);
  while (i < size && n < MAX_OPS) {
    at[n++] = i;
    const LjrOp *op = &ops[data[i] % nops];
    i++;
    for (const char *a = op->args; *a; a++) i += arg_len(*a, data + i, data + size);
  }
  at[n] = i < size ? i : size;
  return n;
}

/* Replaces data[from, to) with rep[0, n) when the result fits. */
static size_t splice(uint8_t *data, size_t size, size_t max_size, size_t from, size_t to,
                     const uint8_t *rep, size_t n)
{
  if (size - (to - from) + n > max_size) return size;
  memmove(data + from + n, data + to, size - to);
  memcpy(data + from, rep, n);
  return size - (to - from) + n;
}

static size_t new_recipe(Rng *r, uint8_t *data, size_t max_size)
{
  uint8_t buf[1024];
  int kind = rnd(r, 4) ? LJR_STREAM : LJR_HEAP;
  size_t n = 0;
  memcpy(buf, LJR_MAGIC, 3);
  n = 3;
  buf[n++] = kind == LJR_HEAP ? 'H' : 'S';
  if (kind == LJR_STREAM) {
    buf[n++] = rnd(r, 8) ? 3 : (uint8_t)rnd(r, 256);
    buf[n++] = rnd(r, 8) ? 3 : (uint8_t)rnd(r, 256);
  } else {
    buf[n++] = (uint8_t)rnd(r, 256);
  }
  for (uint32_t k = 1 + rnd(r, 8); k > 0 && n + 64 <= sizeof(buf); k--) n += gen_op(r, kind, buf + n);
  if (n > max_size) return 0;
  memcpy(data, buf, n);
  return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
  static int off = -1;  /* LJM_FUZZ_RECIPES=0: libFuzzer's mutations only */
  if (off < 0) off = getenv("LJM_FUZZ_RECIPES") && strcmp(getenv("LJM_FUZZ_RECIPES"), "0") == 0;
  Rng r = { seed * 0x9E3779B97F4A7C15ull + 1 };
  int kind = ljr_kind(data, size);
  if (off) return LLVMFuzzerMutate(data, size, max_size);
  if (kind == LJR_NONE) {
    if (rnd(&r, 64) == 0) {
      size_t n = new_recipe(&r, data, max_size);
      if (n) return n;
    }
    return LLVMFuzzerMutate(data, size, max_size);
  }
  if (rnd(&r, 4) == 0) return LLVMFuzzerMutate(data, size, max_size);
  size_t at[MAX_OPS + 1];
  size_t nops = op_bounds(kind, data, size, at);
  uint8_t op[64];
  size_t len;
  switch (rnd(&r, nops ? 6 : 1)) {
  case 0:   /* insert a new op */
  default: {
    size_t where = at[rnd(&r, (uint32_t)nops + 1)];
    len = gen_op(&r, kind, op);
    return splice(data, size, max_size, where, where, op, len);
  }
  case 1: { /* one argument anew */
    size_t i = rnd(&r, (uint32_t)nops), nt;
    const LjrOp *ops = ljr_ops(kind, &nt);
    const char *args = ops[data[at[i]] % nt].args;
    size_t na = strlen(args);
    if (!na) break;
    size_t which = rnd(&r, (uint32_t)na), p = at[i] + 1;
    for (size_t a = 0; a < which && p < size; a++) p += arg_len(args[a], data + p, data + size);
    if (p >= size) break;
    size_t old = arg_len(args[which], data + p, data + size);
    if (p + old > size) old = size - p;
    len = gen_arg(&r, args[which], op);
    return splice(data, size, max_size, p, p + old, op, len);
  }
  case 2: { /* delete an op */
    size_t i = rnd(&r, (uint32_t)nops);
    return splice(data, size, max_size, at[i], at[i + 1], op, 0);
  }
  case 3: { /* duplicate an op */
    size_t i = rnd(&r, (uint32_t)nops);
    len = at[i + 1] - at[i];
    if (len > sizeof(op)) break;
    memcpy(op, data + at[i], len);
    return splice(data, size, max_size, at[i + 1], at[i + 1], op, len);
  }
  case 4: { /* repeat the ops before a place */
    size_t i = rnd(&r, (uint32_t)nops) + 1, nt;
    const LjrOp *ops = ljr_ops(kind, &nt);
    op[0] = 0;
    while (op[0] < nt && strcmp(ops[op[0]].name, "repeat") != 0) op[0]++;
    op[1] = gen_count(&r);
    op[2] = (uint8_t)rnd(&r, i < 16 ? (uint32_t)i : 16);
    return splice(data, size, max_size, at[i], at[i], op, 3);
  }
  case 5:   /* libFuzzer's mutation of the op bytes only */
    break;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
