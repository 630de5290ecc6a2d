/* bytes_fmt.h -- byte counts as the reference report prints them. */
#ifndef LJM_BYTES_FMT_H
#define LJM_BYTES_FMT_H

#include <stddef.h>

/* Formats n (a Lua number) as "%dB", or with human=1 as B/KiB/MiB/GiB with
** ties rounded away from zero as LuaJIT does. Returns the length. */
int ljm_fmt_bytes(char *buf, size_t len, double n, int human);

/* Formats n the way LuaJIT's "%d" does (out-of-range becomes INT64_MIN). */
int ljm_fmt_lua_d(char *buf, size_t len, double n);

#endif
