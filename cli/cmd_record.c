/* cmd_record.c -- `ljm record`: run a script under LuaJIT and record it.
**
** Behaves like `luajit script.lua args...` (arg table, varargs, LUA_INIT,
** "luajit: " error messages with a traceback, exit status 0/1) while a
** recording of the whole run goes to FILE. misc.memprof and
** require "ljm.recorder" are available to the script; their recordings
** are separate streams that run alongside the whole-run one.
*/
#include "cli/cmd_record.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "cli/arena_room.h"
#include "cli/record_paused.h"
#include "recorder/api/lua_module.h"
#include "recorder/base/elf_symbols.h"
#include "recorder/base/path_pattern.h"
#include "recorder/ljm_recorder.h"

#define PROGNAME "luajit"  /* error messages read as luajit's */

/* The libraries the ljm CLI links for its exporters (the SVG writer's
** libxml2 and what it loads, pprof's protobuf-c): luajit has none of them
** and no Lua frame can be in them, so their symbols stay out of the
** stream (about 10,000, 0.5 MB and 2 ms at every start). */
static const char *const cli_only_libs[] = {
  "libxml2.so", "libicu", "libstdc++.so", "liblzma.so", "libprotobuf-c.so", NULL
};

static const char USAGE[] =
    "usage: ljm record [-o FILE] [--stacks [--stack-depth N] | --time] [--flush-interval S]\n"
    "                  [--sample BYTES [--sample-seed N]] [-j CMD]...\n"
    "                  [--snapshot-at-exit FILE] [--write-timeout S] [--paused]\n"
    "                  [--] script.lua [args...]\n"
    "\n"
    "Runs script.lua under LuaJIT like `luajit script.lua args...` and records\n"
    "every allocation of the run as an ljm memory profile (ljs v3 + ljm v3).\n"
    "\n"
    "  -o, --output FILE   profile to write (default: <script name>.record.ljm\n"
    "                      in the current directory; memprof.record.ljm for -);\n"
    "                      a name ending in .gz or .zst is compressed\n"
    "  --stacks            write the extended stream: the call stack of every\n"
    "                      event, time marks and RSS samples (ljm convert -f ljm\n"
    "                      turns it back into the standard stream)\n"
    "  --stack-depth N     with --stacks: keep the N innermost frames of each\n"
    "                      stack, 1..65535 (default 256)\n"
    "  --time              write time marks and RSS samples without stacks (an\n"
    "                      extended stream, for ljm growth; --stacks and\n"
    "                      --sample have them too)\n"
    "  --sample BYTES      sampled recording: one allocated byte in BYTES on\n"
    "                      average (1..1G, suffix k, M, G: 512k) picks the\n"
    "                      allocation that holds it; only those and their\n"
    "                      frees are written, and every view shows estimates.\n"
    "                      Cheap enough for production; exact recording finds\n"
    "                      a leak of a few small objects, sampling may not\n"
    "  --sample-seed N     the sampler's seed (1..2^53): the same run samples\n"
    "                      the same allocations (default: from the clock)\n"
    "  --flush-interval S  write what was recorded at least every S seconds\n"
    "                      (0.001..86400), not only when 8 MiB have gathered\n"
    "                      (sampled: 256 KiB; checked at events and every\n"
    "                      64 KiB allocated), so a killed process loses at\n"
    "                      most S seconds\n"
    "  --snapshot-at-exit FILE\n"
    "                      when the script ends (returns, fails or calls\n"
    "                      os.exit), write a heap snapshot to FILE (ljm heap)\n"
    "  --write-timeout S   a pipe or FIFO whose reader takes nothing for S\n"
    "                      seconds stops the recording with an error and\n"
    "                      lets the script run on (default 10; 0: wait for\n"
    "                      ever); -o, --snapshot-at-exit and the script must\n"
    "                      be three different files\n"
    "  --paused            record nothing until the process gets SIGUSR1,\n"
    "                      then until SIGUSR2; each SIGUSR1 starts a\n"
    "                      complete stream of its own, numbered: -o app.ljm\n"
    "                      writes app.1.ljm, app.2.ljm, ... (refused when the\n"
    "                      process ignores or handles those signals already)\n"
    "  -j CMD              a LuaJIT -j command, as luajit takes it (-joff,\n"
    "                      -j off, -jflush, -jv, -jdump=FILE): -joff charges\n"
    "                      every allocation to its line instead of its trace\n"
    "  -h, --help          this help\n"
    "\n"
    "In -o and --snapshot-at-exit, %p is the process id, %t the time the run\n"
    "starts (seconds since the epoch), %e the script's name without .lua, and\n"
    "%% a '%' (app.%p.ljm); so are they in the paths the script gives the\n"
    "module ljm.recorder (when it opens the file).\n"
    "\n"
    "The script may call misc.memprof.start(path)/stop() as under Tarantool;\n"
    "those recordings go to their own files, next to the whole-run one\n"
    "(standard streams unless started with {stacks = true}).\n";

