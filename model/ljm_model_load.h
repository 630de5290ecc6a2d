/* ljm_model_load.h -- building a model: decoding a stream into it.
**
** The CLI and the tests use this header; exporters never do (they read a
** finished model through ljm_model.h only).
*/
#ifndef LJM_MODEL_LOAD_H
#define LJM_MODEL_LOAD_H

#include "decoder/ljm_decoder.h"
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

/* Decodes a profile into an empty model ('path' is recorded in its stream
** info) and finishes it (sorted rows, summary). Returns the decode status;
** on LJM_TRUNCATED and LJM_ERROR the model holds what was read. */
LjmStatus ljm_model_load(LjmModel *m, LjmInput *in, const char *path,
                         LjmDiag *diag);

#ifdef __cplusplus
}
#endif

#endif
