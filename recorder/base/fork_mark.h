/* fork_mark.h -- whether this process is a fork of the one recording.
**
** A child made by fork() has copies of the recorder's buffers and file
** descriptors but not its threads (the writer, the ticker): writing on
** would block for ever on a writer that is not there, or put the child's
** events into the parent's file. glibc's fork() runs the pthread_atfork
** handlers; a raw system call (syscall(SYS_fork), clone without CLONE_VM)
** runs none. So the recorder also asks here wherever it hands a buffer
** over or writes, and at every API call.
**
** The answer is a generation: it goes up by one in each forked child, at
** the first question asked there. Whoever keeps state that a fork leaves
** behind (a session list, a writer thread) notes the generation it was
** made in and compares. Telling a fork is a word in a page mapped with
** MADV_WIPEONFORK: a forked child reads it as 0, the process itself (and a
** vfork()-style child that shares its memory, CLONE_VM, whose allocations
** are the parent's heap's and belong in its stream) reads it as set.
** Without MADV_WIPEONFORK (Linux before 4.14) the process id tells
** instead, which a CLONE_VM child cannot be told apart by, and the
** allocator wrapper's per-call check (rec_fork_unchanged, then
** rec_fork_gen_cheap) does not ask (no system call per allocation).
*/
#ifndef REC_FORK_H
#define REC_FORK_H

#include <stdint.h>

extern uint32_t *rec_fork_mark;  /* the page's word, NULL without one */
extern uint32_t rec_fork_generation;

/* Maps the mark's page (once per process); called at every start. */
void rec_fork_arm(void);
/* Slow half of rec_fork_gen: the mark is gone (a forked child's first
** question), or there is no mark page. */
uint32_t rec_fork_gen_slow(void);

/* This process's generation: 0 until a fork, then one more in each forked
** child than in its parent. One load and a compare while nothing forked. */
static inline uint32_t rec_fork_gen(void)
{
  uint32_t *m = __atomic_load_n(&rec_fork_mark, __ATOMIC_ACQUIRE);
  if (__builtin_expect(m != 0 && __atomic_load_n(m, __ATOMIC_ACQUIRE) == 1, 1))
    return __atomic_load_n(&rec_fork_generation, __ATOMIC_RELAXED);
  return rec_fork_gen_slow();
}

/* The same without the process-id question of a kernel without
** MADV_WIPEONFORK (for the allocator wrapper, once rec_fork_unchanged
** has said no). */
static inline uint32_t rec_fork_gen_cheap(void)
{
  uint32_t *m = __atomic_load_n(&rec_fork_mark, __ATOMIC_ACQUIRE);
  if (__builtin_expect(!m || __atomic_load_n(m, __ATOMIC_ACQUIRE) == 1, 1))
    return __atomic_load_n(&rec_fork_generation, __ATOMIC_RELAXED);
  return rec_fork_gen_slow();
}

/* Is this process still of generation gen? Loads and compares only (no
** call, no system call), for the allocator wrapper's per-call check; when
** not, rec_fork_gen_cheap says which generation it is. */
static inline int rec_fork_unchanged(uint32_t gen)
{
  uint32_t *m = __atomic_load_n(&rec_fork_mark, __ATOMIC_ACQUIRE);
  return (!m || __atomic_load_n(m, __ATOMIC_ACQUIRE) == 1) &&
         __atomic_load_n(&rec_fork_generation, __ATOMIC_RELAXED) == gen;
}
#endif
