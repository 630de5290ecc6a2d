/* own_memory.c -- the memory the recorder holds for itself, which a heap
** snapshot shows apart from the program's. */
#include "recorder/capture/session.h"

#include <sys/mman.h>
#include <unistd.h>

#include "recorder/base/elf_symbols.h"
#include "recorder/vm/cfunc_names.h"

static uint64_t map_bytes(const RecMap *m)
{
  return m->e ? (uint64_t)(m->mask + 1) * sizeof(*m->e) : 0;
}

/* Bytes of [p, p + len) in RAM (mincore), len when it cannot tell. */
static uint64_t resident_bytes(const uint8_t *p, size_t len)
{
  long pg = sysconf(_SC_PAGESIZE);
  uintptr_t a, e;
  uint64_t n = 0;
  unsigned char vec[1024];
  if (pg <= 0 || !len) return len;
  a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
  e = (uintptr_t)p + len;
  while (a < e) {
    size_t pages = (size_t)((e - a + (uintptr_t)pg - 1) / (uintptr_t)pg), i;
    if (pages > sizeof(vec)) pages = sizeof(vec);
    if (mincore((void *)a, pages * (size_t)pg, vec) != 0) return len;
    for (i = 0; i < pages; i++) n += (vec[i] & 1) ? (uint64_t)pg : 0;
    a += pages * (size_t)pg;
  }
  return n < len ? n : len;
}

REC_API uint64_t own_bytes(uint64_t *resident)
{
  uint64_t n = 0, other = 0;
  int held = R_held();
  const LjmRecorder *r;
  if (!held) R_lock(NULL);
  *resident = 0;
  for (r = R.list; r; r = r->next) {
    const RecBuf *b = &r->st.out;
    const RecExt *x = r->st.ext;
    size_t len = b->buf ? (size_t)(b->end - b->buf) : 0;
    if (b->buf) *resident += resident_bytes(b->buf, len);
    if (b->spare) *resident += resident_bytes(b->spare, len);
    n += (uint64_t)len * (b->spare ? 2 : 1);
    other += map_bytes(&r->st.protos) + map_bytes(&r->st.traces) + map_bytes(&r->st.cfuncs);
    if (x)
      other += (x->tab ? (uint64_t)(x->mask + 1) * sizeof(*x->tab) : 0) +
               (uint64_t)x->nid_cap * sizeof(*x->nid) + map_bytes(&x->dnames);
  }
  other += rec_csym_bytes() + rec_cname_bytes();  /* their writers hold the lock too */
  if (!held) R_unlock();
  *resident += other;
  return n + other;
}
