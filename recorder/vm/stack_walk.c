/* stack_walk.c -- call stacks of allocation events (extended streams).
**
** What a stack is (innermost first; written root first as a trie):
** - The frames of the running coroutine: a Lua function at a line (the
**   leaf: the line running; a caller: the line of its call), a C
**   function or a built-in (fast function) as its C handler address.
** - Below them, a coroutine boundary and the frames of the thread that
**   resumed it (coroutine.resume / the function coroutine.wrap returned,
**   whose own frame is the resumer's innermost, or a C function that
**   called lua_resume), and so on down to the main thread. LuaJIT keeps
**   no link from a coroutine to its resumer: vm/resumer.c finds it. A
**   coroutine whose resumer is not found (resumed by the host outside
**   the VM) ends in the boundary frame.
** - Tail calls leave no trace in LuaJIT's frames. Those the bytecode
**   proves (vm/tail_calls.c) are marked by a REC_FR_TAIL frame below the
**   frame reached; the frames of other tail calls are simply absent.
** - A trace running (vmstate >= 0): the trace is the leaf; below it the
**   callers of the function whose frame g->jit_base is the base of (the
**   function the trace started in, or a lower one it has returned to):
**   those frames are below anything the trace writes. Trace exit
**   (EXIT): the exiting trace (J->parent) above the callers of the frame
**   at L->base (jit_base until the restore is done). GC steps called by
**   compiled code, and anything else while jit_base is set outside a
**   trace: the callers below jit_base only (the trace is not known).
** - GC, JIT compiler, stack growth (interpreter or C): the frames of the
**   code that was running, as for an allocation there.
** Frames are read before the real allocator runs, so all of them are
** still valid memory.
**
** Speed: the walk starts at the top; once a frame is found in the slot,
** with the link and function, it held at the last event, the rest of the
** last stack is checked slot by slot (independent loads, no bytecode) and
** taken if it still holds: an earlier frame can only have changed if this
** one was popped and pushed again, which LuaJIT frames do not show, so the
** check cannot be skipped. Node ids depend on contents only (stream/extension.c).
*/
#include "recorder/vm/stack_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/vm/cfunc_names.h"
#include "recorder/vm/resumer.h"
#include "recorder/vm/stack_walk_int.h"
#include "recorder/vm/tail_calls.h"

REC_API RecWalk rec_walk;
REC_API uint32_t rec_stack_gen;
static const uint64_t zero_word = 0;  /* the dependency of frames without one */

/* g->jit_base as the VM left it after it moved the running thread's
** stack under a trace: every LuaJIT before upstream 233ad240 relocates
** jit_base only when its byte offset is below the old slot count, and
** otherwise leaves it in the freed stack, where a later stack may lie
** again. Such a value is never followed (track() notes it). */
static struct {
  const void *jb;      /* jit_base when its thread's stack moved */
  const void *stack;   /* the stack it pointed into */
} stale;

/* -- Setup --------------------------------------------------------------- */

/* Return PC -> its prototype and line: a PC inside a live prototype's
** bytecode says both, until a prototype is freed (the same generation). */
#define LINES_SIZE 1024
static struct {
  const BCIns *pc;
  const GCproto *pt;
  uint64_t ident;
  uint32_t line;
  uint32_t gen;
} lines[LINES_SIZE];

static void walk_free(void)
{
  free(rec_walk.cur);
  free(rec_walk.prev);
  free(rec_walk.vs);
  free(rec_walk.vk);
  free(rec_walk.vl);
  free(rec_walk.vf);
  free(rec_walk.vv);
  free(rec_walk.vd);
  free(rec_walk.vdv);
  free(rec_walk.vok);
}

