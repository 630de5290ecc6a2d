/* ljm_model_load.h -- building a model: decoding a stream into it.
**
** The CLI and the tests use this header; exporters never do (they read a
** finished model through ljm_model.h only).
*/
#ifndef LJM_MODEL_LOAD_H
#define LJM_MODEL_LOAD_H

#include "decoder/ljm_decoder.h"
#include "model/ljm_heapgraph.h"
#include "model/ljm_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates an empty model. */
LjmModel *ljm_model_new(void);
/* Frees a model; NULL is allowed. */
void ljm_model_free(LjmModel *m);

/* Names Lua functions from their source files (ljm_model.h, LjmSite.func):
** chunk paths as recorded (relative to the current directory), then under
** each of dirs. Call before ljm_model_load. Returns 0 or -1 (out of memory). */
int ljm_model_set_sources(LjmModel *m, const char *const *dirs, size_t ndirs);
/* After loading: how many source files were looked for and not found, and
** one of them (the model's string, or NULL when none). */
uint32_t ljm_model_sources_missing(const LjmModel *m, const char **example);

/* Sizes and byte totals a stream may carry. No address space holds a block
** above 2^56 bytes, and totals below 2^62 stay exact in every view (int64
** pprof values, the text report's double sums); an event beyond either is
** an error at its offset, and what came before it is kept. */
#define LJM_SIZE_MAX (1ull << 56)
#define LJM_TOTAL_MAX (1ull << 62)

/* Progress of ljm_model_load: called each time another part of the stream
** has been read, with the stream offset and the events applied so far. */
typedef void (*LjmProgressFn)(void *ud, uint64_t offset, uint64_t events);
/* Sets (fn NULL: removes) the progress callback; call before loading. */
void ljm_model_set_progress(LjmModel *m, LjmProgressFn fn, void *ud);

/* Counts only the events dated in [from, to) (usec since the stream
** began; to UINT64_MAX: to the end), by their time marks: the events before
** 'from' only make the blocks in use at its start, which the window carries
** in (their figures are in use, and a free of one in the window is a free;
** a listener gets each as an LJM_EV_CARRIED event when the window starts),
** and the events from 'to' on are read and left out. Peaks are the window's.
** Times count from 'from' (LjmStreamInfo). For a stream with time marks;
** call before decoding. */
void ljm_model_set_window(LjmModel *m, uint64_t from, uint64_t to);

/* Decodes a profile into an empty model ('path' is recorded in its stream
** info) and finishes it (sorted rows, summary). Returns the decode status;
** on LJM_TRUNCATED and LJM_ERROR the model holds what was read. */
LjmStatus ljm_model_load(LjmModel *m, LjmInput *in, const char *path,
                         LjmDiag *diag);

/* Builds an empty model from a heap snapshot's graph: the heap as a flame
** graph (ljm_heapflame.c). Each object is an allocation, live at the end,
** whose stack is its place in the dominator tree, each frame named by the
** steps of the path below its dominator ("_G", "sessions", "buf"); array
** elements of one type are one frame ("[1..5000]"). A frame's total is what
** it retains; all add up to the snapshot's bytes. LJM_OK, or LJM_ERROR
** with diag (out of memory). */
LjmStatus ljm_model_load_heap(LjmModel *m, const LjmHeapGraph *g, const char *path,
                              LjmDiag *diag);

#ifdef __cplusplus
}
#endif

#endif
