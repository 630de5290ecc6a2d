"""vm_tests: a recorder test that runs LuaJIT, once per VM.

NAME runs on the system's LuaJIT (whichever flavour is installed; tagged
"external": never cached, since Bazel does not see it change); NAME_luajit
and NAME_luajit2 on each flavour's VM built from its source tree
(@luajit_src//:vm, @luajit2_src//:vm), named to the driver by LJM_TEST_VM
and LJM_TEST_FLAVOUR (recorder/tests/testlib.py).
"""

# The LuaJIT flavours: WORKSPACE's @<flavour>_src trees, the units of
# recorder/BUILD, the list in rec_flavours.c.
FLAVOURS = ["luajit", "luajit2"]

def vm_tests(name, data = [], tags = [], **kwargs):
    native.sh_test(
        name = name,
        data = data,
        tags = tags + ["external"],
        **kwargs
    )
    for flavour in FLAVOURS:
        vm = "@%s_src//:vm/luajit" % flavour
        native.sh_test(
            name = name + "_" + flavour,
            data = data + [vm, "@%s_src//:vm/libluajit-5.1.so.2" % flavour],
            env = {
                "LJM_TEST_VM": "$(location %s)" % vm,
                "LJM_TEST_FLAVOUR": flavour,
            },
            tags = tags,
            **kwargs
        )