static int walk_alloc(uint32_t depth)
{
  uint32_t cap = depth + 2;
  RecWalk nw;
  if (cap <= rec_walk.cap) return 0;
  nw = rec_walk;
  nw.cur = calloc(cap, sizeof(RecFrame));
  nw.prev = calloc(cap, sizeof(RecFrame));
  nw.vs = calloc(cap, sizeof(*nw.vs));
  nw.vk = calloc(cap, sizeof(*nw.vk));
  nw.vl = calloc(cap, sizeof(uint64_t));
  nw.vf = calloc(cap, sizeof(uint64_t));
  nw.vv = calloc(cap, sizeof(uint64_t));
  nw.vd = calloc(cap, sizeof(*nw.vd));
  nw.vdv = calloc(cap, sizeof(uint64_t));
  nw.vok = calloc(cap, 1);
  if (!nw.cur || !nw.prev || !nw.vs || !nw.vk || !nw.vl || !nw.vf || !nw.vv || !nw.vd ||
      !nw.vdv || !nw.vok) {
    RecWalk old = rec_walk;
    rec_walk = nw;
    walk_free();
    rec_walk = old;
    return ENOMEM;
  }
  walk_free();
  nw.n = 0;  /* start afresh */
  nw.cap = cap;
  rec_walk = nw;
  return 0;
}

int rec_stack_start(lua_State *L, uint32_t depth)
{
  if (walk_alloc(depth)) return ENOMEM;
  if (rec_walk.depth != depth) rec_walk.n = 0;
  rec_walk.depth = depth;
  if (rec_resumer_tracks(G(L))) return 0;  /* already tracking this VM */
  rec_stack_gen++;
  if (rec_resumer_start(L)) return ENOMEM;
  rec_walk.n = 0;
  return 0;
}

void rec_stack_depth(uint32_t depth)
{
  if (!walk_alloc(depth)) rec_walk.depth = depth;
  rec_walk.n = 0;  /* kept and cut frames differ now */
}

void rec_stack_stop(void)
{
  rec_resumer_stop();
  rec_stack_gen++;
  walk_free();
  memset(&rec_walk, 0, sizeof(rec_walk));
  stale.jb = stale.stack = NULL;
}

void rec_stack_forget(void)
{
  rec_walk.n = 0;
}

/* -- The walk ------------------------------------------------------------ */

enum { WALK_LEAF, WALK_SKIP, WALK_RESUMER };

/* Where frames below a lua_cpcall() C frame start (NULL: none). */
static inline TValue *cp_bound(lua_State *L, void *cf)
{
  return cf && cframe_nres(cf) < 0 ? restorestack(L, -cframe_nres(cf)) : NULL;
}

/* Raw contents of a frame slot: its link and its function value. */
static inline uint64_t slot_link(const TValue *f)
{
  return (uint64_t)frame_ftsz(f);
}

static inline uint64_t slot_fn(const TValue *f)
{
  return (uint64_t)(uintptr_t)rec_lj_frame_gc(f);
}

/* Does frame b (of the last walk) still hold what it held? */
static inline int frame_same(const RecFrame *b)
{
  const TValue *f = (const TValue *)b->slot;
  if (slot_fn(f) != b->fn) return 0;
  if (b->vlink) {  /* vararg: the moved frame, then the frame it links to */
    if (slot_link(f) != b->vlink) return 0;
    f = frame_prevd(f);
  }
  if (slot_link(f) != b->link) return 0;
  return !b->dep || *b->dep == b->depv;
}

