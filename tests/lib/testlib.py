"""testlib.py -- running ljm and LuaJIT in the tests: run() (a command,
its output as text), run_ljm() (the ljm binary, output as bytes), run_vm()
(on the VM under test: LJM_TEST_VM, the environments of vm_env(),
module_env() and module_cpath()), the recorder's scratch folders and stream
helpers, and what the command-line tests check of ljm's messages."""
import os
import shutil
import subprocess

import ljmread
from checks import RECORDER, Checks


def Results(name):
    """The Checks of a recorder test: "FAIL NAME: what" as it happens, then
    finish(): "P passed, F failed"."""
    return Checks(name, echo=RECORDER)


def run(cmd, **kw):
    """Runs cmd; returns the CompletedProcess with stdout and stderr as text."""
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def run_ljm(ljm, args, stdin=None, timeout=120):
    """Runs the ljm binary with args; stdout and stderr as bytes."""
    return subprocess.run([ljm] + args, input=stdin, capture_output=True, timeout=timeout)


def run_vm(cmd, timeout=None, **kw):
    """run() in the environment of the VM under test (vm_env()) unless env
    is given."""
    kw.setdefault("env", vm_env())
    return run(cmd, timeout=timeout, **kw)


def one_line(p):
    """Errors and warnings are exactly one line on stderr."""
    return p.stderr.count(b"\n") == 1


def formats_table(help_text):
    """The formats table of `ljm convert --help` (text): one (line, name,
    suffixes) per format, the line as printed."""
    table = help_text.split("\nformats:\n")[-1].split("\n\n")[0].splitlines()
    rows = []
    for line in table:
        fields = line.split()
        if not fields:
            continue
        sfx = []
        for f in fields[1:]:
            if not f.startswith("."):
                break
            sfx.append(f)
        rows.append((line, fields[0], sfx))
    return rows


def runfile(path):
    """Absolute path of a runfile given as $(location ...)."""
    return os.path.abspath(path)


def scratch(name):
    d = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), name)
    os.makedirs(d, exist_ok=True)
    return d


# The VM the recorder's tests run on: a flavour built from its source tree
# (LJM_TEST_VM: that VM's luajit, next to its libluajit-5.1.so.2; set by
# the *_luajit and *_luajit2 targets), or the system's LuaJIT (unset).
VM = os.environ.get("LJM_TEST_VM")
if VM:
    VM = os.path.abspath(VM)
LUAJIT = VM or "luajit"


def vm_env(env=None):
    """Environment in which `luajit` and programs linked with -lluajit-5.1
    (ljm record, capi_host) run on the VM under test."""
    env = dict(os.environ if env is None else env)
    if VM:
        lib = os.path.dirname(VM)
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"]
                                        if env.get("LD_LIBRARY_PATH") else "")
    return env


def vm_flavour():
    """The tree of the VM under test (bazel/luajit_trees.bzl): LJM_TEST_FLAVOUR
    for a VM built here; for the system's LuaJIT, the Debian package name,
    "luajit" or "luajit2"."""
    if VM:
        return os.environ["LJM_TEST_FLAVOUR"]
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "luajit2"],
                       capture_output=True, text=True)
    return "luajit2" if "install ok installed" in p.stdout else "luajit"


def vm_gc64():
    """Whether the VM under test is a GC64 build."""
    return not vm_flavour().endswith("nogc64")


def build_is_vm_flavour(label):
    """Whether a build label (rec.build(), ljm_recorder_build) names the VM
    under test's tree: LJM_TEST_LABEL ("Debian 12 luajit2 2.1-20230119-1")
    for a VM built here; for the system's LuaJIT, the installed package's
    version."""
    if VM:
        return label.startswith(os.environ["LJM_TEST_LABEL"] + " (")
    pkg = "libluajit2-5.1-2" if vm_flavour() == "luajit2" else "libluajit-5.1-2"
    ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                         capture_output=True, text=True).stdout.strip()
    return label.startswith("Debian ") and (" %s %s (" % (vm_flavour(), ver)) in label


def module_env(sofile):
    """Environment for the VM under test loading our module. A module built
    with sanitizers (bazel test --config=asan) needs their runtime
    preloaded, since the VM is not instrumented."""
    env = vm_env()
    if b"__asan_init" in open(sofile, "rb").read():
        rt = subprocess.run(["clang", "-print-file-name=libclang_rt.asan-x86_64.so"],
                            capture_output=True, text=True).stdout.strip()
        env["LD_PRELOAD"] = rt
        env["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0"
    return env


def module_cpath(sofile, name):
    """The environment for the VM under test to `require "ljm.recorder"`:
    the module copied to a scratch ljm/recorder.so on LUA_CPATH."""
    cdir = scratch(name)
    os.makedirs(os.path.join(cdir, "ljm"), exist_ok=True)
    shutil.copy(sofile, os.path.join(cdir, "ljm", "recorder.so"))
    env = module_env(sofile)
    env["LUA_CPATH"] = os.path.join(cdir, "?.so") + ";;"
    return env


def recording_env(env, work, name, i, rate=None):
    """Points the environment of a host's run i at its stream and its done
    file (LJM_OUT, LJM_DONE), sampled at rate with seed i + 1 if a rate is
    given (LJM_SAMPLE, LJM_SEED); returns both paths."""
    out = os.path.join(work, "%s%d.ljm" % (name, i))
    done = os.path.join(work, "done%d.txt" % i)
    env["LJM_OUT"], env["LJM_DONE"] = out, done
    env.pop("LJM_SAMPLE", None)
    if rate:
        env["LJM_SAMPLE"], env["LJM_SEED"] = str(rate), str(i + 1)
    return out, done


def host_stream(res, i, out, rate=None):
    """The stream of a host's run i with stacks (out), parsed; checks that it
    is complete, follows decoder/EXTENSION.md and is sampled at rate, or
    exact if none."""
    st = ljmread.parse(open(out, "rb").read())
    flags = ljmread.STACKS | ljmread.TIME | ljmread.TYPES | (ljmread.SAMPLED if rate else 0)
    res.check(st.complete and st.flags == flags and not st.problems and st.rate == rate,
              "run %d: complete extended stream (%s, %#x, rate %s, %s)"
              % (i, st.complete, st.flags, st.rate, st.problems[:3]))
    return st


def rows(path):
    return ljmread.decode(open(path, "rb").read())


def count(rows_, section, name=None, prefix=None):
    """Events of a name (or name prefix) in a section, all ids summed."""
    total = 0
    for (s, n), cs in rows_.items():
        if s != section:
            continue
        if (name is not None and n == name) or (prefix is not None and n.startswith(prefix)):
            total += sum(cs)
    return total
