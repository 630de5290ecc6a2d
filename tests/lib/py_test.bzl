"""py_script_test: a test that is one Python driver.

The driver (src, NAME.py by default) runs under tests/lib/run_py.sh, which
puts the tests' library (//tests/lib: ljmread, ljmwrite, ljhread, checks,
testlib, export_testlib, xvfb) on PYTHONPATH. Its arguments: the paths of
inputs (each label's $(locations), in order; the labels are also data),
then args. Everything else (size, timeout, env, tags) is sh_test's.
"""

def py_script_test(name, src = None, inputs = [], args = [], data = [], **kwargs):
    src = src or name + ".py"
    native.sh_test(
        name = name,
        srcs = ["//tests/lib:run_py.sh"],
        args = ["$(location %s)" % src] + ["$(locations %s)" % i for i in inputs] + args,
        data = [src, "//tests/lib"] + inputs + data,
        **kwargs
    )

def ljm_test(name, inputs = [], **kwargs):
    """A py_script_test whose driver takes the ljm binary first (sys.argv[1])."""
    py_script_test(name = name, inputs = ["//cli:ljm"] + inputs, **kwargs)

# For a test whose own shell wrapper starts python3 from the runfiles root:
# the library on its module path (Python makes the entry absolute).
LIB_ENV = {"PYTHONPATH": "tests/lib"}
