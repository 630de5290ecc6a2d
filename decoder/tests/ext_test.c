/* ext_test.c -- the decoder on extended streams (decoder/EXTENSION.md):
** flags, stack nodes and selections delivered in order with each event's
** stack and time, and every malformed item an error at its offset; a cut
** inside an extension item is a truncation like any other. Allocation
** types (0x29): each event's, in both the checked and the fast path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ljm_decoder.h"
#include "decoder/tests/check.h"
#include "decoder/tests/stream_builder.h"

typedef struct Seen {
  unsigned flags;
  uint32_t nodes, parent[8];
  LjmFrameKind kind[8];
  uint32_t ev_stack[8];
  uint64_t ev_time[8], rss_time, rss_bytes, last_mark;
  size_t nev, order_ok;
  int nosample[8];
  uint8_t type[16];
  uint64_t rate;
} Seen;

static void on_rate(void *ud, uint64_t r) { ((Seen *)ud)->rate = r; }

static void on_flags(void *ud, unsigned flags) { ((Seen *)ud)->flags = flags; }

static void on_node(void *ud, uint32_t id, uint32_t parent, const LjmRawFrame *f)
{
  Seen *s = ud;
  if (id == s->nodes + 1 && id < 8) {
    s->parent[id] = parent;
    s->kind[id] = f->kind;
  }
  s->nodes = id;
}

static void on_event(void *ud, const LjmRawEvent *ev)
{
  Seen *s = ud;
  if (s->nev < 8) {
    s->ev_stack[s->nev] = ev->stack;
    s->ev_time[s->nev] = ev->time;
    s->nosample[s->nev] = ev->nosample;
  }
  if (s->nev < 16) s->type[s->nev] = ev->type;
  /* A node is delivered before any event that uses it. */
  s->order_ok += ev->stack <= s->nodes;
  s->nev++;
}

static void on_rss(void *ud, uint64_t t, uint64_t b)
{
  ((Seen *)ud)->rss_time = t;
  ((Seen *)ud)->rss_bytes = b;
}

static void on_time(void *ud, uint64_t t) { ((Seen *)ud)->last_mark = t; }

/* The same events in batches (the decoder's fast path). */
static void on_events(void *ud, const LjmRawEvent *evs, size_t n)
{
  for (size_t i = 0; i < n; i++) on_event(ud, &evs[i]);
}

/* Decodes b into s; batched: the events come in batches (the decoder's
** fast path), else one by one. */
static LjmStatus decode_as(Sbuf *b, Seen *s, LjmDiag *d, int batched)
{
  LjmCallbacks cb;
  memset(&cb, 0, sizeof(cb));
  memset(s, 0, sizeof(*s));
  cb.on_flags = on_flags;
  cb.on_stack_node = on_node;
  if (batched) cb.on_events = on_events;
  else cb.on_event = on_event;
  cb.on_rss = on_rss;
  cb.on_time = on_time;
  cb.on_sample_rate = on_rate;
  LjmInput *in = ljm_input_mem(b->p, b->n);
  LjmStatus st = ljm_decode(in, &cb, s, d, NULL, NULL);
  ljm_input_close(in);
  return st;
}

static LjmStatus decode(Sbuf *b, Seen *s, LjmDiag *d) { return decode_as(b, s, d, 0); }
static LjmStatus decode_batched(Sbuf *b, Seen *s, LjmDiag *d) { return decode_as(b, s, d, 1); }

/* Symbol table with one prototype, then an event section with flags. */
static void start(Sbuf *b, uint8_t flags)
{
  memset(b, 0, sizeof(*b));
  sb_prologue(b, "ljs", 3);
  sb_proto(b, 0x00, 0x100, "@a.lua", 0);
  sb_byte(b, 0x80);
  sb_bytes(b, "ljm\x03", 4);
  sb_byte(b, flags);
  sb_bytes(b, "\0\0", 2);
}

