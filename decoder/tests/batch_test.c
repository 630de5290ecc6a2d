/* batch_test.c -- the decoder's fast path for batched events (on_events)
** against its checked path (on_event alone) on every stream it is given
** (files, or directories of .ljm files): whole, cut at many points, with
** bytes overwritten, and on built streams whose numbers take 1 to 10 bytes
** (non-minimal ULEB128 too) around the buffer's end, one with stack
** selections between its events. Each run hashes every
** event and every other call in order (not the stop polls and progress
** calls, which batching moves); both ways must give the same hash, status,
** diag, bytes and trailing bytes. A batched consumer that refuses stops
** decoding with nothing called after it, at the last event it was given.
**
**   batch_test PATH...
*/
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoder/ljm_decoder.h"
#include "decoder/tests/check.h"
#include "decoder/tests/stream_builder.h"

/* What a consumer saw: a running hash of every call, and counts. */
typedef struct Seen {
  uint64_t hash, calls, events;
  uint64_t refuse_at;   /* stopped() says yes once this many events were seen */
  uint64_t last_offset; /* of the last event handed over in a batch */
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
                   e->oaddr, e->osize, e->naddr, e->nsize, e->offset, e->stack, e->time, (uint64_t)e->nosample,
                   e->labels };
  for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) mix(s, f[i]);
  s->events++;
}

/* Events count as calls of their own, batched or not. */
static void on_event(void *ud, const LjmRawEvent *ev)
{
  call(ud, 5);
  mix_event(ud, ev);
}

static void on_events(void *ud, const LjmRawEvent *evs, size_t n)
{
  Seen *s = ud;
  if (s->refused) s->late++;
  for (size_t i = 0; i < n; i++) on_event(ud, &evs[i]);
  s->last_offset = n ? evs[n - 1].offset : s->last_offset;
}

/* Polls and progress are not hashed: batching changes when they come. */
static int stopped(void *ud)
{
  Seen *s = ud;
  if (s->refused) s->late++;
  if (s->events >= s->refuse_at) s->refused = 1;
  return s->refused;
}

