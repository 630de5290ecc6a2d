/* resumer.c -- which thread resumed a coroutine (for call stacks).
**
** LuaJIT keeps no link from a coroutine to its resumer. Every VM entry
** stores its thread in its C frame (cframe_L), and a thread inside the
** VM has L->cframe set, so the C stack orders the running threads: the
** resumer is the running thread whose C frame lies nearest above the
** coroutine's outermost one. coroutine.resume/wrap call lj_vm_resume
** straight from the interpreter, so their C frame is exactly CFRAME_SIZE
** above: its saved thread is taken if it is a known thread whose
** innermost frame is that fast function with this coroutine as argument
** (resume) or upvalue (wrap). Otherwise the running threads are
** searched: all threads are known (those alive at the start, from the GC
** list, and each created since: a new thread is the head of the GC list
** when its stack is allocated, the next allocator call;
** rec_resumer_track), and a candidate is taken only if its innermost
** frame is a C function (lua_resume from C). Results are cached per
** coroutine and checked again at every event (the resume-fast-function
** case exactly; the C case against the coroutine's C frame, the C stack
** words above it and the resumer's C frame and innermost frame). A
** coroutine whose resumer is not found (resumed by the host outside the
** VM) ends in the boundary frame (vm/stack_walk.c).
*/
#include "recorder/vm/resumer.h"

#include <errno.h>
#include <stdlib.h>

#include "recorder/vm/stack_walk_int.h"

REC_API RecThreads rec_threads;

/* Per-coroutine resumer cache. */
typedef struct CoEntry {
  void *cf;            /* the coroutine's outermost C frame then */
  uint64_t fp;         /* the C stack words above it then */
  lua_State *res;      /* the resumer, or NULL (none found) */
  void *rcf;           /* the resumer's C frame */
  uint64_t epoch;      /* valid while no thread was freed since */
  int lua;             /* resumed by coroutine.resume/wrap */
} CoEntry;

/* -- Setup --------------------------------------------------------------- */

static void free_co_entries(void)
{
  size_t i;
  for (i = 0; rec_threads.co.e && i <= rec_threads.co.mask; i++)
    if (rec_threads.co.e[i].key) free((void *)(uintptr_t)rec_threads.co.e[i].val);
  rec_map_clear(&rec_threads.co);
  rec_threads.last_co = NULL;
  rec_threads.last_ce = NULL;
}

int rec_resumer_start(lua_State *L)
{
  global_State *g = G(L);
  GCobj *o;
  rec_map_clear(&rec_threads.threads);
  free_co_entries();
  rec_threads.g = g;
  rec_threads.epoch++;
  if (rec_map_put(&rec_threads.threads, (uint64_t)(uintptr_t)mainthread(g), 1))
    return ENOMEM;
  for (o = gcref(g->gc.root); o; o = gcref(o->gch.nextgc))
    if (o->gch.gct == (uint8_t)~LJ_TTHREAD &&
        rec_map_put(&rec_threads.threads, (uint64_t)(uintptr_t)o, 1))
      return ENOMEM;
  rec_threads.last_root = gcref(g->gc.root);
  rec_attr_start(L);
  return 0;
}

void rec_resumer_stop(void)
{
  rec_map_free(&rec_threads.threads);
  free_co_entries();
  rec_map_free(&rec_threads.co);
  rec_threads.g = NULL;
  rec_threads.last_root = NULL;
}

void rec_resumer_freed(lua_State *T)
{
  RecMapEntry *e;
  if (!rec_map_del(&rec_threads.threads, (uint64_t)(uintptr_t)T)) return;
  e = rec_map_get(&rec_threads.co, (uint64_t)(uintptr_t)T);
  if (e) {
    free((void *)(uintptr_t)e->val);
    rec_map_del(&rec_threads.co, (uint64_t)(uintptr_t)T);
  }
  rec_threads.last_co = NULL;
  rec_threads.epoch++;  /* a cached resumer may have been this thread */
}

/* -- The search ---------------------------------------------------------- */

/* Words of the C stack are read where no C variable of ours lives:
** under AddressSanitizer the frames of instrumented callers have
** redzones that are not ours to check. */
#define REC_NOASAN __attribute__((no_sanitize("address")))

static REC_NOASAN uint64_t stack_word(const void *p)
{
  return *(const uint64_t *)p;
}

/* The return address of lj_vm_resume and the words above it: what the
** code that resumed the coroutine left on the C stack. */
static REC_NOASAN uint64_t stack_fingerprint(const void *cf)
{
  const uint64_t *w = (const uint64_t *)((const char *)cf + CFRAME_SIZE) - 1;
  uint64_t h = 0x9e3779b97f4a7c15ull;
  int i;
  for (i = 0; i < 8; i++) h = (h ^ w[i]) * 0x100000001b3ull;
  return h;
}

