/* compress.h -- compressed file output of the recorder (.gz, .zst).
**
** A recording to a path ending in ".gz" or ".zst" is compressed on the
** writer thread, one buffer at a time. Each buffer ends with a flush
** point (deflate's sync flush, a zstd block end), so a process killed at
** any moment leaves a file whose every buffer written so far decodes: the
** decoder reports it as a truncated stream. Stop writes the trailer.
*/
#ifndef REC_ZOUT_H
#define REC_ZOUT_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/base/buffer.h"

typedef enum RecZKind { REC_Z_NONE, REC_Z_GZIP, REC_Z_ZSTD } RecZKind;

typedef struct RecZout {
  RecZKind kind;
  void *ctx;        /* z_stream or ZSTD_CStream */
  uint8_t *out;     /* compressed bytes before they go to the sink */
  size_t outcap;
  RecSinkFn sink;   /* where compressed bytes go */
  void *ud;
} RecZout;

/* The compression a path asks for, by its name's ending. */
RecZKind rec_zout_kind(const char *path);
/* Sets up a compressor writing to sink; 0 or ENOMEM. REC_Z_NONE: nothing. */
int rec_zout_init(RecZout *z, RecZKind kind, RecSinkFn sink, void *ud);
/* A RecSinkFn (ud: the RecZout): compresses data[0..len) up to a flush
** point and hands the result to the sink; 0 or an errno value. */
int rec_zout_write(void *ud, const void *data, size_t len);
/* Ends the compressed stream (gzip trailer, zstd frame end). */
int rec_zout_end(RecZout *z);
/* Frees the compressor (the sink is not called). */
void rec_zout_free(RecZout *z);

#endif
