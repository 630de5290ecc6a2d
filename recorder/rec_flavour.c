/* rec_flavour.c -- the recorder for one LuaJIT flavour, as one unit.
**
** Compiled once per flavour against that flavour's headers (lj_obj.h,
** ..., and ljm_flavour.h naming it). Every file that reads LuaJIT's
** internals is included here, so their shared functions and data are
** static (rec_unit.h) and the only symbol the unit defines is its
** RecFlavour table, LJM_FLAVOUR_SYM (rec_core.c).
*/
#include "rec_attr.c"
#include "rec_check.c"
#include "rec_cname.c"
#include "rec_resumer.c"
#include "rec_tailcall.c"
#include "rec_stack.c"
#include "rec_fname.c"
#include "rec_ext.c"
#include "rec_stream.c"
#include "rec_snap.c"
#include "rec_core.c"
