/* rec_flavours.c -- the LuaJIT flavours the recorder is built for.
**
** Two slots, each a LuaJIT source tree (WORKSPACE, bazel/luajit_tree.bzl):
** Debian's luajit and OpenResty's luajit2 by default. Their layouts
** differ (luajit2's lua_State and global_State have extra fields), so a
** VM matches at most one of them.
*/
#include "rec_flavour.h"

extern const RecFlavour rec_flavour_luajit, rec_flavour_luajit2;

const RecFlavour *const rec_flavours[] = {
  &rec_flavour_luajit,
  &rec_flavour_luajit2,
  NULL,
};
