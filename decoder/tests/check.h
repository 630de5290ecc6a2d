/* check.h -- a minimal assertion helper for the decoder's and the model's unit tests. */
#ifndef LJM_CHECK_H
#define LJM_CHECK_H

#include <stdio.h>

static int check_failures, check_count;

#define CHECK(cond)                                                       \
  do {                                                                    \
    check_count++;                                                        \
    if (!(cond)) {                                                        \
      check_failures++;                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                     \
  } while (0)

/* CHECK that also says, printf-style, what it saw. */
#define CHECKF(cond, ...)                                                 \
  do {                                                                    \
    check_count++;                                                        \
    if (!(cond)) {                                                        \
      check_failures++;                                                   \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fputc('\n', stderr);                                                \
    }                                                                     \
  } while (0)

/* Prints the tally; returns the exit status. */
static inline int check_done(const char *name)
{
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures ? 1 : 0;
}

#endif
