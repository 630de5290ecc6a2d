/* record_paused.c -- ljm record --paused (record_paused.h). */
#include "cli/record_paused.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "recorder/base/path_pattern.h"

static struct {
  lua_State *L;
  const char *pattern;
  LjmRecOptions opt;
  LjmRecorder **rec;
  volatile sig_atomic_t want;    /* 1: recording asked for (SIGUSR1), 0: not */
  /* the script's own hook, put back by ours */
  lua_Hook prev_hook;
  int prev_mask, prev_count;
  unsigned n;                    /* recordings started */
  char shown[PATH_MAX];          /* the file of the last one */
  int failed;
  struct sigaction old1;         /* SIGUSR1's, put back if SIGUSR2 cannot be set */
} P;

static void ctl_hook(lua_State *L, lua_Debug *ar);

static void on_signal(int sig)
{
  int e = errno;
  P.want = sig == SIGUSR1;
  /* the hook the script has now, unless it is ours already */
  lua_Hook h = lua_gethook(P.L);
  if (h != ctl_hook) {
    P.prev_hook = h;
    P.prev_mask = lua_gethookmask(P.L);
    P.prev_count = lua_gethookcount(P.L);
  }
  lua_sethook(P.L, ctl_hook, LUA_MASKCOUNT, 1);
  errno = e;
}

int ljm_paused_path(const char *pattern, unsigned n, char *out, size_t len)
{
  size_t k = strlen(pattern), cut = k;
  const char *slash = strrchr(pattern, '/');
  size_t base = slash ? (size_t)(slash - pattern) + 1 : 0;
  static const char *const sufs[] = { ".gz", ".zst", ".ljm" };
  for (size_t i = 0; i < 3; i++) {
    size_t s = strlen(sufs[i]);
    if (cut - base > s && !memcmp(pattern + cut - s, sufs[i], s)) cut -= s;
  }
  int w = snprintf(out, len, "%.*s.%u%s", (int)cut, pattern, n, pattern + cut);
  return w < 0 || (size_t)w >= len ? -1 : 0;
}

static void start(lua_State *L)
{
  char path[2 * PATH_MAX + 16];
  LjmRecError err;
  if (ljm_paused_path(P.pattern, P.n + 1, path, sizeof(path))) {
    fprintf(stderr, "ljm record: SIGUSR1: the numbered file name is too long\n");
    P.failed = 1;
    return;
  }
  *P.rec = ljm_recorder_start_path_ex(L, path, &P.opt, &err);
  if (!*P.rec) {
    fprintf(stderr, "ljm record: SIGUSR1: %s\n", err.msg);
    P.failed = 1;
    return;
  }
  P.n++;
  const char *why;
  if (!rec_path_expand(path, P.shown, sizeof(P.shown), &why))
    fprintf(stderr, "ljm record: SIGUSR1: recording to %s until SIGUSR2\n", P.shown);
}

static void stop(void)
{
  LjmRecError err;
  LjmRecorder *r = *P.rec;
  *P.rec = NULL;
  if (ljm_recorder_stop(r, &err)) {
    fprintf(stderr, "ljm record: SIGUSR2: %s\n", err.msg);
    P.failed = 1;
  } else {
    fprintf(stderr, "ljm record: SIGUSR2: %s complete\n", P.shown);
  }
}

static void ctl_hook(lua_State *L, lua_Debug *ar)
{
  sigset_t usr, old;
  (void)ar;
  /* The script's hook back first, with the handler held off (it would
  ** set ours again between), then what the signals asked for; one that
  ** comes while that runs sets the hook again. */
  sigemptyset(&usr);
  sigaddset(&usr, SIGUSR1);
  sigaddset(&usr, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr, &old);
  lua_sethook(L, P.prev_hook, P.prev_mask, P.prev_count);
  P.prev_hook = NULL;
  P.prev_mask = P.prev_count = 0;
  int want = P.want;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (want && !*P.rec) start(L);
  else if (!want && *P.rec) stop();
}

/* Whether sig is left to its default action; else one line, 0. */
static int free_signal(int sig, const char *name)
{
  struct sigaction sa;
  if (sigaction(sig, NULL, &sa) != 0) return 0;
  if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL) return 1;
  fprintf(stderr, "ljm record: --paused: %s is %s in this process already (inherited from its "
                  "parent); taking it over would change what the program does with it, so "
                  "--paused is refused: start ljm record with %s at its default action\n",
          name, !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN ? "ignored" : "handled",
          name);
  return 0;
}

int ljm_paused_arm(lua_State *L, const char *output_api, const LjmRecOptions *opt,
                   LjmRecorder **rec)
{
  struct sigaction sa;
  if (!free_signal(SIGUSR1, "SIGUSR1") || !free_signal(SIGUSR2, "SIGUSR2")) return -1;
  P.L = L;
  P.pattern = output_api;
  P.opt = *opt;
  P.rec = rec;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGUSR1);  /* one handler at a time */
  sigaddset(&sa.sa_mask, SIGUSR2);
  if (sigaction(SIGUSR1, &sa, &P.old1) || sigaction(SIGUSR2, &sa, NULL)) {
    fprintf(stderr, "ljm record: --paused: cannot handle SIGUSR1/SIGUSR2: %s\n", strerror(errno));
    sigaction(SIGUSR1, &P.old1, NULL);
    return -1;
  }
  return 0;
}

int ljm_paused_finish(void)
{
  struct sigaction sa;
  const char *lost = NULL;
  if (!P.L) return 0;
  if (sigaction(SIGUSR1, NULL, &sa) == 0 && sa.sa_handler != on_signal) lost = "SIGUSR1";
  else if (sigaction(SIGUSR2, NULL, &sa) == 0 && sa.sa_handler != on_signal) lost = "SIGUSR2";
  if (lost)
    fprintf(stderr, "ljm record: --paused: the script set its own %s handler, which ended "
                    "ljm record's (signals after that did not start or stop recordings)\n", lost);
  /* No more hooks from here: the state they would use goes away. */
  signal(SIGUSR1, SIG_IGN);
  signal(SIGUSR2, SIG_IGN);
  if (lua_gethook(P.L) == ctl_hook) lua_sethook(P.L, P.prev_hook, P.prev_mask, P.prev_count);
  P.L = NULL;
  return P.failed;
}
