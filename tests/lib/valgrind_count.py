"""Instructions a process runs, counted by valgrind: the same count for the
same binaries, input and environment, whatever else the machine does.

instructions(cmd)        every instruction of the process (cachegrind).
beside_vm(cmd, out)      those outside the VM's own objects (the luajit
                         executable, libluajit): the recorder and the C
                         library (callgrind, per object). The VM's allocator
                         is left out: where the recorder's own mappings fall
                         moves LuaJIT's arena, and with it what the allocator
                         does, by more than a sampled call costs. Optionally
                         the program's thread only, and without the calls
                         of named functions.
Both raise CountError when the process fails or valgrind prints no count.
"""
import os
import re
import subprocess

VM_OBJECTS = ("luajit", "libluajit-5.1.so.2")


class CountError(Exception):
    pass


def _run(tool_args, cmd, env):
    p = subprocess.run(["valgrind"] + tool_args + cmd, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        raise CountError("%s exited with %d:\n%s" % (" ".join(cmd), p.returncode, p.stderr[-3000:]))
    return p.stderr


def instructions(cmd, env=None):
    err = _run(["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"], cmd, env)
    m = re.search(r"I\s+refs:\s+([\d,]+)", err)
    if not m:
        raise CountError("cachegrind printed no count for %s" % " ".join(cmd))
    return int(m.group(1).replace(",", ""))


def _beside_vm_file(path, exclude, calls_to):
    """(instructions, calls, names of the objects seen) of one callgrind
    file: all instructions but the VM objects' own and those of calls to
    functions in exclude; the calls the VM's code makes to calls_to."""
    objs, fns, in_vm, call_fn, total, vm, skipped, ncalls = {}, {}, False, None, None, 0, 0, 0
    callee = ""
    with open(path) as f:
        for line in f:
            if call_fn is not None:  # the cost of the call just named, its callee's
                if call_fn in exclude:
                    fields = line.split()
                    if len(fields) > 1:
                        skipped += int(fields[1])
                call_fn = None
                continue
            c = line[0]
            if c in "0123456789+-*":  # a cost line: position, then Ir
                if in_vm:
                    fields = line.split()
                    if len(fields) > 1:
                        vm += int(fields[1])
            elif line.startswith(("ob=", "cob=")):  # a name comes with its id's first use
                m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.strip())
                if m.group(2):
                    objs[m.group(1)] = m.group(2)
                if c == "o":
                    in_vm = os.path.basename(objs.get(m.group(1), "")) in VM_OBJECTS
            elif line.startswith(("fn=", "cfn=")):
                m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line.strip())
                if m and m.group(2):
                    fns[m.group(1)] = m.group(2)
                if m and c == "c":
                    callee = fns.get(m.group(1), "")
            elif line.startswith("calls="):
                call_fn = callee
                if in_vm and callee == calls_to:
                    ncalls += int(line[6:].split()[0])
            elif line.startswith("summary:"):
                total = int(line.split()[1])
    if total is None:
        raise CountError("callgrind wrote no summary in %s" % path)
    return total - vm - skipped, ncalls, objs.values()


def beside_vm(cmd, out, env=None, main_thread=False, exclude=(), calls_to=None):
    """out: the callgrind output file to write (removed afterwards).
    main_thread: count the program's first thread only (not the threads
    the recorder starts); exclude: function names whose calls are left out
    with all they call (work paced by the clock rather than by the calls).
    calls_to: a function name; then returns (instructions, the calls the
    VM's code made to it)."""
    _run(["--tool=callgrind", "--callgrind-out-file=" + out] +
         (["--separate-threads=yes"] if main_thread else []), cmd, env)
    d, base = os.path.split(out)
    files = sorted(os.path.join(d or ".", f) for f in os.listdir(d or ".")
                   if f == base or f.startswith(base + "-"))
    try:
        if main_thread:
            files = [f for f in files if f == out + "-01"]
        if not files:
            raise CountError("callgrind wrote no output for %s" % " ".join(cmd))
        n, ncalls, names = _beside_vm_file(files[0], set(exclude), calls_to)
    finally:
        for f in os.listdir(d or "."):
            if f == base or f.startswith(base + "-"):
                os.unlink(os.path.join(d or ".", f))
    if not any(os.path.basename(x) in VM_OBJECTS for x in names):
        raise CountError("callgrind's output of %s names no VM" % " ".join(cmd))
    return (n, ncalls) if calls_to else n
