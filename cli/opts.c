/* opts.c -- option parsing shared by the subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"

int ljm_getopt(int argc, char **argv, const char *shortopts,
               const struct option *longopts, const char *cmd)
{
  opterr = 0;
  int li = -1;
  int c = getopt_long(argc, argv, shortopts, longopts, &li);
  if (c != '?' && c != ':') {
    /* An empty value names nothing (-o "" is no file): a usage error. */
    if (optarg && !*optarg) {
      if (li >= 0)
        ljm_cli_usage_error(cmd, "option '--%s' needs a value, not an empty one", longopts[li].name);
      else
        ljm_cli_usage_error(cmd, "option '-%c' needs a value, not an empty one", c);
      return '?';
    }
    return c;
  }
  const char *bad = argv[optind - 1];
  /* A long option given a value it does not take: getopt names it by its
  ** internal code (optopt), which means nothing to a user. */
  if (optopt && bad && bad[0] == '-' && bad[1] == '-' && strchr(bad, '=') && longopts) {
    for (const struct option *o = longopts; o->name; o++) {
      if (o->val == optopt && o->has_arg == no_argument) {
        ljm_cli_usage_error(cmd, "option '--%s' takes no value ('%s')", o->name, bad);
        return '?';
      }
    }
  }
  if (optopt && strchr(shortopts, optopt) && optopt != ':')
    ljm_cli_usage_error(cmd, "option '-%c' needs a value", optopt);
  else if (optopt)
    ljm_cli_usage_error(cmd, "unknown option '-%c'", optopt);
  else if (bad && strchr(bad, '=') == NULL && longopts)
    ljm_cli_usage_error(cmd, "unknown option or missing value: '%s'", bad);
  else
    ljm_cli_usage_error(cmd, "bad option '%s'", bad ? bad : "?");
  return '?';
}
