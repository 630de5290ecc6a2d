/* gen_big.c -- writes a large valid ljs v3 + ljm v3 stream shaped like the
** profile of testdata/v3/big.lua, the input of the report benchmark.
**
**   gen_big [--scale N] [--iterations N] [--symtab FILE] [--stacks] OUT|-
**
** The script being "profiled" (line numbers are big.lua's):
**   5  local keep = {}
**   6  for i = 1, 750000 * N do
**   7    local s = "str" .. i
**   8    local t = {i}
**   9    if i % 100 == 0 then
**  10      keep[#keep + 1] = t
**      end end
**      keep = nil; collectgarbage()
**
** Besides the script's own allocations the model reproduces what makes
** big.txt look as it does: the string hash table growing (line 7) and
** shrinking (GC, INTERNAL), the keep array doubling (REALLOC line 10) and an
** incremental GC whose sweeps free dead objects (INTERNAL) interleaved with
** new allocations, strings in hash-bucket order and other objects newest
** first. At scale 1, `ljm report` on the output prints exactly big.txt.
** Output is deterministic; a summary goes to stderr. With --stacks the
** stream is extended (decoder/EXTENSION.md) as `ljm record --stacks` would
** write it: each line's one-frame stack, selected when it changes (a GC
** step runs under the line that allocated), a time mark every 100,000
** events (1 us per event) and an RSS sample every tenth mark; its downgrade
** is the plain stream.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gen_heap.h"
#include "bench/gen_out.h"
#include "bench/gen_symtab.h"

#define BASE_ITERATIONS 750000

/* Where things live: a GC64 process, executable in 0x55.., heap, mmap
** regions and libraries in 0x7f.. (as in the real profiles). */
#define EXE_BASE 0x55570dd00000ull
#define LIB_BASE 0x7f2da1e00000ull
#define HEAP_BASE 0x7f2da1d30000ull
#define MMAP_TOP 0x7f2da1c00000ull
#define PROTO_BIG 0x7f2da1d2b5a0ull

#define GCSTR_SIZE 24     /* sizeof(GCstr) in GC64; a string is 24 + len + 1 */
#define TAB_SIZE 88       /* GCtab 64 B + colocated array part of {i} */
#define KEEP_SIZE 64      /* the empty table "keep" */
#define SBUF_OLD 32       /* the string buffer grows once on the first concat */
#define SBUF_NEW 64

/* Incremental GC model. The profiler's 8 MiB buffer is allocated on the Lua
** heap, so LuaJIT's GC pause (200% of the live estimate) lets ~11 MB be
** allocated between two atomic phases; the sweep then frees a few objects
** per allocation step. With these, scale 1 yields big.txt's 9+1 cycles. */
#define GC_PERIOD 11500000u
#define SWEEP_STEP 12u
#define STR_BASE 350u           /* strings interned before the profile */
#define STRTAB_MASK0 511u       /* string hash table at start: 512 slots */
#define STRTAB_MIN_MASK 511u    /* LJ_MIN_STRTAB * 2 - 1: no shrink below */

enum { LINE_KEEP_NEW = 5, LINE_STR = 7, LINE_TAB = 8, LINE_KEEP = 10 };

typedef struct Obj {
  uint64_t addr;
  uint32_t size;
  uint32_t hash;  /* strings: bucket key; tables: 1 if kept */
} Obj;

typedef struct Vec {
  Obj *v;
  size_t n, cap;
} Vec;