static void node_lua(Sbuf *b, uint64_t parent, uint64_t line)
{
  sb_byte(b, 0x20);
  sb_uleb(b, parent);
  sb_byte(b, 0x01);
  sb_uleb(b, 0x100);
  sb_uleb(b, line);
}

static void good(void)
{
  Sbuf b;
  Seen s;
  LjmDiag d;
  start(&b, 0x03);
  sb_byte(&b, 0x22); sb_uleb(&b, 0);                 /* time 0 */
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);               /* before any stack */
  node_lua(&b, 0, 1);                                /* node 1 */
  node_lua(&b, 1, 2);                                /* node 2, under 1 */
  sb_byte(&b, 0x20); sb_uleb(&b, 2); sb_byte(&b, 0x04);  /* node 3: resume */
  sb_byte(&b, 0x21); sb_uleb(&b, 2);                 /* select 2 */
  sb_alloc_lua(&b, 0x100, 2, 0x20, 8);
  sb_byte(&b, 0x22); sb_uleb(&b, 10000);             /* 10 ms */
  sb_byte(&b, 0x23); sb_uleb(&b, 4096);              /* RSS */
  sb_free_int(&b, 0x10, 8);                          /* still stack 2 */
  sb_byte(&b, 0x21); sb_uleb(&b, 0);                 /* no stack */
  sb_alloc_lua(&b, 0x100, 1, 0x30, 8);
  sb_byte(&b, 0x80);
  CHECK(decode(&b, &s, &d) == LJM_OK);
  CHECK(s.flags == 3 && s.nodes == 3 && s.nev == 4 && s.order_ok == 4);
  CHECK(s.parent[1] == 0 && s.parent[2] == 1 && s.parent[3] == 2);
  CHECK(s.kind[1] == LJM_FRAME_LUA && s.kind[3] == LJM_FRAME_RESUME);
  CHECK(s.ev_stack[0] == 0 && s.ev_stack[1] == 2 && s.ev_stack[2] == 2 && s.ev_stack[3] == 0);
  CHECK(s.ev_time[0] == 0 && s.ev_time[1] == 0 && s.ev_time[2] == 10000);
  CHECK(s.rss_time == 10000 && s.rss_bytes == 4096 && s.last_mark == 10000);
  free(b.p);

  /* A standard stream: no flags, events without stack or time. */
  start(&b, 0);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  sb_byte(&b, 0x80);
  CHECK(decode(&b, &s, &d) == LJM_OK && s.flags == 0 && s.nev == 1);
  CHECK(s.ev_stack[0] == 0 && s.ev_time[0] == LJM_NO_TIME);
  free(b.p);
}

/* Malformed items after a good prefix: error at the bad item's offset,
** naming the problem; the event before it delivered. */
static void bad(uint8_t flags, const uint8_t *item, size_t n, size_t skip, const char *what)
{
  Sbuf b;
  Seen s;
  LjmDiag d;
  start(&b, flags);
  if (flags & 1) node_lua(&b, 0, 1);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  size_t at = b.n + skip;  /* the bad item: 'skip' bytes into 'item' */
  sb_bytes(&b, item, n);
  sb_byte(&b, 0x80);
  LjmStatus st = decode(&b, &s, &d);
  CHECK(st == LJM_ERROR && d.offset == at && strstr(d.msg, what) != NULL && s.nev == 1);
  if (!(st == LJM_ERROR && d.offset == at && strstr(d.msg, what)))
    fprintf(stderr, "  %s: status %d, byte %llu (want %zu): %s\n", what, st,
            (unsigned long long)d.offset, at, d.msg);
  free(b.p);
}

/* A function name and a reserved annotation (0x25) between events: read
** and skipped, the events around them delivered. */
static void names(void)
{
  Sbuf b;
  Seen s;
  LjmDiag d;
  start(&b, 0x03);
  node_lua(&b, 0, 1);
  sb_bytes(&b, (const uint8_t *)"\x24\x05\x01\x03" "put", 7);
  sb_bytes(&b, (const uint8_t *)"\x25\x03" "abc", 5);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  sb_byte(&b, 0x80);
  CHECK(decode(&b, &s, &d) == LJM_OK && s.nev == 1);
  free(b.p);
}

