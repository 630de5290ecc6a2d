"""ljm_exporter: one output format = its library plus its corpus test."""

load("//bazel:copts.bzl", "LJM_COPTS")
load("//tests/lib:py_test.bzl", "py_script_test")

def ljm_exporter(name, srcs, deps = [], test_timeout = None, test_data = []):
    """Declares //exporters/<name> (linked whole, so its LjmExporter is kept
    for the registry) and, where the folder has <name>_test.py, <name>_test,
    running it on the corpus (a py_script_test: the tests' library,
    tests/lib, comes with it). Registering it: FORMATS in exporters/BUILD."""
    native.cc_library(
        name = name,
        srcs = srcs,
        copts = LJM_COPTS,
        deps = ["//exporters:exporter", "//exporters/common"] + deps,
        alwayslink = True,
        visibility = ["//visibility:public"],
    )
    # The sources again, for the fuzz target (built with its instrumentation).
    native.filegroup(
        name = "srcs",
        srcs = srcs,
        visibility = ["//exporters:__pkg__", "//fuzz:__pkg__"],
    )
    if not native.glob([name + "_test.py"]):
        return
    py_script_test(
        name = name + "_test",
        size = "medium",
        timeout = test_timeout,
        data = test_data + ["//cli:ljm", "//testdata:corpus"],
    )
