/* record_main.c -- `ljm_record ARGS` = `ljm record ARGS` (tests, bench). */
#include "cli/cmd_record.h"

int main(int argc, char **argv)
{
  argv[0] = "record";
  return ljm_record_main(argc, argv);
}
