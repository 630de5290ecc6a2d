"""Compiler options shared by every target of the project."""

LJM_COPTS = [
    "-std=c11",
    "-D_GNU_SOURCE",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wmissing-prototypes",
    "-Wstrict-prototypes",
    "-Wno-unused-parameter",
    "-O2",
]
