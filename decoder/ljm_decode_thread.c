/* ljm_decode_thread.c -- ljm_decode with the decoding in a second thread.
**
** The parse thread runs ljm_decode with callbacks that record each call
** (events, strings and all) into slots of a small ring; the calling thread
** replays the records to the real callbacks in the same order. The stop
** polls are recorded too and answered by the replay: a refusal drops every
** record after it, tells the parse thread to stop at its next poll, and is
** reported exactly as ljm_decode reports it. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljm_decode_int.h"
#include "ljm_decoder.h"

#define NSLOT 4            /* slots in the ring; a side that waits sleeps until half is ready */
#define SLOT_EVENTS 1024   /* events per slot (the ring is the thread's memory cost) */
#define SLOT_RECS 2048     /* records per slot (a symbol table is one record per entry) */
#define SLOT_TEXT (8u << 10)   /* a slot is handed over once its strings pass this */
#define SPINS 20           /* waits poll this briefly before sleeping: a long spin
                           ** takes the CPU the other thread needs when CPUs are busy */
#define NO_TRAILING UINT64_MAX /* ljm_decode never wrote 'trailing' (it failed at once) */

typedef enum RecKind {
  R_EVENTS, R_EVENT, R_VERSIONS, R_PROTO, R_CFUNC, R_TRACE, R_FLAGS, R_NODE,
  R_RSS, R_TIME, R_PROGRESS, R_POLL, R_NOMEM
} RecKind;

/* One recorded call. Strings are offsets into the slot's text; events are
** indexes into its event array. */
typedef struct Rec {
  uint8_t kind, flag;  /* flag: in_events, or a node's frame kind */
  uint32_t n;          /* events of R_EVENTS, or a node's id */
  uint64_t a, b, c, d;
} Rec;

typedef struct Slot {
  LjmRawEvent ev[SLOT_EVENTS];
  Rec rec[SLOT_RECS];
  char *text;
  size_t ntext, captext;
  uint32_t nev, nrec;
  int last;            /* the decoder has returned: nothing follows */
} Slot;

typedef struct Pipe {
  /* Slots handed over and given back. The waits sleep on the mutex only
  ** when the ring is full or empty, flagged so the other side signals.
  ** What each side writes has a cache line of its own. */
  _Alignas(64) _Atomic uint64_t head;  /* parse thread */
  _Atomic int pwait;
  _Alignas(64) _Atomic uint64_t tail;  /* calling thread */
  _Atomic int cwait;
  _Atomic int stop;          /* the consumer refused: stop at the next poll */
  uint64_t t;
  _Alignas(64) pthread_mutex_t mu;
  pthread_cond_t cv_free, cv_full;
  Slot *slot[NSLOT];
  /* Parse thread. */
  const LjmCallbacks *user;  /* which calls to record */
  LjmCallbacks rec_cb;
  LjmInput *in;
  Slot *cur;
  uint64_t h;
  LjmStatus st;
  LjmDiag diag;
  uint64_t bytes, trailing;
} Pipe;

/* -- The ring --------------------------------------------------------------- */

static Slot *slot_reset(Slot *s)
{
  s->nev = s->nrec = 0;
  s->ntext = 0;
  s->last = 0;
  return s;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  sched_yield();
#endif
}

/* Slots ready for the consumer, free for the parse thread. */
static uint64_t ready(Pipe *p) { return atomic_load(&p->head) - p->t; }
static uint64_t room(Pipe *p) { return NSLOT - (p->h - atomic_load(&p->tail)); }

/* Hands the current slot over and takes the next one (not after the last).
** A wake-up costs a system call: the consumer sleeps until half the ring
** is ready (or the last slot is), so it is woken once per few slots. */
static void publish(Pipe *p, int last)
{
  p->cur->last = last;
  uint64_t h = ++p->h;
  atomic_store(&p->head, h);
  if (atomic_load(&p->cwait) && (last || h - atomic_load(&p->tail) >= NSLOT / 2)) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_signal(&p->cv_full);
    pthread_mutex_unlock(&p->mu);
  }
  if (last) return;
  if (room(p) == 0) {  /* full: poll a while, then sleep until half is free */
    for (int i = 0; i < SPINS && room(p) == 0; i++) relax();
    if (room(p) == 0) {
      pthread_mutex_lock(&p->mu);
      atomic_store(&p->pwait, 1);
      while (room(p) < NSLOT / 2) pthread_cond_wait(&p->cv_free, &p->mu);
      atomic_store(&p->pwait, 0);
      pthread_mutex_unlock(&p->mu);
    }
  }
  p->cur = slot_reset(p->slot[h % NSLOT]);
}

