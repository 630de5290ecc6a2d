/* rec_lj.h -- the one place that includes LuaJIT's internal headers.
**
** The headers come from Debian's source package of the installed LuaJIT
** (scripts/setup.d/luajit-source.sh), never from this repository.
** rec_check.c verifies at start that the running VM matches them.
*/
#ifndef REC_LJ_H
#define REC_LJ_H

#include "lj_obj.h"
#include "lj_frame.h"
#include "lj_bc.h"
#include "lj_jit.h"
#include "lj_dispatch.h"
#include "lj_debug.h"
#include "lj_tab.h"
#include "lj_state.h"

/* Line of bytecode position pc in pt; 0 without line info. */
static inline BCLine rec_lj_line(const GCproto *pt, BCPos pc)
{
  const void *li = mref(pt->lineinfo, const void);
  if (pc > pt->sizebc || !li) return 0;
  if (pc == pt->sizebc) return pt->firstline + pt->numline;
  if (pc == 0) return pt->firstline;
  pc--;
  if (pt->numline < 256) return pt->firstline + ((const uint8_t *)li)[pc];
  if (pt->numline < 65536) return pt->firstline + ((const uint16_t *)li)[pc];
  return pt->firstline + (BCLine)((const uint32_t *)li)[pc];
}

/* Trace n of g, or NULL. */
static inline GCtrace *rec_lj_trace(global_State *g, int32_t n)
{
  jit_State *J = G2J(g);
  if (n <= 0 || (MSize)n >= J->sizetrace || !J->trace) return NULL;
  return (GCtrace *)gcref(J->trace[n]);
}

/* Start line of a trace (0 when its prototype has no line info). */
static inline BCLine rec_lj_trace_line(const GCtrace *T)
{
  const GCproto *pt = &gcref(T->startpt)->pt;
  const BCIns *pc = mref(T->startpc, const BCIns);
  return rec_lj_line(pt, proto_bcpos(pt, pc));
}

/* What a prototype address stood for when announced: a later prototype
** at a reused address with other contents is announced again. */
static inline uint64_t rec_lj_proto_id(const GCproto *pt)
{
  return (uint64_t)(uintptr_t)gcref(pt->chunkname) * 31u +
         ((uint64_t)(uint32_t)pt->firstline << 20) + pt->sizebc + 1;
}

/* The same for a trace. */
static inline uint64_t rec_lj_trace_id(const GCtrace *T)
{
  return (uint64_t)(uintptr_t)T * 31u + (uint64_t)(uintptr_t)gcref(T->startpt) +
         (uint64_t)(uintptr_t)mref(T->startpc, void);
}

#endif
