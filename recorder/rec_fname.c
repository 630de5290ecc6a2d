/* rec_fname.c -- a Lua frame's function name from its caller's bytecode.
**
** The rules of LuaJIT's lj_debug_funcname and lj_debug_slotname: the
** register a CALL (or ITERC's generator, 3 below) calls is named by the
** local variable holding it there (debug info), else by the instruction
** that last wrote it, searching backwards: GGET a global, TGETS a field
** (a method when the object was copied right above it, as `o:m()`
** compiles), UGET an upvalue, MOV the register it copied (searched in
** turn); anything else, or an instruction that writes a range of
** registers over it, names nothing. An instruction that runs a
** metamethod names that metamethod ("__index"). Internal locals ("(for
** generator)") name nothing. A global, local or upvalue must still hold the
** frame's function: after a tail call (or a reassignment) it names another.
*/
#include "rec_fname.h"

#include <string.h>

/* Operand A's mode and the metamethod of each opcode, from LuaJIT's list. */
#define REC_FN_AMODE(name, ma, mb, mc, mt) BCM##ma,
#define REC_FN_MM(name, ma, mb, mc, mt) MM_##mt,
static const uint8_t fn_amode[] = {BCDEF(REC_FN_AMODE)};
static const uint8_t fn_mm[] = {BCDEF(REC_FN_MM)};

#define FN_NAME_MAX 255   /* longer names are cut */
#define FN_MOVES_MAX 16   /* MOV chains followed at most */

/* A ULEB128 number of debug info ending before e: 1, or 0 when it runs
** past e. */
static int read_uleb(const uint8_t **pp, const uint8_t *e, uint32_t *out)
{
  const uint8_t *p = *pp;
  uint32_t v = 0;
  int sh = 0;
  for (;;) {
    if (p >= e) return 0;
    v |= (uint32_t)(*p & 0x7f) << (sh & 31);
    sh += 7;
    if (*p++ < 0x80 || sh > 28) break;
  }
  *pp = p;
  *out = v;
  return 1;
}

/* The end of a prototype's block: its debug info lies inside it, and a
** loaded bytecode chunk's is not checked by LuaJIT, so no scan passes it. */
static const uint8_t *pt_end(const GCproto *pt)
{
  return (const uint8_t *)pt + pt->sizept;
}

/* The next entry of a prototype's varinfo at *p (before e): its name, or
** NULL for an internal one ("(for state)"), and the instructions it is
** active at, [*start, *end) (*last: the previous entry's start). 0 at the
** end, or where the entry runs past e (the last entries end a few bytes
** before the block does). */
static int var_next(const uint8_t **pp, const uint8_t *e, BCPos *last, const char **name,
                    BCPos *start, BCPos *end)
{
  const uint8_t *p = *pp;
  uint32_t d1, d2;
  if (p >= e || *p == VARNAME_END) return 0;
  if (*p < VARNAME__MAX) {
    *name = NULL;
    p++;
  } else {
    const uint8_t *z = memchr(p, 0, (size_t)(e - p));
    if (!z) return 0;
    *name = (const char *)p;
    p = z + 1;
  }
  if (!read_uleb(&p, e, &d1) || !read_uleb(&p, e, &d2)) return 0;
  *start = *last += d1;
  *end = *start + d2;
  *pp = p;
  return 1;
}

REC_API int rec_var_name(const GCproto *pt, BCPos pc, BCReg slot, const char **name)
{
  const uint8_t *p = proto_varinfo(pt), *e = pt_end(pt);
  BCPos last = 0, start, end;
  const char *s;
  if (!p) return 0;
  for (uint32_t k = 0; k < 65536 && var_next(&p, e, &last, &s, &start, &end) && start <= pc; k++)
    if (pc < end && slot-- == 0) {
      if (!s) return -1;
      *name = s;
      return 1;
    }
  return 0;
}

REC_API void rec_var_names(const GCproto *pt, BCPos pc, const char **out, uint32_t n)
{
  const uint8_t *p = proto_varinfo(pt), *e = pt_end(pt);
  BCPos last = 0, start, end;
  const char *s;
  uint32_t slot = 0;
  for (uint32_t k = 0; k < n; k++) out[k] = NULL;
  if (!p) return;
  for (uint32_t k = 0; k < 65536 && slot < n && var_next(&p, e, &last, &s, &start, &end) && start <= pc;
       k++)
    if (pc < end) out[slot++] = s;  /* active: the next slot (NULL: internal) */
}

