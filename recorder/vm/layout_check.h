/* layout_check.h -- build-match check of the running LuaJIT. */
#ifndef REC_CHECK_H
#define REC_CHECK_H

#include "recorder/vm/unit.h"

#include "recorder/ljm_recorder.h"

/* 0 if L's VM matches the internal headers we were built with, else
** ENOTSUP with err filled in. version: jit.version as running, or NULL. */
REC_API int rec_check(lua_State *L, const char *version, LjmRecError *err);

#endif
