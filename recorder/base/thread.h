/* thread.h -- the recorder's own threads (the writer, the ticker).
**
** A recorder thread blocks every signal, so that signals stay with the
** host's threads, and is running before rec_thread_start returns. The
** second matters to a host that forks: a thread's start-up calls into the
** allocator (a sanitizer's runtime, some C libraries), and a fork that runs
** no pthread_atfork handler (syscall(SYS_fork)) made meanwhile leaves the
** child an allocator lock nobody will release. Once running, the threads
** wait on their own mutex and condition and write; they never allocate.
*/
#ifndef REC_THREAD_H
#define REC_THREAD_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread; returns once
** fn has been entered. 0 or an errno value. */
int rec_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);

#endif
