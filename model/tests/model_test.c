/* model_test.c -- the model on hand-built streams: naming (§3.3), the
** reference aggregation and its quirks (§3.4, 3.6), the live-heap figures,
** version 1 and 2 layouts, and decoder errors and truncation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_model_load.h"
#include "decoder/tests/check.h"
#include "decoder/tests/stream_builder.h"

#define A 0x1000  /* proto @a.lua */
#define B 0x2000  /* proto @b.lua */

static LjmModel *load(Sbuf *b, LjmStatus *st, LjmDiag *d)
{
  LjmModel *m = ljm_model_new();
  LjmInput *in = ljm_input_mem(b->p, b->n);
  *st = ljm_model_load(m, in, "mem.ljm", d);
  ljm_input_close(in);
  return m;
}

/* A v3 stream with two protos and two C symbols; events appended by caller. */
static void start_v3(Sbuf *b)
{
  memset(b, 0, sizeof(*b));
  sb_prologue(b, "ljs", 3);
  sb_proto(b, 0x00, A, "@a.lua", 1);
  sb_proto(b, 0x00, B, "@b.lua", 10);
  sb_cfunc(b, 0x01, 0x400000, "c_first");
  sb_cfunc(b, 0x01, 0x401000, "c_second");
  sb_byte(b, 0x80);
  sb_prologue(b, "ljm", 3);
}

static const LjmSite *site_named(const LjmModel *m, const char *name)
{
  for (uint32_t i = 0; i < ljm_model_nsites(m); i++)
    if (strcmp(ljm_model_site(m, i)->name, name) == 0) return ljm_model_site(m, i);
  return NULL;
}

static const LjmRow *row_named(const LjmModel *m, LjmSection s, const char *name, int nth)
{
  const LjmRow *rows;
  size_t n = ljm_model_rows(m, s, &rows);
  for (size_t i = 0; i < n; i++)
    if (rows[i].name.len == strlen(name) && !memcmp(rows[i].name.s, name, rows[i].name.len) &&
        nth-- == 0)
      return &rows[i];
  return NULL;
}

static const LjmHeapLine *heap_named(const LjmModel *m, const char *name)
{
  const LjmHeapLine *h;
  size_t n = ljm_model_heap_summary(m, &h);
  for (size_t i = 0; i < n; i++)
    if (h[i].name.len == strlen(name) && !memcmp(h[i].name.s, name, h[i].name.len)) return &h[i];
  return NULL;
}

static int str_is(LjmStr s, const char *t) { return s.len == strlen(t) && !memcmp(s.s, t, s.len); }

