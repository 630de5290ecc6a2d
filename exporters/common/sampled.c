/* sampled.c -- the sentence that marks estimates. */
#include "exporters/common/sampled.h"

#include <stdio.h>

const char *ljm_sampled_rate(char *buf, size_t len, uint64_t rate)
{
  if (rate && rate % (1u << 30) == 0) snprintf(buf, len, "%llu GiB", (unsigned long long)(rate >> 30));
  else if (rate && rate % (1u << 20) == 0) snprintf(buf, len, "%llu MiB", (unsigned long long)(rate >> 20));
  else if (rate && rate % (1u << 10) == 0) snprintf(buf, len, "%llu KiB", (unsigned long long)(rate >> 10));
  else snprintf(buf, len, "%llu B", (unsigned long long)rate);
  return buf;
}

const char *ljm_sampled_note(const LjmModel *m, char *buf, size_t len)
{
  char r[32];
  uint64_t rate = ljm_model_stream(m)->sample_rate;
  if (!rate) return NULL;
  snprintf(buf, len, "estimates from a sampled recording (one allocated byte in %s)",
           ljm_sampled_rate(r, sizeof(r), rate));
  return buf;
}
