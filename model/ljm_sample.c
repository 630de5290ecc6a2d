/* ljm_sample.c -- what one sampled block stands for (decoder/EXTENSION.md,
** "Sampling").
**
** A block of s bytes was written with probability p = 1 - exp(-s / rate):
** it stands for 1/p blocks and s/p bytes (the Horvitz-Thompson estimate,
** unbiased whatever the sizes). Figures are whole numbers, so the count
** 1/p is rounded down or up at random with the odds that keep its mean:
** the coin is drawn from a hash of the block's address, size and event
** index (an allocator hands the same address back for the same size, so
** address and size alone would round every such block the same way), and
** kept in the live block (LJM_SAMPLE_UP), so its free takes away exactly
** what its allocation added. */
#include <math.h>

#include "model/ljm_model_int.h"

static double unit_hash(uint64_t a, uint64_t s, uint64_t i)
{
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ s * 0xC2B2AE3D27D4EB4Full ^ i * 0x165667B19E3779F9ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return (double)(x >> 11) * (1.0 / 9007199254740992.0);  /* [0, 1) */
}

int ljm_sample_coin(double rate, uint64_t size, uint64_t addr, uint64_t index)
{
  if (!size) return 0;
  double c = 1.0 / -expm1(-(double)size / rate);
  return unit_hash(addr, size, index) < c - floor(c);
}

void ljm_sample_weight(double rate, uint64_t size, int up, uint64_t *count, uint64_t *bytes)
{
  if (!size) {  /* never sampled by a writer: count it once */
    *count = 1;
    *bytes = 0;
    return;
  }
  double p = -expm1(-(double)size / rate);
  *count = (uint64_t)floor(1.0 / p) + (up != 0);
  *bytes = (uint64_t)((double)size / p + 0.5);
}
