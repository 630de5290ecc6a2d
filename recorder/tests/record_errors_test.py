#!/usr/bin/env python3
"""record_errors_test.py -- write errors end a recording, never the host, and
are never lost (VM under test):
* `ulimit -f` (RLIMIT_FSIZE, SIGXFSZ) and a FIFO whose reader has gone
  (SIGPIPE): `ljm record` and the Lua module in plain luajit live on, and
  the error names the file with "File too large" / "Broken pipe"; also
  when only a compressed file's trailer, written on the host's thread at
  stop, crosses the limit;
* a full disk (/dev/full) however the script ends (os.exit(0), (true),
  (false), (3), (0, true), error(), a normal return): `ljm record` says
  "ljm record: /dev/full: No space left on device" once and exits non-zero
  (the script's own code kept); the module in plain luajit says
  "ljm.recorder: /dev/full: ..." once at exit or lua_close (luajit's own
  exit status).
usage: record_errors_test.py LJM_RECORD SOFILE"""
import os
import resource
import shutil
import sys
import threading

import testlib

res = testlib.Results("record_errors")
tool, so = (testlib.runfile(a) for a in sys.argv[1:3])
out = testlib.scratch("record_errors")
shutil.rmtree(out)
os.makedirs(out)
os.chdir(out)
env = testlib.module_cpath(so, "record_errors_cpath")


def write(name, text):
    with open(name, "w") as f:
        f.write(text)
    return name


ALLOC = "local t = {}\nfor i = 1, 1500000 do t[i % 100] = {i} end\n"  # > 2 buffers
write("big.lua", ALLOC + 'print("done")\n')
write("mod.lua", 'local rec = require "ljm.recorder"\nassert(rec.start(arg[1]))\n' + ALLOC +
      'print("running", rec.is_running())\nprint("stop", rec.stop())\n')


def limit(nbytes):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))


def run(cmd, preexec=None, e=None):
    return testlib.run_vm(cmd, env=e or testlib.vm_env(), timeout=300, preexec_fn=preexec)


# -- SIGXFSZ: ulimit -f ----------------------------------------------------
p = run([tool, "-o", "big.ljm", "big.lua"], limit(1 << 20))
res.check(p.returncode == 1 and "done" in p.stdout,
          "ljm record, ulimit -f: the script ran, exit 1 (not killed): %d" % p.returncode)
res.check(p.stderr == "ljm record: big.ljm: File too large\n", "ljm record, ulimit -f: %r" % p.stderr)
p = run([testlib.LUAJIT, "mod.lua", "mod.ljm"], limit(1 << 20), env)
res.check(p.returncode == 0 and "running\tfalse" in p.stdout and
          "stop\tnil\tmod.ljm: File too large\t27" in p.stdout,
          "module, ulimit -f: host lives, stop() says EFBIG: %d %r %r" % (p.returncode, p.stdout, p.stderr))

# A compressed file's trailer is written on the host's thread at stop:
# a limit just below the whole file's size (same bytes without ASLR) makes
# that write the one that fails.
write("tiny.lua", "local t = {}\nfor i = 1, 100 do t[i] = {i} end\n")
norand = ["setarch", os.uname().machine, "-R"]
p = run(norand + [tool, "-o", "tiny.ljm.gz", "tiny.lua"])
size = os.path.getsize("tiny.ljm.gz")
res.check(p.returncode == 0 and size > 1000, "tiny.ljm.gz unlimited: %d, %d bytes" % (p.returncode, size))
p = run(norand + [tool, "-o", "tiny.ljm.gz", "tiny.lua"], limit(size - 4))
res.check(p.returncode == 1 and p.stderr == "ljm record: tiny.ljm.gz: File too large\n",
          "trailer past ulimit -f: exit 1 (not killed), EFBIG: %d %r" % (p.returncode, p.stderr))
res.check(os.path.getsize("tiny.ljm.gz") == size - 4, "the trailer was the write that failed")

# -- SIGPIPE: a FIFO whose reader goes away --------------------------------


def fifo_run(cmd, e=None):
    if os.path.exists("pipe"):
        os.remove("pipe")
    os.mkfifo("pipe")

    def reader():
        with open("pipe", "rb") as f:
            f.read(100)
    t = threading.Thread(target=reader)
    t.start()
    p = run(cmd, e=e)
    t.join()
    return p


p = fifo_run([tool, "-o", "pipe", "big.lua"])
res.check(p.returncode == 1 and "done" in p.stdout and p.stderr == "ljm record: pipe: Broken pipe\n",
          "ljm record into a closed FIFO: %d %r" % (p.returncode, p.stderr))
p = fifo_run([testlib.LUAJIT, "mod.lua", "pipe"], env)
res.check(p.returncode == 0 and "stop\tnil\tpipe: Broken pipe\t32" in p.stdout,
          "module into a closed FIFO: %d %r %r" % (p.returncode, p.stdout, p.stderr))

# -- A full disk, however the script ends ----------------------------------
# (ending, ljm record's status, plain luajit's: the script's own)
ENDINGS = [("os.exit(0)", 1, 0), ("os.exit(true)", 1, 0), ("os.exit(false)", 1, 1),
           ("os.exit(3)", 3, 3), ("os.exit(0, true)", 1, 0), ("error('boom')", 1, 1), ("", 1, 0)]
for i, (end, code, own) in enumerate(ENDINGS):
    s = write("end%d.lua" % i, ALLOC + 'io.write("out\\n")\n' + end + "\n")
    p = run([tool, "-o", "/dev/full", s])
    line = "ljm record: /dev/full: No space left on device\n"
    res.check(p.returncode == code and p.stdout == "out\n",
              "ljm record, /dev/full, %r: exit %d (want %d), stdout %r" % (end, p.returncode, code, p.stdout))
    res.check(p.stderr.endswith(line) and p.stderr.count(line) == 1,
              "ljm record, /dev/full, %r: reported once: %r" % (end, p.stderr))
    m = write("mend%d.lua" % i, 'local rec = require "ljm.recorder"\nassert(rec.start("/dev/full"))\n' +
              ALLOC + 'io.write("out\\n")\n' + end + "\n")
    p = run([testlib.LUAJIT, m], e=env)
    line = "ljm.recorder: /dev/full: No space left on device\n"
    res.check(p.returncode == own and p.stdout == "out\n",
              "module, /dev/full, %r: exit %d (want %d)" % (end, p.returncode, own))
    res.check(p.stderr.endswith(line) and p.stderr.count(line) == 1,
              "module, /dev/full, %r: reported once: %r" % (end, p.stderr))
res.finish()
