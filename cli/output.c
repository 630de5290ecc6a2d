/* output.c -- output files that never clobber on failure. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/output.h"

int ljm_output_open(LjmOutput *o, const char *path)
{
  struct stat st;
  o->path = path;
  o->tmp = NULL;
  if (strcmp(path, "-") == 0) {
    o->f = stdout;
    return 0;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {  /* /dev/null, a FIFO... */
    if (!(o->f = fopen(path, "wb"))) goto fail;
    return 0;
  }
  size_t n = strlen(path);
  if (!(o->tmp = malloc(n + 16))) goto fail;
  memcpy(o->tmp, path, n);
  memcpy(o->tmp + n, ".tmp-XXXXXX", 12);
  int fd = mkstemp(o->tmp);
  if (fd < 0) goto fail;
  if (!(o->f = fdopen(fd, "wb"))) {
    int e = errno;
    close(fd);
    unlink(o->tmp);
    errno = e;
    goto fail;
  }
  return 0;
fail:
  fprintf(stderr, "ljm: %s: cannot create: %s\n", path, strerror(errno));
  free(o->tmp);
  o->tmp = NULL;
  return -1;
}

int ljm_output_commit(LjmOutput *o)
{
  int rc = ljm_cli_close_output(o->f, o->path);
  o->f = NULL;
  if (o->tmp) {
    /* mkstemp made it 0600; give the file the mode a plain create would. */
    mode_t mask = umask(0);
    umask(mask);
    if (rc == 0 && chmod(o->tmp, 0666 & ~mask) != 0) rc = 1;
    if (rc == 0 && rename(o->tmp, o->path) != 0) {
      fprintf(stderr, "ljm: %s: cannot create: %s\n", o->path, strerror(errno));
      rc = 1;
    }
    if (rc) unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
  }
  return rc;
}

void ljm_output_abort(LjmOutput *o)
{
  if (o->f && o->f != stdout) fclose(o->f);
  o->f = NULL;
  if (o->tmp) {
    unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
  }
}
