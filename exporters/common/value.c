/* value.c -- the one figure a format shows (--value), and number formatting. */
#include "exporters/common/value.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

LjmValueKind ljm_value_resolve(LjmValueKind k)
{
  return k == LJM_VALUE_DEFAULT ? LJM_VALUE_ALLOC_BYTES : k;
}

uint64_t ljm_value_get(const LjmFigures *f, LjmValueKind k)
{
  switch (ljm_value_resolve(k)) {
  case LJM_VALUE_ALLOC_COUNT: return f->alloc_count;
  case LJM_VALUE_INUSE_BYTES: return f->inuse_bytes;
  case LJM_VALUE_INUSE_COUNT: return f->inuse_count;
  case LJM_VALUE_PEAK_BYTES: return f->peak_bytes;
  case LJM_VALUE_TEMP_COUNT: return f->temp_count;
  default: return f->alloc_bytes;
  }
}

int ljm_value_is_bytes(LjmValueKind k)
{
  k = ljm_value_resolve(k);
  return k != LJM_VALUE_ALLOC_COUNT && k != LJM_VALUE_INUSE_COUNT && k != LJM_VALUE_TEMP_COUNT;
}

const char *ljm_value_unit(LjmValueKind k)
{
  k = ljm_value_resolve(k);
  if (k == LJM_VALUE_ALLOC_COUNT) return "allocations";
  if (k == LJM_VALUE_INUSE_COUNT) return "objects";
  if (k == LJM_VALUE_TEMP_COUNT) return "temporary allocations";
  return "bytes";
}

char *ljm_fmt_thousands(char *buf, uint64_t v)
{
  char tmp[LJM_THOUSANDS_MAX];
  int n = 0;
  do {
    if (n && n % 4 == 3) tmp[n++] = ',';
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = '\0';
  return buf;
}

char *ljm_fmt_u64(char *buf, uint64_t v)
{
  char tmp[LJM_NUM_MAX];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = '\0';
  return buf;
}

char *ljm_fmt_fixed2(char *buf, double v)
{
  double h = v * 100.0 + 0.5;
  uint64_t c = h <= 0 ? 0 : h >= 9007199254740992.0 ? 9007199254740992ull : (uint64_t)h;
  size_t n = strlen(ljm_fmt_u64(buf, c / 100));
  buf[n] = '.';
  buf[n + 1] = (char)('0' + c / 10 % 10);
  buf[n + 2] = (char)('0' + c % 10);
  buf[n + 3] = '\0';
  return buf;
}

const char *ljm_value_snapshot_title(const LjmModel *m, LjmValueKind k)
{
  if (!ljm_model_stream(m)->snapshot) return NULL;
  return ljm_value_is_bytes(ljm_value_resolve(k)) ? "bytes retained at the snapshot"
                                                   : "objects at the snapshot";
}

const char *ljm_fmt_human(char *buf, size_t len, double n)
{
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  unsigned u = 0;
  double a = fabs(n);
  while (a >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
    a /= 1024;
    n /= 1024;
    u++;
  }
  if (u == 0) snprintf(buf, len, "%.0f B", n);
  else snprintf(buf, len, "%.1f %s", n, units[u]);
  return buf;
}