static void on_progress(void *ud, uint64_t offset)
{
  (void)ud;
  (void)offset;
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

static void on_node_name(void *ud, uint32_t id, unsigned what, const char *name, size_t len)
{
  call(ud, 13);
  mix(ud, id);
  mix(ud, what);
  for (size_t i = 0; i < len; i++) mix(ud, (unsigned char)name[i]);
}

static void on_long_string(void *ud, uint64_t offset, uint64_t len)
{
  Seen *s = ud;
  mix(s, offset);
  mix(s, len);
}

static void on_sample_rate(void *ud, uint64_t rate)
{
  mix(ud, rate);
}

static void on_proto_name(void *ud, uint64_t addr, const char *name, size_t len)
{
  call(ud, 14);
  mix(ud, addr);
  for (size_t i = 0; i < len; i++) mix(ud, (unsigned char)name[i]);
}

static void on_label_set(void *ud, uint32_t id, const LjmLabel *l, unsigned n)
{
  call(ud, 15);
  mix(ud, id);
  for (unsigned i = 0; i < n; i++) {
    for (size_t k = 0; k < l[i].klen; k++) mix(ud, (unsigned char)l[i].key[k]);
    for (size_t k = 0; k < l[i].vlen; k++) mix(ud, (unsigned char)l[i].value[k]);
  }
}

static void on_labels_folded(void *ud, uint64_t folded)
{
  call(ud, 16);
  mix(ud, folded);
}

/* A consumer of every call, batched or one by one. */
static void callbacks(int batched, LjmCallbacks *cb)
{
  *cb = (LjmCallbacks){ on_versions, on_proto, on_cfunc, on_trace, on_event, on_events,
                        stopped, on_progress, on_flags, on_stack_node, on_rss, on_time,
                        on_node_name, on_long_string, on_sample_rate, on_proto_name,
                        on_label_set, on_labels_folded };
  if (!batched) cb->on_events = NULL;
}

typedef struct Run {
  LjmStatus st;
  LjmDiag diag;
  uint64_t bytes, trailing;
  Seen seen;
} Run;

static void run(int batched, const uint8_t *p, size_t n, uint64_t refuse_at, Run *r)
{
  LjmCallbacks cb;
  callbacks(batched, &cb);
  memset(r, batched ? 0x55 : 0xaa, sizeof(*r));  /* all of it must be written alike */
  memset(&r->seen, 0, sizeof(r->seen));
  r->seen.refuse_at = refuse_at;
  r->bytes = r->trailing = 777;
  LjmInput *in = ljm_input_mem(p, n);
  r->st = ljm_decode(in, &cb, &r->seen, &r->diag, &r->bytes, &r->trailing);
  ljm_input_close(in);
}

static int compared, refusals, fast_events;

/* Both ways on one input; returns the number of events delivered. */
static uint64_t both(const char *name, const char *what, const uint8_t *p, size_t n)
{
  Run a, b;
  run(0, p, n, UINT64_MAX, &a);
  run(1, p, n, UINT64_MAX, &b);
  int same = a.st == b.st && memcmp(&a.diag, &b.diag, sizeof(a.diag)) == 0 &&
             a.bytes == b.bytes && a.trailing == b.trailing && a.seen.hash == b.seen.hash &&
             a.seen.calls == b.seen.calls && a.seen.events == b.seen.events;
  CHECK(same);
  if (!same)
    fprintf(stderr, "%s (%s): status %d/%d, byte %llu/%llu '%s'/'%s', bytes %llu/%llu, "
            "trailing %llu/%llu, calls %llu/%llu, events %llu/%llu\n",
            name, what, a.st, b.st, (unsigned long long)a.diag.offset,
            (unsigned long long)b.diag.offset, a.diag.msg, b.diag.msg,
            (unsigned long long)a.bytes, (unsigned long long)b.bytes,
            (unsigned long long)a.trailing, (unsigned long long)b.trailing,
            (unsigned long long)a.seen.calls, (unsigned long long)b.seen.calls,
            (unsigned long long)a.seen.events, (unsigned long long)b.seen.events);
  compared++;
  fast_events += (int)b.seen.events;
  return a.seen.events;
}

/* A batched consumer refusing after 'at' events: decoding stops with the
** stop message at the last event it was handed, and nothing comes after. */
static void refusing(const char *name, const uint8_t *p, size_t n, uint64_t at)
{
  Run r;
  run(1, p, n, at, &r);
  CHECK(r.seen.late == 0);
  if (!r.seen.refused) return;
  refusals++;
  CHECK(r.st == LJM_ERROR && r.diag.offset == r.seen.last_offset &&
        strcmp(r.diag.msg, "decoding stopped by the consumer") == 0);
  if (r.st != LJM_ERROR || r.diag.offset != r.seen.last_offset)
    fprintf(stderr, "%s (refusing at %llu): status %d, byte %llu '%s', last event at %llu\n",
            name, (unsigned long long)at, r.st, (unsigned long long)r.diag.offset, r.diag.msg,
            (unsigned long long)r.seen.last_offset);
}

static void one_stream(const char *name, uint8_t *p, size_t n)
{
  uint64_t events = both(name, "whole", p, n);
  uint64_t at[] = { 0, 1, 63, 64, 65, 1000, events / 2, events - 1, events };
  for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) refusing(name, p, n, at[i]);
  /* Cut: at every byte of a small stream, at a few dozen points of a big one. */
  size_t step = n <= 2048 ? 1 : n / 40;
  for (size_t cut = 0; cut < n; cut += step) both(name, "cut", p, cut);
  /* Bytes overwritten: bad headers, huge numbers, a premature end marker. */
  static const uint8_t junk[] = { 0x14, 0xff, 0x80, 0x20, 0x00 };
  size_t spots = n < 16 ? n : 16;
  for (size_t k = 0; k < spots; k++) {
    size_t at_byte = n < 16 ? k : (k * 7919 + n / 3) % n;
    uint8_t keep = p[at_byte];
    for (size_t j = 0; j < sizeof(junk); j++) {
      p[at_byte] = junk[j];
      both(name, "overwritten", p, n);
    }
    p[at_byte] = keep;
  }
}

