/* path_pattern.c -- %p, %t, %e and %% in output names (path_pattern.h). */
#include "recorder/base/path_pattern.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char exe_set[256];  /* rec_path_set_exe's name, "" when none */

void rec_path_set_exe(const char *name)
{
  if (!name) name = "";
  snprintf(exe_set, sizeof(exe_set), "%s", name);
}

/* The executable's base name: /proc/self/exe's, without " (deleted)". */
static void exe_name(char *buf, size_t len)
{
  char path[4096];
  if (exe_set[0]) {
    snprintf(buf, len, "%s", exe_set);
    return;
  }
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  path[n > 0 ? n : 0] = '\0';
  size_t k = strlen(path);
  if (k > 10 && !strcmp(path + k - 10, " (deleted)")) path[k - 10] = '\0';
  const char *b = strrchr(path, '/');
  snprintf(buf, len, "%s", b ? b + 1 : path[0] ? path : "unknown");
}

int rec_path_expand(const char *pattern, char *out, size_t outlen, const char **why)
{
  size_t n = 0;
  for (const char *p = pattern; *p; p++) {
    char field[300];
    const char *add = p;  /* a literal character: itself */
    size_t k = 1;
    if (*p == '%') {
      add = field;
      switch (p[1]) {
      case 'p': snprintf(field, sizeof(field), "%ld", (long)getpid()); break;
      case 't': snprintf(field, sizeof(field), "%lld", (long long)time(NULL)); break;
      case 'e': exe_name(field, sizeof(field)); break;
      case '%': add = "%"; break;
      default:
        *why = p[1] ? "a '%' that starts no field (%p pid, %t time, %e executable, %% a '%')"
                    : "a '%' at the end (%p pid, %t time, %e executable, %% a '%')";
        return EINVAL;
      }
      k = strlen(add);
      p++;
    }
    if (n + k >= outlen) {
      *why = "the name is too long once its fields are filled in";
      return ENAMETOOLONG;
    }
    memcpy(out + n, add, k);
    n += k;
  }
  if (n >= outlen) {
    *why = "the name is too long";
    return ENAMETOOLONG;
  }
  out[n] = '\0';
  return 0;
}

int rec_path_escape(const char *path, char *out, size_t outlen)
{
  size_t n = 0;
  for (const char *p = path; *p; p++) {
    if (n + 2 >= outlen) return ENAMETOOLONG;
    out[n++] = *p;
    if (*p == '%') out[n++] = '%';
  }
  if (n >= outlen) return ENAMETOOLONG;
  out[n] = '\0';
  return 0;
}
