/* flavour.h -- the recorder built for one LuaJIT flavour.
**
** The files that read LuaJIT's internals are compiled once per flavour
** (Debian's luajit, OpenResty's luajit2, or any LuaJIT 2.1 tree a build
** points a slot at: bazel/luajit_tree.bzl) into a unit that exposes only
** this table. The public API (api/c_api.c) asks each flavour in turn
** whether the running VM matches its layouts and records with the first
** that does.
*/
#ifndef REC_FLAVOUR_H
#define REC_FLAVOUR_H

#include <stdint.h>

#include "recorder/ljm_recorder.h"

typedef struct RecFlavour {
  const char *name;     /* "luajit", "luajit2" */
  const char *label;    /* e.g. "Debian 12 luajit2 2.1-20230119-1 (LuaJIT 2.1.0-beta3, GC64)" */
  int gc64;             /* built for a GC64 VM */
  /* 0 if L's VM has this flavour's layouts, else ENOTSUP with the
  ** reason ("GG_State layout"; "lua_State layout" means the other GC64
  ** mode); reads only what it has checked. version: the running VM's
  ** jit.version, or NULL when the host has not loaded jit (api/vm_info.h). */
  int (*check)(lua_State *L, const char *version, LjmRecError *err);
  /* The ljm_recorder_*_ex functions of ljm_recorder.h for this flavour. */
  LjmRecorder *(*start_path)(lua_State *L, const char *path, const LjmRecOptions *opt,
                             LjmRecError *err);
  LjmRecorder *(*start_fd)(lua_State *L, int fd, const LjmRecOptions *opt,
                           LjmRecError *err);
  LjmRecorder *(*start_writer)(lua_State *L, LjmRecWriteFn write, void *ud,
                               const LjmRecOptions *opt, LjmRecError *err);
  int (*stop)(LjmRecorder *r, LjmRecError *err);
  int (*is_running)(const LjmRecorder *r);
  uint64_t (*bytes)(const LjmRecorder *r);
  /* ljm_recorder_snapshot for this flavour. */
  int (*snapshot)(lua_State *L, const char *path, LjmRecError *err);
  /* ljm_recorder_label and ljm_recorder_labels for this flavour. */
  int (*set_label)(lua_State *L, const char *key, size_t klen, const char *value, size_t vlen,
                   LjmRecError *err);
  int (*get_labels)(lua_State *L, LjmRecLabelFn fn, void *ud);
  /* Whether a recording of L's VM keeps labels now (a hint read without
  ** the lock: the label calls check again under it). Reads only G(L), a
  ** field every build's lua_State has within its first 16 bytes, so it may
  ** be asked of any VM: the label calls go to the flavour that answers
  ** yes, without the layout checks of a start. */
  int (*keeps_labels)(lua_State *L);
  /* ljm_recorder_labels_push and ljm_recorder_labels_pop. */
  int (*push_labels)(lua_State *L, const LjmRecLabel *l, size_t n, uint64_t *saved,
                     LjmRecError *err);
  int (*pop_labels)(lua_State *L, uint64_t saved, LjmRecError *err);
} RecFlavour;

/* Every flavour's LjmRecorder begins with this: the public API finds a
** handle's flavour through it. */
typedef struct RecHandle {
  const RecFlavour *fl;
  const char *exit_report;  /* ljm_recorder_report_at_exit's prefix, or NULL */
} RecHandle;

/* The flavours linked in, NULL-terminated, in the order they are tried
** (api/flavours.c). */
extern const RecFlavour *const rec_flavours[];

#endif