/* Naming: Lua lines, C floor, unknown addresses, traces, INTERNAL. */
static void test_names(void)
{
  Sbuf b;
  start_v3(&b);
  sb_alloc_lua(&b, A, 5, 0x10, 8);                  /* @a.lua:5 */
  sb_byte(&b, 0x0d); sb_uleb(&b, 0x400000); sb_uleb(&b, 0x20); sb_uleb(&b, 8);  /* exact */
  sb_byte(&b, 0x0d); sb_uleb(&b, 0x400abc); sb_uleb(&b, 0x30); sb_uleb(&b, 8);  /* inside */
  sb_byte(&b, 0x0d); sb_uleb(&b, 0x10); sb_uleb(&b, 0x40); sb_uleb(&b, 8);      /* below all */
  sb_byte(&b, 0x0d); sb_uleb(&b, 0x7fff0000); sb_uleb(&b, 0x50); sb_uleb(&b, 8); /* above all */
  sb_alloc_lua(&b, 0x3000, 2, 0x60, 8);             /* unknown proto -> C floor rule */
  sb_byte(&b, 0x11); sb_uleb(&b, 7); sb_uleb(&b, 0x70); sb_uleb(&b, 8);         /* unknown trace */
  sb_byte(&b, 0x10); sb_uleb(&b, 8); sb_uleb(&b, B); sb_uleb(&b, 12);           /* trace 8 */
  sb_byte(&b, 0x11); sb_uleb(&b, 8); sb_uleb(&b, 0x80); sb_uleb(&b, 8);
  sb_byte(&b, 0x05); sb_uleb(&b, 0x90); sb_uleb(&b, 8);                        /* INTERNAL */
  sb_byte(&b, 0x80);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  CHECK(st == LJM_OK);
  const LjmSite *s;
  CHECK((s = site_named(m, "@a.lua:5")) && s->kind == LJM_SITE_LUA && s->line == 5 &&
        s->func_line == 1 && !strcmp(s->file, "a.lua") && !strcmp(s->func, "function <a.lua:1>") &&
        s->func_from == LJM_FUNC_UNKNOWN && !strcmp(s->chunk, "@a.lua"));
  CHECK((s = site_named(m, "c_first:0x400000")) && s->kind == LJM_SITE_C &&
        s->symbol_addr == 0x400000 && !strcmp(s->func, "c_first"));
  CHECK(row_named(m, LJM_SEC_ALLOC, "c_first:0x400000", 1) != NULL);  /* two ids, one name */
  CHECK((s = site_named(m, "CFUNC 0x10")) && !strcmp(s->func, "unknown C function") &&
        s->addr == 0x10);
  CHECK((s = site_named(m, "c_second:0x401000")) && s->addr == 0x7fff0000);
  CHECK((s = site_named(m, "c_second:0x401000")) != NULL);
  CHECK((s = site_named(m, "TRACE [7]")) && s->kind == LJM_SITE_TRACE && s->trace_start == LJM_NO_SITE);
  CHECK((s = site_named(m, "TRACE [8] started at @b.lua:12")) && s->traceno == 8 &&
        s->trace_start != LJM_NO_SITE &&
        !strcmp(ljm_model_site(m, s->trace_start)->name, "@b.lua:12"));
  CHECK((s = site_named(m, "INTERNAL")) && s->kind == LJM_SITE_INTERNAL);
  CHECK(ljm_model_totals(m)->symtab_events == 1 && ljm_model_totals(m)->allocs == 9);
  ljm_model_free(m);
  free(b.p);
}

/* Ownership moves on realloc; frees credit the owner; quirks of §3.6. */
static void test_reference_rules(void)
{
  Sbuf b;
  start_v3(&b);
  sb_alloc_lua(&b, A, 5, 0x100, 100);            /* A5 owns 0x100 */
  sb_realloc_lua(&b, B, 12, 0x100, 100, 0x200, 300);  /* B12 moves it: primary A5 */
  sb_free_int(&b, 0x200, 300);                   /* INTERNAL frees it: primary B12 */
  sb_realloc_lua(&b, B, 12, 0x999, 16, 0x300, 32);    /* pre-start block: no primary */
  sb_free_int(&b, 0x888, 64);                    /* unknown: counted, no primary */
  sb_alloc_lua(&b, A, 6, 0x400, 50);
  sb_alloc_lua(&b, A, 7, 0x400, 70);             /* address reuse without a free */
  sb_byte(&b, 0x80);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  CHECK(st == LJM_OK);
  const LjmRow *r = row_named(m, LJM_SEC_REALLOC, "@b.lua:12", 0);
  CHECK(r && r->num == 2 && r->alloc == 332 && r->free == 116 && r->noverrides == 1 &&
        str_is(r->overrides[0], "@a.lua:5"));
  r = row_named(m, LJM_SEC_FREE, "INTERNAL", 0);
  CHECK(r && r->num == 2 && r->free == 364 && r->noverrides == 1 &&
        str_is(r->overrides[0], "@b.lua:12"));
  /* HEAP SUMMARY: the realloc's new size goes to the original owner A5 (100
  ** + 300 - 100 = 300), B12's later free goes negative and is hidden. */
  const LjmHeapLine *h = heap_named(m, "@a.lua:5");
  CHECK(h && h->dbytes == 300 && h->nalloc == 2 && h->nfree == 1);
  CHECK(heap_named(m, "@b.lua:12") == NULL);
  CHECK((h = heap_named(m, "@a.lua:6")) && h->dbytes == 50);  /* overwritten, still held */
  /* Live view: 0x300 (32, B12) and 0x400 (70, A7) are live; A6's block was
  ** dropped when its address was reused. */
  const LjmTotals *t = ljm_model_totals(m);
  CHECK(t->fig.inuse_count == 2 && t->fig.inuse_bytes == 102);
  CHECK(t->fig.alloc_count == 5 && t->fig.alloc_bytes == 100 + 300 + 32 + 50 + 70);
  CHECK(t->unattributed_frees == 2);
  const LjmSite *s = site_named(m, "@a.lua:6");
  CHECK(s && s->fig.inuse_bytes == 0 && s->fig.alloc_bytes == 50);
  s = site_named(m, "@b.lua:12");
  CHECK(s && s->fig.inuse_bytes == 32 && s->fig.inuse_count == 1 && s->fig.alloc_count == 2);
  s = site_named(m, "INTERNAL");
  CHECK(s && s->fig.free_count == 2 && s->fig.free_bytes == 364);
  ljm_model_free(m);
  free(b.p);
}