static void errors(void)
{
  bad(0x03, (const uint8_t *)"\x20\x05\x01\x00\x01", 5, 0, "refers to node 5");
  bad(0x03, (const uint8_t *)"\x20\x00\x09", 3, 0, "unknown stack frame kind");
  bad(0x03, (const uint8_t *)"\x21\x07", 2, 0, "stack node 7 is not defined");
  bad(0x03, (const uint8_t *)"\x22\x05\x22\x04", 4, 2, "time goes back");
  bad(0x01, (const uint8_t *)"\x22\x05", 2, 0, "unknown event header 0x22");  /* no TIME flag */
  bad(0x02, (const uint8_t *)"\x21\x01", 2, 0, "unknown event header 0x21");  /* no STACKS flag */
  bad(0x03, (const uint8_t *)"\x30\x00", 2, 0, "unknown event header 0x30");
  /* Function names (0x24): a defined node, a known kind, a bounded length. */
  bad(0x03, (const uint8_t *)"\x24\x03\x05\x01x", 5, 0, "function name of stack node 5");
  bad(0x03, (const uint8_t *)"\x24\x03\x01\x09x", 5, 0, "unknown kind of function name 9");
  bad(0x03, (const uint8_t *)"\x24\x81\x40", 3, 0, "function name of 8193 bytes");
  bad(0x03, (const uint8_t *)"\x24\x01\x01\x01", 4, 0, "longer than its length");
  bad(0x02, (const uint8_t *)"\x24\x02\x01\x01", 4, 0, "unknown event header 0x24");

  /* Unknown flag bits, and flags on an older version. */
  Sbuf b;
  Seen s;
  LjmDiag d;
  start(&b, 0x10);
  sb_byte(&b, 0x80);
  size_t flag_at = b.n - 1 - 3;
  CHECK(decode(&b, &s, &d) == LJM_ERROR && strstr(d.msg, "unknown extension flags 0x10") &&
        d.offset == flag_at);
  free(b.p);
  memset(&b, 0, sizeof(b));
  sb_prologue(&b, "ljs", 2);
  sb_byte(&b, 0x80);
  sb_bytes(&b, "ljm\x02\x01\0\0", 7);
  sb_byte(&b, 0x80);
  CHECK(decode(&b, &s, &d) == LJM_ERROR && strstr(d.msg, "version 2"));
  free(b.p);

  /* Cut inside a node: a truncated stream, the events before it kept. */
  start(&b, 0x03);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  sb_bytes(&b, "\x20\x00\x01\x80", 4);  /* proto address cut short */
  CHECK(decode(&b, &s, &d) == LJM_TRUNCATED && s.nev == 1 && strstr(d.msg, "a stack node"));
  free(b.p);
}

/* Names past LJM_STRING_MAX: cut, reported once each, the stream goes on. */
typedef struct Long {
  size_t proto_len, cfunc_len, nlong, nev;
  uint64_t long_at[4], long_len[4];
  int proto_ok;
} Long;

static void long_proto(void *ud, uint64_t a, const char *c, size_t len, uint64_t l, int ev)
{
  Long *g = ud;
  (void)a, (void)l, (void)ev;
  g->proto_len = len;
  g->proto_ok = len && c[0] == '@' && c[len - 1] == 'x' && c[len] == '\0';
}

static void long_cfunc(void *ud, uint64_t a, const char *n, size_t len, int ev)
{
  (void)a, (void)n, (void)ev;
  ((Long *)ud)->cfunc_len = len;
}

static void long_string(void *ud, uint64_t at, uint64_t len)
{
  Long *g = ud;
  if (g->nlong < 4) {
    g->long_at[g->nlong] = at;
    g->long_len[g->nlong] = len;
  }
  g->nlong++;
}

