/* gen_symtab.c -- the ljs v3 section of the benchmark stream (see gen_symtab.h). */
#include "bench/gen_symtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Counts as in a real glibc + luajit process (empty.ljm: 1626 symbols in the
** executable, 104 of them undefined imports at its load base; 4075 in
** libraries). */
#define EXE_FUNCS 1522
#define EXE_IMPORTS 104
#define LIB_FUNCS 4075

static const char *const exe_prefix[] = {
  "lj_", "lj_ff_", "lj_ffh_", "lj_cf_", "lj_BC_", "lj_opt_", "lj_ir_",
  "lj_asm_", "lj_record_", "lj_crecord_", "lj_ccall_", "lj_cconv_",
  "lj_cparse_", "lj_meta_", "lj_tab_", "lj_str_", "lj_buf_", "lj_gc_",
  "lj_func_", "lj_state_", "lj_err_", "lj_lib_", "lj_trace_", "lj_snap_",
  "lj_strfmt_", "lj_debug_", "lj_vm_", "lj_memprof_", "lj_symtab_",
  "fold_", "asm_", "rec_", "crec_", "lua_", "luaL_", "luaopen_", "cp_",
  "parse_", "expr_", "bcemit_", "var_", "gc_", "trace_", "snap_", "debug_",
};
static const char *const exe_word[] = {
  "new", "free", "resize", "get", "set", "find", "insert", "remove", "next",
  "call", "check", "alloc", "grow", "shrink", "sweep", "mark", "emit",
  "fold", "conv", "load", "store", "index", "newindex", "concat", "len",
  "tostring", "tonumber", "format", "dump", "read", "write", "open",
  "close", "flush", "hash", "intern", "push", "pop", "copy", "clear",
  "init", "start", "stop", "step", "barrier", "kfold", "knum", "kint",
  "u64", "num", "str", "tab", "func", "upval", "proto", "slot", "frame",
  "stack", "cdata", "ctype", "math_floor", "string_rep", "table_insert",
  "bit_band", "ffi_new", "coroutine_wrap_aux", "uleb128", "ah",
};
static const char *const lib_prefix[] = {
  "", "", "", "__", "_IO_", "pthread_", "posix_", "inet_", "_dl_",
  "__libc_", "sig", "get", "set", "x", "clnt", "svc", "key_", "re_",
  "tss_", "epoll_", "fts_", "w", "f", "__isoc99_", "mtx_", "cnd_",
};
static const char *const lib_word[] = {
  "strcpy", "strcat", "memcmp", "strchr", "strlen", "strdup", "strtok",
  "open", "close", "read", "write", "seek", "stat", "lock", "unlock",
  "create", "destroy", "attr_init", "mutex_lock", "cond_wait", "printf",
  "scanf", "alloc", "free", "time", "clock", "rand_r", "env", "name",
  "addr", "sock", "bind", "listen", "accept", "wait3", "spawn", "exec",
  "fork", "kill", "yield", "nsap_ntoa", "option_find", "barrier_destroy",
  "attr_getaffinity_np", "compile_fastmap", "textdomain", "vm_readv",
};
static const char *const math_word[] = {
  "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "exp",
  "exp2", "log", "log2", "log10", "pow", "sqrt", "cbrt", "ceil", "floor",
  "round", "lround", "llround", "rint", "lrint", "fmod", "remainder",
  "remquo", "fmin", "fmax", "fminimum", "fmaximum_num", "fminmag", "frexp",
  "ldexp", "scalb", "logb", "llogb", "hypot", "erf", "erfc", "lgamma",
  "tgamma", "j0", "j1", "y0", "y1", "nextafter", "copysign", "csin",
  "ccos", "casinh", "carg", "cexp", "clog",
};
static const char *const math_suffix[] = {
  "", "f", "l", "f32", "f64", "f32x", "f64x", "f128", "_finite",
};
static const char *const libc_suffix[] = {
  "_r", "_np", "_chk", "_internal", "_nocancel", "_unlocked", "64", "at",
  "_ex", "_l",
};
static const char *const cold_suffix[] = {
  ".cold", ".isra.0", ".part.0", ".constprop.0",
};
static const char *const versions[] = {
  "@GLIBC_2.2.5", "@GLIBC_2.2.5", "@GLIBC_2.2.5", "@GLIBC_2.2.5",
  "@GLIBC_2.2.5", "@GLIBC_2.34", "@GCC_3.0", "@GLIBC_2.29",
};

/* xorshift64*: fixed seed, so every run writes the same bytes. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 33) % n;
}
#define PICK(a) ((a)[rnd(N(a))])

static void put_sym_c(GenOut *o, uint64_t addr, const char *name)
{
  gen_out_reserve(o);
  gen_out_byte(o, 0x01);
  gen_out_uleb(o, addr);
  gen_out_str(o, name, strlen(name));
}

static void put_sym_lua(GenOut *o, const GenProto *p)
{
  gen_out_reserve(o);
  gen_out_byte(o, 0x00);
  gen_out_uleb(o, p->addr);
  gen_out_str(o, p->chunk, strlen(p->chunk));
  gen_out_reserve(o);
  gen_out_uleb(o, p->firstline);
}

/* Function start inside a text section of 'span' bytes, 16-aligned. */
static uint64_t text_addr(uint64_t base, uint32_t span)
{
  return base + 0x8000 + (uint64_t)rnd(span / 16) * 16;
}