/* Peak: the first moment the live total is highest, and who held it. */
static void test_peak(void)
{
  Sbuf b;
  start_v3(&b);
  sb_alloc_lua(&b, A, 1, 0x10, 100);   /* 100 */
  sb_alloc_lua(&b, A, 2, 0x20, 50);    /* 150 */
  sb_free_int(&b, 0x10, 100);          /* 50 */
  sb_alloc_lua(&b, A, 3, 0x30, 200);   /* 250: peak at event 3 */
  sb_free_int(&b, 0x30, 200);          /* 50 */
  sb_alloc_lua(&b, A, 1, 0x40, 200);   /* 250 again: not a new peak */
  sb_byte(&b, 0x80);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  const LjmTotals *t = ljm_model_totals(m);
  CHECK(t->fig.peak_bytes == 250 && t->fig.peak_count == 2 && t->peak_event == 3);
  CHECK(site_named(m, "@a.lua:1")->fig.peak_bytes == 0);
  CHECK(site_named(m, "@a.lua:2")->fig.peak_bytes == 50);
  CHECK(site_named(m, "@a.lua:3")->fig.peak_bytes == 200 && site_named(m, "@a.lua:3")->fig.peak_count == 1);
  CHECK(site_named(m, "@a.lua:1")->fig.inuse_bytes == 200);
  CHECK(t->fig.inuse_bytes == 250);
  ljm_model_free(m);
  free(b.p);
}

/* Temporary allocations: heaptrack's rule, line by line (ljm_model.h). */
static void test_temporaries(void)
{
  Sbuf b;
  start_v3(&b);
  sb_alloc_lua(&b, A, 1, 0x10, 32);
  sb_free_int(&b, 0x10, 32);                     /* right after: a:1 temporary */
  sb_alloc_lua(&b, A, 1, 0x20, 32);
  sb_alloc_lua(&b, A, 2, 0x30, 16);
  sb_free_int(&b, 0x20, 32);                     /* another block came between */
  sb_alloc_lua(&b, A, 3, 0x40, 8);
  sb_realloc_lua(&b, A, 3, 0x40, 8, 0x50, 16);   /* frees before it allocates: a:3 */
  sb_realloc_lua(&b, A, 3, 0x50, 16, 0x60, 32);  /* and again: a:3 */
  sb_alloc_lua(&b, A, 4, 0x70, 64);
  sb_alloc_lua(&b, A, 4, 0x80, 64);
  sb_free_int(&b, 0x70, 64);                     /* same stack and size: a:4, as heaptrack */
  sb_free_int(&b, 0x30, 16);                     /* after a free: never */
  sb_alloc_lua(&b, A, 5, 0x90, 8);
  sb_free_int(&b, 0x999, 8);                     /* unknown block: no line between */
  sb_free_int(&b, 0x90, 8);                      /* a:5 */
  sb_alloc_lua(&b, A, 6, 0xa0, 8);
  sb_free_int(&b, 0xa0, 16);                     /* the size the model knew counts */
  sb_alloc_lua(&b, A, 7, 0xb0, 8);
  sb_alloc_lua(&b, A, 7, 0xb8, 16);
  sb_free_int(&b, 0xb0, 8);                      /* same stack, another size: not */
  sb_byte(&b, 0x80);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  CHECK(st == LJM_OK);
  const LjmTotals *t = ljm_model_totals(m);
  CHECK(t->temporaries == 1);
  CHECK(site_named(m, "@a.lua:1")->fig.temp_count == 1);
  CHECK(site_named(m, "@a.lua:2")->fig.temp_count == 0);
  CHECK(site_named(m, "@a.lua:3")->fig.temp_count == 2);
  CHECK(site_named(m, "@a.lua:4")->fig.temp_count == 1);
  CHECK(site_named(m, "@a.lua:5")->fig.temp_count == 1);
  CHECK(site_named(m, "@a.lua:6")->fig.temp_count == 1);
  CHECK(site_named(m, "@a.lua:7")->fig.temp_count == 0);
  CHECK(t->fig.temp_count == 6);
  ljm_model_free(m);

  /* The reference report's model does not count them, and says so. */
  m = ljm_model_new();
  ljm_model_set_reference_only(m);
  LjmInput *in = ljm_input_mem(b.p, b.n);
  CHECK(ljm_model_load(m, in, "mem.ljm", &d) == LJM_OK);
  ljm_input_close(in);
  CHECK(ljm_model_totals(m)->temporaries == 0 && ljm_model_totals(m)->fig.temp_count == 0);
  ljm_model_free(m);
  free(b.p);
}

