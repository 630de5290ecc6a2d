/* uleb_test.c -- ULEB128 decoding against hand-worked answers and a round
** trip of every bit position. */
#include <stdint.h>
#include <stdlib.h>

#include "decoder/ljm_uleb.h"
#include "decoder/tests/check.h"

static int uleb(const char *bytes, size_t n, uint64_t *v)
{
  return ljm_uleb_decode((const uint8_t *)bytes, (const uint8_t *)bytes + n, v);
}

static void test_uleb(void)
{
  uint64_t v = 99;
  CHECK(uleb("\x00", 1, &v) == 1 && v == 0);
  CHECK(uleb("\x7f", 1, &v) == 1 && v == 127);
  CHECK(uleb("\x80\x01", 2, &v) == 2 && v == 128);
  CHECK(uleb("\xe5\x8e\x26", 3, &v) == 3 && v == 624485);
  CHECK(uleb("\x87\x80\x00", 3, &v) == 3 && v == 7);  /* non-minimal, accepted */
  CHECK(uleb("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, &v) == 10 && v == UINT64_MAX);
  CHECK(uleb("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10, &v) == 10 && v == 1ull << 63);
  CHECK(uleb("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10, &v) == LJM_ULEB_OVERFLOW);
  CHECK(uleb("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11, &v) == LJM_ULEB_TOOLONG);
  CHECK(uleb("\x80\x80", 2, &v) == LJM_ULEB_SHORT);
  CHECK(uleb("", 0, &v) == LJM_ULEB_SHORT);
  /* Round trip of every bit position. */
  for (int bit = 0; bit < 64; bit++) {
    uint64_t x = (1ull << bit) | (bit ? 1 : 0);
    uint8_t buf[10];
    int n = 0;
    uint64_t t = x;
    do {
      buf[n] = t & 0x7f;
      t >>= 7;
      if (t) buf[n] |= 0x80;
      n++;
    } while (t);
    CHECK(ljm_uleb_decode(buf, buf + n, &v) == n && v == x);
  }
}

int main(void)
{
  test_uleb();
  return check_done("uleb_test");
}
