/* alloc_type.c -- what the VM allocated a block for (vm/alloc_type.h).
**
** The rules, each a fact of the VM's structures at the allocator call
** after the one that made or moved block b:
**  - the newest GC object (g->gc.root) is b: its header's type (tables,
**    closures, closed upvalues, prototypes, threads, cdata, traces), or it
**    lies inside b (a cdata aligned within its block);
**  - b's header says string, its size is that string's, and b heads the
**    string table's chain for its hash (a new string goes first);
**  - b's header says userdata and b is the first after the main thread
**    (lj_udata_new links it there), or upvalue and b is the newest open
**    upvalue (g->uvhead);
**  - the table just made (the newest object) has b as its array or hash
**    part; the thread just made, or the running one, has b as its stack;
**    the closure just made has b among its upvalues;
**  - b is g->tmpbuf's buffer;
**  - a table in the running function's frame (its first FRAME_SLOTS slots:
**    the table a Lua function or table.insert grows is there) has b as its
**    array or hash part, a coroutine there (coroutine.resume's) as its
**    stack, or a string.buffer object there as its buffer.
** Headers are read only from blocks large enough to hold them. A stack
** slot never refers to a freed object (the collector's atomic phase marks
** what the slots below a frame's top hold and clears the others), so the
** frame's objects are read whatever the slots' age.
*/
#include "recorder/vm/alloc_type.h"

#define FRAME_SLOTS 32

/* What b is to a table, a coroutine or a string.buffer object in the
** running function's frame (its first FRAME_SLOTS slots): REC_TYPE_ARRAY,
** _HASH, _STACK, _BUFFER, or REC_TYPE_NONE. */
static uint8_t frame_owner(lua_State *L, const void *b)
{
  TValue *lo = L->base, *hi = tvref(L->maxstack);
  if (lo < tvref(L->stack) || lo >= hi) return REC_TYPE_NONE;
  if (hi - lo > FRAME_SLOTS) hi = lo + FRAME_SLOTS;
  for (TValue *v = lo; v < hi; v++) {
    if (tvistab(v)) {
      GCtab *t = tabV(v);
      if (mref(t->array, void) == b) return REC_TYPE_ARRAY;
      if (noderef(t->node) == b) return REC_TYPE_HASH;
    } else if (tvisthread(v)) {
      if (tvref(threadV(v)->stack) == b) return REC_TYPE_STACK;
#if LJ_HASBUFFER
    } else if (tvisudata(v) && udataV(v)->udtype == UDTYPE_BUFFER &&
               ((SBufExt *)uddata(udataV(v)))->b == (const char *)b) {
      return REC_TYPE_BUFFER;
#endif
    }
  }
  return REC_TYPE_NONE;
}

uint8_t rec_alloc_type(global_State *g, const void *b, size_t size)
{
  uintptr_t p = (uintptr_t)b;
  GCobj *root = gcref(g->gc.root);
  const GCobj *o = (const GCobj *)b;
  if ((uintptr_t)root == p) return rec_type_of_gct[root->gch.gct];
  if (root && (uintptr_t)root > p && (uintptr_t)root < p + size &&
      root->gch.gct == (uint8_t)~LJ_TCDATA)
    return REC_TYPE_CDATA;
  if (size >= sizeof(GCstr) && o->gch.gct == (uint8_t)~LJ_TSTR &&
      rec_lj_str_size(&o->str) == size && rec_lj_str_newest(g, &o->str))
    return REC_TYPE_STRING;
  if (size >= sizeof(GCudata) && o->gch.gct == (uint8_t)~LJ_TUDATA &&
      gcref(mainthread(g)->nextgc) == o)
    return REC_TYPE_USERDATA;
  if (size >= sizeof(GCupval) && o->gch.gct == (uint8_t)~LJ_TUPVAL &&
      gcref(g->uvhead.next) == o)
    return REC_TYPE_UPVALUE;
  if (root) {
    switch (root->gch.gct) {
    case (uint8_t)~LJ_TTAB:
      if (mref(root->tab.array, void) == b) return REC_TYPE_ARRAY;
      if (noderef(root->tab.node) == b) return REC_TYPE_HASH;
      break;
    case (uint8_t)~LJ_TTHREAD:
      if (tvref(root->th.stack) == b) return REC_TYPE_STACK;
      break;
    case (uint8_t)~LJ_TFUNC:
      if (isluafunc(&root->fn) && size >= sizeof(GCupval) && o->gch.gct == (uint8_t)~LJ_TUPVAL)
        for (unsigned i = 0; i < root->fn.l.nupvalues; i++)
          if (gcref(root->fn.l.uvptr[i]) == o) return REC_TYPE_UPVALUE;
      break;
    default:
      break;
    }
  }
  if (rec_lj_tmpbuf_block(g) == b) return REC_TYPE_BUFFER;
  lua_State *L = gco2th(gcref(g->cur_L));
  if (!L) return REC_TYPE_NONE;
  if (tvref(L->stack) == b) return REC_TYPE_STACK;
  return frame_owner(L, b);
}
