/* path_pattern.h -- output names with fields filled in when a file is opened.
**
**   %p  the process id               app.%p.ljm    -> app.4242.ljm
**   %t  seconds since the epoch      app.%t.ljm    -> app.1795963200.ljm
**   %e  the executable's name        %e.%p.ljm     -> nginx.4242.ljm
**   %%  a '%'
**
** Any other '%' (an unknown letter, or one at the end) is an error, so a
** mistyped field never becomes part of a file name. %e is the base name of
** /proc/self/exe, or what rec_path_set_exe gave (ljm record: the script).
*/
#ifndef REC_PATH_PATTERN_H
#define REC_PATH_PATTERN_H

#include <stddef.h>

/* Expands pattern into out (outlen bytes). 0, or an errno value with *why
** set: EINVAL for a '%' that starts no field, ENAMETOOLONG when it does
** not fit. */
int rec_path_expand(const char *pattern, char *out, size_t outlen, const char **why);
/* Writes path with each '%' doubled, so that rec_path_expand gives it back;
** 0, or ENAMETOOLONG. */
int rec_path_escape(const char *path, char *out, size_t outlen);
/* The name %e gives from now on (copied, at most 255 bytes; NULL: the
** executable's again). */
void rec_path_set_exe(const char *name);

#endif