/* prev[k] holds again: would walking on from it find exactly
** prev[k-1..0] again? Then the walk can stop there. The checks need no
** bytecode and no frame address that depends on another load. */
static int verify_below(const RecWalk *w, int k)
{
  const RecFrame *pv = w->prev;
  /* The fast checks' arrays in registers: the slow path's call would
  ** otherwise make the compiler reload them on every frame. */
  const TValue *const *vs = w->vs, *const *vk = w->vk;
  const uint64_t *vl = w->vl, *vf = w->vf, *vv = w->vv, *vdv = w->vdv;
  const uint64_t *const *vd = w->vd;
  const uint8_t *vok = w->vok;
  int i;
  if (pv[0].fn == REC_KEY_TRUNC) return 0;  /* the cut would move */
  for (i = k; i > 0; i--) {
    const RecFrame *a, *b;
    /* Plain frames: a few independent loads and compares each. */
    for (; i > 0 && __builtin_expect(vok[i - 1], 1); i--) {
      const TValue *f = vs[i - 1];
      if ((vk[i - 1]->u64 ^ vl[i - 1]) | ((f - 1)->u64 ^ vf[i - 1]) | (f->u64 ^ vv[i - 1]) |
          (*vd[i - 1] ^ vdv[i - 1]))
        return 0;
    }
    if (i == 0) break;
    a = &pv[i];
    b = &pv[i - 1];
    if (b->fn == REC_KEY_CORO) {
      /* a is the outermost frame of its thread: the same resumer? */
      lua_State *T = (lua_State *)AUX_THREAD(a->aux), *R;
      const RecFrame *c;
      if (!T) return 0;
      R = rec_resumer_find(T);
      if (i == 1) return R == NULL;
      c = &pv[i - 2];
      if (!R || AUX_THREAD(c->aux) != (uintptr_t)R || c->fn <= REC_KEY_TRUNC ||
          (const TValue *)c->slot != R->base - 1 || c->pc != 0 || !frame_same(c))
        return 0;
      i--;
      continue;
    }
    if (b->fn <= REC_KEY_TRUNC || AUX_THREAD(b->aux) != AUX_THREAD(a->aux)) return 0;
    if (!(a->aux & REC_AUX_LUALINK)) {
      /* b's PC came from a continuation frame or a C frame. */
      const TValue *l = a->vlink ? frame_prevd((const TValue *)a->slot)
                                 : (const TValue *)a->slot;
      if ((a->link & FRAME_TYPEP) == FRAME_CONT && !frame_iscont_fficb(l)) {
        if ((uint64_t)(uintptr_t)frame_contpc(l) != b->pc) return 0;
      } else if (b->kind != REC_FR_C) {
        return 0;  /* a Lua function below a C entry: the C frame's PC */
      }
    }
    if (!frame_same(b)) return 0;
  }
  return 1;
}

/* Appends the frames of thread L from frame f down to its bottom.
** Returns 0 if the depth limit was reached, 2 if the rest of the stack
** is the last walk's prev[0..w->join].
**
** The walk follows frame links from the top. Where a frame has the slot
** and link it had in the last walk, the frame below it is where the last
** walk found it: it is taken from there instead of being computed from
** the caller's bytecode, so the loads of a stack that did not change do
** not wait on each other. */
static int walk_thread(RecWalk *w, lua_State *L, TValue *f, int mode, uint64_t leafpc)
{
  TValue *lo = tvref(L->stack) + 1 + LJ_FR2;
  TValue *hi = tvref(L->stack) + L->stacksize;
  void *cf = cframe_raw(L->cframe);
  TValue *cpb = cp_bound(L, cf);
  uint64_t linepc = mode == WALK_LEAF ? leafpc : 0;
  uintptr_t th = (uintptr_t)L;
  uint32_t n = w->ncur, lim = w->depth;
  int need_cf = 0, skip = mode == WALK_SKIP;
  RecFrame *out = w->cur;
  const RecFrame *pv = w->prev;
  int k = w->pk;
  /* The last walk's frames of this thread (they follow each other). */
  while (k >= 0 && AUX_THREAD(pv[k].aux) != th) k--;
  while (f >= lo && f < hi) {
    TValue *link = f, *nf;
    ptrdiff_t ftsz;
    uintptr_t plain = REC_AUX_PLAIN;
    while (k >= 0 && AUX_THREAD(pv[k].aux) == th && (const TValue *)pv[k].slot > f) k--;
    while (cpb && f < cpb) {  /* C frames of lua_cpcall() above f */
      cf = cframe_raw(cframe_prev(cf));
      cpb = cp_bound(L, cf);
    }
    if (frame_isvarg(f)) {  /* moved frame of a vararg function: link below */
      link = frame_prevd(f);
      if (link < lo || link >= f) break;
      plain = 0;
    }
    ftsz = frame_ftsz(link);
    if (need_cf) {
      /* Lua function below a C entry: its PC is saved in the C frame. */
      GCobj *o = rec_lj_frame_gc(f);
      linepc = cf && o && o->gch.gct == (uint8_t)~LJ_TFUNC && isluafunc(&o->fn) &&
                       (const void *)cframe_pc(cf) != (const void *)cframe_L(cf)
                   ? (uint64_t)(uintptr_t)cframe_pc(cf) : 0;
      need_cf = 0;
    }
    if (!skip) {
      RecFrame *e;
      uint64_t fnv = (uint64_t)(uintptr_t)rec_lj_frame_gc(f);
      uint64_t vl = plain ? 0 : (uint64_t)frame_ftsz(f);
      if (w->tryjoin && k >= 0 && pv[k].slot == f && AUX_THREAD(pv[k].aux) == th &&
          pv[k].fn == fnv && pv[k].pc == linepc && pv[k].link == (uint64_t)ftsz &&
          pv[k].vlink == vl && (!pv[k].dep || *pv[k].dep == pv[k].depv)) {
        /* The same frame as last time: is everything below too? */
        if ((uint32_t)k + 1 + n <= lim && verify_below(w, k)) {
          w->ncur = n;
          w->join = k;
          return 2;
        }
        w->tryjoin = 0;  /* once per event: no quadratic cost */
      }
      if (n >= lim) {
        w->ncur = n;
        w->pk = k;
        return 0;
      }
      e = &out[n++];
      e->slot = f;
      e->fn = fnv;
      e->pc = linepc;
      e->link = (uint64_t)ftsz;
      e->vlink = vl;
      e->aux = th | plain | ((ftsz & FRAME_TYPE) == FRAME_LUA ? REC_AUX_LUALINK : 0);
    }
    skip = 0;
    if ((ftsz & FRAME_TYPE) == FRAME_LUA) {
      const BCIns *pc = (const BCIns *)(uintptr_t)ftsz;
      linepc = (uint64_t)(uintptr_t)pc;
      if (plain && k > 0 && pv[k].slot == f && pv[k].link == (uint64_t)ftsz &&
          (pv[k].aux & REC_AUX_PLAIN) && AUX_THREAD(pv[k - 1].aux) == th)
        nf = (TValue *)pv[k - 1].slot;  /* same link: same frame below */
      else
        nf = link - (1 + LJ_FR2 + bc_a(pc[-1]));
    } else {
      if (frame_iscont(link) && !frame_iscont_fficb(link)) {
        linepc = (uint64_t)(uintptr_t)frame_contpc(link);
      } else {
        /* A C frame, or an FFI callback's continuation, whose PC slot holds
        ** no bytecode PC: the Lua function below called C, which saved its
        ** PC in the C frame the callback's own C frame follows. */
        if ((frame_isc(link) || frame_iscont(link)) && cf) {
          cf = cframe_raw(cframe_prev(cf));
          cpb = cp_bound(L, cf);
        }
        need_cf = 1;
      }
      nf = frame_prevd(link);
    }
    if (nf >= link) break;  /* never loop on a broken link */
    f = nf;
  }
  w->ncur = n;
  w->pk = k;
  return 1;
}

