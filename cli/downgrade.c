/* downgrade.c -- ljm convert -f ljm: the standard stream of an extended one. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/output.h"

typedef struct Sink {
  FILE *f;
  int werr;  /* errno of the first failed write */
} Sink;

static int write_file(void *ud, const void *p, size_t n)
{
  Sink *s = ud;
  errno = 0;
  if (fwrite(p, 1, n, s->f) == n) return 0;
  if (!s->werr) s->werr = errno ? errno : EIO;
  return s->werr;
}

int ljm_cli_downgrade(const char *in_path, const char *out_path, int strict)
{
  LjmDiag d;
  LjmOutput out = LJM_OUTPUT_INIT;
  if (strcmp(out_path, "-") == 0 && isatty(1)) {
    fprintf(stderr, "ljm convert: ljm output is binary; not writing it to a terminal\n");
    return LJM_EXIT_USAGE;
  }
  LjmInput *in = ljm_input_open(in_path, &d);
  if (!in) {
    fprintf(stderr, "%s: cannot open: %s\n", in_path, d.msg);
    return LJM_EXIT_BAD_INPUT;
  }
  if (ljm_output_open(&out, out_path) != 0) {
    ljm_input_close(in);
    return LJM_EXIT_BAD_INPUT;
  }
  Sink sink = { out.f, 0 };
  uint64_t rate = 0;
  LjmStatus st = ljm_downgrade(in, write_file, &sink, &d, &rate);
  ljm_input_close(in);
  if (sink.werr) {  /* the output's fault, not the input's */
    fprintf(stderr, "ljm convert: %s: write error: %s\n", out_path, strerror(sink.werr));
    ljm_output_abort(&out);
    return LJM_EXIT_BAD_INPUT;
  }
  char line[512];
  ljm_diag_format(&d, in_path, line, sizeof(line));
  if (st == LJM_ERROR || (st == LJM_TRUNCATED && strict)) {
    fprintf(stderr, "%s\n", line);
    ljm_output_abort(&out);
    return LJM_EXIT_BAD_INPUT;
  }
  if (st == LJM_TRUNCATED)
    fprintf(stderr, "%s: byte %llu: warning: %s (written as far as it goes)\n", in_path,
            (unsigned long long)d.offset, d.msg);
  if (rate)
    fprintf(stderr, "ljm convert: %s is a sampled recording (one byte in %llu): the standard "
            "stream holds its raw samples, not estimates\n", in_path, (unsigned long long)rate);
  return ljm_output_commit(&out) ? LJM_EXIT_BAD_INPUT : LJM_EXIT_OK;
}
