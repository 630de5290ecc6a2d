/* record_paused.h -- ljm record --paused: the script runs unrecorded until
** SIGUSR1 starts a recording, SIGUSR2 stops it; each start writes a stream
** of its own, numbered (app.ljm: app.1.ljm, app.2.ljm, ...).
**
** The handlers only ask: a Lua hook set from the handler (lua_sethook is
** safe there, as luajit's own Ctrl-C handler uses it) runs at the script's
** next interpreted instruction, starts or stops the recording there and
** puts back any hook the script had. A signal the process ignores or
** handles already when the run starts is not taken over: --paused is
** refused, saying which. */
#ifndef LJM_CLI_RECORD_PAUSED_H
#define LJM_CLI_RECORD_PAUSED_H

#include <lua.h>

#include "recorder/ljm_recorder.h"

/* Installs the handlers for the run of L's script: recordings go to
** output_api (fields escaped, as the recorder expands them) numbered,
** with opt, their recorder in *rec (NULL while paused). 0, or -1 with
** one line said. */
int ljm_paused_arm(lua_State *L, const char *output_api, const LjmRecOptions *opt,
                   LjmRecorder **rec);
/* After the script: whether both handlers are still ours (else says so);
** the recordings made and failures. 0 ok, 1 a failure was said. */
int ljm_paused_finish(void);
/* Path of recording n of pattern (app.ljm -> app.N.ljm, before any .gz or
** .zst); 0, or -1 when it does not fit in len bytes. */
int ljm_paused_path(const char *pattern, unsigned n, char *out, size_t len);

#endif