static void long_event(void *ud, const LjmRawEvent *ev)
{
  (void)ev;
  ((Long *)ud)->nev++;
}

static void long_names(void)
{
  Sbuf b;
  Long g;
  LjmDiag d;
  LjmCallbacks cb;
  size_t big = LJM_STRING_MAX + 1000;
  char *name = malloc(big);
  CHECK(name != NULL);
  if (!name) return;
  memset(name, 'x', big);
  name[0] = '@';
  memset(&b, 0, sizeof(b));
  sb_prologue(&b, "ljs", 3);
  sb_byte(&b, 0x00);  /* a prototype whose chunk is 1000 bytes too long */
  sb_uleb(&b, 0x100);
  sb_uleb(&b, big);
  sb_bytes(&b, name, big);
  sb_uleb(&b, 1);
  sb_cfunc(&b, 0x01, 0x500, "fine");
  sb_byte(&b, 0x80);
  sb_prologue(&b, "ljm", 3);
  sb_byte(&b, 0x0C);  /* a C symbol exactly at the limit: whole, no report */
  sb_uleb(&b, 0x600);
  sb_uleb(&b, LJM_STRING_MAX);
  sb_bytes(&b, name, LJM_STRING_MAX);
  uint64_t second = b.n;
  sb_byte(&b, 0x0C);  /* one byte over it */
  sb_uleb(&b, 0x700);
  sb_uleb(&b, LJM_STRING_MAX + 1);
  sb_bytes(&b, name, LJM_STRING_MAX + 1);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  sb_byte(&b, 0x80);
  memset(&cb, 0, sizeof(cb));
  memset(&g, 0, sizeof(g));
  cb.on_proto = long_proto;
  cb.on_cfunc = long_cfunc;
  cb.on_long_string = long_string;
  cb.on_event = long_event;
  LjmInput *in = ljm_input_mem(b.p, b.n);
  CHECK(ljm_decode(in, &cb, &g, &d, NULL, NULL) == LJM_OK);
  ljm_input_close(in);
  CHECK(g.proto_len == LJM_STRING_MAX && g.proto_ok);
  CHECK(g.cfunc_len == LJM_STRING_MAX && g.nev == 1);
  /* Reported at the length's offset: after "ljs" v3, 0x00 and the address. */
  CHECK(g.nlong == 2 && g.long_at[0] == 7 + 1 + 2 && g.long_len[0] == big);
  CHECK(g.long_at[1] == second + 1 + 2 && g.long_len[1] == LJM_STRING_MAX + 1);
  free(name);
  free(b.p);
}

/* A sampled stream (EXTENSION.md, "Sampling"): the rate first, 0x31 only
** right before a reallocation, which it marks. */
static LjmStatus sampled_case(const uint8_t *head, size_t nhead, const uint8_t *tail,
                              size_t ntail, Seen *s, LjmDiag *d, size_t *at)
{
  Sbuf b;
  start(&b, 0x06);
  sb_bytes(&b, head, nhead);
  *at = b.n;
  sb_bytes(&b, tail, ntail);
  sb_byte(&b, 0x80);
  LjmStatus st = decode(&b, s, d);
  free(b.p);
  return st;
}