/* Symbol changes mid-stream: rows keep their first name, sites follow. */
static void test_redefinitions(void)
{
  Sbuf b;
  start_v3(&b);
  sb_alloc_lua(&b, A, 1, 0x10, 8);
  sb_proto(&b, 0x08, A, "local x = 1\nreturn x", 0);  /* proto address reused */
  sb_alloc_lua(&b, A, 1, 0x20, 8);
  sb_proto(&b, 0x08, 0x5000, "local x = 1\nreturn x", 0);  /* same text: same alias */
  sb_alloc_lua(&b, 0x5000, 2, 0x30, 8);
  sb_cfunc(&b, 0x0c, 0x400000, "c_renamed");
  sb_byte(&b, 0x0d); sb_uleb(&b, 0x400010); sb_uleb(&b, 0x40); sb_uleb(&b, 8);
  sb_byte(&b, 0x80);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  const LjmRow *r = row_named(m, LJM_SEC_ALLOC, "@a.lua:1", 0);
  CHECK(r && r->num == 2);  /* same id merges under the first name */
  CHECK(row_named(m, LJM_SEC_ALLOC, "function_alias_1:1", 0) == NULL);
  CHECK(row_named(m, LJM_SEC_ALLOC, "function_alias_1:2", 0) != NULL);
  CHECK(row_named(m, LJM_SEC_ALLOC, "c_renamed:0x400000", 0) != NULL);
  const LjmSite *s = site_named(m, "function_alias_1:1");
  CHECK(s && s->fig.alloc_count == 1 && !strcmp(s->file, "function_alias_1"));
  CHECK(site_named(m, "@a.lua:1")->fig.alloc_count == 1);
  const LjmAlias *al;
  CHECK(ljm_model_aliases(m, &al) == 1 && al[0].number == 1 && str_is(al[0].text, "local x = 1\nreturn x"));
  ljm_model_free(m);
  free(b.p);
}

