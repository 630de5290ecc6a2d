/* heap_snapshot.c -- heap snapshots (decoder/ljh_decoder.h has the format).
**
** A depth-first walk from the VM's roots (registry, main thread and its
** globals, the running coroutine, the VM's own thread where there is one,
** base-type metatables, metamethod names, the FFI's tables, compiled
** traces) over every reference the collector itself follows, so what it
** writes is what the collector would keep.
** Each object is written once, when first reached, with all its
** references; the walk's own memory (a bitmap of seen addresses, a stack
** of objects to visit, a stdio buffer) comes from malloc, never from the
** VM, and nothing of the heap is written to. The bitmap has a bit per 8
** bytes of each MiB of address space that holds objects (1/64 of the
** heap's span), so a snapshot of a large heap needs a small part of it.
*/
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ljm_flavour.h"
#include "recorder/base/buffer.h"
#include "recorder/base/clock.h"
#include "recorder/base/out_file.h"
#include "recorder/base/path_pattern.h"
#include "recorder/vm/func_names.h"
#include "recorder/vm/heap_snapshot.h"
#include "recorder/vm/lj.h"

/* Object types and edge kinds as the format numbers them. */
enum { SN_END, SN_ROOT, SN_STR, SN_TAB, SN_LFUNC, SN_CFUNC, SN_PROTO, SN_UPVAL,
       SN_THREAD, SN_UDATA, SN_CDATA, SN_TRACE, SN_INTERNAL };
enum { SE_NAME = 1, SE_STRKEY, SE_INDEX, SE_OBJKEY, SE_KEY };
#define SE_WEAK 0x80
#define SN_LABEL_MAX 64  /* bytes of a string kept as its label */

/* A table reference that may be NULL (a missing metatable): one flavour's
** tabref() takes a member of the pointer, undefined for NULL. */
#define snap_tab(r) ((GCtab *)(void *)gcref(r))

#define SEEN_SHIFT 20                          /* address space per chunk: 1 MiB */
#define SEEN_WORDS ((1u << SEEN_SHIFT) / 8 / 64)  /* a bit per 8 bytes */

typedef struct SeenChunk {
  uintptr_t key;        /* address >> SEEN_SHIFT */
  uint64_t bits[SEEN_WORDS];
} SeenChunk;

typedef struct Snap {
  FILE *f;
  SeenChunk **seen;     /* open addressing by chunk key, NULL = empty */
  size_t seen_cap, nseen;
  GCobj **todo;
  size_t ntodo, cap_todo;
  int oom;
  global_State *g;
  /* The object being written: edges are counted, then written. */
  char *ebuf;
  size_t elen, ecap;
  uint64_t nedge;
  struct SnapFrame *frames;  /* a thread's Lua frames (thread_edges) */
  size_t cap_frames;
  uintptr_t exe_base;   /* the main program's load address, and its file's name: */
  char exe[256];        /* dladdr gives argv[0], which hosts such as nginx overwrite */
} Snap;

/* -- Output ------------------------------------------------------------------ */

/* Appends p[0..n) to the current object's edges. */
static void e_put(Snap *s, const void *p, size_t n)
{
  if (s->elen + n > s->ecap) {
    size_t nc = s->ecap ? s->ecap : 256;
    while (nc < s->elen + n) nc *= 2;
    char *nb = realloc(s->ebuf, nc);
    if (!nb) {
      s->oom = 1;
      return;
    }
    s->ebuf = nb;
    s->ecap = nc;
  }
  memcpy(s->ebuf + s->elen, p, n);
  s->elen += n;
}

static void e_byte(Snap *s, uint8_t b) { e_put(s, &b, 1); }

/* ULEB128 numbers as the event stream writes them (base/buffer.h). */
static void e_uleb(Snap *s, uint64_t v)
{
  uint8_t tmp[16];
  e_put(s, tmp, (size_t)(rec_uleb_put(tmp, v) - tmp));
}

static void e_str(Snap *s, const char *p, size_t n)
{
  e_uleb(s, n);
  e_put(s, p, n);
}

