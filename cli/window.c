/* window.c -- --from T and --to T, the time window of report, convert and
** growth (ljm_model_set_window): seconds from the recording's start, or
** from its end ("-30s"), which then is read once before the model is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli/cli.h"

int ljm_cli_duration(const char *s, uint64_t *usec)
{
  char *end;
  /* digits as people write them: no sign, space, hex or exponent */
  if (!((*s >= '0' && *s <= '9') || *s == '.') || strpbrk(s, "eExXpP")) return -1;
  double v = strtod(s, &end), mul;
  if (end == s || !(v >= 0)) return -1;
  if (!*end || !strcasecmp(end, "s")) mul = 1e6;
  else if (!strcasecmp(end, "ms")) mul = 1e3;
  else if (!strcasecmp(end, "m") || !strcasecmp(end, "min")) mul = 60e6;
  else if (!strcasecmp(end, "h")) mul = 3600e6;
  else return -1;
  if (v * mul >= 1.8e19) return -1;
  *usec = (uint64_t)(v * mul + 0.5);  /* 0.3 s is 300000 us, not 299999 */
  return 0;
}

int ljm_cli_window_arg(LjmCliWindow *w, const char *cmd, int is_to, const char *arg)
{
  LjmCliTime *t = is_to ? &w->to : &w->from;
  const char *s = arg;
  t->from_end = *s == '-';
  if (t->from_end) s++;
  if (*s == '+' || *s == '-' || ljm_cli_duration(s, &t->us))
    return ljm_cli_usage_error(cmd, "%s wants a time in the recording: seconds from its start "
                               "('30', '2m', '1500ms') or from its end ('-30s'), not '%.80s'",
                               is_to ? "--to" : "--from", arg);
  t->arg = arg;
  return 0;
}

static void last_mark(void *ud, uint64_t usec) { *(uint64_t *)ud = usec; }

/* The stream's last time mark, LJM_NO_TIME_US if none could be read. */
static uint64_t recorded(const char *path)
{
  LjmDiag d;
  uint64_t last = LJM_NO_TIME_US, bytes, trailing;
  LjmInput *in = ljm_input_open(path, &d);
  if (!in) return last;
  LjmCallbacks cb;
  memset(&cb, 0, sizeof(cb));
  cb.on_time = last_mark;
  ljm_decode(in, &cb, &last, &d, &bytes, &trailing);  /* the load reports its errors */
  ljm_input_close(in);
  return last;
}

int ljm_cli_window_resolve(const LjmCliWindow *w, const char *path, const char *cmd,
                           uint64_t *from_us, uint64_t *to_us)
{
  uint64_t end = 0, from = 0, to = UINT64_MAX;
  if (w->from.from_end || w->to.from_end) {
    struct stat st;
    if (!strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISREG(st.st_mode)))
      return ljm_cli_usage_error(cmd, "a time from the end ('%s') needs a regular FILE: a pipe "
                                 "or standard input is read once",
                                 w->from.from_end ? w->from.arg : w->to.arg);
    end = recorded(path);
    if (end == LJM_NO_TIME_US) end = 0;  /* the load says what is wrong */
  }
  if (w->from.arg)
    from = !w->from.from_end ? w->from.us : w->from.us < end ? end - w->from.us : 0;
  if (w->to.arg) to = !w->to.from_end ? w->to.us : w->to.us < end ? end - w->to.us : 0;
  if (w->to.arg && to <= from)
    return ljm_cli_usage_error(cmd, "--to %s is not after --from %s", w->to.arg,
                               w->from.arg ? w->from.arg : "0");
  *from_us = from;
  *to_us = to;
  return 0;
}

int ljm_cli_window_apply(LjmModel *m, const LjmCliWindow *w, const char *path, const char *cmd)
{
  uint64_t from, to;
  if (!w->from.arg && !w->to.arg) return 0;
  int rc = ljm_cli_window_resolve(w, path, cmd, &from, &to);
  if (!rc) ljm_model_set_window(m, from, to);
  return rc;
}