static inline int push_tag(RecWalk *w, const void *slot, uint64_t tag, uint64_t pc)
{
  RecFrame *e;
  if (w->ncur >= w->depth) return 0;
  e = &w->cur[w->ncur++];
  e->slot = slot;
  e->fn = tag;
  e->pc = pc;
  e->aux = 0;
  e->link = 0;
  e->vlink = 0;
  return 1;
}

/* The depth limit was reached: the outermost frame says so. */
static void push_trunc(RecWalk *w)
{
  RecFrame *e = &w->cur[w->ncur++];  /* room: cap = depth + 2 */
  e->slot = NULL;
  e->fn = REC_KEY_TRUNC;
  e->pc = 0;
  e->aux = 0;
  e->link = 0;
  e->vlink = 0;
}

/* Below thread L's frames: a boundary and the resumer's, down to the
** main thread. */
static void walk_chain(RecWalk *w, global_State *g, lua_State *L)
{
  int k;
  for (k = 0; k < 256 && L != mainthread(g); k++) {
    lua_State *R;
    if (!push_tag(w, NULL, REC_KEY_CORO, 0)) {
      push_trunc(w);
      return;
    }
    R = rec_resumer_find(L);
    if (!R) return;
    switch (walk_thread(w, R, R->base - 1, WALK_RESUMER, 0)) {
    case 0: push_trunc(w); return;
    case 2: return;  /* joined the last stack */
    default: break;
    }
    L = R;
  }
}

