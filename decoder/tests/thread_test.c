/* thread_test.c -- ljm_decode_threaded against ljm_decode on every stream it
** is given (files, or directories of .ljm files): whole, cut at many points,
** with bytes overwritten, and with consumers that refuse an event part way.
** Each run hashes every callback and its arguments in order; both ways must
** give the same hash, status, diag, bytes and trailing bytes, and nothing may
** be called after a refusal.
**
**   thread_test PATH...
*/
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoder/ljm_decoder.h"
#include "decoder/tests/check.h"

/* What a consumer saw: a running hash of every call, and counts. */
typedef struct Seen {
  uint64_t hash, calls, events;
  uint64_t refuse_at;   /* stopped() says yes once this many events were seen */
  int refused, late;    /* late: calls after the refusal */
} Seen;

static void mix(Seen *s, uint64_t v)
{
  s->hash = (s->hash ^ v) * 0x100000001b3ull;
  s->hash ^= s->hash >> 29;
}

static void mix_bytes(Seen *s, const char *p, size_t n)
{
  mix(s, n);
  for (size_t i = 0; i < n; i++) mix(s, (uint8_t)p[i]);
  mix(s, (uint8_t)p[n]);  /* strings are NUL-terminated */
}

static void call(Seen *s, uint64_t tag)
{
  if (s->refused) s->late++;
  s->calls++;
  mix(s, tag);
}

static void on_versions(void *ud, int ljs, int ljm)
{
  call(ud, 1);
  mix(ud, (uint64_t)ljs);
  mix(ud, (uint64_t)ljm);
}

static void on_proto(void *ud, uint64_t addr, const char *chunk, size_t len,
                     uint64_t firstline, int in_events)
{
  call(ud, 2);
  mix(ud, addr);
  mix_bytes(ud, chunk, len);
  mix(ud, firstline);
  mix(ud, (uint64_t)in_events);
}

static void on_cfunc(void *ud, uint64_t addr, const char *name, size_t len, int in_events)
{
  call(ud, 3);
  mix(ud, addr);
  mix_bytes(ud, name, len);
  mix(ud, (uint64_t)in_events);
}

static void on_trace(void *ud, uint64_t traceno, uint64_t proto, uint64_t line, int in_events)
{
  call(ud, 4);
  mix(ud, traceno);
  mix(ud, proto);
  mix(ud, line);
  mix(ud, (uint64_t)in_events);
}

static void mix_event(Seen *s, const LjmRawEvent *e)
{
  uint64_t f[] = { e->kind, e->loc.source, e->loc.addr, e->loc.line, e->loc.traceno,
                   e->oaddr, e->osize, e->naddr, e->nsize, e->offset, e->stack, e->time };
  for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) mix(s, f[i]);
  s->events++;
}

static void on_event(void *ud, const LjmRawEvent *ev)
{
  call(ud, 5);
  mix_event(ud, ev);
}

static void on_events(void *ud, const LjmRawEvent *evs, size_t n)
{
  call(ud, 6);
  mix(ud, n);
  for (size_t i = 0; i < n; i++) mix_event(ud, &evs[i]);
}

static int stopped(void *ud)
{
  Seen *s = ud;
  call(s, 7);
  if (s->events >= s->refuse_at) s->refused = 1;
  return s->refused;
}

static void on_progress(void *ud, uint64_t offset)
{
  call(ud, 8);
  mix(ud, offset);
}

static void on_flags(void *ud, unsigned flags)
{
  call(ud, 9);
  mix(ud, flags);
}

static void on_stack_node(void *ud, uint32_t id, uint32_t parent, const LjmRawFrame *f)
{
  call(ud, 10);
  mix(ud, id);
  mix(ud, parent);
  mix(ud, f->kind);
  mix(ud, f->addr);
  mix(ud, f->line);
  mix(ud, f->traceno);
}

static void on_rss(void *ud, uint64_t time, uint64_t bytes)
{
  call(ud, 11);
  mix(ud, time);
  mix(ud, bytes);
}

static void on_time(void *ud, uint64_t usec)
{
  call(ud, 12);
  mix(ud, usec);
}

/* The consumers: which callbacks they set. */
enum { ALL, ONE_BY_ONE, NO_STOP, POLL_ONLY, NONE, NMODES };

static void callbacks(int mode, LjmCallbacks *cb)
{
  memset(cb, 0, sizeof(*cb));
  if (mode == NONE) return;
  cb->stopped = stopped;
  if (mode == POLL_ONLY) return;
  *cb = (LjmCallbacks){ on_versions, on_proto, on_cfunc, on_trace, on_event, on_events,
                        stopped, on_progress, on_flags, on_stack_node, on_rss, on_time };
  if (mode == ONE_BY_ONE) cb->on_events = NULL;
  if (mode == NO_STOP) cb->stopped = NULL;
}

typedef struct Run {
  LjmStatus st;
  LjmDiag diag;
  uint64_t bytes, trailing;
  Seen seen;
} Run;

static void run(int threaded, const uint8_t *p, size_t n, int mode, uint64_t refuse_at,
                Run *r)
{
  LjmCallbacks cb;
  callbacks(mode, &cb);
  memset(r, threaded ? 0x55 : 0xaa, sizeof(*r));  /* all of it must be written alike */
  memset(&r->seen, 0, sizeof(r->seen));
  r->seen.refuse_at = refuse_at;
  r->bytes = r->trailing = 777;
  LjmInput *in = ljm_input_mem(p, n);
  LjmStatus (*dec)(LjmInput *, const LjmCallbacks *, void *, LjmDiag *, uint64_t *,
                   uint64_t *) = threaded ? ljm_decode_threaded : ljm_decode;
  r->st = dec(in, mode == NONE ? NULL : &cb, &r->seen, &r->diag, &r->bytes, &r->trailing);
  ljm_input_close(in);
}