/* Whether a sleeping consumer should run: half the ring is ready, or the
** last slot is (its flag is set before head moves past it). */
static int enough(Pipe *p)
{
  uint64_t n = ready(p);
  return n >= NSLOT / 2 || (n > 0 && p->slot[(p->t + n - 1) % NSLOT]->last);
}

/* The next slot to replay, once the parse thread has handed it over. */
static Slot *take(Pipe *p)
{
  if (ready(p) == 0) {
    for (int i = 0; i < SPINS && ready(p) == 0; i++) relax();
    if (ready(p) == 0) {
      pthread_mutex_lock(&p->mu);
      atomic_store(&p->cwait, 1);
      while (!enough(p)) pthread_cond_wait(&p->cv_full, &p->mu);
      atomic_store(&p->cwait, 0);
      pthread_mutex_unlock(&p->mu);
    }
  }
  return p->slot[p->t % NSLOT];
}

static void give_back(Pipe *p)
{
  uint64_t t = ++p->t;
  atomic_store(&p->tail, t);
  if (atomic_load(&p->pwait) && NSLOT - (atomic_load(&p->head) - t) >= NSLOT / 2) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_signal(&p->cv_free);
    pthread_mutex_unlock(&p->mu);
  }
}

/* -- Recording (parse thread) ---------------------------------------------- */

static Rec *rec_add(Pipe *p, RecKind kind)
{
  if (p->cur->nrec == SLOT_RECS || p->cur->ntext >= SLOT_TEXT) publish(p, 0);
  Rec *r = &p->cur->rec[p->cur->nrec++];
  memset(r, 0, sizeof(*r));
  r->kind = (uint8_t)kind;
  return r;
}

/* Copies a string into the current slot (NUL-terminated, as the decoder's
** are); returns its offset, or SIZE_MAX when out of memory. */
static size_t text_add(Pipe *p, const char *s, size_t len)
{
  Slot *sl = p->cur;
  if (len >= SIZE_MAX / 2 - sl->ntext) return SIZE_MAX;
  if (sl->ntext + len + 1 > sl->captext) {
    size_t cap = sl->captext ? sl->captext : 4096;
    while (cap < sl->ntext + len + 1) cap *= 2;
    char *t = realloc(sl->text, cap);
    if (!t) return SIZE_MAX;
    sl->text = t;
    sl->captext = cap;
  }
  size_t at = sl->ntext;
  memcpy(sl->text + at, s, len);
  sl->text[at + len] = '\0';
  sl->ntext += len + 1;
  return at;
}

/* A string that could not be copied: the replay stops there (R_NOMEM). */
static void rec_string(Pipe *p, RecKind kind, uint64_t a, const char *s, size_t len,
                       uint64_t d, int in_events)
{
  Rec *r = rec_add(p, kind);
  size_t at = text_add(p, s, len);
  if (at == SIZE_MAX) {
    r->kind = R_NOMEM;
    atomic_store(&p->stop, 1);
    return;
  }
  r->flag = (uint8_t)in_events;
  r->a = a;
  r->b = at;
  r->c = len;
  r->d = d;
}

static void rec_versions(void *ud, int ljs, int ljm)
{
  Rec *r = rec_add(ud, R_VERSIONS);
  r->a = (uint64_t)ljs;
  r->b = (uint64_t)ljm;
}

static void rec_proto(void *ud, uint64_t addr, const char *chunk, size_t len,
                      uint64_t firstline, int in_events)
{
  rec_string(ud, R_PROTO, addr, chunk, len, firstline, in_events);
}

static void rec_cfunc(void *ud, uint64_t addr, const char *name, size_t len, int in_events)
{
  rec_string(ud, R_CFUNC, addr, name, len, 0, in_events);
}

static void rec_trace(void *ud, uint64_t traceno, uint64_t proto, uint64_t line,
                      int in_events)
{
  Rec *r = rec_add(ud, R_TRACE);
  r->flag = (uint8_t)in_events;
  r->a = traceno;
  r->b = proto;
  r->c = line;
}

