/* alloc_wrapper.c -- the allocator wrapper: every allocator call of the recorded VM.
**
** Everything it reads of the VM for an event, it reads before the real
** allocator runs; exact recordings write every call, a sampled one only
** the calls that hold a sampled byte (capture/sampler.h).
*/
#include "recorder/capture/session.h"

#include <errno.h>

#include "recorder/vm/attribution.h"
#include "recorder/vm/stack_walk.h"

/* The sampled session's gaps and blocks: static, so the wrapper's fast path
** reads it without following a pointer. Only one sampled session is live at
** a time; the sampler stays with the last one started until it is freed.
** While none is live, its countdown is off and its filter full: rec_alloc,
** where it is the wrapper, sends every call to rec_alloc_slow. */
static RecSampler sampler = {.gap = REC_SAMPLE_OFF,
                             .filter = {[0 ... REC_SAMPLE_FILTER - 1] = REC_SAMPLE_ALL}};
static LjmRecorder *sampler_owner;

/* A sampled recording with stacks made a thread with the last allocation:
** the walker notes it at the next one (its stack). The sampler's held
** countdown sends that one to rec_alloc_slow (rec_sample_hold). */
static int thread_new;

/* The block the last (re)allocation written to an extended stream made,
** judged at the next allocator call (vm/alloc_type.h), when the VM has
** filled it in; NULL when none waits. The streams that wrote it say so
** (RecExt.type_wait). */
static const void *type_block;
static size_t type_size;

/* Writes the waiting block's type to the live streams that wait for it.
** Before the real allocator runs: the block is still in use. */
static __attribute__((noinline)) void types_settle(void)
{
  int t = -1;  /* judged once, for the first stream that waits */
  for (LjmRecorder *r = R.list; r; r = r->next) {
    if (!r->live || !r->st.ext || !r->st.ext->type_wait) continue;
    if (t < 0) t = rec_alloc_type(R.g, type_block, type_size);
    rec_ext_type(&r->st, (uint8_t)t);
  }
  type_block = NULL;
}

/* types_settle, with the usual case inline: one stream, waiting for the
** type of an allocation that is the newest GC object, of the type of the
** allocation before it (no item to write). */
static inline __attribute__((always_inline)) void types_settle_fast(void)
{
  LjmRecorder *r = R.one;
  if (__builtin_expect(r != NULL && r->st.ext != NULL, 1)) {
    RecExt *x = r->st.ext;
    if (x->type_wait == REC_EV_ALLOC && rec_alloc_type_root(R.g, type_block) == x->type_cur) {
      x->type_wait = 0;
      type_block = NULL;
      return;
    }
  }
  types_settle();
}

/* After an event written to r's stream: a new block waits for its type. */
static inline __attribute__((always_inline)) void types_wait(LjmRecorder *r, int ev,
                                                               const void *res, size_t nsize)
{
  if (ev != REC_EV_FREE && r->st.ext) {
    r->st.ext->type_wait = (uint8_t)ev;
    type_block = res;
    type_size = nsize;
  }
}

/* Recomputes R.one after a session went live or stopped being live. */
REC_API void live_changed(void)
{
  LjmRecorder *r;
  R.one = NULL;
  if (R.nlive != 1) return;
  for (r = R.list; r; r = r->next)
    if (r->live) {
      R.one = r;
      break;
    }
}

REC_API void session_kill(LjmRecorder *r)
{
  if (r->live) {
    r->live = 0;
    R.nlive--;
    if (R.sampled == r) {
      rec_sample_fill(&sampler);
      thread_new = 0;
      R.sampled = NULL;
      R.sampled_ext = 0;
    }
    if (r->ext) {
      R.nstacks--;
      R.stacks_dirty = 1;  /* the walker adapts outside the event */
    }
    if (r->timed && !--R.next) labels_on = 0;  /* no stream keeps them: freed by labels_gc */
    live_changed();
  }
}

/* The walker follows the live extended sessions: the largest depth
** limit, or nothing at all. Not called while an event is written. */
REC_API void stacks_update(void)
{
  LjmRecorder *r;
  uint32_t depth = 0;
  if (!R.stacks_dirty) return;
  R.stacks_dirty = 0;
  for (r = R.list; r; r = r->next)
    if (r->live && r->ext && r->depth > depth) depth = r->depth;
  if (!R.nstacks) rec_stack_stop();
  else if (depth != rec_walk.depth) rec_stack_depth(depth);
}

/* Everything the wrapper reads of the VM for an event, it reads before
** the real allocator runs: the allocator call may free or move what a
** frame, a trace or the location names (the trace array grows under
** trace_findfree at a trace exit, jit.flush frees traces, a stack moves).
** So the location's and the stack's announcements are written first, the
** selection and the event after the call. */

