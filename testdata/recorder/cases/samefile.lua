-- misc.memprof.start() on the file `ljm record` is already writing.
print(misc.memprof.start(arg[1]))
