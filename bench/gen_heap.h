/* gen_heap.h -- a simulated allocator that hands out plausible addresses.
**
** Only addresses are simulated, no memory is touched. It mimics the shape
** of LuaJIT's lj_alloc (a dlmalloc): 8-byte aligned chunks with an 8-byte
** header, exact-size bins reused most-recently-freed first, a growing top,
** and direct "mmap" regions for requests of 128 KiB and more. Freed
** addresses are therefore reused the way a real profile shows them, so the
** decoder's live-object map sees realistic churn.
*/
#ifndef GEN_HEAP_H
#define GEN_HEAP_H

#include <stdint.h>

typedef struct GenHeap GenHeap;

/* heap_base: start of the small-object arena; mmap_top: mmap regions are
** placed below it. Returns NULL when out of memory. */
GenHeap *gen_heap_new(uint64_t heap_base, uint64_t mmap_top);
void gen_heap_free_all(GenHeap *h);

uint64_t gen_heap_alloc(GenHeap *h, uint64_t size);
void gen_heap_free(GenHeap *h, uint64_t addr, uint64_t size);
/* Highest number of blocks allocated at once: the live-map size a decoder
** replaying the stream needs. */
uint64_t gen_heap_peak_blocks(const GenHeap *h);

#endif