/* The allocator wrapper of exact recordings while extended sessions
** (with stacks, or with time marks only) are live; lon: labels are on
** (labels.c), a constant of each copy (rec_alloc_ext); L: the thread rec_attr
** read the location from (its labels are the allocation's), or NULL. */
static inline __attribute__((always_inline)) void *
alloc_ext(void *ptr, size_t osize, size_t nsize, const RecLoc *loc, lua_State *L, const int lon)
{
  LjmRecorder *r;
  void *res;
  int ev, walk = R.nstacks != 0;
  /* frees need no labels: theirs are their blocks' */
  uint32_t lab = !lon || !nsize ? 0 : L ? labels_of((uintptr_t)L) : labels_now(R.g);
  if (type_block) types_settle_fast();
  if (walk) rec_stack_event(R.g, loc, ptr, osize, nsize);
  r = R.one;
  if (__builtin_expect(r != NULL, 1)) {
    if (r->ext) rec_ext_pre(&r->st, R.g, &rec_walk);
    else rec_ext_tick(&r->st);
    rec_stream_announce(&r->st, R.g, loc);
  } else {
    for (r = R.list; r; r = r->next) {
      if (!r->live) continue;
      if (r->ext) rec_ext_pre(&r->st, R.g, &rec_walk);
      else if (r->timed) rec_ext_tick(&r->st);
      rec_stream_announce(&r->st, R.g, loc);
    }
  }
  res = R.orig(R.orig_ud, ptr, osize, nsize);
  if (nsize == 0) {
    ev = REC_EV_FREE;
    if (lon) labels_track_free(ptr, osize);
  } else if (__builtin_expect(!res, 0)) {
    if (walk) rec_stack_forget();  /* failed: nothing happened, no event written */
    return res;
  } else {
    ev = ptr ? REC_EV_REALLOC : REC_EV_ALLOC;
    if (lon) labels_track_new(ptr, nsize, res, lab);
  }
  r = R.one;
  if (__builtin_expect(r != NULL, 1)) {  /* the one session: an extended stream */
    if (r->ext) rec_ext_select(&r->st);
    if (lon && nsize) labels_select_ext(&r->st, lab);
    rec_stream_event(&r->st, loc, ev, ptr, osize, res, nsize);
    types_wait(r, ev, res, nsize);
    rec_buf_tick(&r->st.out);
    if (__builtin_expect(r->st.out.err != 0, 0)) session_kill(r);
  } else {
    for (r = R.list; r; r = r->next) {
      if (!r->live) continue;
      if (r->ext) rec_ext_select(&r->st);
      if (lon && nsize) labels_select(&r->st, lab);
      rec_stream_event_out(&r->st, loc, ev, ptr, osize, res, nsize);
      types_wait(r, ev, res, nsize);
      rec_buf_tick(&r->st.out);
      if (r->st.out.err) session_kill(r);
    }
  }
  if (__builtin_expect(R.stacks_dirty, 0)) stacks_update();
  return res;
}

/* Two copies: without labels the wrapper keeps no label state in
** registers across the real allocator's call. */
static __attribute__((noinline)) void *
rec_alloc_ext_labels(void *ptr, size_t osize, size_t nsize, const RecLoc *loc, lua_State *L)
{
  return alloc_ext(ptr, osize, nsize, loc, L, 1);
}

static __attribute__((noinline)) void *
rec_alloc_ext(void *ptr, size_t osize, size_t nsize, const RecLoc *loc)
{
  return alloc_ext(ptr, osize, nsize, loc, NULL, 0);
}

/* A sampled recording with stacks: an allocation of sizeof(lua_State)
** may have made a thread, whose stack is the next allocation; the walker
** notes it then (the held countdown sends that call to rec_alloc_slow). */
static inline void note_thread(const void *ptr, size_t nsize)
{
  if (!ptr && nsize == sizeof(lua_State)) {
    thread_new = 1;
    rec_sample_hold(&sampler);
  }
}