/* Line of a Lua frame from the PC that gives it (see rec_frame_line). */
static uint32_t pc_line(global_State *g, const GCproto *pt, const BCIns *ins)
{
  BCPos pos;
  if (!ins) return (uint32_t)pt->firstline;
  pos = proto_bcpos(pt, ins) - 1;
  if (pos > pt->sizebc) {
    /* Left in a trace's copy of its start instruction: the loop. */
    const GCtrace *T;
    size_t n;
    for (n = 1, T = NULL; n < G2J(g)->sizetrace; n++) {  /* a real trace's only */
      T = rec_lj_trace(g, (int32_t)n);
      if (T && &T->startins + 1 == ins) break;
    }
    if (n >= G2J(g)->sizetrace || !T) return (uint32_t)pt->firstline;
    pos = proto_bcpos(pt, mref(T->startpc, const BCIns));
    if (pos > pt->sizebc) return (uint32_t)pt->firstline;
  }
  return (uint32_t)rec_lj_line(pt, pos);
}

/* jit_base, if its frames can be read: set, not stale, inside L's stack. */
static TValue *jit_base_ok(global_State *g, lua_State *L)
{
  TValue *base = tvref(g->jit_base);
  if (__builtin_expect(stale.jb != NULL, 0)) {
    if ((const void *)base != stale.jb) stale.jb = NULL;  /* set anew since */
    else if (tvref(L->stack) != stale.stack) return NULL;
  }
  return base && rec_in_stack(L, base - 1) ? base : NULL;
}

/* The frame a trace's base is the base of, when the trace started in its
** function: it stays in the stack as that function at the trace's start
** line (the line it runs is the trace's to know), so JIT-on stacks keep
** trace allocations under the function and line they ran in, as JIT-off
** ones do. Else (a side trace starting in an inlined call, or the trace
** returned to a lower frame) the frame is left out. */
static int trace_start_mode(const GCtrace *T, TValue *f, uint64_t *leafpc)
{
  GCobj *o = rec_lj_frame_gc(f);
  BCLine line;
  if (!o || o->gch.gct != (uint8_t)~LJ_TFUNC || !isluafunc(&o->fn) ||
      funcproto(&o->fn) != &gcref(T->startpt)->pt)
    return WALK_SKIP;
  line = rec_lj_trace_line(T);
  *leafpc = REC_LEAF | (uint32_t)(line > 0 ? line : funcproto(&o->fn)->firstline);
  return WALK_LEAF;
}

/* Captures this event's frames into w->cur; 0 if there is no stack. */
static int capture(RecWalk *w, global_State *g, const RecLoc *loc)
{
  int32_t st = g->vmstate;
  lua_State *L;
  TValue *f;
  w->ncur = 0;
  w->pk = (int)w->n - 1;
  w->join = -1;
  w->tryjoin = 1;
  if (rec_lj_vmst_trace(st) || st == ~LJ_VMST_EXIT) {
    int32_t tn = st >= 0 ? st : (int32_t)G2J(g)->parent;
    GCtrace *T = rec_lj_trace(g, tn);
    TValue *base;
    uint64_t leafpc = 0;
    if (st < 0 && (!T || T->traceno != (TraceNo1)tn)) return 0;
    if (T && T->traceno != (TraceNo1)tn) T = NULL;
    push_tag(w, T, REC_KEY_TRACE, (uint64_t)tn);
    L = gco2th(gcref(g->cur_L));
    if (!L || !L->cframe) return 1;
    base = st >= 0 ? jit_base_ok(g, L) : L->base;
    if (!base || !rec_in_stack(L, base - 1)) return 1;
    switch (walk_thread(w, L, base - 1, T ? trace_start_mode(T, base - 1, &leafpc) : WALK_SKIP,
                        leafpc)) {
    case 0: push_trunc(w); break;
    case 1: walk_chain(w, g, L); break;
    default: break;
    }
    return 1;
  }
  if (mref(g->jit_base, void)) {
    /* A GC step run by compiled code (lj_gc_step_jit): which trace is not
    ** known any more, but the frames below its base are real. */
    TValue *base;
    L = gco2th(gcref(g->cur_L));
    if (!L || !L->cframe || !(base = jit_base_ok(g, L))) return 0;
    switch (walk_thread(w, L, base - 1, WALK_SKIP, 0)) {
    case 0: push_trunc(w); break;
    case 1: walk_chain(w, g, L); break;
    default: break;
    }
    return w->ncur != 0 || w->join >= 0;
  }
  L = gco2th(gcref(g->cur_L));
  if (!L || !rec_thread_running(L)) {
    L = mainthread(g);
    if (!rec_thread_running(L)) return 0;
  }
  f = L->base - 1;
  if (!rec_in_stack(L, f)) return 0;
  {
    uint64_t leafpc = 0;
    GCobj *o = rec_lj_frame_gc(f);
    if (o && o->gch.gct == (uint8_t)~LJ_TFUNC && isluafunc(&o->fn)) {
      const GCproto *pt = funcproto(&o->fn);
      BCLine line;
      if (loc->src == REC_SRC_LFUNC && loc->pt == pt) line = (BCLine)loc->line;
      else line = rec_frame_line(L, &o->fn, NULL);
      if (line < 0) line = pt->firstline;
      leafpc = REC_LEAF | (uint32_t)line;
    }
    switch (walk_thread(w, L, f, WALK_LEAF, leafpc)) {
    case 0: push_trunc(w); break;
    case 1: walk_chain(w, g, L); break;
    default: break;
    }
  }
  return 1;
}