typedef struct Gen {
  GenOut *out;
  GenHeap *heap;
  uint64_t events;
  /* String hash table. */
  uint64_t strtab;
  uint32_t strmask, strnum;
  uint32_t *bucket_count;
  size_t bucket_cap;
  /* GC state: objects allocated since the last atomic phase, the list being
  ** swept, and kept tables that survived an atomic phase. */
  Vec young_str, young_tab, sweep, survivors;
  size_t sweep_pos, sweep_nstr;  /* the first sweep_nstr entries are strings */
  int sweeping;
  uint64_t since_atomic;
  /* The "keep" table and its array part. */
  uint64_t keep, keep_arr;
  uint32_t keep_n, keep_cap;
  /* --stacks: the node of each line (0: not written), the one selected,
  ** the line running, and the events at the next time mark. */
  int stacks;
  uint32_t node_of_line[16], nodes, selected;
  unsigned cur_line;
  uint64_t next_mark, marks;
} Gen;

static void oom(void)
{
  fputs("gen_big: out of memory\n", stderr);
  exit(1);
}

/* Makes room for 'more' entries. */
static void reserve(Vec *vec, size_t more)
{
  if (vec->n + more <= vec->cap) return;
  while (vec->n + more > vec->cap) vec->cap = vec->cap ? vec->cap * 2 : 4096;
  vec->v = realloc(vec->v, vec->cap * sizeof *vec->v);
  if (!vec->v) oom();
}

static void push(Vec *vec, uint64_t addr, uint32_t size, uint32_t hash)
{
  reserve(vec, 1);
  vec->v[vec->n++] = (Obj){addr, size, hash};
}

/* -- Events ------------------------------------------------------------- */

/* Extension items before an event under 'line' (--stacks). */
static void ext_before(Gen *g, unsigned line)
{
  gen_out_reserve(g->out);
  if (g->events >= g->next_mark) {
    gen_out_byte(g->out, 0x22);
    gen_out_uleb(g->out, g->events);  /* 1 us per event */
    if (g->marks++ % 10 == 0) {
      gen_out_byte(g->out, 0x23);
      gen_out_uleb(g->out, (64u << 20) + g->events * 16);
    }
    g->next_mark += 100000;
  }
  if (!g->node_of_line[line]) {
    gen_out_byte(g->out, 0x20);
    gen_out_uleb(g->out, 0);
    gen_out_byte(g->out, 0x01);
    gen_out_uleb(g->out, PROTO_BIG);
    gen_out_uleb(g->out, line);
    g->node_of_line[line] = ++g->nodes;
  }
  if (g->selected != g->node_of_line[line]) {
    g->selected = g->node_of_line[line];
    gen_out_byte(g->out, 0x21);
    gen_out_uleb(g->out, g->selected);
  }
}

static void ev_lua(Gen *g, unsigned hdr, unsigned line)
{
  if (g->stacks) ext_before(g, g->cur_line = line);
  gen_out_reserve(g->out);
  gen_out_byte(g->out, hdr);
  gen_out_uleb(g->out, PROTO_BIG);
  gen_out_uleb(g->out, line);
  g->events++;
}

static void alloc_lua(Gen *g, unsigned line, uint64_t addr, uint64_t size)
{
  ev_lua(g, 0x09, line);
  gen_out_uleb(g->out, addr);
  gen_out_uleb(g->out, size);
}

static void free_lua(Gen *g, unsigned line, uint64_t addr, uint64_t size)
{
  ev_lua(g, 0x0A, line);
  gen_out_uleb(g->out, addr);
  gen_out_uleb(g->out, size);
}

static void realloc_lua(Gen *g, unsigned line, uint64_t oaddr, uint64_t osize,
                        uint64_t naddr, uint64_t nsize)
{
  ev_lua(g, 0x0B, line);
  gen_out_uleb(g->out, oaddr);
  gen_out_uleb(g->out, osize);
  gen_out_uleb(g->out, naddr);
  gen_out_uleb(g->out, nsize);
}

static void ev_int(Gen *g, unsigned hdr, uint64_t addr, uint64_t size)
{
  if (g->stacks) ext_before(g, g->cur_line ? g->cur_line : LINE_KEEP_NEW);
  gen_out_reserve(g->out);
  gen_out_byte(g->out, hdr);
  gen_out_uleb(g->out, addr);
  gen_out_uleb(g->out, size);
  g->events++;
}

