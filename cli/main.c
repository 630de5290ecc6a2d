/* main.c -- the ljm command: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "recorder/ljm_recorder.h"
#include "cli/cmd_record.h"

typedef struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} Command;

static const Command commands[] = {
  { "report", ljm_cmd_report, "print the Tarantool-compatible text report of a profile" },
  { "convert", ljm_cmd_convert, "write a profile or heap snapshot for pprof, Heaptrack, DevTools..." },
  { "heap", ljm_cmd_heap, "print what a heap snapshot holds, what keeps it alive, what grew" },
  { "growth", ljm_cmd_growth, "list what grows steadily over a recording's time (leaks in a server)" },
  { "top", ljm_cmd_top, "watch a recording while it is written: what holds memory, what grows" },
  { "record", ljm_record_main, "run a Lua script under LuaJIT and record its allocations" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void help(FILE *f)
{
  fprintf(f,
          "ljm - LuaJIT memory profiles (ljm streams of misc.memprof)\n"
          "\n"
          "usage: ljm <command> [options] [arguments]\n"
          "       ljm --help | --version\n"
          "\n"
          "commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'ljm <command> --help' describes a command.\n");
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    return ljm_cli_usage_error(NULL, "missing command");
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    help(stdout);
    return ljm_cli_close_output(stdout, "stdout");
  }
  if (!strcmp(argv[1], "--version")) {
    const char *b;
    printf("ljm %s (ljmkit)\nrecorder built for:\n", LJM_VERSION);
    for (size_t i = 0; (b = ljm_recorder_builds(i)) != NULL; i++) printf("  %s\n", b);
    return ljm_cli_close_output(stdout, "stdout");
  }
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  return ljm_cli_usage_error(NULL, "unknown command '%s'", argv[1]);
}
