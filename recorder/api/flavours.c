/* flavours.c -- the LuaJIT trees the recorder is built for.
**
** One unit per tree found at build time (bazel/luajit_trees.bzl), in the
** order they are tried. Trees with the same layouts (Debian 13's and sid's
** OpenResty) each accept the other's VM; the version string, when the host
** has loaded the jit library, prefers the exact one (api/c_api.c).
*/
#include "recorder/capture/flavour.h"
#include "recorder/api/flavour_list.h"  /* generated (recorder/BUILD) */

#define REC_DECLARE(name) extern const RecFlavour rec_flavour_##name;
REC_FLAVOUR_LIST(REC_DECLARE)

#define REC_ENTRY(name) &rec_flavour_##name,
const RecFlavour *const rec_flavours[] = {REC_FLAVOUR_LIST(REC_ENTRY) NULL};