/* The function of the innermost frame of a thread that is inside the VM. */
static GCfunc *top_fn(lua_State *L)
{
  cTValue *f = L->base - 1;
  GCobj *o;
  if (!rec_in_stack(L, f)) return NULL;
  o = rec_lj_frame_gc(f);
  if (!o || o->gch.gct != (uint8_t)~LJ_TFUNC) return NULL;
  return &o->fn;
}

/* Is R inside coroutine.resume(co) or a wrap function of co? */
static int resumes_from_lua(lua_State *R, lua_State *co)
{
  GCfunc *fn = top_fn(R);
  if (!fn || !isffunc(fn)) return 0;
  if (fn->c.ffid == rec_ff.resume && rec_ff.resume) {
    cTValue *a = R->base;
    return a < tvref(R->stack) + R->stacksize && tvisthread(a) && threadV(a) == co;
  }
  if (fn->c.ffid == rec_ff.wrap && rec_ff.wrap && fn->c.nupvalues >= 1) {
    cTValue *u = &fn->c.upvalue[0];
    return tvisthread(u) && threadV(u) == co;
  }
  return 0;
}

static int in_cfunction(lua_State *R)
{
  GCfunc *fn = top_fn(R);
  return fn && iscfunc(fn);
}

/* The running thread whose C frame is nearest above cf. */
static lua_State *nearest_above(const void *cf, lua_State *co)
{
  lua_State *best = NULL;
  uintptr_t bc = 0;
  size_t i;
  for (i = 0; rec_threads.threads.e && i <= rec_threads.threads.mask; i++) {
    lua_State *T = (lua_State *)(uintptr_t)rec_threads.threads.e[i].key;
    uintptr_t c;
    if (!T || T == co || !T->cframe) continue;
    c = (uintptr_t)cframe_raw(T->cframe);
    if (c > (uintptr_t)cf && (!best || c < bc)) {
      best = T;
      bc = c;
    }
  }
  return best;
}

static CoEntry *co_entry(lua_State *co)
{
  RecMapEntry *e;
  CoEntry *ce;
  if (co == rec_threads.last_co) return rec_threads.last_ce;
  e = rec_map_get(&rec_threads.co, (uint64_t)(uintptr_t)co);
  if (e) {
    ce = (CoEntry *)(uintptr_t)e->val;
  } else {
    ce = calloc(1, sizeof(*ce));
    if (!ce) return NULL;
    if (rec_map_put(&rec_threads.co, (uint64_t)(uintptr_t)co, (uint64_t)(uintptr_t)ce)) {
      free(ce);
      return NULL;
    }
  }
  rec_threads.last_co = co;
  rec_threads.last_ce = ce;
  return ce;
}

/* The thread that resumed co (running, inside the VM), or NULL. */
lua_State *rec_resumer_find(lua_State *co)
{
  void *cf = cframe_raw(co->cframe), *p;
  char *rcf;
  lua_State *R = NULL;
  CoEntry *ce;
  int k, lua = 0;
  if (!cf) return NULL;
  for (k = 0; k < 10000 && (p = cframe_raw(cframe_prev(cf))) != NULL; k++) cf = p;
  ce = co_entry(co);
  if (ce && ce->epoch == rec_threads.epoch && ce->cf == cf) {
    if (ce->res && ce->lua) {
      /* Exact: its C frame is adjacent, saves it, and it resumes co. */
      if (cframe_raw(ce->res->cframe) == ce->rcf &&
          stack_word((char *)ce->rcf + CFRAME_OFS_L) == (uint64_t)(uintptr_t)ce->res &&
          resumes_from_lua(ce->res, co))
        return ce->res;
    } else if (stack_fingerprint(cf) == ce->fp) {
      if (!ce->res) return NULL;
      if (cframe_raw(ce->res->cframe) == ce->rcf && in_cfunction(ce->res)) return ce->res;
    }
  }
  rcf = (char *)cf + CFRAME_SIZE;
  {
    uint64_t v = stack_word(rcf + CFRAME_OFS_L);
    if (v && rec_map_get(&rec_threads.threads, v)) {
      lua_State *T = (lua_State *)(uintptr_t)v;
      if (cframe_raw(T->cframe) == (void *)rcf && resumes_from_lua(T, co)) {
        R = T;
        lua = 1;
      }
    }
  }
  if (!R) {
    lua_State *T = nearest_above(cf, co);
    if (T && in_cfunction(T)) R = T;
    else if (T && resumes_from_lua(T, co)) R = T, lua = 1;
  }
  if (ce) {
    ce->cf = cf;
    ce->fp = stack_fingerprint(cf);
    ce->res = R;
    ce->rcf = R ? cframe_raw(R->cframe) : NULL;
    ce->epoch = rec_threads.epoch;
    ce->lua = lua;
  }
  return R;
}