/* Version 1 (2-bit sources) and version 2 (traces with mcode addresses). */
static void test_old_versions(void)
{
  Sbuf b;
  memset(&b, 0, sizeof(b));
  sb_prologue(&b, "ljs", 1);
  sb_proto(&b, 0x00, A, "@old.lua", 0);
  sb_byte(&b, 0x80);
  sb_prologue(&b, "ljm", 1);
  sb_alloc_lua(&b, A, 3, 0x10, 40);
  sb_byte(&b, 0x0e); sb_uleb(&b, 0x400); sb_uleb(&b, 0x10); sb_uleb(&b, 40);  /* C free */
  sb_byte(&b, 0x07); sb_uleb(&b, 0x20); sb_uleb(&b, 8); sb_uleb(&b, 0x30); sb_uleb(&b, 16);
  sb_byte(&b, 0x80);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  CHECK(st == LJM_OK && ljm_model_stream(m)->ljm_version == 1);
  CHECK(row_named(m, LJM_SEC_ALLOC, "@old.lua:3", 0) != NULL);
  CHECK(row_named(m, LJM_SEC_FREE, "CFUNC 0x400", 0) != NULL);
  CHECK(row_named(m, LJM_SEC_REALLOC, "INTERNAL", 0) != NULL);
  ljm_model_free(m);
  /* v1 has no trace source: header 0x11 is unknown. */
  b.n -= 1;
  sb_byte(&b, 0x11);
  sb_byte(&b, 0x80);
  m = load(&b, &st, &d);
  CHECK(st == LJM_ERROR && strstr(d.msg, "unknown event header 0x11"));
  ljm_model_free(m);
  free(b.p);

  memset(&b, 0, sizeof(b));
  sb_prologue(&b, "ljs", 2);
  sb_proto(&b, 0x00, A, "@v2.lua", 0);
  sb_byte(&b, 0x01); sb_uleb(&b, 3); sb_uleb(&b, 0x7000); sb_uleb(&b, A); sb_uleb(&b, 9);
  sb_byte(&b, 0x80);
  sb_prologue(&b, "ljm", 2);
  sb_byte(&b, 0x11); sb_uleb(&b, 3); sb_uleb(&b, 0x7010); sb_uleb(&b, 0x10); sb_uleb(&b, 24);
  sb_byte(&b, 0x80);
  m = load(&b, &st, &d);
  CHECK(st == LJM_OK);
  const LjmRow *r = row_named(m, LJM_SEC_ALLOC, "TRACE [3] started at @v2.lua:9", 0);
  CHECK(r && r->alloc == 24);
  ljm_model_free(m);
  /* v2 has no symbol events: 0x08 is unknown there. */
  b.n -= 1;
  sb_proto(&b, 0x08, 0x9000, "@x.lua", 0);
  sb_byte(&b, 0x80);
  m = load(&b, &st, &d);
  CHECK(st == LJM_ERROR && strstr(d.msg, "unknown event header 0x08"));
  ljm_model_free(m);
  free(b.p);
}

/* Errors name the offset; cut streams keep what was read. */
static void test_errors(void)
{
  Sbuf b;
  start_v3(&b);
  size_t ev = b.n;
  sb_alloc_lua(&b, A, 5, 0x10, 8);
  sb_byte(&b, 0x09);
  for (int i = 0; i < 10; i++) sb_byte(&b, 0xff);  /* proto address > 64 bits */
  sb_byte(&b, 0x7f);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  CHECK(st == LJM_ERROR && strstr(d.msg, "ULEB128") && d.offset == ev + 7);
  CHECK(ljm_model_totals(m)->events == 1);  /* the event before is kept */
  ljm_model_free(m);
  free(b.p);

  /* A string that claims 2^60 bytes: the stream is cut, nothing huge allocated. */
  start_v3(&b);
  sb_byte(&b, 0x08);
  sb_uleb(&b, 0x9000);
  sb_uleb(&b, 1ull << 60);
  sb_bytes(&b, "@short", 6);
  m = load(&b, &st, &d);
  CHECK(st == LJM_TRUNCATED && d.offset == b.n && strstr(d.msg, "symbol event"));
  ljm_model_free(m);
  free(b.p);
}

