/* sampled.c -- the sentences that mark estimates and filtered views. */
#include "exporters/common/sampled.h"

#include <stdio.h>
#include <string.h>

#include "exporters/common/value.h"

const char *ljm_sampled_rate(char *buf, size_t len, uint64_t rate)
{
  if (rate && rate % (1u << 30) == 0) snprintf(buf, len, "%llu GiB", (unsigned long long)(rate >> 30));
  else if (rate && rate % (1u << 20) == 0) snprintf(buf, len, "%llu MiB", (unsigned long long)(rate >> 20));
  else if (rate && rate % (1u << 10) == 0) snprintf(buf, len, "%llu KiB", (unsigned long long)(rate >> 10));
  else snprintf(buf, len, "%llu B", (unsigned long long)rate);
  return buf;
}

const char *ljm_temp_refusal(const LjmModel *m)
{
  const LjmStreamInfo *si = ljm_model_stream(m);
  if (ljm_model_totals(m)->temporaries) return NULL;
  if (si->snapshot) return "a heap snapshot shows what is alive at one moment, not what was freed";
  if (si->sample_rate)
    return "a sampled recording does not show which allocation comes right before a free; "
           "record exact (without --sample) to count temporary allocations";
  return "this profile does not count temporary allocations";
}

const char *ljm_filter_line(const LjmModel *m, char *buf, size_t len)
{
  char tail[64], num[32];
  snprintf(tail, sizeof(tail), " (%s other events left out)",
           ljm_fmt_thousands(num, ljm_model_filter_dropped(m)));
  size_t k = strlen(tail);
  if (len <= k + 8 || !ljm_model_filter_note(m, buf, len - k)) return NULL;
  memcpy(buf + strlen(buf), tail, k + 1);
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