static void f_uleb(FILE *f, uint64_t v)
{
  uint8_t tmp[16];
  fwrite(tmp, 1, (size_t)(rec_uleb_put(tmp, v) - tmp), f);
}

static void f_str(FILE *f, const char *p, size_t n)
{
  f_uleb(f, n);
  fwrite(p, 1, n, f);
}

/* -- The walk ------------------------------------------------------------ */

static size_t seen_slot(size_t cap, uintptr_t key)
{
  return (size_t)((uint64_t)key * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
}

/* The chunk of address space holding a, created on first use. */
static SeenChunk *seen_chunk(Snap *s, uintptr_t a)
{
  uintptr_t key = a >> SEEN_SHIFT;
  if (s->seen_cap) {
    size_t j = seen_slot(s->seen_cap, key);
    while (s->seen[j]) {
      if (s->seen[j]->key == key) return s->seen[j];
      j = (j + 1) & (s->seen_cap - 1);
    }
  }
  if (2 * (s->nseen + 1) > s->seen_cap) {
    size_t nc = s->seen_cap ? s->seen_cap * 2 : 64;
    SeenChunk **ns = calloc(nc, sizeof(*ns));
    if (!ns) return NULL;
    for (size_t i = 0; i < s->seen_cap; i++)
      if (s->seen[i]) {
        size_t j = seen_slot(nc, s->seen[i]->key);
        while (ns[j]) j = (j + 1) & (nc - 1);
        ns[j] = s->seen[i];
      }
    free(s->seen);
    s->seen = ns;
    s->seen_cap = nc;
  }
  SeenChunk *c = calloc(1, sizeof(*c));
  if (!c) return NULL;
  c->key = key;
  size_t j = seen_slot(s->seen_cap, key);
  while (s->seen[j]) j = (j + 1) & (s->seen_cap - 1);
  s->seen[j] = c;
  s->nseen++;
  return c;
}

/* 1 when a is new (and now seen), 0 when seen before or out of memory. */
static int seen_add(Snap *s, uintptr_t a)
{
  SeenChunk *c = seen_chunk(s, a);
  if (!c) {
    s->oom = 1;
    return 0;
  }
  size_t bit = (a & ((1u << SEEN_SHIFT) - 1)) >> 3;
  uint64_t m = (uint64_t)1 << (bit & 63);
  if (c->bits[bit >> 6] & m) return 0;
  c->bits[bit >> 6] |= m;
  return 1;
}

/* Queues o for writing unless it was reached before. */
static void reach(Snap *s, GCobj *o)
{
  if (!o || s->oom || !seen_add(s, (uintptr_t)o)) return;
  if (s->ntodo == s->cap_todo) {
    size_t nc = s->cap_todo ? s->cap_todo * 2 : 1024;
    GCobj **nt = realloc(s->todo, nc * sizeof(*nt));
    if (!nt) {
      s->oom = 1;
      return;
    }
    s->todo = nt;
    s->cap_todo = nc;
  }
  s->todo[s->ntodo++] = o;
}

/* An edge of the current object to o (nothing for NULL). */
static void edge_head(Snap *s, unsigned kind, GCobj *o)
{
  e_byte(s, (uint8_t)kind);
  e_uleb(s, (uint64_t)(uintptr_t)o);
  s->nedge++;
  reach(s, o);
}

static void edge_name(Snap *s, GCobj *o, const char *name, unsigned weak)
{
  if (!o) return;
  edge_head(s, SE_NAME | weak, o);
  e_str(s, name, strlen(name));
}

static void edge_tv(Snap *s, cTValue *tv, const char *name, unsigned weak)
{
  if (tvisgcv(tv)) edge_name(s, gcV(tv), name, weak);
}

/* The string a metatable holds under a string key, or NULL (looked up by
** hand, the key compared by content: lj_tab_getstr is not exported, and
** nothing may be interned). */
static GCstr *meta_str(GCtab *mt, const char *key)
{
  size_t len = strlen(key);
  if (!mt || !mt->hmask) return NULL;
  Node *node = noderef(mt->node);
  for (uint32_t i = 0; i <= mt->hmask; i++) {
    Node *n = &node[i];
    if (tvisstr(&n->key) && tvisstr(&n->val) && strV(&n->key)->len == len &&
        !memcmp(strdata(strV(&n->key)), key, len))
      return strV(&n->val);
  }
  return NULL;
}

/* The weak mode of a table: its metatable's __mode. */
static unsigned weak_mode(GCtab *t, unsigned *wk)
{
  GCstr *mode = meta_str(snap_tab(t->metatable), "__mode");
  *wk = mode && strchr(strdata(mode), 'k') ? SE_WEAK : 0;
  return mode && strchr(strdata(mode), 'v') ? SE_WEAK : 0;
}

/* A userdata's label: its metatable's __name, or nothing. */
static void udata_name(GCtab *mt, char *label, size_t lcap)
{
  GCstr *name = meta_str(mt, "__name");
  if (name) snprintf(label, lcap, "%.*s", SN_LABEL_MAX, strdata(name));
}

static void tab_edges(Snap *s, GCtab *t)
{
  unsigned wk, wv = weak_mode(t, &wk);
  char name[32];
  edge_name(s, obj2gco(snap_tab(t->metatable)), "metatable", 0);
  TValue *arr = tvref(t->array);
  for (uint32_t i = 0; i < t->asize; i++)
    if (tvisgcv(&arr[i])) {
      edge_head(s, SE_INDEX | wv, gcV(&arr[i]));
      e_uleb(s, i);
    }
  if (!t->hmask) return;
  Node *node = noderef(t->node);
  for (uint32_t i = 0; i <= t->hmask; i++) {
    Node *n = &node[i];
    if (tvisnil(&n->val)) continue;
    if (tvisgcv(&n->val)) {
      if (tvisstr(&n->key)) {
        edge_head(s, SE_STRKEY | wv, gcV(&n->val));
        e_uleb(s, (uint64_t)(uintptr_t)gcV(&n->key));
        reach(s, gcV(&n->key));
      } else if (tvisgcv(&n->key)) {
        edge_head(s, SE_OBJKEY | wv, gcV(&n->val));
        e_uleb(s, (uint64_t)(uintptr_t)gcV(&n->key));
      } else if (tvisnumber(&n->key)) {
        lua_Number k = numberVnum(&n->key);
        if (k >= 0 && k < 9007199254740992.0 && k == (lua_Number)(uint64_t)k) {
          edge_head(s, SE_INDEX | wv, gcV(&n->val));
          e_uleb(s, (uint64_t)k);
        } else {
          snprintf(name, sizeof(name), "[%.14g]", k);
          edge_name(s, gcV(&n->val), name, wv);
        }
      } else {
        edge_name(s, gcV(&n->val), tvistrue(&n->key) ? "[true]" : "[false]", wv);
      }
    }
    if (tvisgcv(&n->key)) {
      edge_head(s, SE_KEY | wk, gcV(&n->key));
    }
  }
}

static void func_edges(Snap *s, GCfunc *fn)
{
  char name[128];
  edge_name(s, obj2gco(snap_tab(fn->c.env)), "env", 0);
  if (isluafunc(fn)) {
    edge_name(s, obj2gco(funcproto(fn)), "proto", 0);
    for (uint32_t i = 0; i < fn->l.nupvalues; i++) {
      const char *uv = rec_uv_name(funcproto(fn), i);
      if (uv && *uv) snprintf(name, sizeof(name), "upvalue %.100s", uv);
      else snprintf(name, sizeof(name), "upvalue %u", (unsigned)i + 1);
      edge_name(s, gcref(fn->l.uvptr[i]), name, 0);
    }
  } else {
    for (uint32_t i = 0; i < fn->c.nupvalues; i++) {
      snprintf(name, sizeof(name), "upvalue %u", (unsigned)i + 1);
      edge_tv(s, &fn->c.upvalue[i], name, 0);
    }
  }
}

static void proto_edges(Snap *s, GCproto *pt)
{
  char name[32];
  edge_name(s, gcref(pt->chunkname), "chunkname", 0);
  for (MSize i = 0; i < pt->sizekgc; i++) {
    GCobj *o = proto_kgc(pt, ~(ptrdiff_t)i);
    snprintf(name, sizeof(name), "constant %u", (unsigned)i + 1);
    edge_name(s, o, name, 0);
  }
}

/* A Lua frame of a thread whose current instruction is known: its slots
** [base, limit) are named by the locals active there. */
typedef struct SnapFrame {
  const TValue *base, *limit;
  const GCproto *pt;
  BCPos pc;
} SnapFrame;

#define SNAP_FRAMES_MAX 100000  /* deeper frames keep "stack slot N" */
#define SNAP_SLOTS_NAMED 256     /* a Lua frame's registers (framesize <= 250) */

/* The Lua frames of th, top first, with the instruction each is at: the
** call recorded in the link of the frame above it (the topmost frame has
** none: the running or yielding function is a C one when a snapshot is
** taken). Returns how many were written to out. */
static size_t lua_frames(lua_State *th, SnapFrame *out, size_t max)
{
  const TValue *bot = tvref(th->stack) + LJ_FR2, *limit = th->top;
  const TValue *f = th->base - 1, *above = NULL;
  size_t n = 0;
  while (f > bot && f < limit && n < max) {
    GCfunc *fn = frame_func(f);
    if (above && frame_islua(above) && isluafunc(fn)) {
      const GCproto *pt = funcproto(fn);
      ptrdiff_t pos = frame_pc(above) - proto_bc(pt) - 1;
      if (pos >= 0 && pos < (ptrdiff_t)pt->sizebc)
        out[n++] = (SnapFrame){ f + 1, limit, pt, (BCPos)pos };
    }
    limit = f - LJ_FR2;
    above = f;
    const TValue *prev = frame_prev(f);
    if (prev >= f) break;
    f = prev;
  }
  return n;
}

/* "main chunk (app.lua)" or "app.lua:12": where a frame's function is. */
static void frame_where(const GCproto *pt, char *out, size_t len)
{
  const char *chunk = strdata(proto_chunkname(pt)), *cut = "";
  size_t n;
  if (*chunk == '@' || *chunk == '=') chunk++;
  n = strlen(chunk);
  if (n > 80) {  /* a long path: its end names the file */
    chunk += n - 77;
    cut = "...";
  }
  if (pt->firstline == 0) snprintf(out, len, "main chunk (%s%s)", cut, chunk);
  else snprintf(out, len, "%s%s:%d", cut, chunk, (int)pt->firstline);
}

static void thread_edges(Snap *s, lua_State *th)
{
  char name[256], where[128];
  edge_name(s, obj2gco(snap_tab(th->env)), "env", 0);
  TValue *st = tvref(th->stack);
  /* A frame takes a slot at least: no more frames than slots. */
  size_t need = (size_t)(th->top - st);
  if (need > SNAP_FRAMES_MAX) need = SNAP_FRAMES_MAX;
  if (need > s->cap_frames) {
    SnapFrame *nf = realloc(s->frames, need * sizeof(*nf));
    if (nf) {
      s->frames = nf;
      s->cap_frames = need;
    }
  }
  SnapFrame *fr = s->frames;
  size_t k = fr ? lua_frames(th, fr, s->cap_frames) : 0;  /* fr[k-1]: the lowest */
  /* The frame's local names, read once per frame (a slot each time would
  ** read its debug info once per slot). */
  const char *vars[SNAP_SLOTS_NAMED];
  size_t named = SIZE_MAX;  /* the frame vars[] is of */
  const GCproto *vpt = NULL;  /* and its function and instruction: a recursion's */
  BCPos vpc = 0;              /* frames share them, read once */
  for (TValue *o = st + 1 + LJ_FR2; o < th->top; o++) {
    if (!tvisgcv(o)) continue;
    while (k && fr[k - 1].limit <= o) k--;
    const char *var = NULL;
    if (k && o >= fr[k - 1].base && o - fr[k - 1].base < SNAP_SLOTS_NAMED) {
      if (named != k - 1 && (fr[k - 1].pt != vpt || fr[k - 1].pc != vpc)) {
        rec_var_names(fr[k - 1].pt, fr[k - 1].pc, vars, SNAP_SLOTS_NAMED);
        frame_where(fr[k - 1].pt, where, sizeof(where));
        vpt = fr[k - 1].pt;
        vpc = fr[k - 1].pc;
      }
      named = k - 1;
      var = vars[o - fr[k - 1].base];
    }
    if (var) {
      snprintf(name, sizeof(name), "%s local %.100s", where, var);
    } else {
      snprintf(name, sizeof(name), "stack slot %u", (unsigned)(o - st));
    }
    edge_name(s, gcV(o), name, 0);
  }
  for (GCobj *uv = gcref(th->openupval); uv; uv = gcref(uv->uv.nextgc))
    edge_name(s, uv, "open upvalue", 0);
}

static void trace_edges(Snap *s, GCtrace *T)
{
  char name[32];
  edge_name(s, gcref(T->startpt), "proto", 0);
  for (IRRef ref = T->nk; ref < REF_TRUE; ref++) {
    IRIns *ir = &T->ir[ref];
    if (ir->o == IR_KGC) {
      snprintf(name, sizeof(name), "constant %u", (unsigned)(REF_TRUE - ref));
      edge_name(s, ir_kgc(ir), name, 0);
    }
  }
}

/* A C function's label: its exported symbol, else its object and offset
** ("luajit+0x2fa00", as the profiles name a function no symbol names),
** else its address. dladdr keeps no state of the recorder's: it is safe
** while another thread records. */
static void cfunc_label(const Snap *s, uintptr_t f, char *label, size_t lcap)
{
  Dl_info info;
  if (dladdr((void *)f, &info) && info.dli_fname && *info.dli_fname) {
    const char *name = (uintptr_t)info.dli_fbase == s->exe_base && *s->exe ? s->exe
                                                                           : info.dli_fname;
    const char *b = strrchr(name, '/');
    if (info.dli_sname && (uintptr_t)info.dli_saddr == f)
      snprintf(label, lcap, "%s", info.dli_sname);
    else
      snprintf(label, lcap, "%s+%#llx", b ? b + 1 : name,
               (unsigned long long)(f - (uintptr_t)info.dli_fbase));
  } else {
    snprintf(label, lcap, "%p", (void *)f);
  }
}

/* The main program (the first object dl_iterate_phdr reports): where its
** lowest segment is mapped, as dladdr's dli_fbase says it (PIE or not). */
static int exe_phdr(struct dl_phdr_info *info, size_t size, void *ud)
{
  uintptr_t lo = UINTPTR_MAX;
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < lo)
      lo = info->dlpi_phdr[i].p_vaddr;
  if (lo != UINTPTR_MAX) *(uintptr_t *)ud = (info->dlpi_addr + lo) & ~(uintptr_t)4095;
  return 1;
}