/* The written events of a sampled session (alone on the VM): a hit (an
** allocation or reallocation holding the next sampled byte), or a free or
** reallocation of a sampled block; rec_alloc_slow has decided which. */
static __attribute__((noinline)) void *
rec_alloc_sampled(LjmRecorder *r, void *ptr, size_t osize, size_t nsize, int hit, int tracked)
{
  RecSampler *sp = &sampler;
  RecLoc loc;
  void *res;
  int ev;
  uint32_t lab = labels_on ? labels_now(R.g) : 0;
  if (hit) rec_sample_redraw(sp);
  /* Frees of prototypes go unseen here: the map's identity check, not the
  ** last prototype, decides whether this one was announced. */
  r->st.last_pt = NULL;
  rec_attr(R.g, ptr, &loc);
  if (r->ext) {
    rec_stack_resync();  /* frames may have gone and come back unseen */
    rec_stack_event(R.g, &loc, ptr, osize, nsize);
    rec_ext_pre(&r->st, R.g, &rec_walk);
  } else if (r->timed) {
    rec_ext_tick(&r->st);
  }
  rec_stream_announce(&r->st, R.g, &loc);
  res = R.orig(R.orig_ud, ptr, osize, nsize);
  if (nsize == 0) {
    ev = REC_EV_FREE;
  } else if (__builtin_expect(!res, 0)) {
    if (r->ext) rec_stack_forget();  /* failed: the old block stays */
    rec_buf_clock(&r->st.out);       /* as after an event */
    return res;
  } else {
    ev = ptr ? REC_EV_REALLOC : REC_EV_ALLOC;
  }
  if (r->ext) note_thread(ptr, nsize);
  if (labels_on) labels_track(ptr, osize, nsize, res, lab);
  if (tracked) rec_sample_del(sp, ptr);
  if (hit && rec_sample_add(sp, res)) r->st.out.err = ENOMEM;
  if (r->ext) rec_ext_select(&r->st);
  if (labels_on && hit) labels_select(&r->st, lab);
  if (ev == REC_EV_REALLOC && !hit) {  /* the old block leaves the sample */
    rec_buf_need(&r->st.out, 1);
    rec_buf_byte(&r->st.out, REC_IT_UNSAMPLED);
  }
  rec_stream_event(&r->st, &loc, ev, ptr, osize, res, nsize);
  if (hit) {  /* its type at the next allocation (held: rec_alloc_slow) */
    types_wait(r, ev, res, nsize);
    rec_sample_hold(sp);
  }
  rec_buf_clock(&r->st.out);
  if (__builtin_expect(r->st.out.err != 0, 0)) session_kill(r);
  if (__builtin_expect(R.stacks_dirty, 0)) stacks_update();
  return res;
}

static void *rec_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
static void *rec_alloc_forked(void *ptr, size_t osize, size_t nsize);

/* The wrapper of exact recordings (wrap): every call is written. While a
** sampled recording is live it may still be called (a host's wrapper
** around it, or one a host kept and put back): it hands the call to
** rec_alloc. */
static __attribute__((noinline)) void *rec_alloc_exact(void *ud, void *ptr, size_t osize,
                                                      size_t nsize)
{
  RecLoc loc;
  LjmRecorder *r;
  void *res;
  int ev;
  if (__builtin_expect(R.sampled != NULL, 0)) return rec_alloc(ud, ptr, osize, nsize);
  if (__builtin_expect(!rec_fork_unchanged(R.gen), 0)) return rec_alloc_forked(ptr, osize, nsize);
  if (__builtin_expect(!R.nlive, 0)) return R.orig(R.orig_ud, ptr, osize, nsize);
  lua_State *L = rec_attr(R.g, ptr, &loc);  /* the thread labels are read from */
  if (__builtin_expect(R.next != 0, 0))
    return labels_on ? rec_alloc_ext_labels(ptr, osize, nsize, &loc, L)
                     : rec_alloc_ext(ptr, osize, nsize, &loc);
  r = R.one;
  if (__builtin_expect(r != NULL, 1)) {
    /* One stream (the usual case): the event writer inline, no loop. */
    rec_stream_announce(&r->st, R.g, &loc);
    res = R.orig(R.orig_ud, ptr, osize, nsize);
    if (nsize == 0) ev = REC_EV_FREE;
    else if (__builtin_expect(!res, 0)) return res;  /* failed: nothing happened */
    else ev = ptr ? REC_EV_REALLOC : REC_EV_ALLOC;
    rec_stream_event(&r->st, &loc, ev, ptr, osize, res, nsize);
    rec_buf_tick(&r->st.out);
    if (__builtin_expect(r->st.out.err != 0, 0)) session_kill(r);
    return res;
  }
  for (r = R.list; r; r = r->next)
    if (r->live) rec_stream_announce(&r->st, R.g, &loc);
  res = R.orig(R.orig_ud, ptr, osize, nsize);
  if (nsize == 0) ev = REC_EV_FREE;
  else if (!res) return res;
  else ev = ptr ? REC_EV_REALLOC : REC_EV_ALLOC;
  for (r = R.list; r; r = r->next) {
    if (!r->live) continue;
    rec_stream_event_out(&r->st, &loc, ev, ptr, osize, res, nsize);
    rec_buf_tick(&r->st.out);
    if (r->st.out.err) session_kill(r);
  }
  return res;
}

static void *rec_alloc_slow(void *ptr, size_t osize, size_t nsize);

/* The fork check failed: a fork no handler saw, whose calls are not ours
** to record; or the mark set again in this process (no fork of R's). */
static __attribute__((noinline, cold)) void *
rec_alloc_forked(void *ptr, size_t osize, size_t nsize)
{
  uint32_t g = rec_fork_gen_cheap();  /* sets the mark again */
  if (g == R.gen) return rec_alloc_slow(ptr, osize, nsize);
  forked_child(g, 0);
  return R.orig(R.orig_ud, ptr, osize, nsize);
}

