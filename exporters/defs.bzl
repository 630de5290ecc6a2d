"""ljm_exporter: one output format = its library plus its corpus test."""

load("//bazel:copts.bzl", "LJM_COPTS")

def ljm_exporter(name, srcs, deps = [], test_timeout = None, test_data = [], corpus_test = True):
    """Declares //exporters/<name> (linked whole, so its LjmExporter is kept
    for the registry) and, with corpus_test, <name>_test, running
    <name>_test.py on the corpus. Registering it: FORMATS in exporters/BUILD."""
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
    if not corpus_test:
        return
    native.sh_test(
        name = name + "_test",
        size = "medium",
        timeout = test_timeout,
        srcs = [name + "_test.py"],
        data = test_data + ["//cli:ljm", "//exporters/common:testlib", "//testdata:corpus"],
    )