static int compared, refusals;

/* Both ways on one input; returns the number of events delivered. */
static uint64_t both(const char *name, const char *what, const uint8_t *p, size_t n, int mode,
                     uint64_t refuse_at)
{
  Run a, b;
  run(0, p, n, mode, refuse_at, &a);
  run(1, p, n, mode, refuse_at, &b);
  int same = a.st == b.st && memcmp(&a.diag, &b.diag, sizeof(a.diag)) == 0 &&
             a.bytes == b.bytes && a.trailing == b.trailing && a.seen.hash == b.seen.hash &&
             a.seen.calls == b.seen.calls && a.seen.events == b.seen.events;
  CHECK(same);
  CHECK(b.seen.late == 0 && a.seen.late == 0);
  if (!same)
    fprintf(stderr, "%s (%s, mode %d, refuse at %llu): status %d/%d, byte %llu/%llu '%s'/'%s', "
            "bytes %llu/%llu, trailing %llu/%llu, calls %llu/%llu, events %llu/%llu\n",
            name, what, mode, (unsigned long long)refuse_at, a.st, b.st,
            (unsigned long long)a.diag.offset, (unsigned long long)b.diag.offset, a.diag.msg,
            b.diag.msg, (unsigned long long)a.bytes, (unsigned long long)b.bytes,
            (unsigned long long)a.trailing, (unsigned long long)b.trailing,
            (unsigned long long)a.seen.calls, (unsigned long long)b.seen.calls,
            (unsigned long long)a.seen.events, (unsigned long long)b.seen.events);
  compared++;
  refusals += a.seen.refused;
  return a.seen.events;
}

static void one_stream(const char *name, uint8_t *p, size_t n)
{
  uint64_t events = 0;
  for (int mode = 0; mode < NMODES; mode++) {
    uint64_t e = both(name, "whole", p, n, mode, UINT64_MAX);
    if (mode == ALL) events = e;
  }
  /* Consumers that refuse an event: at once, around a batch of 64 and a
  ** slot of 1024, late. */
  uint64_t at[] = { 0, 1, 63, 64, 65, 1023, 1024, 1025, 4095, 4097, events / 2, events - 1, events };
  for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
    both(name, "refusing", p, n, ALL, at[i]);
    if (at[i] < 200) both(name, "refusing", p, n, ONE_BY_ONE, at[i]);
  }
  /* Cut: at every byte of a small stream, at a few dozen points of a big one. */
  size_t step = n <= 2048 ? 1 : n / 40;
  for (size_t cut = 0; cut < n; cut += step) {
    both(name, "cut", p, cut, ALL, UINT64_MAX);
    if (n <= 2048 || cut < 64) both(name, "cut", p, cut, ONE_BY_ONE, 5);
  }
  /* Bytes overwritten: bad headers, huge numbers, a premature end marker. */
  static const uint8_t junk[] = { 0x14, 0xff, 0x80, 0x20, 0x00 };
  size_t spots = n < 16 ? n : 16;
  for (size_t k = 0; k < spots; k++) {
    size_t at_byte = n < 16 ? k : (k * 7919 + n / 3) % n;
    uint8_t keep = p[at_byte];
    for (size_t j = 0; j < sizeof(junk); j++) {
      p[at_byte] = junk[j];
      both(name, "overwritten", p, n, ALL, UINT64_MAX);
    }
    p[at_byte] = keep;
  }
}

static void one_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return;
  uint8_t *p = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 4096;
      p = realloc(p, cap);
    }
    size_t got = fread(p + n, 1, cap - n, f);
    if (!got) break;
    n += got;
  }
  fclose(f);
  one_stream(path, p ? p : (uint8_t *)"", n);
  free(p);
}

/* The same through a file input, which the parse thread reads. */
static void through_file(const char *path)
{
  Run a, b;
  for (int threaded = 0; threaded < 2; threaded++) {
    Run *r = threaded ? &b : &a;
    LjmCallbacks cb;
    callbacks(ALL, &cb);
    memset(r, 0, sizeof(*r));
    r->seen.refuse_at = UINT64_MAX;
    LjmInput *in = ljm_input_open(path, &r->diag);
    CHECK(in != NULL);
    if (!in) return;
    r->st = (threaded ? ljm_decode_threaded : ljm_decode)(in, &cb, &r->seen, &r->diag,
                                                          &r->bytes, &r->trailing);
    if (r->st == LJM_OK) CHECK(ljm_input_position(in) == (uint64_t)ljm_input_size(in));
    ljm_input_close(in);
  }
  CHECK(a.st == b.st && a.bytes == b.bytes && a.seen.hash == b.seen.hash);
}

static int is_ljm(const char *name)
{
  size_t n = strlen(name);
  return n > 4 && strcmp(name + n - 4, ".ljm") == 0;
}

int main(int argc, char **argv)
{
  int files = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    CHECK(stat(argv[i], &st) == 0);
    if (!S_ISDIR(st.st_mode)) {
      one_file(argv[i]);
      through_file(argv[i]);
      files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
      if (!is_ljm(e->d_name)) continue;
      char path[4096];
      snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
      one_file(path);
      through_file(path);
      files++;
    }
    if (d) closedir(d);
  }
  CHECK(files > 0);
  CHECK(refusals > 0);
  printf("%d files, %d comparisons, %d with a refusal\n", files, compared, refusals);
  return check_done("thread_test");
}
