/* filter_args.c -- the filter options of report, convert, growth and top
** (--label KEY=VALUE, --size, --function, --source and their --not- forms:
** ljm_model_label_filter, ljm_model_filter_*), and convert's --group-by KEY
** (ljm_model_group_by). */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"

int ljm_cli_label_arg(LjmCliFilter *l, const char *cmd, const char *arg)
{
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg)
    return ljm_cli_usage_error(cmd, "--label wants KEY=VALUE (VALUE may be (none)), not '%s'",
                               arg);
  if (l->n == LJM_CLI_LABELS_MAX)
    return ljm_cli_usage_error(cmd, "at most %d --label options", LJM_CLI_LABELS_MAX);
  l->terms[l->n++] = arg;
  return 0;
}

int ljm_cli_group_arg(LjmCliFilter *l, const char *cmd, const char *arg)
{
  if (!*arg || strchr(arg, '=') || strlen(arg) > LJM_LABEL_KEY_MAX)
    return ljm_cli_usage_error(cmd, "--group-by wants a label KEY (plugin, route...; at most %d "
                               "bytes), not '%.80s'", LJM_LABEL_KEY_MAX, arg);
  if (l->group_by) return ljm_cli_usage_error(cmd, "one --group-by at a time");
  l->group_by = arg;
  return 0;
}

/* A size: digits, then an optional K, M or G (KiB, MiB, GiB), then an
** optional "iB" or "B", in either case ("64B", "1k", "1KiB", "2mib"). 0, or
** -1 when it is none or does not fit. */
static int size_of(const char *s, size_t len, uint64_t *v)
{
  char buf[32], *end;
  if (len == 0 || len >= sizeof(buf) || s[0] < '0' || s[0] > '9') return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  errno = 0;
  unsigned long long n = strtoull(buf, &end, 10);
  if (errno) return -1;
  int shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  default: break;
  }
  if ((shift && !strcasecmp(end, "iB")) || !strcasecmp(end, "B")) end += strlen(end);
  if (*end || (shift && n > (UINT64_MAX >> shift))) return -1;
  *v = (uint64_t)n << shift;
  return 0;
}

