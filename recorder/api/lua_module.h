/* lua_module.h -- the Lua binding: require "ljm.recorder", misc.memprof. */
#ifndef LIB_RECORDER_H
#define LIB_RECORDER_H

#include <lua.h>

/* Pushes the module table {start, stop, is_running}. */
int ljm_recorder_open(lua_State *L);
/* Sets the global misc.memprof to that table (misc created if absent),
** so scripts written for Tarantool run unchanged. */
void ljm_recorder_open_misc(lua_State *L);
/* Entry point for require "ljm.recorder" (ljm/recorder.so). The module
** is built with hidden visibility, so calls inside it skip the PLT; this
** is its only exported symbol. */
__attribute__((visibility("default"))) int luaopen_ljm_recorder(lua_State *L);

#endif