/* Events go into the slot's array; a batch never straddles two slots. */
static void rec_events(void *ud, const LjmRawEvent *evs, size_t n)
{
  Pipe *p = ud;
  if (p->cur->nev + n > SLOT_EVENTS) publish(p, 0);
  Rec *r = rec_add(p, R_EVENTS);
  r->a = p->cur->nev;
  r->n = (uint32_t)n;
  memcpy(&p->cur->ev[p->cur->nev], evs, n * sizeof(*evs));
  p->cur->nev += (uint32_t)n;
}

static void rec_event(void *ud, const LjmRawEvent *ev)
{
  Pipe *p = ud;
  if (p->cur->nev == SLOT_EVENTS) publish(p, 0);
  Rec *r = rec_add(p, R_EVENT);
  r->a = p->cur->nev;
  p->cur->ev[p->cur->nev++] = *ev;
}

static void rec_progress(void *ud, uint64_t offset)
{
  rec_add(ud, R_PROGRESS)->a = offset;
}

static void rec_flags(void *ud, unsigned flags)
{
  rec_add(ud, R_FLAGS)->a = flags;
}

static void rec_node(void *ud, uint32_t id, uint32_t parent, const LjmRawFrame *f)
{
  Rec *r = rec_add(ud, R_NODE);
  r->n = id;
  r->flag = (uint8_t)f->kind;
  r->a = parent;
  r->b = f->addr;
  r->c = f->line;
  r->d = f->traceno;
}

static void rec_rss(void *ud, uint64_t time, uint64_t bytes)
{
  Rec *r = rec_add(ud, R_RSS);
  r->a = time;
  r->b = bytes;
}

static void rec_time(void *ud, uint64_t usec)
{
  rec_add(ud, R_TIME)->a = usec;
}

/* Where ljm_decode would ask stopped(): the consumer will, at this record. */
static int rec_poll(void *ud, uint64_t item, uint64_t reached)
{
  Pipe *p = ud;
  if (p->user->stopped) {
    Rec *r = rec_add(p, R_POLL);
    r->a = item;
    r->b = reached;
  }
  return atomic_load_explicit(&p->stop, memory_order_relaxed);
}

static void *parse_main(void *arg)
{
  Pipe *p = arg;
  p->trailing = NO_TRAILING;
  p->st = ljm_decode_polled(p->in, &p->rec_cb, p, rec_poll, &p->diag, &p->bytes,
                            &p->trailing);
  publish(p, 1);
  return NULL;
}

/* Records only what the consumer takes; the decoder batches events only
** when the consumer does, so the calls come in the same order and sizes. */
static void rec_callbacks(const LjmCallbacks *u, LjmCallbacks *r)
{
  memset(r, 0, sizeof(*r));
  if (u->on_versions) r->on_versions = rec_versions;
  if (u->on_proto) r->on_proto = rec_proto;
  if (u->on_cfunc) r->on_cfunc = rec_cfunc;
  if (u->on_trace) r->on_trace = rec_trace;
  if (u->on_events) r->on_events = rec_events;
  else if (u->on_event) r->on_event = rec_event;
  if (u->on_progress) r->on_progress = rec_progress;
  if (u->on_flags) r->on_flags = rec_flags;
  if (u->on_stack_node) r->on_stack_node = rec_node;
  if (u->on_rss) r->on_rss = rec_rss;
  if (u->on_time) r->on_time = rec_time;
}

/* -- Replay (calling thread) ------------------------------------------------ */

/* How the replay ended early: a refusal at a poll, or a string not copied. */
typedef struct Stop {
  int why;   /* 0: not stopped; R_POLL or R_NOMEM */
  uint64_t item, reached;
} Stop;