/* Fills in the contents of frame j (outermost first). */
static void content(RecWalk *w, global_State *g, uint32_t j)
{
  RecFrame *e = &w->prev[j];
  GCobj *o;
  e->tail = 0;
  e->dep = NULL;
  e->line = 0;
  e->a = 0;
  e->ident = 0;
  switch (e->fn) {
  case REC_KEY_CORO: e->kind = REC_FR_CORO; return;
  case REC_KEY_TRUNC: e->kind = REC_FR_TRUNC; return;
  case REC_KEY_TRACE:
    e->kind = REC_FR_TRACE;
    e->a = e->pc;
    e->ident = e->slot ? rec_lj_trace_id((const GCtrace *)e->slot) : 0;
    return;
  default: break;
  }
  if (e->pc && !(e->pc & REC_LEAF)) {
    /* A PC in the caller's bytecode: a Lua function (see walk_thread). */
    const BCIns *pc = (const BCIns *)(uintptr_t)e->pc;
    size_t h = ((uintptr_t)pc >> 2) & (LINES_SIZE - 1);
    if (lines[h].pc != pc || lines[h].gen != rec_stack_gen) {
      const GCproto *pt = funcproto(&((GCobj *)(uintptr_t)e->fn)->fn);
      lines[h].pc = pc;
      lines[h].pt = pt;
      lines[h].ident = rec_lj_proto_id(pt);
      lines[h].line = pc_line(g, pt, pc);
      lines[h].gen = rec_stack_gen;
    }
    e->kind = REC_FR_LUA;
    e->a = (uint64_t)(uintptr_t)lines[h].pt;
    e->ident = lines[h].ident;
    e->line = lines[h].line;
    if ((e->aux & REC_AUX_LUALINK) && j > 0) rec_tailcall_check(w, g, j);
    return;
  }
  o = (GCobj *)(uintptr_t)e->fn;
  e->kind = REC_FR_C;
  if (!o || o->gch.gct != (uint8_t)~LJ_TFUNC) return;  /* unknown C function */
  if (isluafunc(&o->fn)) {
    const GCproto *pt = funcproto(&o->fn);
    e->kind = REC_FR_LUA;
    e->a = (uint64_t)(uintptr_t)pt;
    e->ident = rec_lj_proto_id(pt);
    e->line = (e->pc & REC_LEAF) ? (uint32_t)e->pc
                                 : pc_line(g, pt, (const BCIns *)(uintptr_t)e->pc);
  } else {
    e->a = (uint64_t)(uintptr_t)o->fn.c.f;
    if (rec_ff.wrap && o->fn.c.ffid == rec_ff.wrap)
      rec_cname_add_ff(e->a, "coroutine.wrap");
  }
  if ((e->aux & REC_AUX_LUALINK) && j > 0) rec_tailcall_check(w, g, j);
}

