/* arena_room.c -- room for LuaJIT's arena in ljm record's process. */
#include "cli/arena_room.h"

#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define GAP_MIN ((uintptr_t)128 << 10)  /* LuaJIT's segment */
#define GAP_MAX ((uintptr_t)64 << 20)   /* alignment gaps are 2 MiB at most */
#define MMAP_MAX (32 << 20)             /* glibc's DEFAULT_MMAP_THRESHOLD_MAX */

typedef struct Span {
  uintptr_t lo, hi;
} Span;

/* The address span of the loaded libraries (not the program, not vdso). */
static int span_add(struct dl_phdr_info *info, size_t size, void *ud)
{
  Span *s = ud;
  int i;
  (void)size;
  if (!info->dlpi_name || !*info->dlpi_name || strstr(info->dlpi_name, "linux-vdso"))
    return 0;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type != PT_LOAD) continue;
    if (lo < s->lo) s->lo = lo;
    if (lo + ph->p_memsz > s->hi) s->hi = lo + ph->p_memsz;
  }
  return 0;
}

static void reserve(uintptr_t lo, uintptr_t hi)
{
  void *p = mmap((void *)lo, hi - lo, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (p != MAP_FAILED && p != (void *)lo) munmap(p, hi - lo);  /* a kernel without NOREPLACE */
}

void rec_arena_room(void)
{
  Span s = {UINTPTR_MAX, 0};
  char *line = NULL;
  size_t cap = 0;
  uintptr_t prev = 0;
  FILE *f;
  mallopt(M_MMAP_THRESHOLD, MMAP_MAX);
  dl_iterate_phdr(span_add, &s);
  if (s.lo >= s.hi) return;
  f = fopen("/proc/self/maps", "re");
  if (!f) return;
  while (getline(&line, &cap, f) > 0) {  /* whole lines: paths may be long */
    unsigned long a, b;
    if (sscanf(line, "%lx-%lx", &a, &b) != 2) continue;
    if (prev >= (s.lo & ~(uintptr_t)0xfff) && a <= s.hi && a >= prev + GAP_MIN &&
        a - prev <= GAP_MAX)
      reserve(prev, a);
    prev = b;
  }
  free(line);
  fclose(f);
}