/* The main program's load address and file name, for cfunc_label. */
static void exe_of(Snap *s)
{
  ssize_t n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
  s->exe[n > 0 ? n : 0] = '\0';
  s->exe_base = UINTPTR_MAX;
  dl_iterate_phdr(exe_phdr, &s->exe_base);
}

/* Size, type and label of o; its edges into s->ebuf. */
static void describe(Snap *s, GCobj *o, uint8_t *type, uint64_t *size, char *label,
                     size_t lcap)
{
  label[0] = '\0';
  switch (o->gch.gct) {
  case ~LJ_TSTR: {
    GCstr *str = &o->str;
    *type = SN_STR;
    *size = rec_lj_str_size(str);
    size_t n = str->len < lcap - 1 ? str->len : lcap - 1;
    if (n > SN_LABEL_MAX) n = SN_LABEL_MAX;
    memcpy(label, strdata(str), n);
    label[n] = '\0';
    break;
  }
  case ~LJ_TTAB: {
    GCtab *t = &o->tab;
    *type = SN_TAB;
    *size = sizeof(GCtab) + (uint64_t)t->asize * sizeof(TValue) +
            (t->hmask ? ((uint64_t)t->hmask + 1) * sizeof(Node) : 0);
    tab_edges(s, t);
    break;
  }
  case ~LJ_TFUNC: {
    GCfunc *fn = &o->fn;
    if (isluafunc(fn)) {
      GCproto *pt = funcproto(fn);
      *type = SN_LFUNC;
      *size = sizeLfunc((MSize)fn->l.nupvalues);
      snprintf(label, lcap, "%s:%d", strdata(proto_chunkname(pt)), (int)pt->firstline);
    } else {
      *type = SN_CFUNC;
      *size = sizeCfunc((MSize)fn->c.nupvalues);
      cfunc_label(s, (uintptr_t)fn->c.f, label, lcap);
    }
    func_edges(s, fn);
    break;
  }
  case ~LJ_TPROTO: {
    GCproto *pt = &o->pt;
    *type = SN_PROTO;
    *size = pt->sizept;
    snprintf(label, lcap, "%s:%d", strdata(proto_chunkname(pt)), (int)pt->firstline);
    proto_edges(s, pt);
    break;
  }
  case ~LJ_TUPVAL: {
    GCupval *uv = &o->uv;
    *type = SN_UPVAL;
    *size = sizeof(GCupval);
    edge_tv(s, uvval(uv), "value", 0);
    break;
  }
  case ~LJ_TTHREAD: {
    lua_State *th = &o->th;
    *type = SN_THREAD;
    *size = sizeof(lua_State) + (uint64_t)th->stacksize * sizeof(TValue);
    thread_edges(s, th);
    break;
  }
  case ~LJ_TUDATA: {
    GCudata *ud = &o->ud;
    *type = SN_UDATA;
    *size = sizeudata(ud);
    udata_name(snap_tab(ud->metatable), label, lcap);
#if LJ_HASBUFFER
    if (ud->udtype == UDTYPE_BUFFER) {  /* string.buffer: its own memory, dictionaries */
      SBufExt *sbx = (SBufExt *)uddata(ud);
      if (sbufiscow(sbx)) edge_name(s, gcref(sbx->cowref), "copy-on-write", 0);
      else if (!sbufiscoworborrow(sbx)) *size += sbufsz(sbx);
      edge_name(s, obj2gco(snap_tab(sbx->dict_str)), "dict_str", 0);
      edge_name(s, obj2gco(snap_tab(sbx->dict_mt)), "dict_mt", 0);
      if (!label[0]) snprintf(label, lcap, "string.buffer");
    }
#endif
    edge_name(s, obj2gco(snap_tab(ud->metatable)), "metatable", 0);
    edge_name(s, obj2gco(snap_tab(ud->env)), "env", 0);
    break;
  }
  case ~LJ_TCDATA: {
    GCcdata *cd = &o->cd;
    *type = SN_CDATA;
    *size = sizeof(GCcdata);
#if LJ_HASFFI
    if (cdataisv(cd)) {
      *size = sizeof(GCcdataVar) + sizeof(GCcdata) + cdatavlen(cd);
    } else {
      CTState *cts = ctype_ctsG(s->g);
      if (cts && cd->ctypeid < cts->top) {
        CType *ct = ctype_get(cts, cd->ctypeid);
        while (ctype_isattrib(ct->info)) ct = ctype_child(cts, ct);
        if (ct->size != CTSIZE_INVALID) *size += ct->size;
      }
    }
    snprintf(label, lcap, "ctype %u", (unsigned)cd->ctypeid);
#endif
    break;
  }
  case ~LJ_TTRACE: {
    GCtrace *T = (GCtrace *)o;
    *type = SN_TRACE;
    *size = ((sizeof(GCtrace) + 7) & ~(size_t)7) + (uint64_t)(T->nins - T->nk) * sizeof(IRIns) +
            (uint64_t)T->nsnap * sizeof(SnapShot) + (uint64_t)T->nsnapmap * sizeof(SnapEntry);
    snprintf(label, lcap, "TRACE [%u]", (unsigned)T->traceno);
    trace_edges(s, T);
    break;
  }
  default:
    *type = SN_END;  /* not an object: stop (rec_snap_write reports it) */
    *size = 0;
  }
}

