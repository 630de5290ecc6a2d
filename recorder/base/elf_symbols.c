/* elf_symbols.c -- names of C functions: ELF symbols of the loaded objects. */
#include "recorder/base/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct CSym {
  uint64_t addr;     /* run-time address */
  uint64_t size;     /* st_size (0 = unknown) */
  uint32_t name;     /* offset in the object's name blob */
} CSym;

typedef struct CObj {
  uint64_t base;     /* load bias */
  uint64_t lo, hi;   /* span of the PT_LOAD segments */
  char *path;        /* as reported by the loader ("" = main program) */
  CSym *syms;
  size_t nsyms;
  char *names;       /* NUL-separated names */
  size_t bytes;      /* malloc'd for syms and names */
} CObj;

typedef struct CRange {
  uint64_t lo, hi;   /* [lo, hi) of one function */
} CRange;

static struct {
  CObj *objs;
  size_t nobjs, cap;
  CRange *ranges;    /* sorted by lo */
  size_t nranges;
  unsigned long long adds;  /* dlpi_adds at the last refresh */
  int seen;          /* adds is valid */
} C;

static const char *const *hidden;  /* rec_csym_hide */

void rec_csym_hide(const char *const *prefixes)
{
  hidden = prefixes;
}

static int obj_hidden(const char *path)
{
  const char *base = strrchr(path, '/');
  size_t i;
  base = base ? base + 1 : path;
  for (i = 0; hidden && hidden[i]; i++)
    if (!strncmp(base, hidden[i], strlen(hidden[i]))) return 1;
  return 0;
}

/* -- Reading one ELF file ------------------------------------------------ */

static int elf_read_syms(CObj *o, const char *file)
{
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  struct stat stt;
  const uint8_t *m;
  const Elf64_Ehdr *eh;
  const Elf64_Shdr *sh, *tab = NULL;
  size_t i, n, blob = 0, k = 0;
  if (fd < 0) return -1;
  if (fstat(fd, &stt) || stt.st_size < (off_t)sizeof(Elf64_Ehdr)) {
    close(fd);
    return -1;
  }
  m = mmap(NULL, (size_t)stt.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return -1;
  eh = (const Elf64_Ehdr *)m;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shentsize != sizeof(Elf64_Shdr) ||
      eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)stt.st_size)
    goto fail;
  sh = (const Elf64_Shdr *)(m + eh->e_shoff);
  for (i = 0; i < eh->e_shnum; i++)
    if (sh[i].sh_type == SHT_SYMTAB) tab = &sh[i];
  for (i = 0; !tab && i < eh->e_shnum; i++)
    if (sh[i].sh_type == SHT_DYNSYM) tab = &sh[i];
  if (!tab || tab->sh_link >= eh->e_shnum ||
      tab->sh_offset + tab->sh_size > (uint64_t)stt.st_size ||
      sh[tab->sh_link].sh_offset + sh[tab->sh_link].sh_size > (uint64_t)stt.st_size)
    goto fail;
  {
    const Elf64_Sym *sy = (const Elf64_Sym *)(m + tab->sh_offset);
    const char *str = (const char *)(m + sh[tab->sh_link].sh_offset);
    size_t strsz = sh[tab->sh_link].sh_size;
    n = tab->sh_size / sizeof(Elf64_Sym);
    for (i = 0; i < n; i++) {
      if (ELF64_ST_TYPE(sy[i].st_info) != STT_FUNC || sy[i].st_shndx == SHN_UNDEF ||
          sy[i].st_name == 0 || sy[i].st_name >= strsz)
        continue;
      blob += strnlen(str + sy[i].st_name, strsz - sy[i].st_name) + 1;
      k++;
    }
    o->syms = malloc((k ? k : 1) * sizeof(CSym));
    o->names = malloc(blob ? blob : 1);
    if (!o->syms || !o->names) goto fail;
    blob = 0;
    for (i = 0; i < n; i++) {
      size_t l;
      if (ELF64_ST_TYPE(sy[i].st_info) != STT_FUNC || sy[i].st_shndx == SHN_UNDEF ||
          sy[i].st_name == 0 || sy[i].st_name >= strsz)
        continue;
      l = strnlen(str + sy[i].st_name, strsz - sy[i].st_name);
      memcpy(o->names + blob, str + sy[i].st_name, l);
      o->names[blob + l] = 0;
      o->syms[o->nsyms].addr = o->base + sy[i].st_value;
      o->syms[o->nsyms].size = sy[i].st_size;
      o->syms[o->nsyms].name = (uint32_t)blob;
      o->nsyms++;
      blob += l + 1;
    }
    o->bytes = (k ? k : 1) * sizeof(CSym) + (blob ? blob : 1);
  }
  munmap((void *)m, (size_t)stt.st_size);
  return 0;
fail:
  munmap((void *)m, (size_t)stt.st_size);
  return -1;
}

/* -- Object list --------------------------------------------------------- */

static int obj_known(uint64_t base, const char *path)
{
  size_t i;
  for (i = 0; i < C.nobjs; i++)
    if (C.objs[i].base == base && !strcmp(C.objs[i].path, path)) return 1;
  return 0;
}