/* -- Heap operations ---------------------------------------------------- */

static uint64_t heap_alloc(Gen *g, uint64_t size)
{
  g->since_atomic += size;
  return gen_heap_alloc(g->heap, size);
}

/* GC sweep frees are attributed to INTERNAL (vmstate GC). */
static void gc_free(Gen *g, uint64_t addr, uint64_t size)
{
  ev_int(g, 0x06, addr, size);
  gen_heap_free(g->heap, addr, size);
}

/* lj_str_resize: new hash array, rehash, free the old one. line 0: the GC
** shrinking it (INTERNAL), else the Lua line growing it. */
static void strtab_resize(Gen *g, uint32_t newmask, unsigned line)
{
  uint64_t osize = ((uint64_t)g->strmask + 1) * 8;
  uint64_t nsize = ((uint64_t)newmask + 1) * 8;
  uint64_t naddr = heap_alloc(g, nsize);
  if (line) {
    alloc_lua(g, line, naddr, nsize);
    free_lua(g, line, g->strtab, osize);
  } else {
    ev_int(g, 0x05, naddr, nsize);
    ev_int(g, 0x06, g->strtab, osize);
  }
  gen_heap_free(g->heap, g->strtab, osize);
  g->strtab = naddr;
  g->strmask = newmask;
}

/* gc_shrink at the end of a sweep: halve the string table when sparse. */
static void gc_shrink(Gen *g)
{
  if (g->strnum <= (g->strmask >> 2) && g->strmask > STRTAB_MIN_MASK)
    strtab_resize(g, g->strmask >> 1, 0);
}

/* -- GC ----------------------------------------------------------------- */

/* Appends dead strings to the sweep list in hash-chain order: by bucket,
** newest first inside a bucket (a counting sort keeps this linear). */
static void queue_strings(Gen *g)
{
  size_t nb = (size_t)g->strmask + 1;
  if (g->bucket_cap < nb + 1) {
    free(g->bucket_count);
    g->bucket_count = malloc((nb + 1) * sizeof *g->bucket_count);
    g->bucket_cap = nb + 1;
    if (!g->bucket_count) oom();
  }
  uint32_t *pos = g->bucket_count;
  memset(pos, 0, (nb + 1) * sizeof *pos);
  Vec *ys = &g->young_str;
  for (size_t i = 0; i < ys->n; i++) pos[(ys->v[i].hash & g->strmask) + 1]++;
  for (size_t b = 0; b < nb; b++) pos[b + 1] += pos[b];
  size_t base = g->sweep.n;
  reserve(&g->sweep, ys->n);
  for (size_t i = ys->n; i-- > 0;)
    g->sweep.v[base + pos[ys->v[i].hash & g->strmask]++] = ys->v[i];
  g->sweep.n += ys->n;
  g->sweep_nstr = g->sweep.n;
  ys->n = 0;
}

/* Appends dead tables of 'tabs' newest first (the GC root list order);
** kept ones go to survivors unless everything is dead. */
static void queue_tables(Gen *g, Vec *tabs, int all_dead)
{
  for (size_t i = tabs->n; i-- > 0;) {
    Obj *o = &tabs->v[i];
    if (o->hash && !all_dead) continue;
    push(&g->sweep, o->addr, o->size, 0);
  }
  if (!all_dead)
    for (size_t i = 0; i < tabs->n; i++)
      if (tabs->v[i].hash) push(&g->survivors, tabs->v[i].addr, tabs->v[i].size, 1);
  tabs->n = 0;
}

/* Atomic phase: everything allocated since the previous one is dead except
** kept tables; the sweep starts. */
static void gc_atomic(Gen *g)
{
  g->sweep.n = g->sweep_pos = 0;
  queue_strings(g);
  queue_tables(g, &g->young_tab, 0);
  g->sweeping = 1;
  g->since_atomic = 0;
}

