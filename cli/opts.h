/* opts.h -- getopt_long with one-line usage errors for every subcommand. */
#ifndef LJM_OPTS_H
#define LJM_OPTS_H

#include <getopt.h>

/* Like getopt_long, but silent: unknown options and missing arguments come
** back as '?' with a one-line message already printed for 'cmd', and so
** does an option given an empty value (-o ""). */
int ljm_getopt(int argc, char **argv, const char *shortopts,
               const struct option *longopts, const char *cmd);

#endif