/* Thousands of prototypes, traces and aliases: tables grow as needed. */
/* Sizes no machine can have and byte totals past 2^62 are errors at the
** event's offset; what came before is kept and every figure stays exact. */
static void test_impossible(void)
{
  Sbuf b;
  start_v3(&b);
  sb_alloc_lua(&b, A, 5, 0x10, 8);
  size_t bad = b.n;
  sb_alloc_lua(&b, A, 5, 0x20, UINT64_MAX);
  sb_alloc_lua(&b, A, 5, 0x30, 8);
  sb_byte(&b, 0x80);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  CHECK(st == LJM_ERROR && d.offset == bad && strstr(d.msg, "impossible block size"));
  CHECK(ljm_model_totals(m)->events == 1 && ljm_model_totals(m)->fig.alloc_bytes == 8);
  CHECK(ljm_model_stream(m)->bytes == bad && !ljm_model_stream(m)->truncated);
  ljm_model_free(m);
  free(b.p);

  /* 2^56 is allowed; the 65th such allocation passes 2^62 in total. */
  start_v3(&b);
  for (int i = 0; i < 64; i++) sb_alloc_lua(&b, A, 5, 0x100 + (uint64_t)i, LJM_SIZE_MAX);
  bad = b.n;
  for (int i = 64; i < 100; i++) sb_alloc_lua(&b, A, 5, 0x100 + (uint64_t)i, LJM_SIZE_MAX);
  sb_byte(&b, 0x80);
  m = load(&b, &st, &d);
  CHECK(st == LJM_ERROR && d.offset == bad && strstr(d.msg, "above 2^62"));
  const LjmTotals *t = ljm_model_totals(m);
  CHECK(t->events == 64 && t->fig.alloc_bytes == LJM_TOTAL_MAX && t->fig.peak_bytes == LJM_TOTAL_MAX);
  const LjmRow *rows;
  CHECK(ljm_model_rows(m, LJM_SEC_ALLOC, &rows) == 1 && rows[0].alloc == (double)LJM_TOTAL_MAX);
  ljm_model_free(m);
  free(b.p);

  /* The same for frees: sizes, then totals. */
  start_v3(&b);
  sb_alloc_lua(&b, A, 5, 0x10, 8);
  bad = b.n;
  sb_free_int(&b, 0x10, 1ull << 57);
  sb_byte(&b, 0x80);
  m = load(&b, &st, &d);
  CHECK(st == LJM_ERROR && d.offset == bad && strstr(d.msg, "impossible block size"));
  CHECK(ljm_model_totals(m)->fig.inuse_bytes == 8);  /* the free was not applied */
  ljm_model_free(m);
  free(b.p);
}

static void test_many_symbols(void)
{
  Sbuf b;
  start_v3(&b);
  enum { N = 5000 };
  char chunk[64];
  for (int i = 0; i < N; i++) {
    snprintf(chunk, sizeof(chunk), i % 2 ? "@f%d.lua" : "x = %d\nreturn x", i);
    sb_proto(&b, 0x08, 0x100000 + 16 * (uint64_t)i, chunk, (uint64_t)i);
    sb_byte(&b, 0x10); sb_uleb(&b, (uint64_t)i + 1); sb_uleb(&b, 0x100000 + 16 * (uint64_t)i); sb_uleb(&b, 3);
    sb_alloc_lua(&b, 0x100000 + 16 * (uint64_t)i, 2, 0x10000000 + 64 * (uint64_t)i, 32);
    sb_byte(&b, 0x11); sb_uleb(&b, (uint64_t)i + 1); sb_uleb(&b, 0x20000000 + 64 * (uint64_t)i); sb_uleb(&b, 8);
  }
  sb_byte(&b, 0x80);
  LjmStatus st;
  LjmDiag d;
  LjmModel *m = load(&b, &st, &d);
  CHECK(st == LJM_OK);
  const LjmAlias *al;
  CHECK(ljm_model_aliases(m, &al) == N / 2 && al[N / 2 - 1].number == N / 2);
  CHECK(site_named(m, "@f4999.lua:2") != NULL);
  CHECK(site_named(m, "function_alias_2500:2") != NULL);
  CHECK(site_named(m, "TRACE [5000] started at @f4999.lua:3") != NULL);
  CHECK(ljm_model_totals(m)->events == 2 * N && ljm_model_totals(m)->fig.inuse_bytes == N * 40);
  ljm_model_free(m);
  free(b.p);
}

/* Slices (ljm_model_set_slices): owners per (site, slice), handed back
** when their blocks go; figures as without slices. */
typedef struct Seen {
  LjmLiveEvent ev[16];
  int n;
} Seen;

static void seen_event(void *ud, const LjmModel *m, const LjmLiveEvent *ev)
{
  Seen *s = ud;
  (void)m;
  if (s->n < 16) s->ev[s->n++] = *ev;
}

static LjmModel *load_seen(Sbuf *b, uint32_t slice_events, Seen *s)
{
  LjmModel *m = ljm_model_new();
  LjmListener l = { seen_event, NULL };
  memset(s, 0, sizeof(*s));
  ljm_model_set_listener(m, &l, s);
  ljm_model_set_slices(m, slice_events);
  LjmInput *in = ljm_input_mem(b->p, b->n);
  LjmDiag d;
  CHECK(ljm_model_load(m, in, "mem.ljm", &d) == LJM_OK);
  ljm_input_close(in);
  return m;
}

