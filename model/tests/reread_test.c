/* reread_test.c -- what ljm top's reading anew stands on (cli/top_reread.c),
** on a hand-built stream: a mark runs once, before the event it names, with
** every event before it applied, and may set the next; a mark past the end
** runs at the end; a reading limited to a prefix builds what the prefix
** builds; the live rows taken at marks after ljm_live_restart compare
** figures of one reading. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/tests/check.h"
#include "decoder/tests/stream_builder.h"
#include "model/ljm_live.h"
#include "model/ljm_model_load.h"

#define A 0x1000  /* proto @a.lua */

typedef struct Seen {
  LjmLive *live;
  uint64_t at[4], inuse[4];
  int n;
  uint64_t next;  /* the next mark to set, 0: none */
} Seen;

static uint64_t inuse_now(const LjmModel *m)
{
  uint64_t sum = 0;
  for (uint32_t i = 0; i < ljm_model_nsites(m); i++) sum += ljm_model_site(m, i)->fig.inuse_bytes;
  return sum;
}

static void on_mark(void *ud, LjmModel *m)
{
  Seen *s = ud;
  if (s->n < 4) {
    s->at[s->n] = ljm_model_events_seen(m);
    s->inuse[s->n] = inuse_now(m);
    s->n++;
  }
  if (s->live) CHECK(ljm_live_mark(s->live, m, (uint64_t)s->n * 1000000) == 0);
  if (s->next) {
    uint64_t at = s->next;
    s->next = 0;
    ljm_model_set_mark(m, at, on_mark, s);
  }
}

/* Five events: +100 +50 -100 +200 -200 (in use 100 150 50 250 50). */
static void stream(Sbuf *b, int end)
{
  memset(b, 0, sizeof(*b));
  sb_prologue(b, "ljs", 3);
  sb_proto(b, 0x00, A, "@a.lua", 1);
  sb_byte(b, 0x80);
  sb_prologue(b, "ljm", 3);
  sb_alloc_lua(b, A, 1, 0x10, 100);
  sb_alloc_lua(b, A, 2, 0x20, 50);
  sb_free_int(b, 0x10, 100);
  sb_alloc_lua(b, A, 3, 0x30, 200);
  sb_free_int(b, 0x30, 200);
  if (end) sb_byte(b, 0x80);
}

static LjmModel *read_marked(const Sbuf *b, size_t limit, Seen *s, uint64_t first, LjmStatus *st)
{
  LjmModel *m = ljm_model_new();
  LjmInput *in = ljm_input_mem(b->p, b->n);
  CHECK(m && in && ljm_model_filter_size(m, 0, UINT64_MAX) == 0);  /* marks count under a filter */
  if (limit) ljm_input_limit(in, limit);
  ljm_model_set_mark(m, first, on_mark, s);
  LjmDiag d;
  *st = ljm_model_load(m, in, "mem.ljm", &d);
  CHECK(!limit || ljm_input_decoded(in) <= limit);
  ljm_model_marks_due(m);
  ljm_input_close(in);
  return m;
}

static void test_marks(void)
{
  Sbuf b;
  stream(&b, 1);
  LjmStatus st;
  Seen s = { .next = 4 };
  LjmModel *m = read_marked(&b, 0, &s, 2, &st);
  CHECK(st == LJM_OK && ljm_model_events_seen(m) == 5);
  /* before event 2 (the free): +100 +50; before event 4: and -100 +200 */
  CHECK(s.n == 2 && s.at[0] == 2 && s.inuse[0] == 150 && s.at[1] == 4 && s.inuse[1] == 250);
  ljm_model_free(m);
  /* a mark at 0 runs before the first event; one past the end runs at the end */
  Seen z = { .next = 99 };
  m = read_marked(&b, 0, &z, 0, &st);
  CHECK(z.n == 2 && z.at[0] == 0 && z.inuse[0] == 0 && z.at[1] == 5 && z.inuse[1] == 50);
  ljm_model_free(m);
  free(b.p);
}

/* A reading limited to a prefix: what the prefix alone builds, however
** much more the input holds. */
static void test_limit(void)
{
  Sbuf whole, cut;
  stream(&whole, 1);
  stream(&cut, 0);
  for (size_t limit = 1; limit <= whole.n; limit++) {
    LjmStatus a, p;
    Seen s = { 0 }, t = { 0 };
    LjmModel *m = read_marked(&whole, limit, &s, 0, &a);
    Sbuf pre = { .p = whole.p, .n = limit };
    LjmModel *q = read_marked(&pre, 0, &t, 0, &p);
    CHECK(a == p && ljm_model_events_seen(m) == ljm_model_events_seen(q) &&
          inuse_now(m) == inuse_now(q) && ljm_model_stream(m)->bytes == ljm_model_stream(q)->bytes);
    if (limit == cut.n) CHECK(a == LJM_TRUNCATED && ljm_model_events_seen(m) == 5);
    ljm_model_free(m);
    ljm_model_free(q);
  }
  free(whole.p);
  free(cut.p);
}

/* Rows from marks of one reading: growth since the first mark, rates since
** the last, after ljm_live_restart forgot an earlier reading's rows. */
static void test_live_marks(void)
{
  Sbuf b;
  stream(&b, 1);
  LjmLive *l = ljm_live_new(NULL);
  CHECK(l != NULL);
  LjmStatus st;
  Seen s = { .live = l };
  LjmModel *m = read_marked(&b, 0, &s, 5, &st);  /* an earlier reading: one mark at the end */
  CHECK(ljm_live_sample(l, m, 9000000) == 0);
  ljm_model_free(m);
  ljm_live_restart(l);
  Seen t = { .live = l, .next = 4 };
  m = read_marked(&b, 0, &t, 2, &st);  /* marks at 2 (in use 150) and 4 (250) */
  CHECK(ljm_live_sample(l, m, 5000000) == 0);
  const LjmLiveTotals *tot = ljm_live_totals(l);
  /* 50 in use at the end: grown -100 since 2, -200 since 4, over 3 s from 4 */
  CHECK(tot->all.inuse_bytes == 50 && tot->all.grown == -100 && tot->all.grown_last == -200);
  CHECK(tot->refreshes == 3 && tot->since_us == 4000000);
  uint64_t hist[8];
  CHECK(ljm_live_history(l, hist, NULL, 8) == 2 && hist[0] == 50 && hist[1] == 50);
  ljm_live_free(l);
  ljm_model_free(m);
  free(b.p);
}

int main(void)
{
  test_marks();
  test_limit();
  test_live_marks();
  return check_done("reread_test");
}
