"""testlib.py -- shared helpers of the recorder's test drivers."""
import os
import subprocess
import sys

import ljmrows


class Results:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s: %s" % (self.name, what))
        return cond

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        sys.exit(1 if self.failed or not self.passed else 0)


def runfile(path):
    """Absolute path of a runfile given as $(location ...)."""
    return os.path.abspath(path)


def scratch(name):
    d = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), name)
    os.makedirs(d, exist_ok=True)
    return d


def module_env(sofile):
    """Environment for stock luajit loading our module. A module built with
    sanitizers (bazel test --config=asan) needs their runtime preloaded,
    since /usr/bin/luajit is not instrumented."""
    env = dict(os.environ)
    if b"__asan_init" in open(sofile, "rb").read():
        rt = subprocess.run(["clang", "-print-file-name=libclang_rt.asan-x86_64.so"],
                            capture_output=True, text=True).stdout.strip()
        env["LD_PRELOAD"] = rt
        env["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0"
    return env


def rows(path):
    return ljmrows.decode(open(path, "rb").read())


def count(rows_, section, name=None, prefix=None):
    """Events of a name (or name prefix) in a section, all ids summed."""
    total = 0
    for (s, n), cs in rows_.items():
        if s != section:
            continue
        if (name is not None and n == name) or (prefix is not None and n.startswith(prefix)):
            total += sum(cs)
    return total