int ljm_cli_filter_arg(LjmCliFilter *f, const char *cmd, int c, const char *arg)
{
  static const char *const name[] = { "--size",   "--function", "--not-function",
                                      "--source", "--not-source", "--lifetime",
                                      "--lived",  "--site-leaked" };
  const char *opt = name[c - LJM_OPT_FILTER_FIRST];
  if (c == LJM_OPT_LIFETIME) {
    static const char *const kinds[] = { "", "leaked", "temporary", "freed" };
    for (int k = 1; k < 4; k++)
      if (!strcmp(arg, kinds[k])) {
        f->fate.lifetime = (LjmLifetime)k;
        return 0;
      }
    return ljm_cli_usage_error(cmd, "--lifetime wants leaked, temporary or freed, not '%.80s'",
                               arg);
  }
  if (c == LJM_OPT_LIVED) {
    const char *dots = strstr(arg, "..");
    uint64_t lo = 0, hi = UINT64_MAX;
    char part[64];
    size_t n = dots ? (size_t)(dots - arg) : 0;
    int bad = !dots || (n == 0 && !dots[2]) || n >= sizeof(part);
    if (!bad && n) {
      memcpy(part, arg, n);
      part[n] = '\0';
      bad = ljm_cli_duration(part, &lo) != 0;
    }
    if (!bad && dots[2]) bad = ljm_cli_duration(dots + 2, &hi) != 0;
    if (bad)
      return ljm_cli_usage_error(cmd, "--lived wants MIN..MAX durations ('1s..', '..500ms', "
                                 "'2s..1m'), not '%.80s'", arg);
    if (lo > hi) return ljm_cli_usage_error(cmd, "--lived %.80s: the range is empty", arg);
    f->fate.lived = 1;
    f->fate.lived_min_us = lo;
    f->fate.lived_max_us = hi;
    return 0;
  }
  if (c == LJM_OPT_SITE_LEAKED) {
    char *end;
    double pct = strtod(arg, &end);
    if (end != arg && *end == '%') end++;
    if (end == arg || *end || !(pct >= 0 && pct <= 100))
      return ljm_cli_usage_error(cmd, "--site-leaked wants a share from 0 to 100 (%%), not "
                                 "'%.80s'", arg);
    f->fate.site_leaked = 1;
    f->fate.site_leaked_pct = pct;
    return 0;
  }
  if (c == LJM_OPT_SIZE) {
    const char *dots = strstr(arg, "..");
    uint64_t lo = 0, hi = UINT64_MAX;
    int bad;
    if (!dots) {  /* one size: exactly that */
      bad = size_of(arg, strlen(arg), &lo);
      hi = lo;
    } else {
      bad = (dots == arg && !dots[2]) ||
            (dots > arg && size_of(arg, (size_t)(dots - arg), &lo)) ||
            (dots[2] && size_of(dots + 2, strlen(dots + 2), &hi));
    }
    if (bad)
      return ljm_cli_usage_error(cmd, "%s wants MIN..MAX in bytes (64..1K, 1M.., ..512), not "
                                 "'%.80s'", opt, arg);
    if (lo > hi) return ljm_cli_usage_error(cmd, "%s %.80s: the range is empty", opt, arg);
    if (f->size) return ljm_cli_usage_error(cmd, "one %s at a time", opt);
    f->size = 1;
    f->size_min = lo;
    f->size_max = hi;
    return 0;
  }
  regex_t re;
  int rc = regcomp(&re, arg, REG_EXTENDED | REG_NOSUB);
  if (rc) {
    char why[160];
    regerror(rc, &re, why, sizeof(why));
    regfree(&re);
    return ljm_cli_usage_error(cmd, "%s '%.80s' is not a regular expression: %s", opt, arg, why);
  }
  regfree(&re);
  if (f->nregex == LJM_FILTER_REGEX_MAX)
    return ljm_cli_usage_error(cmd, "at most %d --function, --source and --not-... options in "
                               "all", LJM_FILTER_REGEX_MAX);
  static const LjmFrameFilter kind[] = { 0, LJM_FILTER_FUNCTION, LJM_FILTER_NOT_FUNCTION,
                                         LJM_FILTER_SOURCE, LJM_FILTER_NOT_SOURCE };
  f->regex[f->nregex] = arg;
  f->regex_kind[f->nregex++] = kind[c - LJM_OPT_FILTER_FIRST];
  return 0;
}

const char *ljm_cli_filter_named(const LjmCliFilter *f)
{
  static const char *const name[] = { "--function", "--not-function", "--source",
                                      "--not-source" };
  if (f->size) return "--size";
  if (f->nregex) return name[f->regex_kind[0]];
  return ljm_cli_fate_named(f);
}

const char *ljm_cli_fate_named(const LjmCliFilter *l)
{
  if (l->fate.lifetime) return "--lifetime";
  if (l->fate.lived) return "--lived";
  return l->fate.site_leaked ? "--site-leaked" : NULL;
}

int ljm_cli_filter_apply(LjmModel *m, const LjmCliFilter *l)
{
  char err[256];
  for (size_t i = 0; i < l->n; i++)
    if (ljm_model_label_filter(m, l->terms[i])) return -1;
  if (l->size && ljm_model_filter_size(m, l->size_min, l->size_max)) return -1;
  for (size_t i = 0; i < l->nregex; i++)
    if (ljm_model_filter_frames(m, (LjmFrameFilter)l->regex_kind[i], l->regex[i], err,
                                sizeof(err)))
      return -1;
  if (l->group_by && ljm_model_group_by(m, l->group_by)) return -1;
  return 0;
}
