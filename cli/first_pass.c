/* first_pass.c -- the first reading of a recording for --lifetime, --lived
** and --site-leaked: each block's fate, before the view counts it. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

int ljm_cli_fates_read(LjmModel *m, const LjmCliFilter *l, const LjmCliWindow *w, LjmInput *in,
                       const char *path, const char *cmd, LjmProgressFn progress, void *ud)
{
  LjmModel *first = ljm_model_new();
  int rc = 0;
  if (!first || ljm_model_fate_scan(first, &l->fate)) {
    fprintf(stderr, "ljm: out of memory\n");
    ljm_model_free(first);
    return LJM_EXIT_BAD_INPUT;
  }
  if (w && (rc = ljm_cli_window_apply(first, w, path, cmd))) {
    ljm_model_free(first);
    return rc;
  }
  /* What cannot be read is said by the second reading, which reads the same. */
  LjmDiag d;
  if (progress) ljm_model_set_progress(first, progress, ud);
  ljm_model_load(first, in, path, &d);
  int header = ljm_model_stream(first)->ljm_version != 0;  /* its flags were read */
  LjmFates *f = ljm_model_fates_take(first);
  ljm_model_free(first);
  if (!f) {
    fprintf(stderr, "ljm: out of memory\n");
    return LJM_EXIT_BAD_INPUT;
  }
  if (l->fate.lived && header && !ljm_fates_timed(f)) {
    fprintf(stderr, "%s: --lived: the profile has no time marks (they are recorded by "
            "'ljm record --time', --stacks or --sample)\n", path);
    ljm_fates_free(f);
    return LJM_EXIT_BAD_INPUT;
  }
  if (ljm_model_filter_fates(m, f)) {
    ljm_fates_free(f);
    fprintf(stderr, "ljm: out of memory\n");
    return LJM_EXIT_BAD_INPUT;
  }
  return 0;
}

int ljm_cli_fates_apply(LjmModel *m, const LjmCliFilter *l, const LjmCliWindow *w,
                        const char *path, const char *cmd)
{
  const char *opt = ljm_cli_fate_named(l);
  if (!opt) return 0;
  struct stat st;
  if (!strcmp(path, "-") ||
      (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
    return ljm_cli_usage_error(cmd, "%s reads the recording twice (each block's fate first): "
                               "give a file, not %s", opt,
                               strcmp(path, "-") ? "a pipe or device" : "'-'");
  LjmDiag d;
  LjmInput *in = ljm_input_open(path, &d);
  if (!in) {
    fprintf(stderr, "%s: cannot open: %s\n", path, d.msg);
    return LJM_EXIT_BAD_INPUT;
  }
  int rc = ljm_cli_fates_read(m, l, w, in, path, cmd, NULL, NULL);
  ljm_input_close(in);
  return rc;
}
