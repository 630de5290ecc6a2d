"""corpus_rules.py -- the reference corpus scripts the recorder tests run,
and how their recordings are compared with the reference reports."""

# Names whose reference counts are artefacts of the reference writer, not
# of the program (doc/ljm-format.md): INTERNAL churn of the C-symbol re-dump
# before every C-attributed event ("Symbol events"), rows merged by prototype
# address reuse, which depends on allocator addresses ("Rows and Overrides").
SKIP = {
    "cframes": ["INTERNAL"],
    "cfuncs": ["INTERNAL"],
    "dynload": ["function_alias_2:1"],
}
# Streams the scripts write under another name than <script>.ljm.
OUTPUT = {"test": "memprof_new.bin", "format_concat": "memprof_format_concat.bin"}
SCRIPTS = ["test", "format_concat", "big", "cframes", "cfuncs", "coroutines", "dynload",
           "empty", "gc_churn", "leak", "realloc_prestart", "stack", "tailcall",
           "jit_on", "jit_flush", "xpcall_handler", "costack"]
