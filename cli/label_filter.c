/* label_filter.c -- --label KEY=VALUE, the label filter of report, convert
** and growth (ljm_model_label_filter), and convert's --group-by KEY
** (ljm_model_group_by). */
#include <string.h>

#include "cli/cli.h"

int ljm_cli_label_arg(LjmCliLabels *l, const char *cmd, const char *arg)
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

int ljm_cli_group_arg(LjmCliLabels *l, const char *cmd, const char *arg)
{
  if (!*arg || strchr(arg, '=') || strlen(arg) > LJM_LABEL_KEY_MAX)
    return ljm_cli_usage_error(cmd, "--group-by wants a label KEY (plugin, route...; at most %d "
                               "bytes), not '%.80s'", LJM_LABEL_KEY_MAX, arg);
  if (l->group_by) return ljm_cli_usage_error(cmd, "one --group-by at a time");
  l->group_by = arg;
  return 0;
}

int ljm_cli_label_apply(LjmModel *m, const LjmCliLabels *l)
{
  for (size_t i = 0; i < l->n; i++)
    if (ljm_model_label_filter(m, l->terms[i])) return -1;
  if (l->group_by && ljm_model_group_by(m, l->group_by)) return -1;
  return 0;
}
