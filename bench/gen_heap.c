/* gen_heap.c -- simulated allocator (see gen_heap.h). */
#include "bench/gen_heap.h"

#include <stdio.h>
#include <stdlib.h>

#define MMAP_THRESHOLD (128u * 1024u)   /* lj_alloc's DEFAULT_MMAP_THRESHOLD */
#define NBINS (MMAP_THRESHOLD / 8 + 1)  /* one bin per chunk size / 8 */
#define PAGE 4096u

/* Free-list node: freed blocks of one chunk size, newest first. */
typedef struct Node {
  uint64_t addr;
  uint32_t next;  /* index + 1 into nodes, 0 ends the list */
} Node;

struct GenHeap {
  uint64_t top;        /* next never-used chunk address in the arena */
  uint64_t mmap_low;   /* lowest address handed out by the mmap side */
  uint64_t blocks, peak_blocks;
  uint32_t bins[NBINS];
  uint32_t spare;      /* unused nodes, chained like a bin */
  Node *nodes;
  uint32_t nnodes, capnodes;
  /* Unmapped regions, reused for a mapping of the same length. */
  uint64_t *gaps, *gaplen;
  uint32_t ngaps, capgaps;
};

static void die_oom(void)
{
  fputs("gen_big: out of memory\n", stderr);
  exit(1);
}

GenHeap *gen_heap_new(uint64_t heap_base, uint64_t mmap_top)
{
  GenHeap *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->top = heap_base;
  h->mmap_low = mmap_top;
  return h;
}

void gen_heap_free_all(GenHeap *h)
{
  if (!h) return;
  free(h->nodes);
  free(h->gaps);
  free(h->gaplen);
  free(h);
}

/* dlmalloc's request-to-chunk padding with 8-byte alignment, 32 minimum. */
static uint64_t chunk_size(uint64_t size)
{
  uint64_t c = (size + 8 + 7) & ~(uint64_t)7;
  return c < 32 ? 32 : c;
}

static uint64_t map_len(uint64_t size)
{
  return (size + 32 + PAGE - 1) & ~(uint64_t)(PAGE - 1);
}

static uint64_t mmap_alloc(GenHeap *h, uint64_t size)
{
  uint64_t len = map_len(size);
  for (uint32_t i = h->ngaps; i-- > 0;)
    if (h->gaplen[i] == len) {
      uint64_t a = h->gaps[i];
      h->gaps[i] = h->gaps[--h->ngaps];
      h->gaplen[i] = h->gaplen[h->ngaps];
      return a + 16;
    }
  h->mmap_low -= len;  /* the kernel places new mappings below older ones */
  return h->mmap_low + 16;
}

static void mmap_free(GenHeap *h, uint64_t addr, uint64_t size)
{
  if (h->ngaps == h->capgaps) {
    h->capgaps = h->capgaps ? h->capgaps * 2 : 16;
    h->gaps = realloc(h->gaps, h->capgaps * sizeof *h->gaps);
    h->gaplen = realloc(h->gaplen, h->capgaps * sizeof *h->gaplen);
    if (!h->gaps || !h->gaplen) die_oom();
  }
  h->gaps[h->ngaps] = addr - 16;
  h->gaplen[h->ngaps++] = map_len(size);
}

uint64_t gen_heap_peak_blocks(const GenHeap *h)
{
  return h->peak_blocks;
}

uint64_t gen_heap_alloc(GenHeap *h, uint64_t size)
{
  if (++h->blocks > h->peak_blocks) h->peak_blocks = h->blocks;
  uint64_t c = chunk_size(size);
  if (c >= MMAP_THRESHOLD) return mmap_alloc(h, size);
  uint32_t *bin = &h->bins[c / 8];
  if (*bin) {
    Node *n = &h->nodes[*bin - 1];
    uint32_t idx = *bin;
    *bin = n->next;
    n->next = h->spare;
    h->spare = idx;
    return n->addr;
  }
  uint64_t a = h->top + 16;  /* user pointer sits past the chunk header */
  h->top += c;
  return a;
}

void gen_heap_free(GenHeap *h, uint64_t addr, uint64_t size)
{
  h->blocks--;
  uint64_t c = chunk_size(size);
  if (c >= MMAP_THRESHOLD) {
    mmap_free(h, addr, size);
    return;
  }
  uint32_t idx;
  if (h->spare) {
    idx = h->spare;
    h->spare = h->nodes[idx - 1].next;
  } else {
    if (h->nnodes == h->capnodes) {
      h->capnodes = h->capnodes ? h->capnodes * 2 : 4096;
      h->nodes = realloc(h->nodes, h->capnodes * sizeof *h->nodes);
      if (!h->nodes) die_oom();
    }
    idx = ++h->nnodes;
  }
  h->nodes[idx - 1].addr = addr;
  h->nodes[idx - 1].next = h->bins[c / 8];
  h->bins[c / 8] = idx;
}
