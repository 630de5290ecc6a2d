/* progress_test.c -- the text of the progress line, with and without a
** known total. */
#include <stdio.h>
#include <string.h>

#include "cli/progress.h"

static int failures;

static void expect(const char *got, const char *want)
{
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "FAIL: got '%s', want '%s'\n", got, want);
    failures++;
  }
}

int main(void)
{
  char b[256];
  ljm_progress_format(b, sizeof(b), "big.ljm", 3ull << 29, 6ll << 29, 30000000, 2.0);
  expect(b, "big.ljm: 1.5 GiB of 3.0 GiB (50%), 15.0 M events/s");
  ljm_progress_format(b, sizeof(b), "-", 700, -1, 1000, 0.5);
  expect(b, "-: 700 B read, 0.0 M events/s");
  ljm_progress_format(b, sizeof(b), "x.ljm.gz", 2048, 1024, 5, 0);
  expect(b, "x.ljm.gz: 2.0 KiB of 1.0 KiB (100%), 0.0 M events/s");
  printf("progress_test: %d failures\n", failures);
  return failures != 0;
}
