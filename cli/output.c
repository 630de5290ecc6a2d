/* output.c -- output files that never clobber on failure. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/output.h"

/* -- The temporary file a signal must not leave behind -----------------------
** A handler may only call async-signal-safe functions: the name is copied
** here beforehand, and the handler unlink()s it and dies of the signal as if
** it had not been caught. One temporary file at a time (ljm writes one). */

static const int caught[] = { SIGHUP, SIGINT, SIGTERM };
#define NCAUGHT (sizeof(caught) / sizeof(caught[0]))
static char sig_tmp[PATH_MAX + 32];
static volatile sig_atomic_t sig_armed;
static struct sigaction sig_saved[NCAUGHT];
static int sig_installed[NCAUGHT];

static void on_fatal_signal(int sig)
{
  if (sig_armed) unlink(sig_tmp);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  raise(sig);  /* pending until the handler returns, then fatal */
}

static void block_caught(sigset_t *old)
{
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < NCAUGHT; i++) sigaddset(&set, caught[i]);
  sigprocmask(SIG_BLOCK, &set, old);
}

/* With the signals blocked (since before the file was made). */
static void arm_blocked(const char *tmp)
{
  size_t n = strlen(tmp);
  if (sig_armed || n >= sizeof(sig_tmp)) return;  /* longer than the kernel takes */
  memcpy(sig_tmp, tmp, n + 1);
  sig_armed = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < NCAUGHT; i++) sigaddset(&sa.sa_mask, caught[i]);  /* one at a time */
  for (size_t i = 0; i < NCAUGHT; i++) {
    sig_installed[i] = 0;
    if (sigaction(caught[i], NULL, &sig_saved[i]) != 0) continue;
    if (sig_saved[i].sa_handler == SIG_IGN) continue;  /* nohup: stays ignored */
    sig_installed[i] = sigaction(caught[i], &sa, NULL) == 0;
  }
}

/* With the signals blocked: forget the name, give back the old handlers. */
static void disarm_blocked(const char *tmp)
{
  if (!sig_armed || strcmp(sig_tmp, tmp) != 0) return;
  sig_armed = 0;
  for (size_t i = 0; i < NCAUGHT; i++)
    if (sig_installed[i]) sigaction(caught[i], &sig_saved[i], NULL);
}

/* -- Output ----------------------------------------------------------------- */

int ljm_output_open(LjmOutput *o, const char *path)
{
  struct stat st;
  o->f = NULL;
  o->path = path;
  o->target = NULL;
  o->tmp = NULL;
  if (strcmp(path, "-") == 0) {
    o->f = stdout;
    return 0;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {  /* /dev/null, a FIFO... */
    if (!(o->f = fopen(path, "wb"))) goto fail;
    return 0;
  }
  /* A link is followed, as cp and shells do: its final target is replaced.
  ** A dangling one is refused (as cp does), as it may point anywhere. */
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    if (!(o->target = realpath(path, NULL))) {
      if (errno == ENOENT) {
        fprintf(stderr, "ljm: %s: cannot create: dangling symbolic link\n", path);
        return -1;
      }
      goto fail;
    }
  } else if (!(o->target = strdup(path))) {
    goto fail;
  }
  size_t n = strlen(o->target);
  if (!(o->tmp = malloc(n + 16))) goto fail;
  memcpy(o->tmp, o->target, n);
  memcpy(o->tmp + n, ".tmp-XXXXXX", 12);
  sigset_t old;
  block_caught(&old);
  int fd = mkstemp(o->tmp);
  if (fd >= 0) arm_blocked(o->tmp);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (fd < 0) goto fail;
  if (!(o->f = fdopen(fd, "wb"))) {
    int e = errno;
    close(fd);
    ljm_output_abort(o);
    errno = e;
    goto fail;
  }
  return 0;
fail:
  fprintf(stderr, "ljm: %s: cannot create: %s\n", path, strerror(errno));
  free(o->tmp);
  free(o->target);
  o->tmp = o->target = NULL;
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
    /* Blocked: a signal now must neither remove the renamed file's old name
    ** nor stop between the rename and giving back the handlers. */
    sigset_t old;
    block_caught(&old);
    if (rc == 0 && rename(o->tmp, o->target) != 0) {
      fprintf(stderr, "ljm: %s: cannot create: %s\n", o->path, strerror(errno));
      rc = 1;
    }
    if (rc) unlink(o->tmp);
    disarm_blocked(o->tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(o->tmp);
    o->tmp = NULL;
  }
  free(o->target);
  o->target = NULL;
  return rc;
}

void ljm_output_abort(LjmOutput *o)
{
  if (o->f && o->f != stdout) fclose(o->f);
  o->f = NULL;
  if (o->tmp) {
    sigset_t old;
    block_caught(&old);
    unlink(o->tmp);
    disarm_blocked(o->tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(o->tmp);
    o->tmp = NULL;
  }
  free(o->target);
  o->target = NULL;
}

int ljm_output_is_file(const LjmOutput *o) { return o->tmp != NULL; }
