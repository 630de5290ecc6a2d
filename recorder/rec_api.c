/* rec_api.c -- the public functions of ljm_recorder.h.
**
** Each start asks the flavours (rec_flavour.h) in turn whether L's VM
** has their layouts and records with the first that does; the handle
** remembers its flavour for the calls that follow.
*/
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ljm_recorder.h"
#include "rec_flavour.h"

static void set_err(LjmRecError *err, int code, const char *msg)
{
  if (err) {
    err->code = code;
    snprintf(err->msg, sizeof(err->msg), "%s", msg);
  }
}

/* The flavour matching L's VM, or NULL with err saying why each refused. */
static const RecFlavour *pick(lua_State *L, LjmRecError *err)
{
  char why[sizeof(err->msg)];
  size_t n = 0;
  int i;
  if (!L) {
    set_err(err, EINVAL, "no lua_State");
    return NULL;
  }
  why[0] = '\0';
  for (i = 0; rec_flavours[i]; i++) {
    LjmRecError e;
    int k;
    if (!rec_flavours[i]->check(L, &e)) return rec_flavours[i];
    k = snprintf(why + n, sizeof(why) - n, "%s%s: %s", i ? "; " : "",
                 rec_flavours[i]->label, e.msg);
    if (k > 0) n = (size_t)k >= sizeof(why) - n ? sizeof(why) - 1 : n + (size_t)k;
  }
  if (err) {
    err->code = ENOTSUP;
    snprintf(err->msg, sizeof(err->msg),
             "this LuaJIT does not match any build the recorder was compiled for (%s)",
             why);
  }
  return NULL;
}

static const RecFlavour *flavour_of(const LjmRecorder *r)
{
  return ((const RecHandle *)(const void *)r)->fl;
}

LjmRecorder *ljm_recorder_start_path(lua_State *L, const char *path, LjmRecError *err)
{
  return ljm_recorder_start_path_ex(L, path, NULL, err);
}

LjmRecorder *ljm_recorder_start_path_ex(lua_State *L, const char *path,
                                        const LjmRecOptions *opt, LjmRecError *err)
{
  const RecFlavour *fl = pick(L, err);
  return fl ? fl->start_path(L, path, opt, err) : NULL;
}

LjmRecorder *ljm_recorder_start_fd(lua_State *L, int fd, LjmRecError *err)
{
  return ljm_recorder_start_fd_ex(L, fd, NULL, err);
}

LjmRecorder *ljm_recorder_start_fd_ex(lua_State *L, int fd, const LjmRecOptions *opt,
                                      LjmRecError *err)
{
  const RecFlavour *fl = pick(L, err);
  return fl ? fl->start_fd(L, fd, opt, err) : NULL;
}

LjmRecorder *ljm_recorder_start_writer(lua_State *L, LjmRecWriteFn write, void *ud,
                                       LjmRecError *err)
{
  return ljm_recorder_start_writer_ex(L, write, ud, NULL, err);
}

LjmRecorder *ljm_recorder_start_writer_ex(lua_State *L, LjmRecWriteFn write, void *ud,
                                          const LjmRecOptions *opt, LjmRecError *err)
{
  const RecFlavour *fl = pick(L, err);
  return fl ? fl->start_writer(L, write, ud, opt, err) : NULL;
}

int ljm_recorder_stop(LjmRecorder *r, LjmRecError *err)
{
  if (!r) {
    set_err(err, EINVAL, "profiler is not running");
    return EINVAL;
  }
  return flavour_of(r)->stop(r, err);
}

void ljm_recorder_report_at_exit(LjmRecorder *r, const char *prefix)
{
  if (r) ((RecHandle *)(void *)r)->exit_report = prefix;
}

int ljm_recorder_is_running(const LjmRecorder *r)
{
  return r && flavour_of(r)->is_running(r);
}

uint64_t ljm_recorder_bytes(const LjmRecorder *r)
{
  return r ? flavour_of(r)->bytes(r) : 0;
}

int ljm_recorder_check(lua_State *L, LjmRecError *err)
{
  return pick(L, err) ? 0 : ENOTSUP;
}

int ljm_recorder_snapshot(lua_State *L, const char *path, LjmRecError *err)
{
  const RecFlavour *fl = pick(L, err);
  return fl ? fl->snapshot(L, path, err) : err ? err->code : ENOTSUP;
}

const char *ljm_recorder_build(lua_State *L)
{
  const RecFlavour *fl = pick(L, NULL);
  return fl ? fl->label : NULL;
}
