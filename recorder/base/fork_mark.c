/* fork_mark.c -- whether this process is a fork of the one recording. */
#include "recorder/base/fork_mark.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

uint32_t *rec_fork_mark;
uint32_t rec_fork_generation;
static pid_t gen_pid;  /* the process the generation is of (0: not asked yet) */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void map_mark(void)
{
#ifdef MADV_WIPEONFORK
  long pg = sysconf(_SC_PAGESIZE);
  size_t len = pg > 0 ? (size_t)pg : 4096;
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  if (madvise(p, len, MADV_WIPEONFORK)) {
    munmap(p, len);
    return;
  }
  __atomic_store_n((uint32_t *)p, 1, __ATOMIC_RELAXED);
  __atomic_store_n(&rec_fork_mark, (uint32_t *)p, __ATOMIC_RELEASE);
#endif
}

void rec_fork_arm(void)
{
  if (!__atomic_load_n(&gen_pid, __ATOMIC_ACQUIRE)) __atomic_store_n(&gen_pid, getpid(), __ATOMIC_RELEASE);
  pthread_once(&once, map_mark);
}

uint32_t rec_fork_gen_slow(void)
{
  uint32_t *m = __atomic_load_n(&rec_fork_mark, __ATOMIC_ACQUIRE);
  if (m) {
    /* The first thread of the child to ask claims the change (0 -> 2),
    ** counts it and sets the mark again (1); others wait for that. */
    uint32_t zero = 0;
    if (__atomic_compare_exchange_n(m, &zero, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      __atomic_add_fetch(&rec_fork_generation, 1, __ATOMIC_RELEASE);
      __atomic_store_n(m, 1, __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(m, __ATOMIC_ACQUIRE) != 1) sched_yield();
  } else {
    pid_t armed = __atomic_load_n(&gen_pid, __ATOMIC_ACQUIRE), now;
    if (armed && (now = getpid()) != armed &&
        __atomic_compare_exchange_n(&gen_pid, &armed, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      __atomic_add_fetch(&rec_fork_generation, 1, __ATOMIC_RELEASE);
  }
  return __atomic_load_n(&rec_fork_generation, __ATOMIC_ACQUIRE);
}