static void gc_sweep(Gen *g, size_t budget)
{
  while (budget-- && g->sweep_pos < g->sweep.n) {
    Obj *o = &g->sweep.v[g->sweep_pos++];
    if (g->sweep_pos <= g->sweep_nstr) g->strnum--;
    gc_free(g, o->addr, o->size);
  }
  if (g->sweep_pos == g->sweep.n) {
    g->sweeping = 0;
    gc_shrink(g);
  }
}

static void gc_step(Gen *g)
{
  if (g->sweeping)
    gc_sweep(g, SWEEP_STEP);
  else if (g->since_atomic >= GC_PERIOD)
    gc_atomic(g);
}

/* keep = nil; collectgarbage(): finish (or fast-forward) the running
** cycle, then a full cycle in which everything the script made is dead. */
static void gc_full(Gen *g)
{
  if (g->sweeping)
    gc_sweep(g, SIZE_MAX);
  else
    gc_shrink(g);  /* fast-forwarded sweep preserves everything */
  g->sweep.n = g->sweep_pos = 0;
  queue_strings(g);
  /* Root list newest first: young tables, older survivors, then "keep". */
  queue_tables(g, &g->young_tab, 1);
  queue_tables(g, &g->survivors, 1);
  if (g->keep_arr) push(&g->sweep, g->keep_arr, (g->keep_cap + 1) * 8, 2);
  push(&g->sweep, g->keep, KEEP_SIZE, 2);
  gc_sweep(g, SIZE_MAX);
}

/* -- The script --------------------------------------------------------- */

/* Bucket key of "str"..i: any well-mixed function of the contents will do. */
static uint32_t str_hash(uint64_t i)
{
  i ^= i >> 33;
  i *= 0xff51afd7ed558ccdull;
  i ^= i >> 33;
  return (uint32_t)i;
}

static unsigned digits(uint64_t i)
{
  unsigned d = 1;
  while (i >= 10) i /= 10, d++;
  return d;
}

/* local s = "str" .. i: intern the string; lj_str_new grows the hash table
** once the count exceeds its mask. */
static void new_string(Gen *g, uint64_t i)
{
  uint32_t size = GCSTR_SIZE + 3 + digits(i) + 1;
  uint64_t a = heap_alloc(g, size);
  alloc_lua(g, LINE_STR, a, size);
  push(&g->young_str, a, size, str_hash(i));
  if (g->strnum++ > g->strmask) strtab_resize(g, g->strmask * 2 + 1, LINE_STR);
}

/* keep[#keep + 1] = t: the array part starts with 3 slots (keys 1-2) and
** doubles (2^k + 1 slots) when full. */
static void keep_append(Gen *g)
{
  if (g->keep_n == 0) {
    g->keep_cap = 2;
    g->keep_arr = heap_alloc(g, 24);
    alloc_lua(g, LINE_KEEP, g->keep_arr, 24);
  } else if (g->keep_n == g->keep_cap) {
    uint64_t osize = ((uint64_t)g->keep_cap + 1) * 8;
    uint64_t nsize = ((uint64_t)g->keep_cap * 2 + 1) * 8;
    uint64_t a = heap_alloc(g, nsize);
    realloc_lua(g, LINE_KEEP, g->keep_arr, osize, a, nsize);
    gen_heap_free(g->heap, g->keep_arr, osize);
    g->keep_arr = a;
    g->keep_cap *= 2;
  }
  g->keep_n++;
}

