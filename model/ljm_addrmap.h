/* ljm_addrmap.h -- live blocks by address: the model's replay of the heap.
**
** Every event looks up or stores one block at an address unrelated to the
** last one, so the table is built for few cache lines and few mispredicted
** branches per operation: bucketed cuckoo hashing. A block lives in one of
** two buckets of four 16-byte slots (a cache line each), chosen by a hash
** of its address; a take reads one bucket (rarely two) and leaves no hole
** to repair, a put reads both. Slots hold the hash, a bijection of the
** address, so moving a block never rehashes it. The few blocks that fit in
** neither bucket, even after displacing others, wait in a small stash.
**
** Memory must follow the number of live blocks, not jump with it: the table
** is split into segments of staggered sizes that grow by half at different
** moments (a rehash holds one small segment twice, never the whole table;
** growing by a quarter re-placed every block five times over, a tenth of
** `ljm report`'s time), and sizes of 4 GiB and more live in a side table. */
#ifndef LJM_ADDRMAP_H
#define LJM_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "model/ljm_hmap.h"

#define LJM_ADDRMAP_SEGS 64

typedef struct LjmBlock {
  uint64_t addr;
  uint64_t size;
  uint32_t site;
} LjmBlock;

#define LJM_SLOT_EMPTY UINT32_MAX
#define LJM_SLOT_BIG 0x80000000u  /* size is an index into big[] */
/* The key a free slot holds, so that comparing keys finds live blocks; the
** one address with this key is still found (its slot's site says so). */
#define LJM_KEY_FREE UINT64_MAX

/* A bucket: four slots, one cache line, each field in its own array so a
** bucket is searched with a few vector compares. */
typedef struct LjmBucket {
  uint64_t key[4];   /* ljm_addrmap_key of the address; LJM_KEY_FREE when free */
  uint32_t size[4];  /* the size, or an index into 'big' (see 'site') */
  uint32_t site[4];  /* owner | LJM_SLOT_BIG; LJM_SLOT_EMPTY = free slot */
} LjmBucket;

/* A block in the stash. */
typedef struct LjmSlot {
  uint64_t key;
  uint32_t size, site;
} LjmSlot;

typedef struct LjmSegment {
  LjmBucket *b;          /* 64-byte aligned */
  uint32_t nb, count;    /* buckets (any number: picked by multiply-shift), blocks */
  LjmSlot *stash;        /* blocks no bucket took; usually none */
  uint32_t nstash, capstash;
} LjmSegment;

typedef struct LjmAddrmap {
  LjmSegment seg[LJM_ADDRMAP_SEGS];
  size_t count;
  uint64_t *big;          /* sizes that do not fit 32 bits */
  uint32_t nbig, capbig, freebig;  /* free list threads through big[] */
} LjmAddrmap;

/* Initialises an empty map. Returns 0 or -1. */
int ljm_addrmap_init(LjmAddrmap *m);
/* Frees the map. */
void ljm_addrmap_free(LjmAddrmap *m);

/* Whether a block with this key is live, and its site (owner) in *site;
** the map is left as it is. */
int ljm_addrmap_owner(const LjmAddrmap *m, uint64_t key, uint32_t *site);
/* Calls fn for each live block (in table order): its key, stored size and
** owner. fn must not change the map. */
void ljm_addrmap_each(const LjmAddrmap *m,
                      void (*fn)(void *ud, uint64_t key, uint64_t size, uint32_t owner), void *ud);

/* The key of an address: a bijection (murmur3's finaliser), so equal keys
** mean equal addresses. Its top bits pick the segment, the rest the buckets. */
static inline uint64_t ljm_addrmap_key(uint64_t addr) { return ljm_hash64(addr); }

static inline LjmSegment *ljm_addrmap_seg(const LjmAddrmap *m, uint64_t key)
{
  return (LjmSegment *)&m->seg[key >> 58];
}

/* The two buckets of a key, from bits 0..31 and 26..57 (rarely the same). */
static inline uint32_t ljm_addrmap_bucket1(uint64_t key, uint32_t nb)
{
  return (uint32_t)(((key & 0xffffffffu) * nb) >> 32);
}

static inline uint32_t ljm_addrmap_bucket2(uint64_t key, uint32_t nb)
{
  return (uint32_t)((((key >> 26) & 0xffffffffu) * nb) >> 32);
}

/* Hint that key will be looked up soon (hides the cache misses). */
static inline void ljm_addrmap_prefetch(const LjmAddrmap *m, uint64_t key)
{
  const LjmSegment *g = ljm_addrmap_seg(m, key);
  __builtin_prefetch(&g->b[ljm_addrmap_bucket1(key, g->nb)]);
  __builtin_prefetch(&g->b[ljm_addrmap_bucket2(key, g->nb)]);
}

/* Out of line, rare: a size of 4 GiB or more, a key in the stash or free
** slots' key, no room in either bucket, a segment to grow. */
int ljm_addrmap_set_big(LjmAddrmap *m, uint32_t *size_field, uint32_t *site_field,
                        uint64_t size, uint32_t site);
int ljm_addrmap_take_slow(LjmAddrmap *m, uint64_t addr, uint64_t key, LjmBlock *out);
int ljm_addrmap_put_slow(LjmAddrmap *m, uint64_t addr, uint64_t key, uint64_t size,
                         uint32_t site, LjmBlock *old);
int ljm_addrmap_grow(LjmSegment *g);

/* A segment grows past 7/8 of its slots: displacing blocks gets costly. */
static inline int ljm_addrmap_full(const LjmSegment *g)
{
  return (uint64_t)g->count * 2 > (uint64_t)g->nb * 7;
}