static void sampled(void)
{
  Sbuf b;
  Seen s;
  LjmDiag d;
  size_t at;
  start(&b, 0x06);
  sb_byte(&b, 0x30); sb_uleb(&b, 524288);
  sb_byte(&b, 0x22); sb_uleb(&b, 5);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  sb_byte(&b, 0x31);
  sb_realloc_lua(&b, 0x100, 2, 0x10, 8, 0x20, 16);
  sb_realloc_lua(&b, 0x100, 2, 0x30, 8, 0x40, 16);
  sb_byte(&b, 0x80);
  CHECK(decode(&b, &s, &d) == LJM_OK && s.rate == 524288 && s.flags == 6 && s.nev == 3);
  CHECK(s.nosample[0] == 0 && s.nosample[1] == 1 && s.nosample[2] == 0);
  free(b.p);

  /* No rate, a rate out of range, a second one. */
  CHECK(sampled_case((const uint8_t *)"", 0, (const uint8_t *)"\x22\x05", 2, &s, &d, &at) == LJM_ERROR &&
        d.offset == at && strstr(d.msg, "starts with its rate"));
  CHECK(sampled_case((const uint8_t *)"", 0, (const uint8_t *)"\x30\x00", 2, &s, &d, &at) == LJM_ERROR &&
        d.offset == at && strstr(d.msg, "sampling rate 0 bytes"));
  CHECK(sampled_case((const uint8_t *)"", 0, (const uint8_t *)"\x30\x81\x80\x80\x80\x10", 6, &s, &d, &at) ==
        LJM_ERROR && d.offset == at && strstr(d.msg, "sampling rate 4294967297"));
  CHECK(sampled_case((const uint8_t *)"\x30\x10", 2, (const uint8_t *)"\x30\x10", 2, &s, &d, &at) ==
        LJM_ERROR && d.offset == at && strstr(d.msg, "a second sampling rate"));
  /* 0x31 before anything but a reallocation. */
  CHECK(sampled_case((const uint8_t *)"\x30\x10\x31", 3, (const uint8_t *)"\x22\x05", 2, &s, &d,
                     &at) == LJM_ERROR && d.offset == at && strstr(d.msg, "not followed by a reallocation"));
  CHECK(sampled_case((const uint8_t *)"\x30\x10\x31", 3, (const uint8_t *)"\x80", 1, &s, &d, &at) ==
        LJM_ERROR && d.offset == at);
  /* ... also an item whose header looks like a reallocation's (0x23, 0x27). */
  CHECK(sampled_case((const uint8_t *)"\x30\x10\x31", 3, (const uint8_t *)"\x23\x05", 2, &s, &d,
                     &at) == LJM_ERROR && d.offset == at && strstr(d.msg, "not followed by a reallocation"));
  /* Cut inside the rate: a truncation. */
  start(&b, 0x04);
  sb_byte(&b, 0x30);
  sb_byte(&b, 0x81);
  CHECK(decode(&b, &s, &d) == LJM_TRUNCATED && strstr(d.msg, "the sampling rate"));
  free(b.p);
  /* Items of a sampled stream without the flag. */
  bad(0x03, (const uint8_t *)"\x31", 1, 0, "unknown event header 0x31");
}


static void type_item(Sbuf *b, uint64_t len, uint64_t type)
{
  sb_byte(b, 0x29);
  sb_uleb(b, len);
  sb_uleb(b, type);
}