static void synth_exe(GenOut *o, uint64_t base)
{
  char name[128];
  for (int i = 0; i < EXE_FUNCS; i++) {
    int n = snprintf(name, sizeof name, "%s%s", PICK(exe_prefix), PICK(exe_word));
    if (rnd(2)) n += snprintf(name + n, sizeof name - n, "_%s", PICK(exe_word));
    if (rnd(20) == 0) snprintf(name + n, sizeof name - n, "%s", PICK(cold_suffix));
    put_sym_c(o, text_addr(base, 0x60000), name);
  }
  /* Undefined imports: st_value 0, so they sit at the load base. */
  for (int i = 0; i < EXE_IMPORTS; i++) {
    snprintf(name, sizeof name, "%s%s%s", PICK(lib_prefix), PICK(lib_word), PICK(versions));
    put_sym_c(o, base, name);
  }
}

static void synth_libs(GenOut *o, uint64_t base)
{
  char name[128];
  for (int i = 0; i < LIB_FUNCS; i++) {
    int lib = i < 900 ? 0 : i < 4050 ? 1 : 2;  /* libm, libc, ld.so */
    uint64_t lbase = base + (uint64_t)lib * 0x200000;
    if (lib == 0)
      snprintf(name, sizeof name, "%s%s%s", rnd(3) ? "" : "__", PICK(math_word),
               PICK(math_suffix));
    else if (lib == 1)
      snprintf(name, sizeof name, "%s%s%s", PICK(lib_prefix), PICK(lib_word),
               rnd(2) ? PICK(libc_suffix) : "");
    else
      snprintf(name, sizeof name, "_dl_%s", PICK(lib_word));
    put_sym_c(o, text_addr(lbase, 0x190000), name);
  }
}

static const char *const builtins[] = {
  "rad", "deg", "len", "move", "remove", "getn", "foreach", "foreachi",
};

static void synth(GenOut *o, uint64_t exe_base, uint64_t lib_base,
                  uint64_t proto_base)
{
  for (size_t i = 0; i < N(builtins); i++) {
    GenProto p = {proto_base - 0xE0 * (i + 1), builtins[i], UINT64_MAX};
    put_sym_lua(o, &p);
  }
  synth_exe(o, exe_base);
  synth_libs(o, lib_base);
}

/* Offset just past the last entry of a v3 symtab in buf (before its final
** byte), or 0 if buf does not start with a well-formed one. */
static size_t symtab_end(const unsigned char *buf, size_t len)
{
  if (len < 8 || memcmp(buf, "ljs\3", 4) != 0) return 0;
  size_t pos = 7;
  while (pos < len && !(buf[pos] & 0x80)) {
    int type = buf[pos++] & 3;
    int fields = type == 0 ? 3 : type == 1 ? 2 : type == 2 ? 3 : -1;
    if (fields < 0) return 0;
    for (int f = 0; f < fields; f++) {
      uint64_t v = 0;
      int shift = 0;
      do {
        if (pos >= len || shift > 63) return 0;
        v |= (uint64_t)(buf[pos] & 0x7f) << shift;
        shift += 7;
      } while (buf[pos++] & 0x80);
      /* The second field of Lua and C entries is a string: skip its bytes. */
      if (f == 1 && type != 2) {
        if (v > len - pos) return 0;
        pos += (size_t)v;
      }
    }
  }
  return pos < len ? pos : 0;
}

static int copy(GenOut *o, const char *path, char *err, size_t errlen)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "cannot open %s", path);
    return -1;
  }
  size_t cap = 1 << 20, len = 0, n;
  unsigned char *buf = malloc(cap);
  while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  size_t end = buf ? symtab_end(buf, len) : 0;
  if (end) gen_out_bytes(o, buf + 7, end - 7);
  free(buf);
  if (!end) snprintf(err, errlen, "%s: no ljs v3 symtab", path);
  return end ? 0 : -1;
}

int gen_symtab_write(GenOut *o, const char *copy_from, const GenProto *protos,
                     size_t nprotos, uint64_t exe_base, uint64_t lib_base,
                     char *err, size_t errlen)
{
  gen_out_bytes(o, "ljs\3\0\0\0", 7);
  /* LuaJIT walks the GC root list (newest first) before the C symbols. */
  for (size_t i = 0; i < nprotos; i++) put_sym_lua(o, &protos[i]);
  if (copy_from) {
    if (copy(o, copy_from, err, errlen) < 0) return -1;
  } else {
    synth(o, exe_base, lib_base, nprotos ? protos[0].addr : lib_base);
  }
  gen_out_reserve(o);
  gen_out_byte(o, 0x80);
  return 0;
}
