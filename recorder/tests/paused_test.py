#!/usr/bin/env python3
"""paused_test.py -- `ljm record --paused` and output names with fields.

--paused (testdata/recorder/cases/paused.lua, four phases on lines 20, 22,
24 and 26, each waiting for the test): SIGUSR1 after phase 1, SIGUSR2 after
phase 2, SIGUSR1 after phase 3, the script ending in phase 4. Exact, with the
JIT off and on, and with --stacks:
  * two complete streams, p.1.ljm and p.2.ljm (no third), each holding its
    phase's 300 tables and no table of another phase;
  * a line on stderr per start and stop naming the file;
  * the script's own debug hook is its own at the end, with its mask and
    count, and (JIT off) it runs in every phase;
  * the process ignoring SIGUSR1 (inherited) refuses --paused in one line,
    before the script runs, leaving no file; a script that sets its own
    SIGUSR1 disposition is told so at the end.
Names: -o and --snapshot-at-exit fill in %e (the script's name), %p (the
process id), %t (the start, in seconds) and %%; a '%' that starts no field
is a usage error (exit 2, one line, no file); the module (plain luajit)
fills them in too, %e being the executable's name.
usage: paused_test.py LJM_RECORD RECORDER_SO CASES_DIR_FILE"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zlib

import ljmread
import testlib

res = testlib.Results("paused")
tool = testlib.runfile(sys.argv[1])
sofile = testlib.runfile(sys.argv[2])
cases = os.path.dirname(testlib.runfile(sys.argv[3]))
work = testlib.scratch("paused")
for f in ("paused.lua", "paused_own.lua", "paused_busy.lua", "args.lua"):
    shutil.copy(os.path.join(cases, f), work)
PHASE_LINE = {1: 20, 2: 22, 3: 24, 4: 26}


def wait_for(cond, what, limit=60.0):
    end = time.time() + limit
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.01)
    res.check(False, "timed out waiting for %s" % what)
    return False


def phase_rows(path):
    """Allocations per phase in a stream: ({phase: events at its line or in
    a trace started there}, complete)."""
    with open(path, "rb") as f:
        data = f.read()
    got = {}

    def add(name, n):
        for k, line in PHASE_LINE.items():
            if re.search(r"paused\.lua:%d$" % line, name):
                got[k] = got.get(k, 0) + n
    try:
        rows, info = ljmread.decode(data)
    except ValueError:  # an extended stream (decoder/EXTENSION.md)
        st = ljmread.parse(data)
        for e in st.events:
            if e.ev == 1:
                add(e.name, 1)
        return got, st.complete and not st.problems
    for (sec, name), counts in rows.items():
        if sec == "ALLOCATIONS":
            add(name, sum(counts))
    return got, info["complete"]


def paused_run(tag, opts):
    d = os.path.join(work, tag)
    os.makedirs(d)
    shutil.copy(os.path.join(work, "paused.lua"), d)
    err = open(os.path.join(d, "err.txt"), "w+")
    p = subprocess.Popen([tool, "--paused"] + opts + ["-o", "p.ljm", "paused.lua"], cwd=d,
                         stdout=subprocess.PIPE, stderr=err, env=testlib.vm_env(), text=True)
    errtext = lambda: open(os.path.join(d, "err.txt")).read()
    try:
        for n, sig, line in ((1, signal.SIGUSR1, "recording to p.1.ljm until SIGUSR2"),
                             (2, signal.SIGUSR2, "p.1.ljm complete"),
                             (3, signal.SIGUSR1, "recording to p.2.ljm until SIGUSR2")):
            if not wait_for(lambda: os.path.exists(os.path.join(d, "phase%d.done" % n)),
                            "%s: phase %d" % (tag, n)):
                break
            p.send_signal(sig)
            wait_for(lambda: line in errtext(), "%s: %r" % (tag, line))
            open(os.path.join(d, "go%d" % n), "w").close()
        out, _ = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    e = errtext()
    res.check(p.returncode == 0, "%s: exit %d: %s %s" % (tag, p.returncode, out[-300:], e[-500:]))
    res.check(e.count("\n") == 3 and "SIGUSR2: p.1.ljm complete" in e,
              "%s: a line per start and stop: %r" % (tag, e))
    files = sorted(f for f in os.listdir(d) if f.endswith(".ljm"))
    res.check(files == ["p.1.ljm", "p.2.ljm"], "%s: files %r" % (tag, files))
    for f, phase in (("p.1.ljm", 2), ("p.2.ljm", 4)):
        if not os.path.exists(os.path.join(d, f)):
            continue
        got, complete = phase_rows(os.path.join(d, f))
        res.check(complete, "%s: %s is a complete stream" % (tag, f))
        # With the JIT on, a table may go to a trace started elsewhere.
        least = 300 if "-joff" in opts else 290
        res.check(got.get(phase, 0) >= least and set(got) == {phase},
                  "%s: %s holds phase %d's tables only: %r" % (tag, f, phase, got))
        if "--stacks" in opts:
            st = ljmread.parse(open(os.path.join(d, f), "rb").read())
            res.check(st.complete and st.flags & ljmread.STACKS and not st.problems,
                      "%s: %s is a complete stream with stacks" % (tag, f))
    calls = [int(m.group(1)) for m in re.finditer(r"^phase\t\d\thook calls\t(\d+)$", out, re.M)]
    res.check(len(calls) == 4 and "phases done\t1200" in out,
              "%s: the script ran to its end with its own hook: %r" % (tag, out[-300:]))
    if "-joff" in opts:
        res.check(len(calls) == 4 and calls == sorted(set(calls)) and calls[0] > 0,
                  "%s: the script's hook ran in every phase: %r" % (tag, calls))


paused_run("joff", ["-joff"])
paused_run("jit", [])
paused_run("stacks", ["-joff", "--stacks"])

# A burst: 300 signals, alternating, 2 ms apart, while the script allocates.
for tag, opts in (("burst", ["-joff"]), ("burst-stacks", ["--stacks"])):
    d = os.path.join(work, tag)
    os.makedirs(d)
    shutil.copy(os.path.join(work, "paused_busy.lua"), d)
    p = subprocess.Popen([tool, "--paused"] + opts + ["-o", "b.ljm.gz", "paused_busy.lua"], cwd=d,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=testlib.vm_env(),
                         text=True)
    time.sleep(0.2)
    for k in range(300):
        if p.poll() is not None:
            break
        p.send_signal(signal.SIGUSR1 if k % 2 == 0 else signal.SIGUSR2)
        time.sleep(0.002)
    out, err = p.communicate(timeout=120)
    files = sorted(f for f in os.listdir(d) if f.startswith("b."))
    res.check(p.returncode == 0 and out == "rounds\ttrue\n" and files,
              "%s: the script ran through the burst (%d %r %r %d files)"
              % (tag, p.returncode, out, err[-300:], len(files)))
    bad = []
    for f in files:
        with open(os.path.join(d, f), "rb") as fh:
            data = zlib.decompress(fh.read(), 47)
        try:
            ok = ljmread.decode(data)[1]["complete"]
        except ValueError:
            st = ljmread.parse(data)
            ok = st.complete and not st.problems
        if not ok:
            bad.append(f)
    want = ["b.%d.ljm.gz" % (i + 1) for i in range(len(files))]
    res.check(not bad and sorted(files, key=lambda f: int(f.split(".")[1])) == want,
              "%s: %d files, each a complete stream, numbered from 1: bad %r, %r"
              % (tag, len(files), bad, files[:5]))

# Refused: SIGUSR1 ignored by the parent, as nohup-like wrappers may leave it.
d = os.path.join(work, "ignored")
os.makedirs(d)
shutil.copy(os.path.join(work, "paused.lua"), d)
p = subprocess.run([tool, "--paused", "-o", "p.ljm", "paused.lua"], cwd=d, capture_output=True,
                   text=True, timeout=60, env=testlib.vm_env(),
                   preexec_fn=lambda: signal.signal(signal.SIGUSR1, signal.SIG_IGN))
res.check(p.returncode == 1 and p.stderr.count("\n") == 1 and "SIGUSR1 is ignored" in p.stderr
          and "refused" in p.stderr and p.stdout == "",
          "SIGUSR1 ignored: --paused refused in one line before the script (%d %r %r)"
          % (p.returncode, p.stdout, p.stderr))
res.check(not [f for f in os.listdir(d) if f.endswith(".ljm") or f.startswith("phase")],
          "SIGUSR1 ignored: no file, the script never ran: %r" % os.listdir(d))
p = subprocess.run([tool, "--paused", "-o", "q.ljm", "paused_own.lua"], cwd=work,
                   capture_output=True, text=True, timeout=60, env=testlib.vm_env())
res.check(p.returncode == 0 and p.stdout == "ignored\n" and p.stderr.count("\n") == 1 and
          "the script set its own SIGUSR1 handler" in p.stderr,
          "a script's own SIGUSR1: said at the end (%d %r)" % (p.returncode, p.stderr))

# Output names.
t0 = int(time.time())
p = subprocess.run([tool, "-o", "x.%e.%p.%t.%%.ljm", "--snapshot-at-exit", "s.%e.%p.ljh",
                    "args.lua"], cwd=work, capture_output=True, text=True, timeout=60,
                   env=testlib.vm_env())
t1 = int(time.time())
names = sorted(f for f in os.listdir(work) if f.startswith(("x.", "s.")))
m = [re.match(r"^x\.args\.(\d+)\.(\d+)\.%\.ljm$", f) for f in names]
m = [x for x in m if x]
res.check(p.returncode == 0 and len(names) == 2 and len(m) == 1 and
          t0 <= int(m[0].group(2)) <= t1 and "s.args.%s.ljh" % m[0].group(1) in names,
          "-o x.%%e.%%p.%%t.%%%%.ljm, --snapshot-at-exit s.%%e.%%p.ljh: %r (%r)" % (names, p.stderr))
for bad in ("x.%q.ljm", "x.%"):
    for opt in ("-o", "--snapshot-at-exit"):
        p = subprocess.run([tool, opt, bad, "args.lua"], cwd=work, capture_output=True,
                           text=True, timeout=60, env=testlib.vm_env())
        res.check(p.returncode == 2 and p.stderr.count("\n") == 1 and bad in p.stderr and
                  "'%'" in p.stderr and p.stdout == "",
                  "%s %s: a usage error in one line (%d %r)" % (opt, bad, p.returncode, p.stderr))
res.check(not [f for f in os.listdir(work) if f.startswith("x.%") or f == "args.record.ljm"],
          "a bad name leaves no file: %r" % os.listdir(work))

# The module, under the VM's luajit: %e is the executable's name.
with open(os.path.join(work, "mod.lua"), "w") as f:
    f.write('local rec = require("ljm.recorder")\n'
            'assert(rec.start("m.%e.%p.ljm"))\n'
            'local t = {} for i = 1, 100 do t[i] = {} end\n'
            'assert(rec.stop())\n'
            'assert(rec.snapshot("m.%e.%p.ljh"))\n'
            'local ok, err = rec.start("m.%z.ljm")\n'
            'print(ok, err)\n')
env = testlib.module_cpath(sofile, "paused_mod")
p = subprocess.run([testlib.LUAJIT, "mod.lua"], cwd=work, capture_output=True, text=True,
                   timeout=60, env=env)
exe = os.path.basename(os.path.realpath(shutil.which(testlib.LUAJIT, path=env.get("PATH"))
                                         or testlib.LUAJIT))
mods = sorted(f for f in os.listdir(work) if f.startswith("m."))
res.check(p.returncode == 0 and len(mods) == 2 and
          all(re.match(r"^m\.%s\.\d+\.lj[mh]$" % re.escape(exe), f) for f in mods) and
          "m.%z.ljm: a '%' that starts no field" in p.stdout,
          "module: m.%%e.%%p.ljm and .ljh as m.%s.PID, a bad field refused: %r %r %r"
          % (exe, mods, p.stdout, p.stderr[-300:]))
res.finish()
