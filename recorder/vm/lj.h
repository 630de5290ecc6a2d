/* lj.h -- the one place that includes LuaJIT's internal headers.
**
** The headers come from the LuaJIT trees the build knows
** (bazel/luajit_trees.bzl), never from this repository. vm/layout_check.c
** verifies at start that the running VM matches them.
**
** Where the trees differ, the rest of the recorder goes through the
** rec_lj_* helpers below. What the preprocessor cannot see (enum values,
** members) the build probes into ljm_flavour.h as LJM_LJ_*, each 0 or 1.
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
#include "lj_str.h"
#include "lj_gc.h"
#if LJ_HASBUFFER
#include "lj_buf.h"  /* string buffers (heap snapshots) */
#endif
#if LJ_HASFFI
#include "lj_ctype.h"
#endif
#include "ljm_flavour.h"

/* Tested with #if: a missing one would silently read as 0. */
#if !defined(LJM_LJ_VMST_FUNCS) || !defined(LJM_LJ_FFI_FIN_ROOT) || \
    !defined(LJM_LJ_STRHASH) || !defined(LJM_LJ_SBUF_MREF) || !defined(LJM_LJ_VMTHREAD) || \
    !defined(LJM_LJ_STRID)
#error "ljm_flavour.h lacks the LJM_LJ_* feature macros"
#endif

/* -- VM states (g->vmstate: ~state, or the running trace's number) ------- */

/* The object in frame f's function slot, or NULL when the slot holds no
** function: coroutine.resume's fallback writes false there (a dead
** coroutine) before it allocates its error message. With 32-bit
** references the slot's low word still names the function. */
static inline GCobj *rec_lj_frame_gc(cTValue *f)
{
#if LJ_FR2
  if (!tvisfunc(f - 1)) return NULL;
#endif
  return frame_gc(f);
}

#if LJM_LJ_VMST_FUNCS
/* Tarantool: Lua, fast and C functions have a state each. INTERP only
** guards transitions (a stack reallocation, VM entry and return), which
** its memprof reports as internal. A return to the host restores the state
** the VM was entered with: 0 at the host's top level (lua_newstate's), no
** trace (they are numbered from 1) but C code, as LJ_VMST_C elsewhere. */
static inline int rec_lj_vmst_trace(int32_t st) { return st > 0; }
static inline int rec_lj_vmst_frames(int32_t st)
{
  return st == 0 || st == ~LJ_VMST_LFUNC || st == ~LJ_VMST_FFUNC || st == ~LJ_VMST_CFUNC;
}
#else
/* A trace runs. */
static inline int rec_lj_vmst_trace(int32_t st) { return st >= 0; }
/* Lua or C code runs: the frames of g->cur_L say where. */
static inline int rec_lj_vmst_frames(int32_t st)
{
  return st == ~LJ_VMST_INTERP || st == ~LJ_VMST_C;
}
#endif

/* -- Strings ------------------------------------------------------------- */

/* Bytes a string's allocation takes. */
static inline uint64_t rec_lj_str_size(const GCstr *s)
{
#ifdef lj_str_size
  return lj_str_size(s->len);
#else
  return sizeof(GCstr) + (uint64_t)s->len + 1;  /* Tarantool: not rounded */
#endif
}

/* The node chain of string key s in t (lj_tab.c keeps hashstr private in
** Tarantool, which hashes by s->hash). */
static inline Node *rec_lj_hashstr(const GCtab *t, const GCstr *s)
{
#ifdef hashstr
  return hashstr(t, s);
#else
  return &noderef(t->node)[s->hash & t->hmask];
#endif
}

/* The string table: its anchor in g and the size of its block. */
static inline const void *rec_lj_strtab(global_State *g)
{
#if LJM_LJ_STRHASH
  return &g->strhash;
#else
  return &g->str;
#endif
}

static inline uint64_t rec_lj_strtab_size(global_State *g)
{
#if LJM_LJ_STRHASH
  return ((uint64_t)g->strmask + 1) * sizeof(GCRef);
#else
  return ((uint64_t)g->str.mask + 1) * sizeof(GCRef);
#endif
}

/* Whether string s heads its chain of the string table, as a string just
** made does (newer trees tag a chain head's low bit). */
static inline int rec_lj_str_newest(global_State *g, const GCstr *s)
{
#if LJM_LJ_STRHASH
  return gcref(g->strhash[s->hash & g->strmask]) == obj2gco(s);
#else
  return ((uintptr_t)gcref(g->str.tab[s->hash & g->str.mask]) & ~(uintptr_t)1) == (uintptr_t)s;
#endif
}

/* The block of g->tmpbuf, or NULL. */
static inline const void *rec_lj_tmpbuf_block(global_State *g)
{
#if LJM_LJ_SBUF_MREF
  return mref(g->tmpbuf.b, char);
#else
  return g->tmpbuf.b;
#endif
}

/* Bytes of g->tmpbuf's block. */
static inline uint64_t rec_lj_tmpbuf_size(global_State *g)
{
#if LJM_LJ_SBUF_MREF
  return (uint64_t)(mref(g->tmpbuf.e, char) - mref(g->tmpbuf.b, char));
#else
  return (uint64_t)(g->tmpbuf.e - g->tmpbuf.b);
#endif
}

/* -- Roots --------------------------------------------------------------- */

#if LJ_HASFFI
/* The FFI's finalizer table, or NULL. A GC root made with the state in
** newer trees; a CTState member, made with the ffi module, before. */
static inline GCobj *rec_lj_ffi_fin(global_State *g)
{
#if LJM_LJ_FFI_FIN_ROOT
  return gcref(g->gcroot[GCROOT_FFI_FIN]);
#else
  CTState *cts = ctype_ctsG(g);
  return cts ? obj2gco(cts->finalizer) : NULL;
#endif
}
#endif

/* The thread __gc finalizers and jit.attach handlers run on (upstream
** since 2025-11, a GC root of its own), or NULL. */
static inline GCobj *rec_lj_vmthread(global_State *g)
{
#if LJM_LJ_VMTHREAD
  return gcref(g->vmthref);
#else
  (void)g;
  return NULL;
#endif
}

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

/* What a string stands for beyond its address: its ID where strings have
** one (drawn from a counter), else its hash and length (Tarantool). */
static inline uint64_t rec_lj_str_ident(const GCstr *s)
{
#if LJM_LJ_STRID
  return s->sid;
#else
  return (uint64_t)s->hash << 32 ^ s->len;
#endif
}

/* What a prototype address stood for when announced: a later prototype
** at a reused address with other contents is announced again. The chunk
** name's identity too, not only its address: two loadstring chunks "=A"
** and "=B" of the same code may each get the addresses the other's
** prototype and name had, and differ in nothing else. */
static inline uint64_t rec_lj_proto_id(const GCproto *pt)
{
  const GCstr *name = strref(pt->chunkname);
  return ((uint64_t)(uintptr_t)name * 31u ^ rec_lj_str_ident(name) << 24) +
         ((uint64_t)(uint32_t)pt->firstline << 20) + pt->sizebc + 1;
}

/* The same for a trace. */
static inline uint64_t rec_lj_trace_id(const GCtrace *T)
{
  return (uint64_t)(uintptr_t)T * 31u + (uint64_t)(uintptr_t)gcref(T->startpt) +
         (uint64_t)(uintptr_t)mref(T->startpc, void);
}

#endif
