/* ht_sink.h -- compressed output of the Heaptrack exporter.
**
** Text goes in by whole buffers; the sink compresses it (zlib gzip or zstd,
** both at a fast level) on a second thread and writes it to a FILE, so
** decoding and compression overlap. Plain text is written on the caller's
** thread.
*/
#ifndef HT_SINK_H
#define HT_SINK_H

#include <stddef.h>
#include <stdio.h>

typedef enum HtCodec { HT_PLAIN = 0, HT_GZIP, HT_ZSTD } HtCodec;

typedef struct HtSink HtSink;

/* Opens a sink writing to out (not closed by the sink). NULL + err on failure. */
HtSink *ht_sink_open(FILE *out, HtCodec codec, char *err, size_t errlen);
/* The first buffer to fill: HT_SINK_CHUNK bytes, owned by the sink. */
char *ht_sink_buffer(HtSink *s);
/* Hands over the filled buffer (len bytes) and returns the next one to
** fill; the two buffers take turns, so nothing is copied. */
char *ht_sink_submit(HtSink *s, char *buf, size_t len);
/* Ends the stream, waits for the writer and frees the sink. 0 or -1 + err. */
int ht_sink_close(HtSink *s, char *err, size_t errlen);

#ifndef HT_SINK_CHUNK  /* the fuzz target makes it small: more hand-overs */
#define HT_SINK_CHUNK (1u << 20)
#endif

#endif