/* The roots, as edges of the root object (address 0). */
static void root_edges(Snap *s, lua_State *L)
{
  global_State *g = s->g;
  char name[48];
  /* In this order: of two paths as short, the first root's is shown. */
  edge_name(s, obj2gco(snap_tab(mainthread(g)->env)), "_G", 0);
  edge_tv(s, &g->registrytv, "registry", 0);
  edge_name(s, obj2gco(mainthread(g)), "main thread", 0);
  if (L != mainthread(g)) edge_name(s, obj2gco(L), "current thread", 0);
  edge_name(s, rec_lj_vmthread(g), "vm thread", 0);
  static const char *const base[] = {
    "nil", "false", "true", "lightuserdata", "string", "upvalue", "thread", "proto",
    "function", "trace", "cdata", "table", "userdata", "number",
  };
  for (int i = 0; i <= (int)~LJ_TNUMX; i++) {
    snprintf(name, sizeof(name), "metatable(%s)", i < (int)(sizeof(base) / sizeof(base[0])) ? base[i] : "?");
    edge_name(s, gcref(g->gcroot[GCROOT_BASEMT + i]), name, 0);
  }
  for (int i = 0; i < MM__MAX; i++) edge_name(s, gcref(g->gcroot[GCROOT_MMNAME + i]), "metamethod name", 0);
  edge_name(s, gcref(g->gcroot[GCROOT_IO_INPUT]), "io input", 0);
  edge_name(s, gcref(g->gcroot[GCROOT_IO_OUTPUT]), "io output", 0);
#if LJ_HASFFI
  {
    CTState *cts = ctype_ctsG(g);
    edge_name(s, rec_lj_ffi_fin(g), "ffi finalizers", 0);
    if (cts) edge_name(s, obj2gco(cts->miscmap), "ffi metatables", 0);
  }
#endif
#if LJ_HASJIT
  {
    jit_State *J = G2J(g);
    for (MSize i = 1; J->trace && i < J->sizetrace; i++) {
      snprintf(name, sizeof(name), "TRACE [%u]", (unsigned)i);
      edge_name(s, gcref(J->trace[i]), name, 0);
    }
  }
#endif
}

