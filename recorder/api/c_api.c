/* c_api.c -- the public functions of ljm_recorder.h.
**
** Each start asks the flavours (capture/flavour.h) in turn whether L's VM
** has their layouts and records with the first that does; the handle
** remembers its flavour for the calls that follow.
*/
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "recorder/api/vm_info.h"
#include "recorder/capture/flavour.h"
#include "recorder/ljm_recorder.h"

static void set_err(LjmRecError *err, int code, const char *msg)
{
  if (err) {
    err->code = code;
    snprintf(err->msg, sizeof(err->msg), "%s", msg);
  }
}

/* Appends to buf[n..cap), always terminated; the new length. */
static size_t add(char *buf, size_t n, size_t cap, const char *s)
{
  size_t k = strlen(s);
  if (n + 1 >= cap) return n;
  if (k > cap - 1 - n) k = cap - 1 - n;
  memcpy(buf + n, s, k);
  buf[n + k] = '\0';
  return n + k;
}

/* The refusal: the running VM, the builds compiled in, and how to build
** one for it (the same words in ljm record, the module and the C API). */
static void refuse(const char *version, int gc64, LjmRecError *err)
{
  char *m = err->msg;
  size_t n = 0, cap = sizeof(err->msg);
  const char *lib = rec_vm_library();
  int i;
  n = add(m, n, cap, "this LuaJIT is not one the recorder was built for: ");
  n = add(m, n, cap, version ? version : "LuaJIT (version unknown: jit not loaded)");
  n = add(m, n, cap, gc64 > 0 ? ", GC64" : gc64 == 0 ? ", not GC64" : "");
  if (*lib) {
    n = add(m, n, cap, ", in ");
    n = add(m, n, cap, lib);
  }
  n = add(m, n, cap, "; built for: ");
  for (i = 0; rec_flavours[i]; i++) {
    n = add(m, n, cap, i ? "; " : "");
    n = add(m, n, cap, rec_flavours[i]->label);
  }
  n = add(m, n, cap, ". To record it, build ljmkit for its source tree: bazel build "
          "--repo_env=LJM_EXTRA_TREE=/path/to/its/source //:ljm //recorder:ljm/recorder.so "
          "(doc/luajit.md)");
  err->code = ENOTSUP;
}

/* The flavour matching L's VM, or NULL with err saying what to do. */
static const RecFlavour *pick(lua_State *L, LjmRecError *err)
{
  int i, gc64 = -1;
  char v[64];
  const char *version;
  if (!L) {
    set_err(err, EINVAL, "no lua_State");
    return NULL;
  }
  version = rec_vm_version(L, v, sizeof(v)) ? v : NULL;
  for (i = 0; rec_flavours[i]; i++) {
    LjmRecError e;
    if (!rec_flavours[i]->check(L, version, &e)) return rec_flavours[i];
    /* Past the lua_State check: the VM has this build's GC64 mode. */
    if (strcmp(e.msg, "lua_State layout") != 0) gc64 = rec_flavours[i]->gc64;
    else if (gc64 < 0) gc64 = !rec_flavours[i]->gc64;
  }
  if (err) refuse(version, gc64, err);
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

/* The flavour whose recording of L's VM keeps labels: labels are kept
** only then, and this costs a load per build where pick's checks cost
** hundreds of instructions (with_labels runs around every plugin call). */
static const RecFlavour *labelling(lua_State *L, LjmRecError *err)
{
  int i;
  if (L)
    for (i = 0; rec_flavours[i]; i++)
      if (rec_flavours[i]->keeps_labels(L)) return rec_flavours[i];
  set_err(err, ENOENT, "no recording that keeps labels is running");
  return NULL;
}

int ljm_recorder_label(lua_State *L, const char *key, size_t klen, const char *value,
                       size_t vlen, LjmRecError *err)
{
  const RecFlavour *fl = labelling(L, err);
  if (fl) return fl->set_label(L, key, klen, value, vlen, err);
  /* misuse is an error even when nothing would be kept */
  if (key && klen) return ENOENT;
  set_err(err, EINVAL, "a label's key is a non-empty string");
  return EINVAL;
}

int ljm_recorder_labels(lua_State *L, LjmRecLabelFn fn, void *ud)
{
  const RecFlavour *fl = labelling(L, NULL);
  return fl ? fl->get_labels(L, fn, ud) : 0;
}

int ljm_recorder_labels_push(lua_State *L, const LjmRecLabel *l, size_t n, uint64_t *saved,
                             LjmRecError *err)
{
  const RecFlavour *fl = labelling(L, err);
  *saved = 0;
  return fl ? fl->push_labels(L, l, n, saved, err) : ENOENT;
}

int ljm_recorder_labels_pop(lua_State *L, uint64_t saved, LjmRecError *err)
{
  const RecFlavour *fl = labelling(L, err);
  return fl ? fl->pop_labels(L, saved, err) : ENOENT;
}

const char *ljm_recorder_build(lua_State *L)
{
  const RecFlavour *fl = pick(L, NULL);
  return fl ? fl->label : NULL;
}

const char *ljm_recorder_builds(size_t i)
{
  size_t n = 0;
  while (rec_flavours[n] && n < i) n++;
  return rec_flavours[n] ? rec_flavours[n]->label : NULL;
}

int ljm_recorder_parse_bytes(const char *s, uint64_t *bytes)
{
  uint64_t v = 0, mul = 1;
  const char *p = s;
  if (!s || *s < '0' || *s > '9') return EINVAL;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (1ull << 53) / 10) return EINVAL;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  switch (*p) {
  case 'k': case 'K': mul = 1ull << 10; p++; break;
  case 'm': case 'M': mul = 1ull << 20; p++; break;
  case 'g': case 'G': mul = 1ull << 30; p++; break;
  default: break;
  }
  if (*p || v > (1ull << 53) / mul) return EINVAL;
  *bytes = v * mul;
  return 0;
}