static int usage_error(const char *msg, const char *arg)
{
  fprintf(stderr, "ljm record: %s%s%s. Try 'ljm record --help'.\n", msg,
          arg ? " " : "", arg ? arg : "");
  return 2;
}

static void message(const char *msg)
{
  fprintf(stderr, PROGNAME ": %s\n", msg);
  fflush(stderr);
}

static int report(lua_State *L, int status)
{
  if (status && !lua_isnil(L, -1)) {
    const char *msg = lua_tostring(L, -1);
    message(msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return status;
}

/* Error handler: the message plus a traceback, as luajit prints it. */
static int traceback(lua_State *L)
{
  if (!lua_isstring(L, 1)) {
    if (lua_isnoneornil(L, 1) || !luaL_callmeta(L, 1, "__tostring") ||
        !lua_isstring(L, -1))
      return 1;
    lua_remove(L, 1);
  }
  luaL_traceback(L, L, lua_tostring(L, 1), 1);
  return 1;
}

/* SIGINT while the script runs: like luajit, the next call, return or
** instruction of the VM raises "interrupted!" (a Lua error: the script's
** pcall, the traceback, exit status 1 and the recording's end all follow),
** and a second SIGINT kills as by default. */
static lua_State *interrupted_L;

static void interrupt_hook(lua_State *L, lua_Debug *ar)
{
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

static void on_sigint(int sig)
{
  signal(sig, SIG_DFL);
  lua_sethook(interrupted_L, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int docall(lua_State *L, int narg)
{
  int base = lua_gettop(L) - narg, status;
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  interrupted_L = L;
  signal(SIGINT, on_sigint);  /* also where SIGINT was ignored: luajit does so */
  status = lua_pcall(L, narg, 0, base);
  signal(SIGINT, SIG_DFL);
  lua_remove(L, base);
  if (status) lua_gc(L, LUA_GCCOLLECT, 0);
  return status;
}

static int handle_luainit(lua_State *L)
{
  const char *init = getenv("LUA_INIT");
  int status;
  if (!init) return 0;
  if (init[0] == '@') status = luaL_loadfile(L, init + 1);
  else status = luaL_loadbuffer(L, init, strlen(init), "=LUA_INIT");
  if (!status) status = docall(L, 0);
  return report(L, status);
}

/* arg = {[-1] = "luajit", [0] = script, args...}; pushes the args. */
static int push_args(lua_State *L, char **argv, int argc, int script)
{
  int i, narg = argc - script - 1;
  lua_createtable(L, narg, 2);
  lua_pushstring(L, PROGNAME);
  lua_rawseti(L, -2, -1);
  for (i = script; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
  luaL_checkstack(L, narg + 3, "too many arguments to script");
  for (i = script + 1; i < argc; i++) lua_pushstring(L, argv[i]);
  return narg;
}

static int preload_recorder(lua_State *L)
{
  return ljm_recorder_open(L);
}

/* -o or --snapshot-at-exit PATTERN with %p, %t and %e filled in, into buf
** (PATH_MAX bytes), *path pointed at it; 0, or a usage error said (2). */
static int expand_arg(const char *opt, const char **path, char *buf)
{
  const char *why;
  if (rec_path_expand(*path, buf, PATH_MAX, &why)) {
    fprintf(stderr, "ljm record: %s %s: %s. Try 'ljm record --help'.\n", opt, *path, why);
    return 2;
  }
  *path = buf;
  return 0;
}

/* The script's name for file names: its base name without .lua ("memprof"
** for standard input); *len is its length. */
static const char *script_name(const char *script, size_t *len)
{
  const char *b = strrchr(script, '/');
  b = b ? b + 1 : script;
  if (!strcmp(script, "-") || !*b) b = "memprof";
  *len = strlen(b);
  if (*len > 4 && !strcmp(b + *len - 4, ".lua")) *len -= 4;
  return b;
}

/* Default profile name: <script name>.record.ljm. */
static char *default_output(const char *script)
{
  size_t n;
  const char *b = script_name(script, &n);
  char *out = malloc(n + sizeof(".record.ljm"));
  if (!out) return NULL;
  memcpy(out, b, n);
  strcpy(out + n, ".record.ljm");
  return out;
}

/* A script that cannot be read fails as luajit fails on it, before the
** recording starts: a mistyped name leaves no profile behind. */
static int unreadable(const char *script)
{
  FILE *f;
  int e;
  if (!strcmp(script, "-")) return 0;
  if (!(f = fopen(script, "r"))) {
    fprintf(stderr, PROGNAME ": cannot open %s: %s\n", script, strerror(errno));
    return 1;
  }
  (void)getc(f);
  e = ferror(f) ? errno : 0;
  fclose(f);
  if (e) fprintf(stderr, PROGNAME ": cannot read %s: %s\n", script, strerror(e));
  return e != 0;
}

/* What pmain needs and returns; luajit also runs its main under
** lua_cpcall(), which shows as a "[C]: at 0x..." line in tracebacks. */
typedef struct RunArgs {
  int argc;
  char **argv;
  int script;            /* index of the script in argv */
  const char *output;    /* profile path (%p, %t and %e filled in) */
  const char *output_api;  /* the same, each '%' doubled: what the recorder expands */
  LjmRecOptions opt;     /* --stacks, --stack-depth */
  LjmRecorder *rec;      /* the whole-run recording */
  const char *snapshot;  /* --snapshot-at-exit FILE, or NULL */
  const char *snapshot_api;  /* the same, each '%' doubled */
  int paused;            /* --paused: recordings from SIGUSR1 to SIGUSR2 */
  const char *jit[32];   /* -j commands in order (on, off, flush, v, dump=F, ...) */
  int njit;
  int status;            /* 0 ok, else failed */
} RunArgs;

/* -j CMD[=ARGS] as luajit runs it: jit.CMD(), else the module jit.CMD's
** start(ARGS split at commas). Run before the recording starts. */
static const char JITCMD[] =
    "local cmd, args = ...\n"
    "local f = jit[cmd]\n"
    "if type(f) ~= 'function' then\n"
    "  local ok, m = pcall(require, 'jit.' .. cmd)\n"
    "  if not ok or type(m) ~= 'table' or type(m.start) ~= 'function' then\n"
    "    error('unknown luaJIT command or jit.* modules not installed', 0)\n"
    "  end\n"
    "  f = m.start\n"
    "end\n"
    "local a = {}\n"
    "for v in (args or ''):gmatch('[^,]+') do a[#a + 1] = v end\n"
    "f(unpack(a))\n";

static int jit_commands(lua_State *L, const RunArgs *a)
{
  for (int i = 0; i < a->njit; i++) {
    const char *cmd = a->jit[i], *eq = strchr(cmd, '=');
    int status = luaL_loadbuffer(L, JITCMD, sizeof(JITCMD) - 1, "=(command line)");
    if (status) return report(L, status);
    lua_pushlstring(L, cmd, eq ? (size_t)(eq - cmd) : strlen(cmd));
    if (eq) lua_pushstring(L, eq + 1);
    else lua_pushnil(L);
    if ((status = lua_pcall(L, 2, 0, 0))) return report(L, status);
  }
  return 0;
}

/* Whether the run can write path (--snapshot-at-exit): its directory is
** there and writable and the path, if it exists, is a regular file; else
** one line and 0, before the script runs. */
static int writable_target(const char *path)
{
  struct stat st;
  char *dir = strdup(path), *slash;
  int e = 0;
  if (!dir) return 0;
  slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = 0;
  else if (slash) *slash = 0;
  else strcpy(dir, ".");
  if (stat(dir, &st)) e = errno;
  else if (!S_ISDIR(st.st_mode)) e = ENOTDIR;
  else if (access(dir, W_OK | X_OK)) e = errno;
  else if (!stat(path, &st) && !S_ISREG(st.st_mode)) e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
  free(dir);
  if (e) fprintf(stderr, "ljm record: heap snapshot: %s: %s\n", path,
                 e == EINVAL ? "not a regular file" : strerror(e));
  return !e;
}

/* The heap snapshot at exit: after the script, or from exit() when it
** calls os.exit() (registered after the recorder's own exit handler, so
** it runs first, while the stream still records). */
static struct {
  lua_State *L;
  const char *path;
  int done, failed;
} exit_snap;

/* The thread that runs the script. exit() on another thread (a library's
** thread of a C module) runs the exit handlers there while the script
** runs on: its VM can be neither read for a snapshot nor stopped then.
** The recorder's own exit handler still ends the stream. */
static pthread_t vm_thread;
static pid_t run_pid;  /* a fork()ed child takes no snapshot */

static void snapshot_at_exit(void)
{
  LjmRecError err;
  if (exit_snap.done || !exit_snap.L || !exit_snap.path || getpid() != run_pid) return;
  exit_snap.done = 1;
  if (!pthread_equal(pthread_self(), vm_thread)) {
    fprintf(stderr, "ljm record: heap snapshot not taken: exit() was called on another"
                    " thread than the script's\n");
    exit_snap.failed = 1;
    return;
  }
  if (ljm_recorder_snapshot(exit_snap.L, exit_snap.path, &err)) {
    fprintf(stderr, "ljm record: heap snapshot: %s\n", err.msg);
    exit_snap.failed = 1;
  }
}

/* A script that calls os.exit() ends the process from inside pmain: the
** whole-run recording's error, if any, is reported from this exit handler
** (registered before the recorder's, so it runs after the stream has
** ended) and the exit status made non-zero unless the script's already is. */
static struct {
  RunArgs *a;      /* the run, NULL once main has reported itself */
  int code;        /* os.exit()'s status */
  pid_t pid;       /* a fork()ed child's exit is not the run's */
} exit_run;

static void record_at_exit(void)
{
  RunArgs *a = exit_run.a;
  LjmRecError err;
  int failed = exit_snap.failed;
  /* On another thread the status exit() was given is unknown here: it
  ** stays (a snapshot not taken was reported). */
  if (!a || getpid() != exit_run.pid || !pthread_equal(pthread_self(), vm_thread)) return;
  exit_run.a = NULL;
  if (a->paused && ljm_paused_finish()) failed = 1;
  if (a->rec && ljm_recorder_stop(a->rec, &err)) {
    fprintf(stderr, "ljm record: %s\n", err.msg);
    failed = 1;
  }
  a->rec = NULL;
  if (failed && !exit_run.code) {
    fflush(NULL);
    _exit(1);  /* exit()'s status can only be changed this way */
  }
}

/* os.exit() as LuaJIT's, noting the status for record_at_exit. */
static int os_exit(lua_State *L)
{
  if (lua_isboolean(L, 1)) exit_run.code = lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE;
  else exit_run.code = (int)luaL_optinteger(L, 1, EXIT_SUCCESS);
  if (lua_toboolean(L, 2)) snapshot_at_exit();  /* before os.exit closes L */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 0);
  return 0;
}

static void wrap_os_exit(lua_State *L)
{
  lua_getglobal(L, "os");
  lua_getfield(L, -1, "exit");
  lua_pushcclosure(L, os_exit, 1);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
}

static int pmain(lua_State *L)
{
  RunArgs *a = lua_touserdata(L, 1);
  LjmRecError err;
  const char *fname = a->argv[a->script];
  int narg = 0, status;
  lua_gc(L, LUA_GCSTOP, 0);
  luaL_openlibs(L);
  lua_gc(L, LUA_GCRESTART, -1);
  wrap_os_exit(L);
  ljm_recorder_open_misc(L);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, preload_recorder);
  lua_setfield(L, -2, "ljm.recorder");
  lua_pop(L, 2);

  /* The -j commands take effect before anything is recorded (a failed
  ** one ends the run as luajit ends it, leaving no profile). */
  if (jit_commands(L, a)) {
    a->status = 1;
    return 0;
  }
  if (a->paused) {  /* no recording until SIGUSR1 */
    if (ljm_paused_arm(L, a->output_api, &a->opt, &a->rec)) {
      a->status = 1;
      return 0;
    }
  } else if (!(a->rec = ljm_recorder_start_path_ex(L, a->output_api, &a->opt, &err))) {
    fprintf(stderr, "ljm record: %s\n", err.msg);
    a->status = 1;
    return 0;
  }
  if (a->snapshot) {
    exit_snap.L = L;
    exit_snap.path = a->snapshot_api;
    atexit(snapshot_at_exit);
  }
  status = handle_luainit(L);
  if (!status) {
    if (!strcmp(fname, "-")) fname = NULL;  /* stdin, as luajit */
    status = luaL_loadfile(L, fname);
    if (!status) {
      narg = push_args(L, a->argv, a->argc, a->script);
      status = docall(L, narg);
    }
    report(L, status);
  }
  snapshot_at_exit();
  a->status = status;
  if (a->paused && ljm_paused_finish()) a->status = 1;
  return 0;
}

/* The file path names once its links are followed (also a dangling link's
** target, which a write would create): the directory resolved and the last
** name, as a malloc'ed string; NULL if it cannot be told. */
static char *canonical(const char *path)
{
  char cur[PATH_MAX], link[PATH_MAX], *full, *out;
  const char *base;
  size_t n;
  int hops;
  if ((size_t)snprintf(cur, sizeof(cur), "%s", path) >= sizeof(cur)) return NULL;
  for (hops = 0; hops < 40; hops++) {  /* the kernel's ELOOP limit */
    ssize_t k = readlink(cur, link, sizeof(link) - 1);
    char *slash;
    if (k < 0) break;  /* not a link (or not there) */
    link[k] = 0;
    slash = strrchr(cur, '/');
    if (link[0] == '/' || !slash) {
      snprintf(cur, sizeof(cur), "%s", link);
    } else {
      slash[1] = 0;
      if (strlen(cur) + (size_t)k >= sizeof(cur)) return NULL;
      strcat(cur, link);
    }
  }
  if ((full = realpath(cur, NULL))) return full;
  {
    char *slash = strrchr(cur, '/');
    const char *dir = ".";
    if (slash) {
      *slash = 0;
      dir = *cur ? cur : "/";
      base = slash + 1;
    } else {
      base = cur;
    }
    full = realpath(dir, NULL);
  }
  if (!full) return NULL;
  n = strlen(full) + strlen(base) + 2;
  if ((out = malloc(n))) snprintf(out, n, "%s/%s", full, base);
  free(full);
  return out;
}

/* Whether paths a and b name one file: the same device and inode when
** both exist, else the same canonical path. */
static int same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  char *ca, *cb;
  int same;
  if (!stat(a, &sa) && !stat(b, &sb)) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  ca = canonical(a);
  cb = canonical(b);
  same = ca && cb && !strcmp(ca, cb);
  free(ca);
  free(cb);
  return same;
}

/* path (relative) under the current directory: a malloc'ed string, or
** NULL if the directory cannot be named. */
static char *absolute(const char *path)
{
  char cwd[PATH_MAX], *out;
  size_t n;
  if (!getcwd(cwd, sizeof(cwd))) return NULL;
  n = strlen(cwd) + strlen(path) + 2;
  if ((out = malloc(n))) snprintf(out, n, "%s/%s", cwd, path);
  return out;
}

/* The value of a long option arg whose name is n characters long: after
** its '=', else the next argument (*i moves on); NULL if there is none. */
static const char *option_value(const char *arg, size_t n, int argc, char **argv, int *i)
{
  if (arg[n] == '=') return arg + n + 1;
  return ++*i < argc ? argv[*i] : NULL;
}

/* Seconds 0.001..86400 (zero too if zero_ok) into *t: 1, else 0. */
static int seconds(const char *v, int zero_ok, double *t)
{
  char *end;
  *t = strtod(v, &end);
  return *v && !*end && ((zero_ok && *t == 0) || (*t >= 0.001 && *t <= 86400));
}

int ljm_record_main(int argc, char **argv)
{
  char *defout = NULL, *snapout = NULL;
  static char outx[PATH_MAX], snapx[PATH_MAX], outapi[2 * PATH_MAX], snapapi[2 * PATH_MAX];
  int i, status;
  lua_State *L;
  LjmRecError err;
  RunArgs a;

  memset(&a, 0, sizeof(a));
  for (i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--")) {
      i++;
      break;
    }
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      fputs(USAGE, stdout);
      return 0;
    }
    if (!strcmp(arg, "-o") || !strcmp(arg, "--output")) {
      if (++i >= argc) return usage_error("option needs a file name:", arg);
      a.output = argv[i];
    } else if (!strncmp(arg, "--output=", 9)) {
      a.output = arg + 9;
    } else if (!strncmp(arg, "-o", 2)) {
      a.output = arg + 2;
    } else if (!strcmp(arg, "--paused")) {
      a.paused = 1;
    } else if (!strcmp(arg, "--stacks")) {
      a.opt.stacks = 1;
    } else if (!strcmp(arg, "--time")) {
      a.opt.time = 1;
    } else if (!strcmp(arg, "--stack-depth") || !strncmp(arg, "--stack-depth=", 14)) {
      const char *v = arg[13] == '=' ? arg + 14 : NULL;
      char *end;
      unsigned long d;
      if (!v) {
        if (++i >= argc) return usage_error("option needs a number:", arg);
        v = argv[i];
      }
      d = strtoul(v, &end, 10);
      if (!*v || *end || *v == '-' || d < 1 || d > 65535)
        return usage_error("stack depth must be 1..65535, not", v);
      a.opt.stack_depth = (unsigned)d;
    } else if (!strcmp(arg, "--sample") || !strncmp(arg, "--sample=", 9) ||
               !strcmp(arg, "--sample-seed") || !strncmp(arg, "--sample-seed=", 14)) {
      int seed = arg[8] == '-';
      size_t n = seed ? 13 : 8;
      const char *v = arg[n] == '=' ? arg + n + 1 : NULL;
      uint64_t b;
      char *end;
      if (!v) {
        if (++i >= argc) return usage_error(seed ? "option needs a number:" : "option needs bytes:", arg);
        v = argv[i];
      }
      if (seed) {
        b = strtoull(v, &end, 10);
        if (!*v || *end || *v == '-' || b < 1 || b > (1ull << 53))
          return usage_error("seed must be 1..2^53, not", v);
        a.opt.seed = b;
      } else {
        if (ljm_recorder_parse_bytes(v, &b) || b < 1 || b > (1u << 30))
          return usage_error("sampling rate must be 1..1G bytes (e.g. 512k), not", v);
        a.opt.sample = b;
      }
    } else if (!strcmp(arg, "--snapshot-at-exit")) {
      if (++i >= argc) return usage_error("option needs a file name:", arg);
      a.snapshot = argv[i];
    } else if (!strcmp(arg, "-j") || (!strncmp(arg, "-j", 2) && arg[2])) {
      const char *v = arg[2] ? arg + 2 : NULL;
      if (!v) {
        if (++i >= argc) return usage_error("option needs a LuaJIT command (-j off):", arg);
        v = argv[i];
      }
      if (!*v) return usage_error("option needs a LuaJIT command (-j off):", arg);
      if (a.njit == (int)(sizeof(a.jit) / sizeof(a.jit[0])))
        return usage_error("too many -j options at", arg);
      a.jit[a.njit++] = v;
    } else if (!strncmp(arg, "--snapshot-at-exit=", 19)) {
      a.snapshot = arg + 19;
    } else if (!strcmp(arg, "--write-timeout") || !strncmp(arg, "--write-timeout=", 16)) {
      const char *v = option_value(arg, 15, argc, argv, &i);
      double t;
      if (!v) return usage_error("option needs seconds:", arg);
      if (!seconds(v, 1, &t))
        return usage_error("write timeout must be 0.001..86400 seconds or 0 (wait for ever), not", v);
      a.opt.write_timeout_ms = t == 0 ? LJM_REC_WAIT_FOREVER : (unsigned)(t * 1000 + 0.5);
    } else if (!strcmp(arg, "--flush-interval") || !strncmp(arg, "--flush-interval=", 17)) {
      const char *v = option_value(arg, 16, argc, argv, &i);
      double t;
      if (!v) return usage_error("option needs seconds:", arg);
      if (!seconds(v, 0, &t)) return usage_error("flush interval must be 0.001..86400 seconds, not", v);
      a.opt.flush_ms = (unsigned)(t * 1000 + 0.5);
    } else if (arg[0] == '-' && arg[1]) {
      return usage_error("unknown option", arg);
    } else {
      break;
    }
  }
  if (i >= argc) return usage_error("missing script", NULL);
  if (a.opt.stack_depth && !a.opt.stacks)
    return usage_error("--stack-depth needs --stacks", NULL);
  if (a.opt.seed && !a.opt.sample) return usage_error("--sample-seed needs --sample", NULL);
  a.argc = argc;
  a.argv = argv;
  a.script = i;
  if (a.output && !*a.output) return usage_error("empty output file name", NULL);
  if (a.snapshot && !*a.snapshot) return usage_error("empty snapshot file name", NULL);

  if (unreadable(argv[a.script])) return 1;
  if (!a.output) {
    defout = default_output(argv[a.script]);
    if (!defout) {
      fprintf(stderr, "ljm record: out of memory\n");
      return 1;
    }
    a.output = defout;
  }

  /* %p, %t and %e, filled in once, now: this process runs the script, so
  ** %p is its pid, and %t the time it starts; %e is the script's name (a
  ** module started by the script fills it in the same way). */
  {
    char name[256];
    size_t n;
    const char *b = script_name(argv[a.script], &n);
    snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), b);
    rec_path_set_exe(name);
  }
  if ((!defout && expand_arg("-o", &a.output, outx)) ||
      (a.snapshot && expand_arg("--snapshot-at-exit", &a.snapshot, snapx))) {
    free(defout);
    return 2;
  }
  if (a.snapshot && a.snapshot[0] != '/') {  /* where the run started, as -o */
    snapout = absolute(a.snapshot);
    if (snapout) a.snapshot = snapout;
  }
  {  /* before anything is opened for writing */
    const char *script = strcmp(argv[a.script], "-") ? argv[a.script] : NULL;
    const char *what = NULL, *x = NULL, *y = NULL;
    if (script && same_file(a.output, script))
      what = "-o FILE and the script", x = a.output, y = script;
    else if (a.snapshot && script && same_file(a.snapshot, script))
      what = "--snapshot-at-exit FILE and the script", x = a.snapshot, y = script;
    else if (a.snapshot && same_file(a.snapshot, a.output))
      what = "--snapshot-at-exit FILE and -o FILE", x = a.snapshot, y = a.output;
    if (what) {
      fprintf(stderr, "ljm record: %s are the same file (%s, %s): each needs its own. "
                      "Try 'ljm record --help'.\n", what, x, y);
      free(defout);
      free(snapout);
      return 2;
    }
  }
  /* The recorder fills fields in again: it gets each '%' doubled. */
  if (rec_path_escape(a.output, outapi, sizeof(outapi)) ||
      (a.snapshot && rec_path_escape(a.snapshot, snapapi, sizeof(snapapi)))) {
    fprintf(stderr, "ljm record: %s: file name too long\n", a.output);
    free(defout);
    free(snapout);
    return 1;
  }
  a.output_api = outapi;
  a.snapshot_api = a.snapshot ? snapapi : NULL;
  if (a.snapshot && !writable_target(a.snapshot)) {
    free(defout);
    free(snapout);
    return 1;
  }

  rec_csym_hide(cli_only_libs);
  rec_arena_room();
  L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "ljm record: cannot create a Lua state: not enough memory\n");
    free(defout);
    free(snapout);
    return 1;
  }
  exit_run.a = &a;
  exit_run.pid = getpid();
  vm_thread = pthread_self();
  run_pid = getpid();
  atexit(record_at_exit);  /* before the recorder's: runs after it */
  status = lua_cpcall(L, pmain, &a);
  report(L, status);
  exit_snap.L = NULL;
  exit_run.a = NULL;  /* from here on main reports */
  lua_close(L);  /* ends the stream (final 0x80) like a stop() */
  /* A fork()ed child that ran to the end: the recording is the parent's,
  ** which is no failure of the child's (ECHILD). */
  if (a.rec && ljm_recorder_stop(a.rec, &err) && err.code != ECHILD) {
    fprintf(stderr, "ljm record: %s\n", err.msg);
    status = 1;
  }
  free(defout);
  free(snapout);
  return (status || a.status || exit_snap.failed) ? 1 : 0;
}
