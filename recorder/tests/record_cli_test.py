#!/usr/bin/env python3
"""record_cli_test.py -- `ljm record` runs scripts like `luajit script.lua`
(arg, stdout/stderr, exit status, error messages; no profile of a script it
cannot read), usage errors, os.exit(),
default output name, /dev/full, compressed output (.gz, .zst) whole and
after SIGKILL, SIGINT as under luajit; closed stdout or stderr, a script that
closes and reuses the stream's descriptor, chdir before a snapshot at exit,
a fork()ed child's end, exit() on another thread.
usage: record_cli_test.py LJM_RECORD CASES_DIR_FILE..."""
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zlib

import testlib

import ljmread  # tests/lib/ljmread.py, the shared stream reader

res = testlib.Results("record_cli")
tool = testlib.runfile(sys.argv[1])
cases = os.path.dirname(testlib.runfile(sys.argv[2]))
work = testlib.scratch("record_cli")
for f in os.listdir(cases):
    shutil.copy(os.path.join(cases, f), work)


run = functools.partial(testlib.run_vm, cwd=work, timeout=120)


# Usage.
p = run([tool, "--help"])
res.check(p.returncode == 0 and "usage: ljm record" in p.stdout, "--help")
for argv in ([], ["-x", "args.lua"], ["-o"], ["--bogus"]):
    p = run([tool] + argv)
    lines = p.stderr.strip().splitlines()
    res.check(p.returncode == 2 and len(lines) == 1 and "--help" in lines[0],
              "usage error %r -> exit 2 with a one-line hint (%d, %r)" % (argv, p.returncode, p.stderr))

# Same as luajit: output, arguments, errors, exit status.
for script, args in (("args.lua", ["a", "b c", ""]), ("error.lua", []),
                     ("syntax.lua", []), ("missing.lua", [])):
    ref = run(["luajit", script] + args, executable=testlib.LUAJIT)
    p = run([tool, "-o", "same.ljm", script] + args)
    res.check(p.returncode == ref.returncode, "%s: exit status %d vs luajit %d"
              % (script, p.returncode, ref.returncode))
    res.check(p.stdout == ref.stdout, "%s: stdout %r vs luajit %r" % (script, p.stdout, ref.stdout))
    # Addresses of C frames in tracebacks differ between any two runs.
    norm = lambda t: re.sub(r"0x[0-9a-f]+", "0x?", t)
    res.check(norm(p.stderr) == norm(ref.stderr),
              "%s: stderr %r vs luajit %r" % (script, p.stderr, ref.stderr))
    if script != "missing.lua":
        r, info = testlib.rows(os.path.join(work, "same.ljm"))
        res.check(info["complete"], "%s: whole-run stream complete" % script)

# A script luajit cannot open or read (a mistyped name, a directory): its
# message and status, and no profile left behind.
os.makedirs(os.path.join(work, "dir.lua"), exist_ok=True)
for script in ("typo.lua", "dir.lua"):
    ref = run(["luajit", script], executable=testlib.LUAJIT)
    p = run([tool, script])
    res.check(p.returncode == ref.returncode == 1 and p.stderr == ref.stderr,
              "%s: %d %r vs luajit %d %r" % (script, p.returncode, p.stderr, ref.returncode, ref.stderr))
    out = os.path.join(work, script[:-4] + ".record.ljm")
    res.check(not os.path.exists(out), "%s: no profile written (%s)" % (script, out))

# The script from stdin, as `luajit - args`.
src = open(os.path.join(work, "args.lua")).read()
ref = run(["luajit", "-", "x"], input=src, executable=testlib.LUAJIT)
p = run([tool, "-o", "stdin.ljm", "-", "x"], input=src)
res.check(p.returncode == ref.returncode and p.stdout == ref.stdout,
          "script from stdin: %r vs luajit %r" % (p.stdout, ref.stdout))

# `--` and the default output name.
p = run([tool, "--", "args.lua", "-o"])
res.check(p.returncode == 0 and "arg\t1\t-o" in p.stdout, "-- ends the options")
r, info = testlib.rows(os.path.join(work, "args.record.ljm"))
res.check(info["complete"], "default output <script>.record.ljm")

