/* cmd_record.h -- `ljm record`: run a script under LuaJIT and record it. */
#ifndef REC_RUN_H
#define REC_RUN_H

/* argv[0] = "record", then [-o FILE] [--] script.lua [args...].
** Returns the exit status: the script's (0 or 1, as luajit), 2 for usage
** errors, 1 when the recording could not be started or written. */
int ljm_record_main(int argc, char **argv);

#endif
