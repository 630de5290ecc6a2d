"""vm_tests: a recorder test that runs LuaJIT, once per VM.

NAME runs on the system's LuaJIT (whichever is installed; tagged
"external": never cached, since Bazel does not see it change; and
"system_vm", which the ASan run skips); NAME_<tree>
on each tree's VM built from its source (@luajit_trees//<tree>:vm), named
to the driver by LJM_TEST_VM, LJM_TEST_FLAVOUR and LJM_TEST_LABEL (the
build the recorder must pick; tests/lib/testlib.py). Tests with
every_vm = False run on Debian 12's two trees only, and tests with
system = False not on the system's LuaJIT, which the test command makes
Debian 12's luajit2, the source of NAME_luajit2 (CI time: the longest
ones; the others run the system's own build). Each is a
py_script_test (tests/lib/py_test.bzl) of the driver tests/NAME.py, with the
drivers' own modules next to it (DRIVER_MODULES); its inputs are the paths
the driver takes, in order.
"""

load("@luajit_trees//:flavours.bzl", "LABELS", "VMS")
load("//tests/lib:py_test.bzl", "py_script_test")

# What the drivers import from their own folder (the rest is //tests/lib).
DRIVER_MODULES = [
    "//recorder:tests/compare_ref.py",
    "//recorder:tests/corpus_rules.py",
]

# Debian 12's trees: every recorder test runs on them.
_BASE = ["luajit", "luajit2"]

def vm_env(flavour):
    """The environment naming flavour's VM to the driver (testlib.VM)."""
    return {
        "LJM_TEST_VM": "$(location @luajit_trees//%s:vm/luajit)" % flavour,
        "LJM_TEST_FLAVOUR": flavour,
        "LJM_TEST_LABEL": LABELS[flavour],
    }

def vm_data(flavour):
    """The files of flavour's VM."""
    return ["@luajit_trees//%s:vm/luajit" % flavour, "@luajit_trees//%s:vm/libluajit-5.1.so.2" % flavour]

def driver_test(name, src = None, data = [], **kwargs):
    """A recorder test run once: tests/NAME.py with DRIVER_MODULES."""
    py_script_test(
        name = name,
        src = src or "tests/%s.py" % name,
        data = DRIVER_MODULES + data,
        **kwargs
    )

def vm_tests(name, src = None, data = [], tags = [], every_vm = False, system = True, **kwargs):
    if system:
        driver_test(
            name = name,
            src = src or "tests/%s.py" % name,
            data = data,
            tags = tags + [
                "external",
                "system_vm",  # as NAME_luajit2's VM here: the ASan run skips it (CI time)
            ],
            **kwargs
        )
    for flavour in VMS:
        if flavour not in _BASE and not every_vm:
            continue
        driver_test(
            name = name + "_" + flavour,
            src = src or "tests/%s.py" % name,
            data = data + vm_data(flavour),
            env = vm_env(flavour),
            tags = tags + ([] if flavour in _BASE else ["plain_only"]),
            **kwargs
        )

def tree_includes(flavour):
    """Copts putting a tree's own headers first: -I is searched before the
    -isystem of deps' includes (the system's luajit.h names another VM)."""
    return ["-Iexternal/luajit_trees/%s/%s" % (flavour, d) for d in ["gen", "tree/src"]]
