/* func_names.c -- the names a prototype's bytecode gives the functions it
** defines, and its locals' and upvalues' names.
**
** A function is named where it is defined: the instruction that stores
** the closure FNEW made says what it is called. The closure's register
** may be a local from there on (`local function f`, `local f = function`);
** else the next instruction stores it: GSET a global (`function f`),
** USETV an upvalue, TSETS a field of a table (`function M.f`, `M.f =
** function`, `function Obj:m` when the function's first parameter is
** `self`). The table is named as LuaJIT's debug library names a register:
** a local, else the instruction that last wrote it, searching backwards
** (GGET a global, UGET an upvalue, TGETS a field of a named table, MOV
** the register copied); a table being built (`{on_x = function ...}`) or
** computed leaves the key alone. Anything else names nothing.
*/
#include "recorder/vm/func_names.h"

#include <string.h>

/* Operand A's mode of each opcode, from LuaJIT's list. */
#define REC_FN_AMODE(name, ma, mb, mc, mt) BCM##ma,
static const uint8_t fn_amode[] = {BCDEF(REC_FN_AMODE)};

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

/* A growing name: bytes cut at FN_NAME_MAX. */
typedef struct Name {
  char s[FN_NAME_MAX + 1];
  size_t len;
} Name;

static void name_add(Name *n, const char *s, size_t len)
{
  if (len > FN_NAME_MAX - n->len) len = FN_NAME_MAX - n->len;
  memcpy(n->s + n->len, s, len);
  n->len += len;
  n->s[n->len] = 0;
}

static int ident_byte(unsigned char c, int first)
{
  return c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (!first && c >= '0' && c <= '9');
}

/* Is s (len bytes) a Name, not a reserved word? */
static int plain_name(const char *s, size_t len)
{
  static const char *const reserved[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
    "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"};
  size_t i;
  for (i = 0; i < len; i++)
    if (!ident_byte((unsigned char)s[i], i == 0)) return 0;
  for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
    if (strlen(reserved[i]) == len && !memcmp(reserved[i], s, len)) return 0;
  return len > 0;
}

/* Appends field k of a named table: ".k", or ["k"] when k is no Name. */
static void name_field(Name *out, const GCstr *k)
{
  if (plain_name(strdata(k), k->len)) {
    name_add(out, ".", 1);
    name_add(out, strdata(k), k->len);
  } else {
    name_add(out, "[\"", 2);
    name_add(out, strdata(k), k->len);
    name_add(out, "\"]", 2);
  }
}

#define FN_PATH_MAX 4  /* a.b.c.d: fields followed at most */

/* Names what register slot holds right before instruction pc of pt, from
** the bytecode alone: a local, a global (GGET), an upvalue (UGET), a
** field of a named table (TGETS: "a.b"), through MOVs. 0 when nothing
** names it. */
static int reg_name(const GCproto *pt, BCPos pc, BCReg slot, Name *out, int depth)
{
  const BCIns *bc = proto_bc(pt);
  const char *v;
  int moves = 0;
  for (;;) {
    if (rec_var_name(pt, pc, slot, &v) == 1) {
      name_add(out, v, strlen(v));
      return 1;
    }
    for (;;) {
      BCIns ins;
      BCOp op;
      BCReg ra;
      if (pc == 0) return 0;
      ins = bc[--pc];
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
        name_add(out, strdata(k), k->len);
        return 1;
      }
      case BC_UGET: {
        const char *u = rec_uv_name(pt, bc_d(ins));
        if (!u) return 0;
        name_add(out, u, strlen(u));
        return 1;
      }
      case BC_TGETS: {
        GCstr *k = kstr(pt, bc_c(ins));
        if (depth >= FN_PATH_MAX || !reg_name(pt, pc, bc_b(ins), out, depth + 1)) return 0;
        name_field(out, k);
        return 1;
      }
      default:
        return 0;
      }
      break;  /* MOV: name the register it copied, from here */
    }
  }
}

/* Does child take 'self' first (defined as `function T:m`)? */
static int is_method(const GCproto *child)
{
  const char *v;
  return child->numparams >= 1 && rec_var_name(child, 0, 0, &v) == 1 && !strcmp(v, "self");
}

/* The name the instruction after FNEW (at pc, into register a) gives
** its closure; 0 for none. */
static int def_name(const GCproto *pt, BCPos pc, BCReg a, const GCproto *child, Name *out)
{
  const BCIns *bc = proto_bc(pt);
  const char *v;
  BCIns next;
  BCOp op;
  if (pc + 1 >= pt->sizebc) return 0;
  if (rec_var_name(pt, pc + 1, a, &v) == 1) {  /* local [function] NAME */
    name_add(out, v, strlen(v));
    return 1;
  }
  next = bc[pc + 1];
  op = bc_op(next);
  if (op == BC_GSET && bc_a(next) == a) {  /* [function] NAME = */
    GCstr *k = kstr(pt, bc_d(next));
    name_add(out, strdata(k), k->len);
    return 1;
  }
  if (op == BC_USETV && bc_d(next) == a) {  /* an upvalue NAME = */
    const char *u = rec_uv_name(pt, bc_a(next));
    if (!u) return 0;
    name_add(out, u, strlen(u));
    return 1;
  }
  if (op == BC_TSETS && bc_a(next) == a) {  /* T.NAME =, function T:NAME, {NAME =} */
    GCstr *k = kstr(pt, bc_c(next));
    if (!reg_name(pt, pc, bc_b(next), out, 1)) {
      out->len = 0;  /* a table being built or computed: the key alone */
      name_add(out, strdata(k), k->len);
    } else if (is_method(child) && plain_name(strdata(k), k->len)) {
      name_add(out, ":", 1);
      name_add(out, strdata(k), k->len);
    } else {
      name_field(out, k);
    }
    return 1;
  }
  return 0;
}

REC_API void rec_def_names(const GCproto *pt, RecDefNameFn fn, void *ud)
{
  const BCIns *bc = proto_bc(pt);
  BCPos pc;
  if (!(pt->flags & PROTO_CHILD)) return;
  for (pc = 0; pc < pt->sizebc; pc++) {
    const GCproto *child;
    Name n;
    if (bc_op(bc[pc]) != BC_FNEW) continue;
    child = gco2pt(proto_kgc(pt, ~(ptrdiff_t)bc_d(bc[pc])));
    n.len = 0;
    n.s[0] = 0;
    if (def_name(pt, pc, bc_a(bc[pc]), child, &n) && n.len) fn(ud, child, n.s, n.len);
  }
}