/* The slots of a bucket holding key, and its free slots, as bits 0..3. */
#ifdef __SSE2__
static inline unsigned ljm_addrmap_match(const LjmBucket *b, uint64_t key)
{
  __m128i k = _mm_set1_epi64x((long long)key);
  __m128i lo = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)&b->key[0]), k);
  __m128i hi = _mm_cmpeq_epi32(_mm_load_si128((const __m128i *)&b->key[2]), k);
  /* A key matches where both its halves do. */
  lo = _mm_and_si128(lo, _mm_shuffle_epi32(lo, _MM_SHUFFLE(2, 3, 0, 1)));
  hi = _mm_and_si128(hi, _mm_shuffle_epi32(hi, _MM_SHUFFLE(2, 3, 0, 1)));
  return (unsigned)_mm_movemask_pd(_mm_castsi128_pd(lo)) |
         (unsigned)_mm_movemask_pd(_mm_castsi128_pd(hi)) << 2;
}

static inline unsigned ljm_addrmap_empty(const LjmBucket *b)
{
  __m128i s = _mm_load_si128((const __m128i *)b->site);
  return (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(s, _mm_set1_epi32(-1))));
}
#else
static inline unsigned ljm_addrmap_match(const LjmBucket *b, uint64_t key)
{
  return (unsigned)(b->key[0] == key) | (unsigned)(b->key[1] == key) << 1 |
         (unsigned)(b->key[2] == key) << 2 | (unsigned)(b->key[3] == key) << 3;
}

static inline unsigned ljm_addrmap_empty(const LjmBucket *b)
{
  return (unsigned)(b->site[0] == LJM_SLOT_EMPTY) | (unsigned)(b->site[1] == LJM_SLOT_EMPTY) << 1 |
         (unsigned)(b->site[2] == LJM_SLOT_EMPTY) << 2 | (unsigned)(b->site[3] == LJM_SLOT_EMPTY) << 3;
}
#endif

static inline uint64_t ljm_addrmap_size_of(const LjmAddrmap *m, uint32_t size, uint32_t site)
{
  return (site & LJM_SLOT_BIG) ? m->big[size] : size;
}

/* Gives a side-table entry back, if the slot had one. */
static inline void ljm_addrmap_release(LjmAddrmap *m, uint32_t size, uint32_t site)
{
  if (site & LJM_SLOT_BIG) {
    m->big[size] = m->freebig;
    m->freebig = size;
  }
}

/* Removes the block at addr (key: its ljm_addrmap_key) into *out; returns
** 1, or 0 if absent. */
static inline __attribute__((always_inline)) int ljm_addrmap_take_key(LjmAddrmap *m,
                                                                      uint64_t addr,
                                                                      uint64_t key,
                                                                      LjmBlock *out)
{
  LjmSegment *g = ljm_addrmap_seg(m, key);
  LjmBucket *b = &g->b[ljm_addrmap_bucket1(key, g->nb)];
  unsigned f = ljm_addrmap_match(b, key);
  if (!f) {  /* puts prefer the first bucket: this is the exception */
    b = &g->b[ljm_addrmap_bucket2(key, g->nb)];
    f = ljm_addrmap_match(b, key);
  }
  unsigned j = (unsigned)__builtin_ctz(f | 16) & 3;
  uint32_t site = b->site[j], size = b->size[j];
  if (__builtin_expect(!f || site == LJM_SLOT_EMPTY, 0))
    return ljm_addrmap_take_slow(m, addr, key, out);
  *out = (LjmBlock){ addr, ljm_addrmap_size_of(m, size, site), site & ~LJM_SLOT_BIG };
  ljm_addrmap_release(m, size, site);
  b->key[j] = LJM_KEY_FREE;
  b->site[j] = LJM_SLOT_EMPTY;
  g->count--;
  m->count--;
  return 1;
}

/* Stores a block (site < 2^31), returning any block it replaced in *old (1)
** or 0. Returns -1 when out of memory. */
static inline __attribute__((always_inline)) int ljm_addrmap_put_key(LjmAddrmap *m, uint64_t addr,
                                                                     uint64_t key, uint64_t size,
                                                                     uint32_t site, LjmBlock *old)
{
  LjmSegment *g = ljm_addrmap_seg(m, key);
  LjmBucket *x = &g->b[ljm_addrmap_bucket1(key, g->nb)];
  LjmBucket *y = &g->b[ljm_addrmap_bucket2(key, g->nb)];
  /* Usual case: the block is new, and a bucket has a free slot (the first
  ** preferred: takes look there first). */
  unsigned live = ljm_addrmap_match(x, key) | ljm_addrmap_match(y, key);
  unsigned avail = ljm_addrmap_empty(x) | ljm_addrmap_empty(y) << 4;
  if (__builtin_expect(live || !avail || g->nstash || size >= UINT32_MAX, 0))
    return ljm_addrmap_put_slow(m, addr, key, size, site, old);
  unsigned j = (unsigned)__builtin_ctz(avail);
  LjmBucket *b = j < 4 ? x : y;
  b->key[j & 3] = key;
  b->size[j & 3] = (uint32_t)size;
  b->site[j & 3] = site;
  g->count++;
  m->count++;
  if (__builtin_expect(ljm_addrmap_full(g), 0) && ljm_addrmap_grow(g) != 0) return -1;
  return 0;
}

/* The same by address. */
static inline int ljm_addrmap_take(LjmAddrmap *m, uint64_t addr, LjmBlock *out)
{
  return ljm_addrmap_take_key(m, addr, ljm_addrmap_key(addr), out);
}

static inline int ljm_addrmap_put(LjmAddrmap *m, uint64_t addr, uint64_t size, uint32_t site,
                                  LjmBlock *old)
{
  return ljm_addrmap_put_key(m, addr, ljm_addrmap_key(addr), size, site, old);
}

#endif