static int range_cmp(const void *a, const void *b)
{
  const CRange *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void ranges_add(const CObj *o)
{
  size_t i;
  CRange *r = realloc(C.ranges, (C.nranges + o->nsyms + 1) * sizeof(CRange));
  if (!r) return;
  C.ranges = r;
  for (i = 0; i < o->nsyms; i++)
    if (o->syms[i].size) {
      r[C.nranges].lo = o->syms[i].addr;
      r[C.nranges].hi = o->syms[i].addr + o->syms[i].size;
      C.nranges++;
    }
}

static int phdr_add(struct dl_phdr_info *info, size_t size, void *ud)
{
  const char *path = info->dlpi_name ? info->dlpi_name : "";
  CObj o;
  int i;
  (void)size;
  (void)ud;
  if (obj_known(info->dlpi_addr, path)) return 0;
  if (!*path && C.nobjs) return 0;  /* only the first object is the program */
  memset(&o, 0, sizeof(o));
  o.base = info->dlpi_addr;
  o.lo = UINT64_MAX;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    if (o.base + ph->p_vaddr < o.lo) o.lo = o.base + ph->p_vaddr;
    if (o.base + ph->p_vaddr + ph->p_memsz > o.hi) o.hi = o.base + ph->p_vaddr + ph->p_memsz;
  }
  if (strstr(path, "linux-vdso") || strstr(path, "linux-gate")) return 0;
  o.path = strdup(path);
  if (!o.path) return 0;
  if (obj_hidden(path) || elf_read_syms(&o, *path ? path : "/proc/self/exe")) {
    free(o.syms);
    free(o.names);
    o.syms = NULL;
    o.names = NULL;
    o.nsyms = 0;
  }
  if (C.nobjs == C.cap) {
    size_t ncap = C.cap ? C.cap * 2 : 16;
    CObj *n = realloc(C.objs, ncap * sizeof(CObj));
    if (!n) {
      free(o.path);
      free(o.syms);
      free(o.names);
      return 0;
    }
    C.objs = n;
    C.cap = ncap;
  }
  C.objs[C.nobjs++] = o;
  ranges_add(&o);
  return 0;
}

static int phdr_adds(struct dl_phdr_info *info, size_t size, void *ud)
{
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
    *(unsigned long long *)ud = info->dlpi_adds;
  return 1;  /* the counter is the same in every entry: stop at once */
}

void rec_csym_refresh(void)
{
  unsigned long long adds = 0;
  dl_iterate_phdr(phdr_adds, &adds);
  if (C.seen && adds == C.adds) return;
  dl_iterate_phdr(phdr_add, NULL);
  /* Once for all the objects added (not once per object). */
  if (C.nranges) qsort(C.ranges, C.nranges, sizeof(CRange), range_cmp);
  C.adds = adds;
  C.seen = 1;
}

/* An object's path; the main program's (which the loader reports as "")
** from /proc/self/exe, so that an address no symbol covers reads
** "nvim+0x87910", never "main+...", which looks like the symbol main. */
static const char *obj_path(const CObj *o)
{
  static char exe[4096];
  if (*o->path) return o->path;
  if (!*exe) {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) n = (ssize_t)strlen(strcpy(exe, "main program"));
    exe[n] = 0;
  }
  return exe;
}

size_t rec_csym_nobjs(void)
{
  return C.nobjs;
}

void rec_csym_emit(RecBuf *b, size_t i, uint8_t hdr)
{
  const CObj *o = &C.objs[i];
  size_t k;
  if (!o->nsyms) {  /* no symbols: name the object at its base */
    const char *name = obj_path(o);
    rec_buf_need(b, 11);
    rec_buf_byte(b, hdr);
    rec_buf_uleb(b, o->lo == UINT64_MAX ? o->base : o->lo);
    rec_buf_str(b, name, strlen(name));
    return;
  }
  for (k = 0; k < o->nsyms; k++) {
    const char *name = o->names + o->syms[k].name;
    rec_buf_need(b, 11);
    rec_buf_byte(b, hdr);
    rec_buf_uleb(b, o->syms[k].addr);
    rec_buf_str(b, name, strlen(name));
  }
}

int rec_csym_covers(uint64_t addr)
{
  size_t lo = 0, hi = C.nranges;
  while (lo < hi) {  /* last range starting at or below addr */
    size_t mid = lo + (hi - lo) / 2;
    if (C.ranges[mid].lo <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && addr < C.ranges[lo - 1].hi;
}

int rec_csym_describe(uint64_t addr, char *buf, size_t len)
{
  size_t i;
  for (i = 0; i < C.nobjs; i++) {
    const CObj *o = &C.objs[i];
    if (addr >= o->lo && addr < o->hi) {
      const char *p = obj_path(o);
      const char *s = strrchr(p, '/');
      snprintf(buf, len, "%s+%#llx", s ? s + 1 : p,
               (unsigned long long)(addr - o->base));
      return 1;
    }
  }
  return 0;
}

size_t rec_csym_bytes(void)
{
  size_t i, n = C.cap * sizeof(CObj) + C.nranges * sizeof(CRange);
  for (i = 0; i < C.nobjs; i++)
    n += C.objs[i].bytes + (C.objs[i].path ? strlen(C.objs[i].path) + 1 : 0);
  return n;
}

void rec_csym_reset(void)
{
  size_t i;
  for (i = 0; i < C.nobjs; i++) {
    free(C.objs[i].path);
    free(C.objs[i].syms);
    free(C.objs[i].names);
  }
  free(C.objs);
  free(C.ranges);
  memset(&C, 0, sizeof(C));
}
