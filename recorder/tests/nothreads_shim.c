/* nothreads_shim.c -- LD_PRELOADed by nothreads_test: a host where no
** thread can be made (a process or cgroup thread limit reached), so the
** recorder's writer and ticker threads fail to start. */
#include <errno.h>
#include <pthread.h>

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
  (void)th;
  (void)attr;
  (void)fn;
  (void)arg;
  return EAGAIN;
}
