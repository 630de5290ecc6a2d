/* decode_fuzzer.c -- libFuzzer target: any bytes through the decoder into a
** model, then every view read back. Crashes, leaks and hangs are failures. */
#include <stddef.h>
#include <stdint.h>

#include "model/ljm_model_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_event(void *ud, const LjmModel *m, const LjmLiveEvent *ev)
{
  size_t *n = ud;
  if (ev->site >= ljm_model_nsites(m)) __builtin_trap();
  if (ev->old_site != LJM_NO_SITE && ev->old_site >= ljm_model_nsites(m)) __builtin_trap();
  (*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  LjmModel *m = ljm_model_new();
  LjmInput *in = ljm_input_mem(data, size);
  size_t seen = 0;
  LjmListener l = { on_event };
  ljm_model_set_listener(m, &l, &seen);
  LjmDiag d;
  ljm_model_load(m, in, "fuzz", &d);
  const LjmTotals *t = ljm_model_totals(m);
  if (seen != t->events) __builtin_trap();
  uint64_t live = 0;
  for (uint32_t i = 0; i < ljm_model_nsites(m); i++) {
    const LjmSite *s = ljm_model_site(m, i);
    live += s->fig.inuse_bytes;
    if (s->fig.peak_bytes > t->fig.peak_bytes) __builtin_trap();
  }
  if (live != t->fig.inuse_bytes) __builtin_trap();
  for (int sec = 0; sec < 3; sec++) {
    const LjmRow *rows;
    size_t n = ljm_model_rows(m, (LjmSection)sec, &rows);
    for (size_t i = 1; i < n; i++)
      if (rows[i - 1].num < rows[i].num) __builtin_trap();
  }
  const LjmHeapLine *h;
  size_t nh = ljm_model_heap_summary(m, &h);
  for (size_t i = 0; i < nh; i++)
    if (!(h[i].dbytes > 0)) __builtin_trap();
  ljm_input_close(in);
  ljm_model_free(m);
  return 0;
}
