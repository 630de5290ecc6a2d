/* tail_calls.c -- tail calls proven from the bytecode (call stacks).
**
** Tail calls leave no trace in LuaJIT's frames. One case is decided from
** the bytecode: a frame whose link is a Lua call (CALL/CALLM) where the
** function register was set, on the straight path to the call (no jump
** lands in between, nothing else writes it), from an immutable upvalue,
** a register of the caller that nothing can have changed since (not
** captured by a mutable open upvalue, not written in between), or a
** closure constructor (FNEW): if that value is a function and not the
** one in the frame, the frame was reached by a tail call, marked by a
** REC_FR_TAIL frame below it. (debug.setlocal and debug.setupvalue can
** defeat this.) Other tail calls (function from a global or a table
** field, tail calls of the same function) are not marked; their frames
** are simply absent.
*/
#include "recorder/vm/tail_calls.h"

#include "recorder/vm/stack_walk_int.h"

/* Call site PC -> what it called: a direct-mapped cache, emptied (by
** generation, rec_stack_gen) whenever a prototype is freed. */
#define CALLS_SIZE 2048
static struct {
  const BCIns *pc;
  uint64_t cs;
  uint32_t gen;
} calls[CALLS_SIZE];

/* Modes of operand A and D of each opcode, from LuaJIT's own list. */
#define REC_BCM_A(name, ma, mb, mc, mt) BCM##ma,
#define REC_BCM_D(name, ma, mb, mc, mt) BCM##mc,
static const uint8_t bc_amode[] = {BCDEF(REC_BCM_A)};
static const uint8_t bc_dmode[] = {BCDEF(REC_BCM_D)};

#define CS_UNKNOWN 0u
#define CS_REG 1u      /* register d of the caller */
#define CS_UV 2u       /* upvalue d of the caller */
#define CS_PROTO 3u    /* a new closure of constant prototype d */

/* May instruction x write register r? */
static int clobbers(BCIns x, BCReg r)
{
  BCOp op = bc_op(x);
  if (op >= BC__MAX) return 1;
  if (bc_amode[op] == BCMdst) return bc_a(x) == r;
  if (bc_amode[op] == BCMbase) return bc_a(x) <= r + 1;  /* ranges */
  return 0;
}

/* Jump target of instruction i, or -1 if it does not jump; -2 unknown. */
static ptrdiff_t jump_target(global_State *g, const GCproto *pt, BCPos i)
{
  BCIns x = proto_bc(pt)[i];
  BCOp op = bc_op(x);
  if (op >= BC__MAX) return -2;
  if (op == BC_JFORL || op == BC_JITERL || op == BC_JLOOP) {
    /* Patched by the JIT: the original is the trace's start instruction. */
    GCtrace *T = rec_lj_trace(g, (int32_t)bc_d(x));
    if (!T || mref(T->startpc, const BCIns) != proto_bc(pt) + i) return -2;
    x = T->startins;
    op = bc_op(x);
    if (op >= BC__MAX) return -2;
  }
  if (bc_dmode[op] != BCMjump) return -1;
  return (ptrdiff_t)i + 1 + bc_j(x);
}

/* What the call that returns to rpc called, as far as the bytecode says. */
static uint64_t callsite(global_State *g, const GCproto *pt, const BCIns *rpc)
{
  const BCIns *bc = proto_bc(pt);
  BCPos c, i, w;
  BCIns x;
  BCReg a, d;
  uint64_t kind;
  if (rpc <= bc || (BCPos)(rpc - bc) > pt->sizebc) return CS_UNKNOWN;
  c = (BCPos)(rpc - bc) - 1;
  x = bc[c];
  if (bc_op(x) != BC_CALL && bc_op(x) != BC_CALLM) return CS_UNKNOWN;
  a = bc_a(x);
  for (i = c;;) {
    if (i == 0) return CS_UNKNOWN;
    i--;
    if (clobbers(bc[i], a)) break;
  }
  w = i;
  x = bc[w];
  if (bc_a(x) != a) return CS_UNKNOWN;
  d = bc_d(x);
  switch (bc_op(x)) {
  case BC_MOV:
    if (d >= a) return CS_UNKNOWN;
    for (i = w + 1; i < c; i++)
      if (clobbers(bc[i], d)) return CS_UNKNOWN;
    kind = CS_REG;
    break;
  case BC_UGET: kind = CS_UV; break;
  case BC_FNEW: kind = CS_PROTO; break;
  default: return CS_UNKNOWN;
  }
  for (i = 0; i < pt->sizebc; i++) {  /* a straight path from w to c */
    ptrdiff_t t = jump_target(g, pt, i);
    if (t == -2) return CS_UNKNOWN;
    if (t > (ptrdiff_t)w && t <= (ptrdiff_t)c) return CS_UNKNOWN;
  }
  return kind | ((uint64_t)d << 8);
}

void rec_tailcall_check(RecWalk *w, global_State *g, uint32_t j)
{
  RecFrame *e = &w->prev[j], *c = &w->prev[j - 1];
  lua_State *L = (lua_State *)AUX_THREAD(e->aux);
  GCfunc *cfn = (GCfunc *)(uintptr_t)c->fn;
  const GCproto *pt;
  const BCIns *rpc = (const BCIns *)(uintptr_t)c->pc;
  uint64_t cs;
  size_t h;
  cTValue *tv;
  if (c->kind != REC_FR_LUA || AUX_THREAD(c->aux) != (uintptr_t)L || !rpc) return;
  pt = funcproto(cfn);
  h = ((uintptr_t)rpc >> 2) & (CALLS_SIZE - 1);
  if (calls[h].pc == rpc && calls[h].gen == rec_stack_gen) {
    cs = calls[h].cs;
  } else {
    cs = callsite(g, pt, rpc);
    calls[h].pc = rpc;
    calls[h].cs = cs;
    calls[h].gen = rec_stack_gen;
  }
  switch (cs & 0xff) {
  case CS_REG: {
    GCobj *o;
    tv = (cTValue *)c->slot + 1 + ((cs >> 8) & 0xff);
    /* A closure could have changed it since the call. */
    for (o = gcref(L->openupval); o; o = gcref(o->gch.nextgc)) {
      GCupval *uv = &o->uv;
      if (uvval(uv) < tv) break;
      if (uvval(uv) == tv && !uv->immutable) return;
    }
    if (!tvisfunc(tv)) return;
    e->dep = &tv->u64;
    e->depv = tv->u64;
    if ((uint64_t)(uintptr_t)funcV(tv) != e->fn) e->tail = 1;
    return;
  }
  case CS_UV: {
    uint32_t k = (uint32_t)(cs >> 8) & 0xffff;
    GCupval *uv;
    if (k >= cfn->l.nupvalues) return;
    uv = &gcref(cfn->l.uvptr[k])->uv;
    if (!uv->immutable) return;
    tv = uvval(uv);
    if (!tvisfunc(tv)) return;
    if ((uint64_t)(uintptr_t)funcV(tv) != e->fn) e->tail = 1;
    return;
  }
  case CS_PROTO: {
    uint32_t k = (uint32_t)(cs >> 8) & 0xffff;
    GCobj *kp;
    GCfunc *fn = (GCfunc *)(uintptr_t)e->fn;
    if (k >= pt->sizekgc) return;
    kp = proto_kgc(pt, ~(ptrdiff_t)k);
    if (!isluafunc(fn) || (const GCobj *)funcproto(fn) != kp) e->tail = 1;
    return;
  }
  default: return;
  }
}
