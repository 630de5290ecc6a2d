/* fixed_seed.c -- an LD_PRELOAD library for the cost guard
** (bench/budget_test.py): answers getrandom(2) made through syscall(3)
** with the same bytes every run, so that LuaJIT seeds its string hash the
** same way and its collector frees the same blocks at the same calls; every
** other system call goes through. LuaJIT makes its getrandom call this way
** (lj_prng.c), to work with C libraries older than glibc 2.25. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

typedef long (*SyscallFn)(long, long, long, long, long, long, long);

/* Integer arguments travel in the same registers whether a call is
** variadic or not (x86-64 and AArch64 Linux), so six longs forward any.
** (<unistd.h>, which declares it variadic, is not included.) */
long syscall(long n, long a, long b, long c, long d, long e, long f);
long syscall(long n, long a, long b, long c, long d, long e, long f)
{
  static SyscallFn next;
  if (n == SYS_getrandom) {
    uint8_t *p = (uint8_t *)a;
    for (size_t i = 0; i < (size_t)b; i++) p[i] = (uint8_t)(i * 37 + 11);
    return b;
  }
  if (!next) next = (SyscallFn)dlsym(RTLD_NEXT, "syscall");
  return next(n, a, b, c, d, e, f);
}
