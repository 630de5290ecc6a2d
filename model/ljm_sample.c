/* ljm_sample.c -- what one sampled block stands for (decoder/EXTENSION.md,
** "Sampling").
**
** A block of s bytes was written with probability p = 1 - exp(-s / rate):
** it stands for 1/p blocks and s/p bytes (the Horvitz-Thompson estimate,
** unbiased whatever the sizes). Figures are whole numbers, so the count
** 1/p is rounded down or up at random with the odds that keep its mean,
** the coin drawn from a hash of the block's address and size: the free of
** a block takes away exactly what its allocation added. */
#include <math.h>

#include "model/ljm_model_int.h"

static double unit_hash(uint64_t a, uint64_t s)
{
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ s * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return (double)(x >> 11) * (1.0 / 9007199254740992.0);  /* [0, 1) */
}

void ljm_sample_weight(double rate, uint64_t addr, uint64_t size, uint64_t *count,
                       uint64_t *bytes)
{
  if (!size) {  /* never sampled by a writer: count it once */
    *count = 1;
    *bytes = 0;
    return;
  }
  double p = -expm1(-(double)size / rate);
  double c = 1.0 / p, fl = floor(c);
  *count = (uint64_t)fl + (unit_hash(addr, size) < c - fl);
  *bytes = (uint64_t)((double)size / p + 0.5);
}