/* EXTENSION.md, "Allocation types": an allocation without 0x29 has the
** last allocation's type (internal before any), a reallocation its old
** block's (0 here), one with it that type, which is not the next
** allocation's; bytes past the type are skipped; without TYPES 0x29 is an
** annotation. */
static void types(void)
{
  static const uint8_t want[] = { LJM_TYPE_INTERNAL, LJM_TYPE_TABLE, LJM_TYPE_TABLE, 0,
                                  LJM_TYPE_STACK, LJM_TYPE_TABLE, 0, LJM_TYPE_STRING,
                                  LJM_TYPE_STRING };
  Sbuf b;
  Seen s, t;
  LjmDiag d;
  start(&b, 0x0a);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  sb_alloc_lua(&b, 0x100, 1, 0x20, 64);
  type_item(&b, 1, LJM_TYPE_TABLE);
  sb_alloc_lua(&b, 0x100, 1, 0x30, 64);
  sb_realloc_lua(&b, 0x100, 2, 0x10, 8, 0x40, 16);
  sb_realloc_lua(&b, 0x100, 2, 0x40, 16, 0x50, 32);
  type_item(&b, 1, LJM_TYPE_STACK);
  sb_alloc_lua(&b, 0x100, 3, 0x60, 64);
  sb_free_int(&b, 0x60, 64);
  sb_alloc_lua(&b, 0x100, 4, 0x70, 20);
  sb_byte(&b, 0x29); sb_uleb(&b, 3); sb_uleb(&b, LJM_TYPE_STRING); sb_bytes(&b, "\xaa\xbb", 2);
  for (int i = 0; i < 40; i++) sb_byte(&b, 0x22), sb_uleb(&b, (uint64_t)i);  /* room: the fast path */
  sb_alloc_lua(&b, 0x100, 4, 0x80, 20);
  sb_byte(&b, 0x80);
  CHECK(decode(&b, &s, &d) == LJM_OK && s.flags == 0x0a && s.nev == sizeof(want));
  CHECK(decode_batched(&b, &t, &d) == LJM_OK && t.nev == sizeof(want));
  for (size_t i = 0; i < sizeof(want); i++) {
    CHECK(s.type[i] == want[i] && t.type[i] == want[i]);
    if (s.type[i] != want[i] || t.type[i] != want[i])
      fprintf(stderr, "  event %zu: type %u, batched %u, want %u\n", i, s.type[i], t.type[i],
              want[i]);
  }
  free(b.p);
  /* cut inside the item: a truncation, its event delivered */
  start(&b, 0x0a);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  sb_bytes(&b, "\x29\x03\x05", 3);
  CHECK(decode(&b, &s, &d) == LJM_TRUNCATED && strstr(d.msg, "inside an allocation type") &&
        s.nev == 1 && s.type[0] == LJM_TYPE_INTERNAL);
  free(b.p);
  CHECK(strcmp(ljm_type_name(LJM_TYPE_ARRAY), "table.array") == 0 &&
        strcmp(ljm_type_name(LJM_TYPES - 1), "trace") == 0 && !ljm_type_name(0) &&
        !ljm_type_name(LJM_TYPES));

  /* Without TYPES: an annotation, skipped; the events have no type. */
  start(&b, 0x02);
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  type_item(&b, 1, LJM_TYPE_TABLE);
  sb_alloc_lua(&b, 0x100, 1, 0x20, 8);
  sb_byte(&b, 0x80);
  CHECK(decode(&b, &s, &d) == LJM_OK && s.nev == 2 && s.type[0] == 0 && s.type[1] == 0);
  free(b.p);

  /* Errors, at the item. */
  bad(0x0a, (const uint8_t *)"\x29\x01\x00", 3, 0, "unknown allocation type 0");
  bad(0x0a, (const uint8_t *)"\x29\x01\x0f", 3, 0, "unknown allocation type 15");
  bad(0x0a, (const uint8_t *)"\x29\x00", 2, 0, "allocation type item of 0 bytes");
  bad(0x0a, (const uint8_t *)"\x29\x11\x02", 3, 0, "allocation type item of 17 bytes");
  bad(0x0a, (const uint8_t *)"\x29\x01\x82\x01", 4, 0, "longer than its length");
  start(&b, 0x0a);  /* after a free */
  sb_alloc_lua(&b, 0x100, 1, 0x10, 8);
  sb_free_int(&b, 0x10, 8);
  size_t at = b.n;
  type_item(&b, 1, LJM_TYPE_TABLE);
  sb_byte(&b, 0x80);
  CHECK(decode(&b, &s, &d) == LJM_ERROR && d.offset == at && strstr(d.msg, "follows no allocation") &&
        s.nev == 2);
  free(b.p);
  bad(0x0a, (const uint8_t *)"\x22\x05\x29\x01\x02", 5, 2, "follows no allocation");
  bad(0x0a, (const uint8_t *)"\x29\x01\x02\x29\x01\x02", 6, 3, "follows no allocation");
}

int main(void)
{
  good();
  types();
  sampled();
  names();
  errors();
  long_names();
  return check_done("ext_test");
}
