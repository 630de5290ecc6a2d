/* targets.c -- outputs that are not a new output's to take (a live stream's
** file, the running Lua source), and heap snapshots that respect them. */
#include "recorder/capture/session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "recorder/vm/heap_snapshot.h"

/* Whether path is (after its links) the file a live recording writes,
** or the source of a Lua function running on L's stack (the script being
** run); EBUSY with err filled in, else 0. what: "snapshot", "recording".
** Called with R held. */
REC_API int busy_target(lua_State *L, const char *path, const char *what, LjmRecError *err)
{
  struct stat st, ss;
  const LjmRecorder *r;
  lua_Debug ar;
  int level;
  if (stat(path, &st)) return 0;  /* created new: nothing to collide with */
  for (r = R.list; r; r = r->next) {
    int same = r->live && r->fd_known && r->fd_dev == st.st_dev && r->fd_ino == st.st_ino;
    if (same && S_ISREG(st.st_mode)) {
      if (err && !strcmp(what, "recording"))
        set_err(err, EBUSY, "%s: file is already being recorded to", path);
      else if (err) {
        err->code = EBUSY;
        snprintf(err->msg, sizeof(err->msg), "%s: is the file the recording %s writes: no %s into it",
                 path, r->name, what);
      }
      return EBUSY;
    }
  }
  if (!L || !S_ISREG(st.st_mode)) return 0;
  /* L's frames, then the main thread's (L may be a coroutine it resumed).
  ** Relative chunk names are taken in today's directory. */
  for (int t = 0; t < 2; t++) {
    lua_State *T = t ? mainthread(G(L)) : L;
    if (t && T == L) break;
    for (level = 0; level < 256 && lua_getstack(T, level, &ar); level++) {
      if (!lua_getinfo(T, "S", &ar) || !ar.source || ar.source[0] != '@') continue;
      if (!stat(ar.source + 1, &ss) && ss.st_dev == st.st_dev && ss.st_ino == st.st_ino) {
        if (err) {
          err->code = EBUSY;
          snprintf(err->msg, sizeof(err->msg), "%s: is the Lua source being run (%s): no %s into it",
                   path, ar.source + 1, what);
        }
        return EBUSY;
      }
    }
  }
  return 0;
}

/* busy_target for a snapshot, under the lock unless the caller holds it. */
static int snapshot_target_busy(lua_State *L, const char *path, LjmRecError *err)
{
  int e, held = R_held();
  if (!held && R_lock(err)) return err ? err->code : EDEADLK;
  e = busy_target(L, path, "snapshot", err);
  if (!held) R_unlock();
  return e;
}

/* A heap snapshot of L's VM (vm/heap_snapshot.h), told which targets are
** not its to take and how much memory the recorder holds. */
REC_API int snapshot(lua_State *L, const char *path, LjmRecError *err)
{
  static const RecSnapHost host = {snapshot_target_busy, own_bytes};
  return rec_snap_write(L, path, &host, err);
}