/* A number in exactly 'len' bytes (non-minimal when the value is small). */
static void uleb_len(Sbuf *b, uint64_t v, int len)
{
  for (int i = 0; i < len; i++) {
    uint8_t c = v & 0x7f;
    v >>= 7;
    sb_byte(b, (uint8_t)(c | (i + 1 < len ? 0x80 : 0)));
  }
}

/* Events of every kind and source whose numbers take 1 to 10 bytes, in
** each stream version: the fast path must hand the long ones, and events
** near the buffer's end, to the checked path and agree with it. */
static void built_streams(void)
{
  for (int ver = 1; ver <= 3; ver++) {
    Sbuf b = { 0 };
    sb_prologue(&b, "ljs", ver);
    sb_byte(&b, 0x80);
    sb_prologue(&b, "ljm", ver);
    uint32_t seed = 12345;
    for (int i = 0; i < 3000; i++) {
      seed = seed * 1103515245u + 12345u;
      static const uint8_t srcs[] = { 0x04, 0x08, 0x0C, 0x10 };
      uint8_t src = srcs[(seed >> 8) % (ver == 1 ? 3 : 4)];
      uint8_t kind = (uint8_t)(1 + (seed >> 12) % 3);
      int len = 1 + (int)((seed >> 16) % 10);  /* the length of one of its numbers */
      int which = (int)((seed >> 20) % 6);
      int k = 0;
      sb_byte(&b, (uint8_t)(src | kind));
      int nums = (src == 0x08 ? 2 : src == 0x04 ? 0 : (src == 0x10 && ver == 2) ? 2 : 1) +
                 (kind == 3 ? 4 : 2);
      for (int j = 0; j < nums; j++, k++)
        uleb_len(&b, (uint64_t)(seed >> (j * 3)) & 0xffff, k == which ? len : 1 + (j & 1));
    }
    sb_byte(&b, 0x80);
    char name[32];
    snprintf(name, sizeof(name), "built v%d", ver);
    one_stream(name, b.p, b.n);
    free(b.p);
  }
}

/* An extended stream (stacks): nodes, selections of them in numbers of 1 to
** 10 bytes between events, and last a selection of a node never defined
** (an error the checked path words). */
static void built_ext_stream(void)
{
  Sbuf b = { 0 };
  sb_prologue(&b, "ljs", 3);
  sb_byte(&b, 0x80);
  sb_bytes(&b, "ljm\x03\x01\0\0", 7);
  uint32_t seed = 777, nodes = 0;
  for (int i = 0; i < 3000; i++) {
    seed = seed * 1103515245u + 12345u;
    if (nodes < 50 && (seed >> 8) % 7 == 0) {  /* a node: parent, C frame */
      sb_byte(&b, 0x20);
      sb_uleb(&b, nodes ? (seed >> 12) % nodes : 0);
      sb_byte(&b, 0x02);
      sb_uleb(&b, 0x1000 + nodes);
      nodes++;
    }
    sb_byte(&b, 0x21);
    uleb_len(&b, nodes ? (seed >> 16) % (nodes + 1) : 0, 1 + (int)((seed >> 20) % 10));
    sb_byte(&b, 0x09);  /* Lua alloc */
    sb_uleb(&b, 0x100);
    sb_uleb(&b, i % 40);
    sb_uleb(&b, 0x10000 + 16 * (uint64_t)i);
    sb_uleb(&b, 32);
  }
  sb_byte(&b, 0x21);
  sb_uleb(&b, nodes + 1);
  for (int i = 0; i < 80; i++) sb_byte(&b, 0x05);  /* room for the fast path to look */
  sb_byte(&b, 0x80);
  one_stream("built extended", b.p, b.n);
  free(b.p);
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
      files++;
    }
    if (d) closedir(d);
  }
  built_streams();
  built_ext_stream();
  CHECK(files > 0);
  CHECK(refusals > 0);
  printf("%d files and 4 built streams, %d comparisons (%d events), %d refusals\n", files,
         compared, fast_events, refusals);
  return check_done("batch_test");
}