# os.exit(): exit status kept, both streams complete.
p = run([tool, "-o", "exit_whole.ljm", "exit.lua", "exit_memprof.ljm"])
res.check(p.returncode == 3, "os.exit(3) -> exit status 3 (%d)" % p.returncode)
for name in ("exit_whole.ljm", "exit_memprof.ljm"):
    r, info = testlib.rows(os.path.join(work, name))
    res.check(info["complete"], name + ": final byte written at os.exit()")
    res.check(testlib.count(r, "ALLOCATIONS", "@exit.lua:5") >= 1000, name + ": events of line 5")

# Robustness: metamethods, errors, hooks, finalizers, FFI callbacks,
# coroutines, stack growth, with the JIT on and off.
for mode in ("off", "on"):
    p = run([tool, "-o", "stress_%s.ljm" % mode, "stress.lua", mode])
    res.check(p.returncode == 0 and p.stdout.startswith("done"),
              "stress %s: exit %d %r" % (mode, p.returncode, p.stderr))
    r, info = testlib.rows(os.path.join(work, "stress_%s.ljm" % mode))
    res.check(info["complete"] and info["events"] > 10000, "stress %s: stream complete" % mode)
    # An unknown start prototype would be named after a C symbol: "x:0x...".
    bad = [n for (_, n) in r if re.search(r"started at .*:0x[0-9a-f]+$", n)]
    res.check(not bad, "stress %s: every trace names its Lua start: %s" % (mode, bad))
    if mode == "on":
        res.check(any(n.startswith("TRACE [") for (_, n) in r), "stress on: trace rows")

# A strict _G (__index raising errors) does not disturb the recorder.
p = run([tool, "-o", "strict_whole.ljm", "strict.lua", "strict.ljm"])
res.check(p.returncode == 0 and p.stdout == "strict ok\n", "strict _G: %r" % p.stderr)

# Two streams into one file are refused.
p = run([tool, "-o", "same2.ljm", "samefile.lua", "same2.ljm"])
res.check(p.stdout == "nil\tsame2.ljm: file is already being recorded to\t16\n",
          "second stream into the same file refused: %r" % p.stdout)
r, info = testlib.rows(os.path.join(work, "same2.ljm"))
res.check(info["complete"], "the first stream is intact")

# Compressed output by the name: read back by independent decompressors
# (Python's zlib, the zstd tool), the script's allocation rows of a plain
# recording (the GC's frees vary from run to run, with or without
# compression).
def unzip(path):
    """Decompressed bytes of a .gz or .zst file, as far as they go."""
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        return zlib.decompressobj(31).decompress(data)
    return subprocess.run(["zstd", "-dc", path], capture_output=True).stdout


def script_rows(rows_):
    return sorted((sec, name, sorted(cs)) for (sec, name), cs in rows_.items()
                  if sec != "DEALLOCATIONS" and name.startswith("@churn.lua:"))


