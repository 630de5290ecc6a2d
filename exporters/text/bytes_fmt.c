/* bytes_fmt.c -- "%dB" and --human-readable sizes, bit-exact with the reference. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "exporters/text/bytes_fmt.h"

int ljm_fmt_lua_d(char *buf, size_t len, double n)
{
  long long k = (n >= -9223372036854775808.0 && n < 9223372036854775808.0)
                    ? (long long)n : INT64_MIN;
  return snprintf(buf, len, "%lld", k);
}

int ljm_fmt_bytes(char *buf, size_t len, double n, int human)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB" };
  if (!human) {
    int k = ljm_fmt_lua_d(buf, len, n);
    return k + snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, "B");
  }
  int u = 0;
  double v = n;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    u++;
  }
  if (v == floor(v)) {
    int k = ljm_fmt_lua_d(buf, len, v);
    return k + snprintf(buf + k, len > (size_t)k ? len - (size_t)k : 0, "%s", units[u]);
  }
  /* Two decimals, exact ties rounded up: n is an integer below 2^64 here
  ** (a fraction needs n >= 1024), so 128-bit integer arithmetic is exact. */
  if (n >= 0 && n < 18446744073709551616.0 && n == floor(n)) {
    unsigned __int128 num = (unsigned __int128)(uint64_t)n * 100;
    unsigned __int128 den = (unsigned __int128)1 << (10 * u);
    unsigned __int128 q = num / den, r = num % den;
    if (2 * r >= den) q++;
    return snprintf(buf, len, "%llu.%02u%s", (unsigned long long)(q / 100),
                    (unsigned)(q % 100), units[u]);
  }
  return snprintf(buf, len, "%.2f%s", v, units[u]);
}