/* The VM's own blocks that the GC counts (gc.total) but that are not
** objects: the string table, the string buffer, the JIT's buffers. Each
** is an object of type SN_INTERNAL, at the address of its anchor. */
typedef struct Internal {
  const void *anchor;
  const char *name;
  uint64_t size;
} Internal;

static int internals(global_State *g, Internal *in)
{
  int n = 0;
  in[n++] = (Internal){rec_lj_strtab(g), "string table", rec_lj_strtab_size(g)};
  in[n++] = (Internal){&g->tmpbuf, "string buffer", rec_lj_tmpbuf_size(g)};
#if LJ_HASJIT
  {
    jit_State *J = G2J(g);
    in[n++] = (Internal){&J->trace, "trace array", (uint64_t)J->sizetrace * sizeof(GCRef)};
    in[n++] = (Internal){&J->irbuf, "IR buffer",
                         J->irbuf ? (uint64_t)(J->irtoplim - J->irbotlim) * sizeof(IRIns) : 0};
    in[n++] = (Internal){&J->snapbuf, "snapshot buffers",
                         (uint64_t)J->sizesnap * sizeof(SnapShot) +
                         (uint64_t)J->sizesnapmap * sizeof(SnapEntry)};
  }
#endif
  return n;
}

/* Writes the current object's header and its buffered edges. */
static void flush_object(Snap *s, uint8_t type, uint64_t addr, uint64_t size, const char *label)
{
  putc(type, s->f);
  f_uleb(s->f, addr);
  f_uleb(s->f, size);
  f_str(s->f, label, strlen(label));
  f_uleb(s->f, s->nedge);
  fwrite(s->ebuf, 1, s->elen, s->f);
  s->elen = 0;
  s->nedge = 0;
}