/* What the allocator call about to happen (ptr, osize, nsize as passed
** to it) means for the caches: a new or freed thread, a freed prototype. */
static inline void track(global_State *g, const void *ptr, size_t osize, size_t nsize)
{
  rec_resumer_track(g);
  if (ptr && nsize && mref(g->jit_base, void)) {
    lua_State *L = gco2th(gcref(g->cur_L));
    if (L && ptr == tvref(L->stack)) {  /* its stack moves under a trace */
      stale.jb = tvref(g->jit_base);
      stale.stack = ptr;
    }
  }
  if (nsize == 0 && ptr) {
    const GCobj *o = (const GCobj *)ptr;
    if (osize == sizeof(lua_State) && o->gch.gct == (uint8_t)~LJ_TTHREAD)
      rec_resumer_freed((lua_State *)ptr);
    else if (osize >= sizeof(GCproto) && o->gch.gct == (uint8_t)~LJ_TPROTO)
      rec_stack_gen++;  /* PCs are cached: a new prototype may reuse them */
  }
}

void rec_stack_skipped(global_State *g, const void *ptr, size_t osize, size_t nsize)
{
  track(g, ptr, osize, nsize);
}

void rec_stack_thread_new(global_State *g)
{
  rec_resumer_track(g);
}

void rec_stack_resync(void)
{
  rec_walk.n = 0;   /* no frame is taken from the last walk */
  rec_stack_gen++;  /* nor a line or tail call from the PC caches */
}

void rec_stack_event(global_State *g, const RecLoc *loc, const void *ptr,
                     size_t osize, size_t nsize)
{
  RecWalk *w = &rec_walk;
  uint32_t n, m, c, j, same;
  track(g, ptr, osize, nsize);
  if (!capture(w, g, loc)) {
    w->known = 0;
    w->n = 0;
    w->common = w->same = 0;
    return;
  }
  w->known = 1;
  m = w->n;
  /* This stack, outermost first: prev[0..join], then cur reversed. */
  c = (uint32_t)(w->join + 1);
  n = c + w->ncur;
  for (; c < n && c < m; c++) {  /* compare from the bottom */
    const RecFrame *p = &w->prev[c], *t = &w->cur[n - 1 - c];
    if (p->slot != t->slot || p->fn != t->fn || p->pc != t->pc) break;
    if (p->dep && *p->dep != p->depv) break;  /* the caller's frame matched */
  }
  /* Frames above: new contents; nodes depend on contents only, so the
  ** streams may keep theirs as long as the contents stay the same. */
  same = c;
  for (j = c; j < n; j++) {
    const RecFrame *t = &w->cur[n - 1 - j];
    RecFrame *p = &w->prev[j];
    uint64_t a = p->a, ident = p->ident;
    uint32_t line = p->line;
    uint8_t kind = p->kind, tail = p->tail;
    p->slot = t->slot;
    p->fn = t->fn;
    p->pc = t->pc;
    p->aux = t->aux;
    p->link = t->link;
    p->vlink = t->vlink;
    content(w, g, j);
    if (same == j && j < m && p->kind == kind && p->a == a && p->ident == ident &&
        p->line == line && p->tail == tail)
      same = j + 1;
  }
  /* The quick checks of the frames that changed, and of the one below. */
  for (j = c ? c - 1 : 0; j < n; j++) {
    const RecFrame *b = &w->prev[j], *a = j + 1 < n ? &w->prev[j + 1] : NULL;
    const TValue *f = (const TValue *)b->slot;
    int ok = a && b->fn > REC_KEY_TRUNC && a->fn > REC_KEY_TRUNC &&
             AUX_THREAD(b->aux) == AUX_THREAD(a->aux) &&
             ((a->aux & REC_AUX_LUALINK) ||
              ((a->link & FRAME_TYPEP) != FRAME_CONT && b->kind == REC_FR_C));
    w->vok[j] = (uint8_t)ok;
    if (ok) {
      /* vararg: the moved frame holds the function and its own link
      ** (checked), the frame that link leads to holds the link. */
      const TValue *l = b->vlink ? frame_prevd(f) : f;
      w->vs[j] = f;
      w->vk[j] = l;
      w->vl[j] = l->u64;
      w->vf[j] = (f - 1)->u64;
      w->vv[j] = f->u64;
      w->vd[j] = b->dep ? b->dep : &zero_word;
      w->vdv[j] = b->dep ? b->depv : 0;
    }
  }
  w->n = n;
  w->common = c;
  w->same = same;
}
