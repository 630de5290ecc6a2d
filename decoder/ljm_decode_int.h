/* ljm_decode_int.h -- internal: ljm_decode with its stop polls handed to a
** function, for the threaded decoder (ljm_decode_thread.c), whose consumer
** answers them later and must report a stop exactly as ljm_decode would. */
#ifndef LJM_DECODE_INT_H
#define LJM_DECODE_INT_H

#include <stdint.h>

#include "ljm_decoder.h"

/* Called where ljm_decode polls cb->stopped, with what a stop there reports:
** the offset of the last event handed over ('diag') and the stream offset
** reached ('bytes'). Nonzero stops decoding as stopped() does. */
typedef int (*LjmPollFn)(void *ud, uint64_t item, uint64_t reached);

/* ljm_decode, polling 'poll' (when not NULL) instead of cb->stopped. */
LjmStatus ljm_decode_polled(LjmInput *in, const LjmCallbacks *cb, void *ud, LjmPollFn poll,
                            LjmDiag *diag, uint64_t *bytes, uint64_t *trailing);

#endif
