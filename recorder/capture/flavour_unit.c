/* flavour_unit.c -- the recorder for one LuaJIT flavour, as one unit.
**
** Compiled once per flavour against that flavour's headers (lj_obj.h,
** ..., and ljm_flavour.h naming it). Every file that reads LuaJIT's
** internals is included here, layer by layer from the bottom (vm/,
** stream/, capture/), so their shared functions and data are static
** (vm/unit.h) and the only symbol the unit defines is its RecFlavour
** table, LJM_FLAVOUR_SYM, below.
*/
#include "recorder/vm/attribution.c"
#include "recorder/vm/alloc_type.c"
#include "recorder/vm/layout_check.c"
#include "recorder/vm/cfunc_names.c"
#include "recorder/vm/resumer.c"
#include "recorder/vm/tail_calls.c"
#include "recorder/vm/stack_walk.c"
#include "recorder/vm/func_names.c"
#include "recorder/vm/heap_snapshot.c"
#include "recorder/stream/standard.c"
#include "recorder/stream/extension.c"
#include "recorder/capture/labels.c"
#include "recorder/capture/alloc_wrapper.c"
#include "recorder/capture/sessions.c"
#include "recorder/capture/sinks.c"
#include "recorder/capture/host_events.c"
#include "recorder/capture/options.c"
#include "recorder/capture/targets.c"
#include "recorder/capture/own_memory.c"

#include <luajit.h>

#include "ljm_flavour.h"
#include "recorder/vm/layout_check.h"

#if LJ_GC64
#define REC_GC64 ", GC64"
#else
#define REC_GC64 ", not GC64"
#endif

const RecFlavour LJM_FLAVOUR_SYM = {
  LJM_FLAVOUR_NAME,
  LJM_FLAVOUR_LABEL " (" LUAJIT_VERSION REC_GC64 ")",
  LJ_GC64,
  rec_check,
  start_path,
  start_fd,
  start_writer,
  stop,
  is_running,
  bytes,
  snapshot,
  label,
  labels,
  labels_kept,
  labels_push,
  labels_pop,
};