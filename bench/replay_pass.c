/* replay_pass.c -- the floors under `ljm report` beside the bare pass:
** the decoder with a consumer that does nothing, and the replay of the
** live heap alone (every freed block taken from the model's live-block
** map, every new one put there: what the report's Overrides and HEAP
** SUMMARY need), from events already decoded into memory. The replay
** fetches each event's buckets as far ahead as the model does
** (ljm_model.c, on_events). Each figure is the best of R runs.
**
**   replay_pass FILE [R]   prints events, the two times and the most
**                          blocks live
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "decoder/ljm_decoder.h"
#include "model/ljm_addrmap.h"

#define AHEAD 12  /* as in ljm_model.c */

typedef struct Ev {
  uint64_t oaddr, naddr, nsize;
  uint32_t kind;
} Ev;

typedef struct Evs {
  Ev *v;
  size_t n, cap;
  int keep;  /* 0: the decoder's floor, nothing kept */
  int oom;
} Evs;

static void on_events(void *ud, const LjmRawEvent *e, size_t n)
{
  Evs *s = ud;
  if (!s->keep || s->oom) return;
  for (size_t i = 0; i < n; i++) {
    if (s->n == s->cap) {
      size_t cap = s->cap ? s->cap * 2 : 1u << 16;
      Ev *v = realloc(s->v, cap * sizeof(*v));
      if (!v) {
        s->oom = 1;
        return;
      }
      s->v = v;
      s->cap = cap;
    }
    s->v[s->n++] = (Ev){ e[i].oaddr, e[i].naddr, e[i].nsize, (uint32_t)e[i].kind };
  }
}

static void on_event(void *ud, const LjmRawEvent *e) { on_events(ud, e, 1); }

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Decodes path into s (or only decodes); the status, or -1 on no input. */
static int decode(const char *path, Evs *s)
{
  LjmDiag diag;
  LjmInput *in = ljm_input_open(path, &diag);
  if (!in) {
    fprintf(stderr, "replay_pass: %s\n", diag.msg);
    return -1;
  }
  LjmCallbacks cb = { 0 };
  cb.on_event = on_event;
  cb.on_events = on_events;
  LjmStatus st = ljm_decode(in, &cb, s, &diag, NULL, NULL);
  ljm_input_close(in);
  if (st != LJM_OK) fprintf(stderr, "replay_pass: %s: %s at byte %llu\n", path, diag.msg,
                            (unsigned long long)diag.offset);
  return (int)st;
}

static void prefetch(const LjmAddrmap *m, const Ev *e)
{
  ljm_addrmap_prefetch(m, ljm_addrmap_key(e->kind == LJM_RAW_ALLOC ? e->naddr : e->oaddr));
  if (e->kind == LJM_RAW_REALLOC) ljm_addrmap_prefetch(m, ljm_addrmap_key(e->naddr));
}

/* One replay: seconds, and the most blocks live in *most (-1: no memory). */
static double replay(const Evs *s, size_t *most)
{
  LjmAddrmap m;
  if (ljm_addrmap_init(&m) != 0) return -1;
  double t0 = now();
  *most = 0;
  for (size_t i = 0; i < s->n; i++) {
    const Ev *e = &s->v[i];
    LjmBlock b;
    if (i + AHEAD < s->n) prefetch(&m, &s->v[i + AHEAD]);
    if (e->kind != LJM_RAW_ALLOC) ljm_addrmap_take(&m, e->oaddr, &b);
    if (e->kind != LJM_RAW_FREE && ljm_addrmap_put(&m, e->naddr, e->nsize, 0, &b) < 0) {
      ljm_addrmap_free(&m);
      return -1;
    }
    if (m.count > *most) *most = m.count;
  }
  double t = now() - t0;
  ljm_addrmap_free(&m);
  return t;
}

int main(int argc, char **argv)
{
  if (argc < 2 || argc > 3) {
    fputs("usage: replay_pass FILE [RUNS]\n", stderr);
    return 2;
  }
  int runs = argc == 3 ? atoi(argv[2]) : 5;
  if (runs < 1) runs = 1;
  Evs s = { 0 };
  double tdec = -1, trep = -1;
  size_t most = 0;
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    if (decode(argv[1], &s) != LJM_OK) return 1;
    double t = now() - t0;
    if (tdec < 0 || t < tdec) tdec = t;
  }
  s.keep = 1;
  if (decode(argv[1], &s) != LJM_OK || s.oom) {
    if (s.oom) fputs("replay_pass: out of memory\n", stderr);
    return 1;
  }
  for (int r = 0; r < runs; r++) {
    double t = replay(&s, &most);
    if (t < 0) {
      fputs("replay_pass: out of memory\n", stderr);
      return 1;
    }
    if (trep < 0 || t < trep) trep = t;
  }
  printf("%zu events, decoder alone %.4f s, live-block replay alone %.4f s, "
         "%zu blocks live at most\n", s.n, tdec, trep, most);
  free(s.v);
  return 0;
}