REC_API const char *rec_uv_name(const GCproto *pt, uint32_t idx)
{
  const uint8_t *p = proto_uvinfo(pt), *e = pt_end(pt), *z;
  if (!p || idx >= pt->sizeuv || p >= e) return NULL;
  for (;; idx--) {
    if (!(z = memchr(p, 0, (size_t)(e - p)))) return NULL;
    if (!idx) return (const char *)p;
    p = z + 1;
  }
}

static GCstr *kstr(const GCproto *pt, uint32_t idx)
{
  return gco2str(proto_kgc(pt, ~(ptrdiff_t)idx));
}

/* Does value v hold function fn? */
static int holds(cTValue *v, const GCfunc *fn)
{
  return v && tvisfunc(v) && funcV(v) == fn;
}

/* The value of string key k in table t, or NULL (no metamethods). */
static cTValue *tab_str(const GCtab *t, const GCstr *k)
{
  Node *n;
  uint32_t guard = 0;
  if (!t || !t->hmask) return NULL;
  for (n = rec_lj_hashstr(t, k); n && guard++ <= t->hmask; n = nextnode(n))
    if (tvisstr(&n->key) && strV(&n->key) == k) return &n->val;
  return NULL;
}

/* Names register slot at instruction ip of caller (registers at base) and
** checks what it names against fn where it can. */
static int slot_name(const GCfunc *caller, const TValue *base, const BCIns *ip, BCReg slot,
                     const GCfunc *fn, const char **name, size_t *len)
{
  const GCproto *pt = funcproto(caller);
  const BCIns *bc = proto_bc(pt);
  int moves = 0;
  for (;;) {
    int v = rec_var_name(pt, (BCPos)(ip - bc), slot, name);
    if (v) {
      if (v < 0 || slot >= pt->framesize || !holds(base + slot, fn)) return 0;
      *len = strlen(*name);
      return REC_FN_LOCAL;
    }
    for (;;) {
      BCIns ins;
      BCOp op;
      BCReg ra;
      if (--ip <= bc) return 0;
      ins = *ip;
      op = bc_op(ins);
      ra = bc_a(ins);
      if (op >= BC__MAX) return 0;
      if (fn_amode[op] == BCMbase) {
        if (slot >= ra && (op != BC_KNIL || slot <= bc_d(ins))) return 0;
        continue;
      }
      if (fn_amode[op] != BCMdst || ra != slot) continue;
      switch (op) {
      case BC_MOV:
        if (++moves > FN_MOVES_MAX) return 0;
        slot = bc_d(ins);
        break;
      case BC_GGET: {
        GCstr *k = kstr(pt, bc_d(ins));
        if (!holds(tab_str(tabref(caller->l.env), k), fn)) return 0;
        *name = strdata(k);
        *len = k->len;
        return REC_FN_GLOBAL;
      }
      case BC_TGETS: {
        GCstr *k = kstr(pt, bc_c(ins));
        *name = strdata(k);
        *len = k->len;
        if (ip > bc && bc_op(ip[-1]) == BC_MOV && bc_a(ip[-1]) == ra + 1 + LJ_FR2 &&
            bc_d(ip[-1]) == bc_b(ins))
          return REC_FN_METHOD;
        return REC_FN_FIELD;
      }
      case BC_UGET:
        if (bc_d(ins) >= caller->l.nupvalues ||
            !holds(uvval(&gcref(caller->l.uvptr[bc_d(ins)])->uv), fn))
          return 0;
        *name = rec_uv_name(pt, bc_d(ins));
        if (!*name) return 0;
        *len = strlen(*name);
        return REC_FN_UPVALUE;
      default:
        return 0;
      }
      break;  /* MOV: name the register it copied, from here */
    }
  }
}

int rec_fname(global_State *g, const GCfunc *caller, const TValue *base, const BCIns *ins,
              const GCfunc *fn, const char **name, size_t *len)
{
  BCOp op = bc_op(*ins);
  int what;
  if (op >= BC__MAX) return 0;
  if (fn_mm[op] == MM_call) {
    BCReg slot = bc_a(*ins);
    if (op == BC_ITERC) slot -= 3;
    what = slot_name(caller, base, ins, slot, fn, name, len);
  } else if (fn_mm[op] != MM__MAX) {
    const GCstr *s = mmname_str(g, fn_mm[op]);
    *name = strdata(s);
    *len = s->len;
    what = REC_FN_META;
  } else {
    return 0;
  }
  if (what && *len > FN_NAME_MAX) *len = FN_NAME_MAX;
  return what && *len ? what : 0;
}
