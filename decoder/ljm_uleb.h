/* ljm_uleb.h -- ULEB128 decoding, the one number encoding of the stream. */
#ifndef LJM_ULEB_H
#define LJM_ULEB_H

#include <stdint.h>

#define LJM_ULEB_MAX 10  /* bytes of a 64-bit value */

/* Result of ljm_uleb_decode beyond a byte count. */
#define LJM_ULEB_SHORT 0      /* input ends inside the number */
#define LJM_ULEB_TOOLONG (-1) /* more than 10 bytes */
#define LJM_ULEB_OVERFLOW (-2) /* value does not fit in 64 bits */

/* Decodes one ULEB128 number from [p, end). Accepts non-minimal encodings
** up to 10 bytes. Returns the bytes consumed (> 0), or one of the codes
** above. */
static inline int ljm_uleb_decode(const uint8_t *p, const uint8_t *end,
                                  uint64_t *out)
{
  uint64_t v = 0;
  for (int i = 0; i < LJM_ULEB_MAX; i++) {
    if (p + i >= end) return LJM_ULEB_SHORT;
    uint8_t b = p[i];
    if (i == LJM_ULEB_MAX - 1 && (b & 0x7e)) return LJM_ULEB_OVERFLOW;
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return i + 1;
    }
  }
  return LJM_ULEB_TOOLONG;
}

#endif