static void run_script(Gen *g, uint64_t iterations)
{
  g->keep = heap_alloc(g, KEEP_SIZE);
  alloc_lua(g, LINE_KEEP_NEW, g->keep, KEEP_SIZE);
  for (uint64_t i = 1; i <= iterations; i++) {
    if (i == 1) {  /* the first concatenation grows the string buffer */
      uint64_t old = gen_heap_alloc(g->heap, SBUF_OLD);  /* made before start */
      uint64_t a = heap_alloc(g, SBUF_NEW);
      realloc_lua(g, LINE_STR, old, SBUF_OLD, a, SBUF_NEW);
      gen_heap_free(g->heap, old, SBUF_OLD);
    }
    new_string(g, i);
    uint64_t t = heap_alloc(g, TAB_SIZE);
    alloc_lua(g, LINE_TAB, t, TAB_SIZE);
    int kept = i % 100 == 0;
    push(&g->young_tab, t, TAB_SIZE, kept);
    if (kept) keep_append(g);
    gc_step(g);
  }
  gc_full(g);
}

static void gen_free(Gen *g)
{
  free(g->young_str.v);
  free(g->young_tab.v);
  free(g->sweep.v);
  free(g->survivors.v);
  free(g->bucket_count);
  gen_heap_free_all(g->heap);
}

/* -- Command line ------------------------------------------------------- */

static void usage(void)
{
  fputs("usage: gen_big [--scale N] [--iterations N] [--symtab FILE] [--stacks] OUT|-\n"
        "  --scale N       750000*N loop iterations (default 1: ~3 M events)\n"
        "  --iterations N  exactly N iterations (overrides --scale)\n"
        "  --symtab FILE   copy the C symbols of a real profile's symtab\n"
        "  --stacks        an extended stream (stacks, time marks, RSS)\n",
        stderr);
  exit(2);
}

static uint64_t number(const char *s)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || *s == '-') usage();
  return v;
}

int main(int argc, char **argv)
{
  uint64_t scale = 1, iterations = UINT64_MAX;  /* MAX: from the scale */
  const char *symtab = NULL, *path = NULL;
  int stacks = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
      scale = number(argv[++i]);
      if (scale > 1000000) usage();  /* no overflow in the product */
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = number(argv[++i]);
    else if (strcmp(argv[i], "--symtab") == 0 && i + 1 < argc)
      symtab = argv[++i];
    else if (strcmp(argv[i], "--stacks") == 0)
      stacks = 1;
    else if (!path && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
      path = argv[i];
    else
      usage();
  }
  if (!path) usage();
  if (iterations == UINT64_MAX) iterations = BASE_ITERATIONS * scale;

  static GenOut out;
  if (gen_out_open(&out, path) < 0) {
    fprintf(stderr, "gen_big: %s: %s\n", path, strerror(errno));
    return 1;
  }
  Gen g = {.out = &out, .heap = gen_heap_new(HEAP_BASE, MMAP_TOP),
           .strmask = STRTAB_MASK0, .strnum = STR_BASE, .stacks = stacks};
  if (!g.heap) oom();
  g.strtab = gen_heap_alloc(g.heap, (STRTAB_MASK0 + 1) * 8);

  char err[256];
  GenProto big = {PROTO_BIG, "@big.lua", 0};
  if (gen_symtab_write(&out, symtab, &big, 1, EXE_BASE, LIB_BASE, err,
                       sizeof err) < 0) {
    fprintf(stderr, "gen_big: %s\n", err);
    gen_out_close(&out);
    gen_free(&g);
    return 1;
  }
  uint64_t symtab_bytes = out.total;
  gen_out_bytes(&out, stacks ? "ljm\3\3\0\0" : "ljm\3\0\0\0", 7);
  run_script(&g, iterations);
  gen_out_reserve(&out);
  gen_out_byte(&out, 0x80);
  uint64_t total = out.total;
  if (gen_out_close(&out) < 0) {
    fprintf(stderr, "gen_big: write error on %s\n", path);
    gen_free(&g);
    return 1;
  }
  fprintf(stderr, "gen_big: %llu events, %llu bytes (symtab %llu), "
          "at most %llu blocks live\n",
          (unsigned long long)g.events, (unsigned long long)total,
          (unsigned long long)symtab_bytes,
          (unsigned long long)gen_heap_peak_blocks(g.heap));
  gen_free(&g);
  return 0;
}