p = run([tool, "-o", "churn.ljm", "churn.lua"])
plain, info = testlib.rows(os.path.join(work, "churn.ljm"))
res.check(p.returncode == 0 and info["complete"], "plain churn recording complete")
for suffix, magic in ((".gz", b"\x1f\x8b"), (".zst", b"\x28\xb5\x2f\xfd")):
    out = "churn.ljm" + suffix
    p = run([tool, "-o", out, "churn.lua"])
    raw = open(os.path.join(work, out), "rb").read()
    res.check(p.returncode == 0 and raw[:len(magic)] == magic,
              "%s: written compressed (%d %r)" % (out, p.returncode, raw[:4]))
    data = unzip(os.path.join(work, out))
    res.check(len(raw) < len(data) // 2, "%s: %d bytes for %d" % (out, len(raw), len(data)))
    rows_, info = ljmread.decode(data)
    res.check(info["complete"] and script_rows(rows_) == script_rows(plain) and
              testlib.count(rows_, "ALLOCATIONS", prefix="@churn.lua:") > 400000,
              "%s: complete, the plain recording's allocation rows" % out)
    if suffix == ".gz":  # a whole gzip member: the trailer checks CRC and length
        d = zlib.decompressobj(31)
        d.decompress(raw)
        res.check(d.eof and not d.unused_data, "%s: one whole gzip member" % out)
    else:
        t = subprocess.run(["zstd", "-t", "-q", os.path.join(work, out)], capture_output=True)
        res.check(t.returncode == 0, "%s: zstd -t: %r" % (out, t.stderr))

# Killed: every buffer written before SIGKILL decodes; the stream is cut.
for suffix in (".gz", ".zst"):
    out = "killed.ljm" + suffix
    p = run([tool, "-o", out, "killed.lua"])
    data = unzip(os.path.join(work, out))
    rows_, info = ljmread.decode(data)
    res.check(p.returncode == -9 and p.stdout == "killing\n", "%s: killed (%d)" % (out, p.returncode))
    # The first 8 MiB buffer, less the event that did not fit in it.
    res.check(len(data) >= (8 << 20) - 4096 and not info["complete"] and
              testlib.count(rows_, "ALLOCATIONS", prefix="@killed.lua:") > 100000,
              "%s: %d bytes decode up to the cut, with the script's events" % (out, len(data)))

# Flush interval: without one, a few events stay in the buffer (nothing on
# disk while recording); with one they reach the file within the interval,
# and survive SIGKILL (read back by Python's zlib: the zstd tool keeps the
# last part of a cut frame to itself).
p = run([tool, "-o", "fl_whole.ljm", "flush.lua", "fl0.ljm", "none"])
res.check(p.returncode == 0 and p.stdout == "0\n", "no flush interval: nothing written yet (%r)" % p.stdout)
p = run([tool, "-o", "fl_whole.ljm", "flush.lua", "fl1.ljm", "0.1"])
res.check(p.returncode == 0 and int(p.stdout or 0) > 1000, "{flush = 0.1}: written while recording (%r)" % p.stdout)
p = run([tool, "--flush-interval", "0.1", "-o", "fl2.ljm", "flush.lua", "fl2.ljm", "-"])
res.check(p.returncode == 0 and int(p.stdout or 0) > 1000,
          "--flush-interval 0.1: the whole-run file written while recording (%r %r)" % (p.stdout, p.stderr))
p = run([tool, "-o", "fl_whole.ljm", "flush.lua", "fl3.ljm.gz", "0.1", "kill"])
rows_, info = ljmread.decode(unzip(os.path.join(work, "fl3.ljm.gz")))
res.check(p.returncode == -9 and not info["complete"] and
          testlib.count(rows_, "ALLOCATIONS", name="@flush.lua:19") >= 1000,
          "{flush = 0.1} then SIGKILL: the events before it decode (%d %r %r %r)"
          % (p.returncode, p.stdout, info, sorted(rows_.items())[:6]))
for bad in (["--flush-interval", "0"], ["--flush-interval=x"], ["--flush-interval", "90000"],
            ["--flush-interval"]):
    p = run([tool] + bad + ["args.lua"])
    res.check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1,
              "%r: usage error (%d %r)" % (bad, p.returncode, p.stderr))
src = """local rec = require "ljm.recorder"
for _, o in ipairs({ {flush = 0}, {flush = "1"}, {flush = 1e9} }) do
  local ok, msg = rec.start("never.ljm", o)
  print(msg)
end"""
p = run([tool, "-o", "fl_whole.ljm", "-"], input=src)
res.check(p.stdout == "option 'flush' must be seconds, 0.001..86400\n" * 3 and
          not os.path.exists(os.path.join(work, "never.ljm")),
          "bad {flush = ...}: refused, no file (%r)" % p.stdout)

# A profile that cannot be written: the script still runs, the tool says so.
p = run([tool, "-o", "/dev/full", "args.lua"])
res.check("arg[0]\targs.lua" in p.stdout, "/dev/full: the script ran")
res.check(p.returncode == 1 and "ljm record: /dev/full: No space left on device" in p.stderr,
          "/dev/full: exit 1 with the error (%d %r)" % (p.returncode, p.stderr))
p = run([tool, "-o", "/nonexistent-dir/x.ljm", "args.lua"])
res.check(p.returncode == 1 and p.stderr.startswith("ljm record: /nonexistent-dir/x.ljm:"),
          "unwritable output: exit 1 with one line")
# SIGINT, as under luajit: "interrupted!" at the next call or instruction,
# the traceback, exit status 1 and a complete stream; also in a process
# started with SIGINT ignored (a background job), where luajit catches it
# all the same. A second SIGINT is the default action (not tested).
with open(os.path.join(work, "spin.lua"), "w") as f:
    f.write("jit.off()\nio.write('spinning\\n') io.flush()\nlocal t = {}\n"
            "while true do t[#t % 100 + 1] = {} end\n")