static void test_slices(void)
{
  Sbuf b;
  memset(&b, 0, sizeof(b));
  sb_prologue(&b, "ljs", 3);
  sb_proto(&b, 0x00, A, "@a.lua", 1);
  sb_byte(&b, 0x80);
  sb_bytes(&b, "ljm\3\2\0\0", 7);  /* flags: TIME */
  sb_byte(&b, 0x22), sb_uleb(&b, 0);
  sb_alloc_lua(&b, A, 1, 0x10, 10);                /* 0: slice 1 */
  sb_alloc_lua(&b, A, 1, 0x20, 20);                /* 1: slice 1, same owner */
  sb_alloc_lua(&b, A, 2, 0x28, 5);                 /* 2: slice 1, another site */
  sb_byte(&b, 0x22), sb_uleb(&b, 7);               /* a new time: slice 2 */
  sb_alloc_lua(&b, A, 1, 0x30, 30);                /* 3 */
  sb_free_int(&b, 0x10, 10);                       /* 4: event 0's block */
  sb_realloc_lua(&b, A, 1, 0x20, 20, 0x50, 40);    /* 5: index 5: slice 3 */
  sb_alloc_lua(&b, A, 1, 0x30, 8);                 /* 6: drops event 3's block */
  sb_free_int(&b, 0x999, 1);                       /* 7: unknown block */
  sb_byte(&b, 0x80);

  Seen s, p;
  LjmModel *m = load_seen(&b, 5, &s), *plain = load_seen(&b, 0, &p);
  CHECK(s.n == 8 && p.n == 8);
  const uint64_t slice[8] = {1, 1, 1, 2, 2, 3, 3, 3};
  for (int i = 0; i < s.n; i++) {
    CHECK(s.ev[i].slice == slice[i]);
    CHECK(p.ev[i].slice == 0);
    CHECK(s.ev[i].site == p.ev[i].site && s.ev[i].node == p.ev[i].node);
    CHECK(s.ev[i].old_site == p.ev[i].old_site && s.ev[i].old_size == p.ev[i].old_size);
    CHECK(s.ev[i].dropped_site == p.ev[i].dropped_site);
    /* Without slices a standard stream's owner is the site. */
    CHECK(p.ev[i].owner == (s.ev[i].kind == LJM_EV_FREE ? LJM_NO_OWNER : p.ev[i].site));
  }
  CHECK(s.ev[0].owner == s.ev[1].owner && s.ev[2].owner != s.ev[0].owner);
  CHECK(s.ev[3].owner != s.ev[0].owner && s.ev[5].owner != s.ev[3].owner);
  CHECK(s.ev[6].owner == s.ev[5].owner);
  CHECK(s.ev[4].owner == LJM_NO_OWNER && s.ev[4].old_owner == s.ev[0].owner);
  CHECK(s.ev[5].old_owner == s.ev[1].owner && s.ev[5].dropped_owner == LJM_NO_OWNER);
  CHECK(s.ev[6].dropped_owner == s.ev[3].owner && s.ev[6].dropped_size == 30);
  CHECK(s.ev[7].old_owner == LJM_NO_OWNER && s.ev[7].old_site == LJM_NO_SITE);
  CHECK(s.ev[0].old_owner == LJM_NO_OWNER && s.ev[0].dropped_owner == LJM_NO_OWNER);
  /* The figures do not depend on slices. */
  CHECK(ljm_model_nsites(m) == ljm_model_nsites(plain));
  for (uint32_t i = 0; i < ljm_model_nsites(m); i++)
    CHECK(!memcmp(&ljm_model_site(m, i)->fig, &ljm_model_site(plain, i)->fig, sizeof(LjmFigures)));
  CHECK(!memcmp(ljm_model_totals(m), ljm_model_totals(plain), sizeof(LjmTotals)));
  CHECK(site_named(m, "@a.lua:1")->fig.inuse_bytes == 48);
  ljm_model_free(m);
  ljm_model_free(plain);
  free(b.p);
}

int main(void)
{
  test_impossible();
  test_many_symbols();
  test_names();
  test_reference_rules();
  test_peak();
  test_temporaries();
  test_slices();
  test_redefinitions();
  test_old_versions();
  test_errors();
  return check_done("model_test");
}
