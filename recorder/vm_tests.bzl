"""vm_tests: a recorder test that runs LuaJIT, once per VM.

NAME runs on the system's LuaJIT (whichever is installed; tagged
"external": never cached, since Bazel does not see it change; and
"system_vm", which the ASan run skips); NAME_<tree>
on each tree's VM built from its source (@luajit_trees//<tree>:vm), named
to the driver by LJM_TEST_VM, LJM_TEST_FLAVOUR and LJM_TEST_LABEL (the
build the recorder must pick; recorder/tests/testlib.py). Tests with
every_vm = False run on Debian 12's two trees only (CI time).
"""

load("@luajit_trees//:flavours.bzl", "LABELS", "VMS")

# Debian 12's trees: every recorder test runs on them.
_BASE = ["luajit", "luajit2"]

def vm_tests(name, data = [], tags = [], every_vm = False, **kwargs):
    native.sh_test(
        name = name,
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
        vm = "@luajit_trees//%s:vm/luajit" % flavour
        native.sh_test(
            name = name + "_" + flavour,
            data = data + [vm, "@luajit_trees//%s:vm/libluajit-5.1.so.2" % flavour],
            env = {
                "LJM_TEST_VM": "$(location %s)" % vm,
                "LJM_TEST_FLAVOUR": flavour,
                "LJM_TEST_LABEL": LABELS[flavour],
            },
            tags = tags + ([] if flavour in _BASE else ["plain_only"]),
            **kwargs
        )

def tree_includes(flavour):
    """Copts putting a tree's own headers first: -I is searched before the
    -isystem of deps' includes (the system's luajit.h names another VM)."""
    return ["-Iexternal/luajit_trees/%s/%s" % (flavour, d) for d in ["gen", "tree/src"]]