/* The calls rec_alloc does not pass through: a sampled recording's
** written events, and its unwritten calls that the stack walker's caches
** must see or that end a countdown short of the sampled byte (a stop: the
** flush interval's clock); every call of an exact recording while
** rec_alloc is the wrapper. Allocations have taken their bytes from the
** gap, except those of sizeof(lua_State). */
static __attribute__((noinline)) void *rec_alloc_slow(void *ptr, size_t osize, size_t nsize)
{
  LjmRecorder *r = R.sampled;
  RecSampler *sp = &sampler;
  void *res;
  int hit, tracked, stop;
  if (__builtin_expect(!rec_fork_unchanged(R.gen), 0)) return rec_alloc_forked(ptr, osize, nsize);
  if (!r) {  /* the countdown is off; again, if exit() on another thread raced a subtraction */
    sp->gap = REC_SAMPLE_OFF;
    return rec_alloc_exact(NULL, ptr, osize, nsize);
  }
  if (type_block) types_settle();
  if (thread_new) {
    thread_new = 0;
    rec_stack_thread_new(R.g);
  }
  tracked = ptr && rec_sample_has(sp, ptr);
  if (nsize && (ptr || nsize == sizeof(lua_State))) sp->gap -= (int64_t)nsize;
  stop = nsize && sp->gap <= 0 && sp->rest && rec_sample_stop(sp);
  hit = nsize && sp->gap <= 0;
  if (hit || tracked) return rec_alloc_sampled(r, ptr, osize, nsize, hit, tracked);
  if (R.sampled_ext) {
    if (ptr) rec_stack_skipped(R.g, ptr, osize, nsize);  /* a moved stack, a freed thread */
    else note_thread(ptr, nsize);
  }
  res = R.orig(R.orig_ud, ptr, osize, nsize);
  if (labels_on && (nsize ? !ptr && nsize == sizeof(lua_State) : osize == sizeof(lua_State)))
    labels_track(ptr, osize, nsize, res, labels_now(R.g));  /* a thread made or freed */
  if (stop) {  /* hand the buffer over if the flush interval passed */
    rec_buf_clock(&r->st.out);
    if (__builtin_expect(r->st.out.err != 0, 0)) {
      session_kill(r);
      if (R.stacks_dirty) stacks_update();
    }
  }
  return res;
}

/* The wrapper. A sampled recording's unwritten calls pass straight
** through: an allocation costs a compare and a subtraction from the gap,
** a free two compares and a load from the sampler's filter. Everything
** else goes to rec_alloc_slow. Only tail calls: no stack frame
** (-momit-leaf-frame-pointer, BUILD). */
static void *rec_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  RecSampler *sp = &sampler;
  (void)ud;
  if (!ptr) {
    if (nsize != sizeof(lua_State) && __builtin_expect((sp->gap -= (int64_t)nsize) > 0, 1))
      return R.orig(R.orig_ud, ptr, osize, nsize);
  } else if (!nsize && osize != sizeof(lua_State) && !rec_sample_maybe(sp, ptr)) {
    return R.orig(R.orig_ud, ptr, osize, nsize);
  }
  return rec_alloc_slow(ptr, osize, nsize);
}

/* Our two wrappers: either records every session right, the other one
** only costs more. */
static int ours(lua_Alloc f)
{
  return f == rec_alloc || f == rec_alloc_exact;
}

/* Puts a wrapper on L's VM, once, and makes ours the one for the session
** starting (our other one, where it is on the VM, is swapped): rec_alloc
** for a sampled one (its fast path), rec_alloc_exact for an exact one. */
REC_API void wrap(lua_State *L, int sampled)
{
  void *ud;
  lua_Alloc want = sampled ? rec_alloc : rec_alloc_exact;
  lua_Alloc cur = lua_getallocf(L, &ud);
  /* Our own wrapper, put back by a host that kept it from an earlier
  ** recording, still wraps R.orig: wrapping it again would recurse. A
  ** host's wrapper around ours stays, and so does ours inside it. */
  if (!R.wrapped && !ours(cur)) {
    R.orig = cur;
    R.orig_ud = ud;
    cur = NULL;
  }
  if (!cur || (ours(cur) && cur != want)) lua_setallocf(L, want, NULL);
  R.wrapped = 1;
}

REC_API void unwrap(lua_State *L)
{
  void *ud;
  if (R.wrapped && ours(lua_getallocf(L, &ud))) {
    lua_setallocf(L, R.orig, R.orig_ud);
    R.wrapped = 0;
  }
  /* Else someone wrapped our wrapper: it must stay, as a pass-through. */
}
