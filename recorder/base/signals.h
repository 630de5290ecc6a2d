/* signals.h -- writes that fail instead of killing the host.
**
** A write into a pipe whose reader has gone raises SIGPIPE, one past
** RLIMIT_FSIZE raises SIGXFSZ, in the writing thread; both kill the
** process by default. The recorder's own threads block every signal
** (base/thread.h); its writes on the host's thread are bracketed by
** rec_sig_block/rec_sig_restore. Either way the write fails with EPIPE or
** EFBIG, an ordinary write error that ends the recording.
*/
#ifndef REC_SIG_H
#define REC_SIG_H

#include <pthread.h>
#include <signal.h>

typedef struct RecSigGuard {
  sigset_t old;   /* the thread's mask before */
  sigset_t had;   /* what was pending before */
} RecSigGuard;

/* Blocks SIGPIPE and SIGXFSZ in the calling thread. */
void rec_sig_block(RecSigGuard *g);
/* Consumes a SIGPIPE or SIGXFSZ that became pending since rec_sig_block
** (one the write raised), then restores the mask. */
void rec_sig_restore(RecSigGuard *g);

#endif
