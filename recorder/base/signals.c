/* signals.c -- writes that fail instead of killing the host. */
#include "recorder/base/signals.h"

#include <time.h>

static void write_signals(sigset_t *s)
{
  sigemptyset(s);
  sigaddset(s, SIGPIPE);
  sigaddset(s, SIGXFSZ);
}

void rec_sig_block(RecSigGuard *g)
{
  sigset_t s;
  write_signals(&s);
  pthread_sigmask(SIG_BLOCK, &s, &g->old);
  sigpending(&g->had);
}

void rec_sig_restore(RecSigGuard *g)
{
  static const int sigs[] = {SIGPIPE, SIGXFSZ};
  sigset_t now, one;
  struct timespec zero = {0, 0};
  unsigned i;
  sigpending(&now);
  for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
    /* Only what our write raised: one pending before belongs to the host. */
    if (!sigismember(&now, sigs[i]) || sigismember(&g->had, sigs[i])) continue;
    sigemptyset(&one);
    sigaddset(&one, sigs[i]);
    sigtimedwait(&one, NULL, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}