static void replay(const Slot *s, const LjmCallbacks *cb, void *ud, Stop *stop)
{
  for (uint32_t i = 0; i < s->nrec; i++) {
    const Rec *r = &s->rec[i];
    switch ((RecKind)r->kind) {
    case R_EVENTS: cb->on_events(ud, &s->ev[r->a], r->n); break;
    case R_EVENT: cb->on_event(ud, &s->ev[r->a]); break;
    case R_VERSIONS: cb->on_versions(ud, (int)r->a, (int)r->b); break;
    case R_PROTO: cb->on_proto(ud, r->a, s->text + r->b, (size_t)r->c, r->d, r->flag); break;
    case R_CFUNC: cb->on_cfunc(ud, r->a, s->text + r->b, (size_t)r->c, r->flag); break;
    case R_TRACE: cb->on_trace(ud, r->a, r->b, r->c, r->flag); break;
    case R_FLAGS: cb->on_flags(ud, (unsigned)r->a); break;
    case R_NODE: {
      LjmRawFrame f = { (LjmFrameKind)r->flag, r->b, r->c, r->d };
      cb->on_stack_node(ud, r->n, (uint32_t)r->a, &f);
      break;
    }
    case R_RSS: cb->on_rss(ud, r->a, r->b); break;
    case R_TIME: cb->on_time(ud, r->a); break;
    case R_PROGRESS: cb->on_progress(ud, r->a); break;
    case R_POLL:
      if (cb->stopped(ud)) *stop = (Stop){ R_POLL, r->a, r->b };
      break;
    case R_NOMEM: *stop = (Stop){ R_NOMEM, 0, 0 }; break;
    }
    if (stop->why) return;
  }
}

static Pipe *pipe_new(void)
{
  Pipe *p = aligned_alloc(64, sizeof(*p));
  if (!p) return NULL;
  memset(p, 0, sizeof(*p));
  int ok = 1;
  for (int i = 0; i < NSLOT; i++) {  /* malloc: pages are touched as slots fill */
    if ((p->slot[i] = malloc(sizeof(Slot)))) {
      p->slot[i]->text = NULL;
      p->slot[i]->captext = 0;
    }
    ok &= p->slot[i] != NULL;
  }
  if (ok && pthread_mutex_init(&p->mu, NULL) == 0) {
    if (pthread_cond_init(&p->cv_free, NULL) == 0) {
      if (pthread_cond_init(&p->cv_full, NULL) == 0) return p;
      pthread_cond_destroy(&p->cv_free);
    }
    pthread_mutex_destroy(&p->mu);
  }
  for (int i = 0; i < NSLOT; i++) free(p->slot[i]);
  free(p);
  return NULL;
}

static void pipe_free(Pipe *p)
{
  pthread_cond_destroy(&p->cv_full);
  pthread_cond_destroy(&p->cv_free);
  pthread_mutex_destroy(&p->mu);
  for (int i = 0; i < NSLOT; i++) {
    free(p->slot[i]->text);
    free(p->slot[i]);
  }
  free(p);
}

LjmStatus ljm_decode_threaded(LjmInput *in, const LjmCallbacks *cb, void *ud,
                              LjmDiag *diag, uint64_t *bytes, uint64_t *trailing)
{
  static const LjmCallbacks none;
  if (!cb) cb = &none;
  Pipe *p = pipe_new();
  if (!p) return ljm_decode(in, cb, ud, diag, bytes, trailing);
  p->user = cb;
  p->in = in;
  rec_callbacks(cb, &p->rec_cb);
  p->cur = slot_reset(p->slot[0]);
  pthread_t th;
  if (pthread_create(&th, NULL, parse_main, p) != 0) {
    pipe_free(p);
    return ljm_decode(in, cb, ud, diag, bytes, trailing);
  }
  Stop stop = { 0, 0, 0 };
  for (;;) {
    const Slot *s = take(p);
    int last = s->last;
    if (!stop.why) {
      replay(s, cb, ud, &stop);
      if (stop.why) atomic_store(&p->stop, 1);
    }
    give_back(p);
    if (last) break;
  }
  pthread_join(th, NULL);

  LjmDiag scratch;
  if (!diag) diag = &scratch;
  LjmStatus st = p->st;
  *diag = p->diag;
  if (stop.why) {  /* what ljm_decode reports when stopped at that poll */
    st = LJM_ERROR;
    memset(diag, 0, sizeof(*diag));
    if (stop.why == R_POLL) {
      diag->offset = stop.item;
      snprintf(diag->msg, sizeof(diag->msg), "decoding stopped by the consumer");
    } else {  /* where the parse thread stopped: the name's offset is not kept */
      stop.reached = p->bytes;
      diag->offset = p->bytes;
      snprintf(diag->msg, sizeof(diag->msg), "out of memory");
    }
    if (bytes) *bytes = stop.reached;
    if (trailing) *trailing = 0;
  } else if (p->trailing != NO_TRAILING) {
    if (bytes) *bytes = p->bytes;
    if (trailing) *trailing = p->trailing;
  }
  pipe_free(p);
  return st;
}
