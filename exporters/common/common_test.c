/* common_test.c -- unit tests of the exporters' shared helpers. */
#include <stdio.h>
#include <string.h>

#include "decoder/tests/stream_builder.h"
#include "model/ljm_model_load.h"
#include "exporters/common/buf.h"
#include "exporters/common/frames.h"
#include "exporters/common/json_str.h"
#include "exporters/common/uniq.h"
#include "exporters/common/utf8.h"
#include "exporters/common/value.h"

static int failures;

#define CHECK(c) \
  do { if (!(c)) { fprintf(stderr, "%s:%d: FAIL %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)

/* ljm_text_clean of s (length n) with flags and max equals want. */
static void check_clean_max(const char *s, size_t n, unsigned flags, size_t max,
                            const char *want)
{
  LjmBuf b = {0};
  ljm_text_clean(&b, s, n, flags, max);
  if (strcmp(ljm_buf_str(&b), want) != 0) {
    fprintf(stderr, "FAIL clean(%zu bytes, %u, %zu): got '%s' want '%s'\n", n, flags,
            max, ljm_buf_str(&b), want);
    failures++;
  }
  ljm_buf_free(&b);
}

static void check_clean(const char *s, size_t n, unsigned flags, const char *want)
{
  check_clean_max(s, n, flags, LJM_CLEAN_NO_CAP, want);
}

static void check_fix_last(const char *s, const char *want)
{
  LjmBuf b = {0};
  ljm_buf_puts(&b, "root;");
  size_t start = b.len;
  ljm_buf_puts(&b, s);
  ljm_frame_fix_last(&b, start);
  if (strcmp(ljm_buf_str(&b) + 5, want) != 0) {
    fprintf(stderr, "FAIL fix_last('%s'): got '%s' want '%s'\n", s, ljm_buf_str(&b) + 5, want);
    failures++;
  }
  ljm_buf_free(&b);
}

static void test_utf8(void)
{
  uint32_t cp;
  CHECK(ljm_utf8_decode((const unsigned char *)"A", 1, &cp) == 1 && cp == 'A');
  CHECK(ljm_utf8_decode((const unsigned char *)"\xC3\xA9", 2, &cp) == 2 && cp == 0xE9);
  CHECK(ljm_utf8_decode((const unsigned char *)"\xF0\x9F\x98\x80", 4, &cp) == 4 && cp == 0x1F600);
  CHECK(ljm_utf8_decode((const unsigned char *)"\xC0\xAF", 2, &cp) == 1 && cp == LJM_UTF8_BAD);
  CHECK(ljm_utf8_decode((const unsigned char *)"\xED\xA0\x80", 3, &cp) == 1 && cp == LJM_UTF8_BAD);
  CHECK(ljm_utf8_decode((const unsigned char *)"\xF4\x90\x80\x80", 4, &cp) == 1 && cp == LJM_UTF8_BAD);
  CHECK(ljm_utf8_decode((const unsigned char *)"\xE2\x82", 2, &cp) == 1 && cp == LJM_UTF8_BAD);
  CHECK(ljm_utf8_decode((const unsigned char *)"\x80", 1, &cp) == 1 && cp == LJM_UTF8_BAD);
}

static void test_clean(void)
{
  check_clean("@a.lua:1", 8, 0, "@a.lua:1");
  check_clean("a;b\nc\rd\te", 9, 0, "a;b_c_d_e");
  check_clean("a;b\nc", 5, LJM_CLEAN_FOLDED, "a:b_c");
  check_clean("x\0y", 3, 0, "x_y");
  check_clean("\xff\xfe", 2, 0, "\xEF\xBF\xBD\xEF\xBF\xBD");
  check_clean("\xEF\xBF\xBE", 3, 0, "\xEF\xBF\xBD");                /* U+FFFE */
  check_clean("\xC2\x85|\x7F", 4, 0, "_|_");                        /* NEL, DEL */
  check_clean("a\xC2\xA0" "1", 4, 0, "a\xC2\xA0" "1");              /* NBSP kept */
  check_clean("a\xC2\xA0" "1", 4, LJM_CLEAN_FOLDED, "a_1");         /* ... not in folded */
  check_clean("<&>\"'", 5, 0, "<&>\"'");                            /* XML escaping is libxml2's job */
  check_clean("\xC3(", 2, 0, "\xEF\xBF\xBD(");
  /* The pprof / heaptrack rules. */
  const unsigned prof = LJM_CLEAN_BRACKETS | LJM_CLEAN_SPACE;
  check_clean("t<int>\n\x7F\0;", 10, prof, "t(int)   ;");
  check_clean("\xC2\x85\xEF\xBF\xBE\xff", 6, prof, "\xC2\x85\xEF\xBF\xBE\xEF\xBF\xBD");
  check_clean_max("abcdef", 6, prof, 6, "abcdef");
  check_clean_max("abcdefg", 7, prof, 6, "abcdef...");
  check_clean_max("ab\xC3\xA9z", 5, 0, 3, "ab...");        /* cut before the é */
  check_clean_max("\x80\x80\x80\x80", 4, 0, 2, "...");    /* nothing but continuations */
}

static void test_fix_last(void)
{
  check_fix_last("@a.lua:12", "@a.lua:12");
  check_fix_last("foo 12", "foo_12");
  check_fix_last("foo 1.5", "foo_1.5");
  check_fix_last("foo\xD9\xA3", "foo\xD9\xA3");        /* no space before */
  check_fix_last("foo \xD9\xA3", "foo_\xD9\xA3");      /* Arabic-Indic digit */
  check_fix_last("TRACE [3]", "TRACE [3]");
  check_fix_last("CFUNC 0x10", "CFUNC 0x10");
  check_fix_last("12", "12");
  check_fix_last(" 7", "_7");
}

static void test_value(void)
{
  char buf[LJM_THOUSANDS_MAX];
  CHECK(strcmp(ljm_fmt_thousands(buf, 0), "0") == 0);
  CHECK(strcmp(ljm_fmt_thousands(buf, 999), "999") == 0);
  CHECK(strcmp(ljm_fmt_thousands(buf, 1000), "1,000") == 0);
  CHECK(strcmp(ljm_fmt_thousands(buf, 1234567), "1,234,567") == 0);
  CHECK(strcmp(ljm_fmt_thousands(buf, UINT64_MAX), "18,446,744,073,709,551,615") == 0);
  char num[LJM_NUM_MAX];
  CHECK(strcmp(ljm_fmt_u64(num, 0), "0") == 0);
  CHECK(strcmp(ljm_fmt_u64(num, UINT64_MAX), "18446744073709551615") == 0);
  CHECK(strcmp(ljm_fmt_fixed2(num, 0), "0.00") == 0);
  CHECK(strcmp(ljm_fmt_fixed2(num, 1180), "1180.00") == 0);
  CHECK(strcmp(ljm_fmt_fixed2(num, 12.345678), "12.35") == 0);
  CHECK(strcmp(ljm_fmt_fixed2(num, 0.004), "0.00") == 0);
  CHECK(strcmp(ljm_fmt_fixed2(num, 99.999), "100.00") == 0);
  CHECK(strcmp(ljm_fmt_fixed2(num, -1), "0.00") == 0);
  LjmFigures f = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  CHECK(ljm_value_get(&f, LJM_VALUE_DEFAULT) == 2);
  CHECK(ljm_value_get(&f, LJM_VALUE_ALLOC_COUNT) == 1);
  CHECK(ljm_value_get(&f, LJM_VALUE_INUSE_BYTES) == 6);
  CHECK(ljm_value_get(&f, LJM_VALUE_INUSE_COUNT) == 5);
  CHECK(ljm_value_get(&f, LJM_VALUE_PEAK_BYTES) == 8);
  CHECK(ljm_value_get(&f, LJM_VALUE_TEMP_COUNT) == 9 && !ljm_value_is_bytes(LJM_VALUE_TEMP_COUNT));
  CHECK(ljm_value_is_bytes(LJM_VALUE_PEAK_BYTES) && !ljm_value_is_bytes(LJM_VALUE_INUSE_COUNT));
  CHECK(strcmp(ljm_value_unit(LJM_VALUE_ALLOC_COUNT), "allocations") == 0);
}

/* Folded path of a site on its own: the model's nodes are its sites, so the
** hand-made site is put where site 0 of a one-site model is. */
static void check_folded(const LjmModel *m, const LjmSite *s, const char *want)
{
  LjmBuf b = {0};
  LjmFrames fr = {0};
  LjmSite *slot = (LjmSite *)ljm_model_site(m, 0);
  LjmSite saved = *slot;
  *slot = *s;
  ljm_frames_folded(&b, m, 0, &fr);
  *slot = saved;
  ljm_frames_free(&fr);
  if (strcmp(ljm_buf_str(&b), want) != 0) {
    fprintf(stderr, "FAIL folded: got '%s' want '%s'\n", ljm_buf_str(&b), want);
    failures++;
  }
  ljm_buf_free(&b);
}

static void check_label(const LjmModel *m, const LjmSite *s, const char *want)
{
  LjmBuf b = {0};
  ljm_site_label(&b, m, s);
  if (strcmp(ljm_buf_str(&b), want) != 0) {
    fprintf(stderr, "FAIL label: got '%s' want '%s'\n", ljm_buf_str(&b), want);
    failures++;
  }
  ljm_buf_free(&b);
}

/* A model of the stream in b (freed by the caller), or NULL. */
static LjmModel *load_stream(Sbuf *b)
{
  LjmModel *m = ljm_model_new();
  LjmInput *inp = ljm_input_mem(b->p, b->n);
  LjmDiag d;
  if (ljm_model_load(m, inp, "mem", &d) != LJM_OK || ljm_model_nsites(m) < 1) {
    fprintf(stderr, "FAIL stream did not load: %s\n", d.msg);
    failures++;
    ljm_model_free(m);
    m = NULL;
  }
  ljm_input_close(inp);
  return m;
}

static void test_frames(void)
{
  /* A one-site model whose site 0 the hand-made sites stand in for. */
  Sbuf b = {0};
  sb_prologue(&b, "ljs", 3);
  sb_byte(&b, 0x80);
  sb_prologue(&b, "ljm", 3);
  sb_byte(&b, 0x05); sb_uleb(&b, 0x10); sb_uleb(&b, 8);
  sb_byte(&b, 0x80);
  LjmModel *m = load_stream(&b);
  free(b.p);
  if (!m) return;
  LjmSite lua = {0}, c = {0}, tr = {0}, in = {0}, anon = {0}, bi = {0};
  lua.kind = LJM_SITE_LUA;
  lua.name = "@test.lua:14"; lua.name_len = 12; lua.line = 14;
  lua.func = "append"; lua.func_from = LJM_FUNC_SOURCE;
  lua.file = "test.lua"; lua.chunk = "@test.lua";
  check_folded(m, &lua, "test.lua;append;test.lua:14");
  check_label(m, &lua, "append (test.lua:14)");
  anon = lua;
  anon.file = ""; anon.func = ""; anon.chunk = "";
  check_folded(m, &anon, "?;?;:14");
  bi = lua;
  bi.func = "move"; bi.func_from = LJM_FUNC_BUILTIN; bi.file = "[builtin]"; bi.line = 0;
  check_folded(m, &bi, "[builtin];move");
  check_label(m, &bi, "move [builtin]");
  c.kind = LJM_SITE_C;
  c.name = "io;x 12:0x10"; c.name_len = 12; c.func = "io;x 12"; c.file = c.chunk = "";
  check_folded(m, &c, "[C];io:x_12");  /* ';' replaced, no trailing number */
  check_label(m, &c, "io;x 12 [C]");
  tr.kind = LJM_SITE_TRACE;
  tr.name = "TRACE [3]"; tr.name_len = 9; tr.traceno = 3; tr.trace_start = LJM_NO_SITE;
  tr.func = "TRACE [3]"; tr.file = tr.chunk = "";
  check_folded(m, &tr, "[JIT];TRACE [3]");
  check_label(m, &tr, "TRACE [3]");
  in.kind = LJM_SITE_INTERNAL;
  in.name = "INTERNAL"; in.name_len = 8; in.func = "INTERNAL"; in.file = in.chunk = "";
  check_folded(m, &in, "INTERNAL");
  ljm_model_free(m);

  /* A trace below the Lua line it starts at (a loaded model). */
  memset(&b, 0, sizeof(b));
  sb_prologue(&b, "ljs", 3);
  sb_proto(&b, 0x00, 0x100, "@loop.lua", 0);
  sb_byte(&b, 0x80);
  sb_prologue(&b, "ljm", 3);
  sb_byte(&b, 0x10); sb_uleb(&b, 2); sb_uleb(&b, 0x100); sb_uleb(&b, 7);
  sb_byte(&b, 0x11); sb_uleb(&b, 2); sb_uleb(&b, 0x1000); sb_uleb(&b, 16);
  sb_byte(&b, 0x80);
  m = load_stream(&b);
  free(b.p);
  if (m) {
    const LjmSite *t = ljm_model_site(m, 0);
    check_folded(m, t, "loop.lua;main chunk;loop.lua:7;TRACE [2] loop.lua:7");
    check_label(m, t, "TRACE [2] loop.lua:7 (in main chunk)");
    ljm_model_free(m);
  }
}

/* Equal items share an index, the dropped copy leaves no bytes, and the
** table survives growing past its first hash size. */
static void test_uniq(void)
{
  LjmUniq t = {0};
  char item[32];
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 1000; i++) {
      size_t start = t.b.len;
      snprintf(item, sizeof(item), "item%d", i);
      ljm_buf_puts(&t.b, item);
      CHECK(ljm_uniq_add(&t, start) == (uint32_t)i);
    }
  }
  CHECK(t.n == 1000);
  size_t start = t.b.len;  /* the empty string is an item too */
  CHECK(ljm_uniq_add(&t, start) == 1000);
  CHECK(ljm_uniq_add(&t, t.b.len) == 1000);
  size_t len;
  const char *p = ljm_uniq_item(&t, 417, &len);
  CHECK(len == 7 && memcmp(p, "item417", 7) == 0);
  ljm_uniq_item(&t, 1000, &len);
  CHECK(len == 0);
  size_t total = 0;
  for (uint32_t i = 0; i < t.n; i++) {
    ljm_uniq_item(&t, i, &len);
    total += len;
  }
  CHECK(total == t.b.len);
  ljm_uniq_free(&t);
  CHECK(t.n == 0 && t.b.p == NULL);
}

static void check_json_name(const char *s, size_t n, const char *want)
{
  LjmBuf b = {0}, tmp = {0};
  ljm_buf_puts(&b, "x");
  ljm_json_name(&b, &tmp, s, n);
  if (strcmp(ljm_buf_str(&b), want) != 0) {
    fprintf(stderr, "FAIL json_name: got '%s' want '%s'\n", ljm_buf_str(&b), want);
    failures++;
  }
  ljm_buf_free(&b);
  ljm_buf_free(&tmp);
}

static void test_json_name(void)
{
  check_json_name("", 0, "x\"?\"");  /* an empty name is shown as '?' */
  check_json_name("a\"b\\c", 5, "x\"a\\\"b\\\\c\"");
  check_json_name("f <a.lua:3>", 11, "x\"f <a.lua:3>\"");
  /* No control byte or invalid UTF-8 survives as such. */
  const char bad[] = "a\nb\x01\xff\xc3";
  LjmBuf b = {0}, tmp = {0};
  ljm_json_name(&b, &tmp, bad, sizeof(bad) - 1);
  for (size_t i = 0; i < b.len;) {
    uint32_t cp;
    i += ljm_utf8_decode((const unsigned char *)b.p + i, b.len - i, &cp);
    CHECK(cp != LJM_UTF8_BAD && cp >= 0x20 && cp != 0x7f);
  }
  CHECK(b.len >= 2 && b.p[0] == '"' && b.p[b.len - 1] == '"');
  ljm_buf_free(&b);
  ljm_buf_free(&tmp);
}

int main(void)
{
  test_uniq();
  test_json_name();
  test_utf8();
  test_clean();
  test_fix_last();
  test_value();
  test_frames();
  printf("common_test: %d failures\n", failures);
  return failures != 0;
}