/* The process's memory beside the VM's count, at this moment: its resident
** set, and what glibc's malloc has in use and holds from the system (the
** host's C memory; LuaJIT's own allocator maps its memory directly). */
static void process_figures(FILE *f, const RecSnapHost *host)
{
  struct { const char *name; uint64_t v; } fig[5];
  int n = 0, fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  uint64_t rss = rec_time_rss(fd);
  if (fd >= 0) close(fd);
  if (rss) fig[n++] = (__typeof__(fig[0])){ "rss", rss };
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  /* Nothing held: another allocator (jemalloc, tcmalloc) replaced it. */
  struct mallinfo2 mi = mallinfo2();
  if (mi.arena + mi.hblkhd) {
    fig[n++] = (__typeof__(fig[0])){ "malloc_in_use", (uint64_t)mi.uordblks + mi.hblkhd };
    fig[n++] = (__typeof__(fig[0])){ "malloc_held", (uint64_t)mi.arena + mi.hblkhd };
    /* Part of malloc's in use and of RSS: the recorder's own, never the
    ** program's. */
    uint64_t resident = 0, own = host->own_bytes(&resident);
    fig[n++] = (__typeof__(fig[0])){ "recorder", own };
    fig[n++] = (__typeof__(fig[0])){ "recorder_rss", resident };
  }
#endif
  f_uleb(f, (uint64_t)n);
  for (int i = 0; i < n; i++) {
    f_str(f, fig[i].name, strlen(fig[i].name));
    f_uleb(f, fig[i].v);
  }
}

