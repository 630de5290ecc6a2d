"""Instructions a process runs, counted by valgrind: the same count for the
same binaries, input and environment, whatever else the machine does.

instructions(cmd)        every instruction of the process (cachegrind).
beside_vm(cmd, out)      those outside the VM's own objects (the luajit
                         executable, libluajit): the recorder and the C
                         library (callgrind, per object). The VM's allocator
                         is left out: where the recorder's own mappings fall
                         moves LuaJIT's arena, and with it what the allocator
                         does, by more than a sampled call costs.
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


def beside_vm(cmd, out, env=None):
    """out: the callgrind output file to write (removed afterwards)."""
    _run(["--tool=callgrind", "--callgrind-out-file=" + out], cmd, env)
    objs, in_vm, skip, total, vm = {}, False, False, None, 0
    try:
        with open(out) as f:
            for line in f:
                if skip:  # the cost of the call just named, its callee's
                    skip = False
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
                elif line.startswith("calls="):
                    skip = True
                elif line.startswith("summary:"):
                    total = int(line.split()[1])
    finally:
        if os.path.exists(out):
            os.unlink(out)
    if total is None or not any(os.path.basename(n) in VM_OBJECTS for n in objs.values()):
        raise CountError("callgrind's output of %s names no VM" % " ".join(cmd))
    return total - vm
