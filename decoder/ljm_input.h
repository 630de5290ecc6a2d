/* ljm_input.h -- internal: raw reads from an LjmInput. */
#ifndef LJM_INPUT_H
#define LJM_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "ljm_decoder.h"

/* Reads up to len bytes. Returns the count, 0 at end of input (including
** a gzip stream cut short), or -1 with diag filled (at 'offset'). */
ptrdiff_t ljm_input_read(LjmInput *in, void *buf, size_t len, LjmDiag *diag,
                         uint64_t offset);

/* The same, but a followed input (ljm_input_follow) with no data now
** returns LJM_INPUT_AGAIN instead of waiting. */
ptrdiff_t ljm_input_read_now(LjmInput *in, void *buf, size_t len, LjmDiag *diag,
                             uint64_t offset);
#define LJM_INPUT_AGAIN (-2)

/* Only a few bytes will be read (a format check): zlib decompresses in small
** steps, not a quarter of a megabyte for the first byte. Before any read. */
void ljm_input_small_reads(LjmInput *in);

/* A memory input shows only its first len bytes (at most all), as a file
** being written would (tests of ljm_input_follow); returns the bytes shown. */
size_t ljm_input_mem_show(LjmInput *in, size_t len);

/* Past the stream's end marker: a followed input (ljm_input_follow) stops
** waiting, so what follows is counted up to where the data ends now. */
void ljm_input_stop_following(LjmInput *in);

#endif