static int snap_fail(LjmRecError *err, int code, const char *path, const char *what)
{
  if (err) {
    err->code = code;
    snprintf(err->msg, sizeof(err->msg), "%s: %s", path, what);
  }
  return code;
}

int rec_snap_write(lua_State *L, const char *pattern, const RecSnapHost *host, LjmRecError *err)
{
  Snap s;
  RecOutFile out;
  const char *why;
  char label[SN_LABEL_MAX + 64];
  char path[PATH_MAX];
  memset(&s, 0, sizeof(s));
  if (!pattern || !*pattern) return snap_fail(err, EINVAL, "snapshot", "empty path");
  int pe = rec_path_expand(pattern, path, sizeof(path), &why);  /* %p, %t, %e */
  if (pe) return snap_fail(err, pe, pattern, why);
  s.g = G(L);
  exe_of(&s);
  if (!rec_lj_vmst_frames(s.g->vmstate))
    return snap_fail(err, EBUSY, path, "the VM is not running Lua or C code (inside the GC or a trace)");
  if (host->busy(L, path, err)) return err ? err->code : EBUSY;
  int oe = rec_outfile_open(&out, path, &why);
  if (oe) return snap_fail(err, oe, path, why ? why : strerror(oe));
  s.f = out.f;
  fwrite("ljh\x02", 1, 4, s.f);
  f_str(s.f, LJM_FLAVOUR_LABEL, strlen(LJM_FLAVOUR_LABEL));
  f_uleb(s.f, s.g->gc.total);
  process_figures(s.f, host);
  Internal in[8];
  int nin = internals(s.g, in);
  root_edges(&s, L);
  for (int i = 0; i < nin; i++) {  /* not objects: written here, never walked */
    e_byte(&s, SE_NAME);
    e_uleb(&s, (uint64_t)(uintptr_t)in[i].anchor);
    e_str(&s, in[i].name, strlen(in[i].name));
    s.nedge++;
  }
  flush_object(&s, SN_ROOT, 0, 0, "");
  for (int i = 0; i < nin; i++)
    flush_object(&s, SN_INTERNAL, (uint64_t)(uintptr_t)in[i].anchor, in[i].size, in[i].name);
  int bad = 0;
  while (s.ntodo && !s.oom) {
    GCobj *o = s.todo[--s.ntodo];
    uint8_t type;
    uint64_t size;
    describe(&s, o, &type, &size, label, sizeof(label));
    if (type == SN_END) {
      bad = 1;
      break;
    }
    flush_object(&s, type, (uint64_t)(uintptr_t)o, size, label);
  }
  putc(SN_END, s.f);
  for (size_t i = 0; i < s.seen_cap; i++) free(s.seen[i]);
  free(s.seen);
  free(s.todo);
  free(s.ebuf);
  free(s.frames);
  /* The write's own errno (ENOSPC, EFBIG...), not stdio's lost one. */
  int e = rec_outfile_commit(&out, !s.oom && !bad);
  if (s.oom || bad) e = s.oom ? ENOMEM : EFAULT;
  if (e) return snap_fail(err, e, path, bad ? "an object of unknown type on the heap" : strerror(e));
  return 0;
}