for how, pre in (("default", None), ("ignored", lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))):
    for opts in ([], ["--sample", "1k", "--stacks"]):
        out = os.path.join(work, "spin.ljm")
        with subprocess.Popen([tool] + opts + ["-o", out, "spin.lua"], cwd=work,
                              env=testlib.vm_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, preexec_fn=pre) as q:
            q.stdout.readline()  # the script runs
            time.sleep(0.2)
            q.send_signal(signal.SIGINT)
            try:
                _, err = q.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                q.kill()
                err = "(still running 60 s after SIGINT)"
        st = ljmread.parse(open(out, "rb").read()) if os.path.exists(out) else None
        res.check(q.returncode == 1 and "interrupted!" in err and st is not None and st.complete,
                  "SIGINT (%s, %s): exit %s, %r, stream complete %s"
                  % (how, " ".join(opts) or "exact", q.returncode, err[-200:],
                     st and st.complete))

# The host's descriptors. With stdout or stderr closed, the stream must not
# take their number (the script's prints would land in it).
for script, fd in (("args.lua", 1), ("error.lua", 2)):
    ref = run(["luajit", script], executable=testlib.LUAJIT, preexec_fn=lambda fd=fd: os.close(fd))
    p = run([tool, "-o", "closed.ljm", script], preexec_fn=lambda fd=fd: os.close(fd))
    st = ljmread.parse(open(os.path.join(work, "closed.ljm"), "rb").read())
    res.check(p.returncode == ref.returncode and st.complete and not st.problems,
              "%s with fd %d closed: exit %d (luajit %d), stream complete %s %s"
              % (script, fd, p.returncode, ref.returncode, st.complete, st.problems[:2]))
# A daemon-style script closes every descriptor above 2, then opens a file
# of its own, which gets the stream's number: the recorder never writes
# into it, and says the stream could not be written.
with open(os.path.join(work, "daemon.lua"), "w") as f:
    f.write('local ffi = require "ffi"\nffi.cdef "int close(int fd);"\n'
            'for fd = 3, 255 do ffi.C.close(fd) end\n'
            'local f = assert(io.open("daemon_data.txt", "w"))\n'
            'local t = {}\nfor i = 1, 400000 do t[i % 1000 + 1] = {i, tostring(i)} end\n'
            'f:write("my data\\n")\nf:close()\n')
p = run([tool, "-o", "daemon.ljm", "daemon.lua"])
data = open(os.path.join(work, "daemon_data.txt"), "rb").read()
res.check(data == b"my data\n" and p.returncode == 1 and
          "daemon.ljm: Bad file descriptor" in p.stderr,
          "descriptor closed and reused by the script: its file %r..., exit %d, %r"
          % (data[:16], p.returncode, p.stderr[-200:]))
# A relative snapshot path names a file where the run started, as -o does,
# even after the script changed directory.
os.makedirs(os.path.join(work, "sub"), exist_ok=True)
with open(os.path.join(work, "cd.lua"), "w") as f:
    f.write('local ffi = require "ffi"\nffi.cdef "int chdir(const char *p);"\n'
            'assert(ffi.C.chdir("sub") == 0)\nkeep = {}\nfor i = 1, 100 do keep[i] = {i} end\n')
for stale in ("cd.ljh", "sub/cd.ljh"):
    if os.path.exists(os.path.join(work, stale)):
        os.unlink(os.path.join(work, stale))
p = run([tool, "-o", "cd.ljm", "--snapshot-at-exit", "cd.ljh", "cd.lua"])
res.check(p.returncode == 0 and os.path.exists(os.path.join(work, "cd.ljh")) and
          not os.path.exists(os.path.join(work, "sub", "cd.ljh")),
          "--snapshot-at-exit cd.ljh after a chdir: written where the run started (%d %r)"
          % (p.returncode, p.stderr[-200:]))
# A fork()ed child that runs to the end of the script exits 0, as under
# luajit: the recording is the parent's.
with open(os.path.join(work, "forked.lua"), "w") as f:
    f.write('local ffi = require "ffi"\n'
            'ffi.cdef "int fork(void); int waitpid(int pid, int *st, int opt);"\n'
            'local t = {}\nfor i = 1, 1000 do t[i] = {i} end\n'
            'local pid = ffi.C.fork()\nif pid == 0 then return end\n'
            'local st = ffi.new("int[1]")\nffi.C.waitpid(pid, st, 0)\n'
            'print("child status", st[0])\n')
ref = run(["luajit", "forked.lua"], executable=testlib.LUAJIT)
# Under ASan, LeakSanitizer's exit check in a child forked from threads
# (the writer's) inherits their stale list and can hang: off for this run.
p = run([tool, "-o", "forked.ljm", "forked.lua"],
        env=dict(testlib.vm_env(), ASAN_OPTIONS="detect_leaks=0"))
