/* heap_snapshot.h -- heap snapshots: every live GC object of a VM, with its
** type, size, label and references (the format: decoder/ljh_decoder.h).
*/
#ifndef REC_SNAP_H
#define REC_SNAP_H

#include "recorder/vm/unit.h"

#include <stdint.h>

#include "recorder/ljm_recorder.h"

/* What a snapshot asks of the recording layer above it. */
typedef struct RecSnapHost {
  /* EBUSY with err filled in when path is the file a live recording
  ** writes or the source of a Lua function on L's stack; else 0. */
  int (*busy)(lua_State *L, const char *path, LjmRecError *err);
  /* Bytes of malloc'd memory the recorder holds: the recordings' buffers,
  ** tables and stack tries, its symbol and name caches, which a snapshot
  ** shows apart from the program's own C memory; *resident gets the part
  ** of it in RAM (buffer pages never written are not). */
  uint64_t (*own_bytes)(uint64_t *resident);
} RecSnapHost;

/* Writes a snapshot of L's VM to path (created with mode 0644, replaced
** only once it is complete; links followed, special files refused:
** base/out_file.h); 0, or an errno value with err filled in.
** Reads the heap only: no allocation through the VM, no GC step. */
REC_API int rec_snap_write(lua_State *L, const char *path, const RecSnapHost *host,
                           LjmRecError *err);

#endif
