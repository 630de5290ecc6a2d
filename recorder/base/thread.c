/* thread.c -- the recorder's own threads: no signals, started on return. */
#include "recorder/base/thread.h"

#include <errno.h>
#include <semaphore.h>
#include <signal.h>

typedef struct Start {
  void *(*fn)(void *);
  void *arg;
  sem_t entered;  /* posted by the new thread; sem_post allocates nothing */
} Start;

static void *trampoline(void *p)
{
  Start *s = p;
  void *(*fn)(void *) = s->fn;
  void *arg = s->arg;
  sem_post(&s->entered);  /* s lives on the creator's stack: not read after this */
  return fn(arg);
}

int rec_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
  Start s;
  sigset_t all, old;
  int e;
  s.fn = fn;
  s.arg = arg;
  if (sem_init(&s.entered, 0, 0)) return errno;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  e = pthread_create(th, NULL, trampoline, &s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!e) {
    while (sem_wait(&s.entered) && errno == EINTR) {
    }
  }
  sem_destroy(&s.entered);
  return e;
}