st = ljmread.parse(open(os.path.join(work, "forked.ljm"), "rb").read())
res.check(p.returncode == 0 and p.stdout == ref.stdout == "child status\t0\n" and
          st.complete and "ljm record" not in p.stderr,  # (ASan's leak check may talk)
          "a forked child's end: %r (luajit %r), exit %d, %r, stream complete %s"
          % (p.stdout, ref.stdout, p.returncode, p.stderr[-200:], st.complete))
# exit() on another thread while the script runs on: its status stays, the
# snapshot at exit is not taken (the VM cannot be read then) and says so,
# nothing crashes.
with open(os.path.join(work, "thexit.lua"), "w") as f:
    f.write('local ffi = require "ffi"\n'
            'ffi.cdef [[void exit(int); int pthread_create(unsigned long *t, void *a,'
            ' void *(*f)(void *), void *arg); int usleep(unsigned us);]]\n'
            'local t = {}\nfor i = 1, 20000 do t[i % 100 + 1] = {i} end\n'
            'local th = ffi.new("unsigned long[1]")\n'
            'ffi.C.pthread_create(th, nil, ffi.cast("void *(*)(void *)", ffi.C.exit),'
            ' ffi.cast("void *", 9))\n'
            'for i = 1, 1e9 do t[i % 100 + 1] = {i, tostring(i)} end\n')
bad = []
for i in range(10):
    p = run([tool, "-o", "thexit.ljm", "--snapshot-at-exit", "thexit.ljh", "thexit.lua"])
    if not (p.returncode == 9 and
            "heap snapshot not taken: exit() was called on another thread" in p.stderr):
        bad.append((p.returncode, p.stderr[-200:]))
res.check(not bad, "exit() on another thread, 10 runs: %d bad %r" % (len(bad), bad[:2]))

# LuaJIT's -j commands, as luajit takes them: -joff charges a hot loop's
# allocations to its line, where the JIT charges them to a trace; a command
# luajit does not know fails as luajit fails, before anything is recorded.
with open(os.path.join(work, "hot.lua"), "w") as f:
    f.write("local t = {}\nfor i = 1, 20000 do\n  t[i % 64 + 1] = {i}\nend\n")
for argv, traced in ((["-joff"], False), (["-j", "off"], False), ([], True)):
    p = run([tool, "-o", "hot.ljm"] + argv + ["hot.lua"])
    r, info = testlib.rows(os.path.join(work, "hot.ljm"))
    trace_events = testlib.count(r, "ALLOCATIONS", prefix="TRACE [")
    line_events = testlib.count(r, "ALLOCATIONS", name="@hot.lua:3")
    res.check(p.returncode == 0 and info["complete"] and (trace_events > 10000) == traced
              and (line_events >= 20000) != traced,
              "%s: %d trace events, %d at hot.lua:3 (%d %r)"
              % (argv or "JIT on", trace_events, line_events, p.returncode, p.stderr))
ref = run(["luajit", "-j", "nosuchcmd", "hot.lua"], executable=testlib.LUAJIT)
p = run([tool, "-o", "bad-j.ljm", "-j", "nosuchcmd", "hot.lua"])
res.check(p.returncode == ref.returncode == 1 and "unknown luaJIT command" in p.stderr
          and not os.path.exists(os.path.join(work, "bad-j.ljm")),
          "-j nosuchcmd: %d %r, luajit %d %r" % (p.returncode, p.stderr, ref.returncode, ref.stderr))

# Every path the run will write is checked before the script runs: a
# --snapshot-at-exit into a missing directory, or onto a directory, is one
# line and exit 1, and the script never starts (it would write ran.txt).
with open(os.path.join(work, "marks.lua"), "w") as f:
    f.write('io.open("ran.txt", "w"):write("ran"):close()\n')
for snap, why in (("no/such/dir/s.ljh", "No such file or directory"), (".", "Is a directory")):
    p = run([tool, "-o", "marks.ljm", "--snapshot-at-exit", snap, "marks.lua"])
    res.check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and why in p.stderr
              and not os.path.exists(os.path.join(work, "ran.txt")),
              "--snapshot-at-exit %s: refused before the script (%d %r)" % (snap, p.returncode, p.stderr))

res.finish()
