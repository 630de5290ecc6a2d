"""The LuaJIT trees the recorder is built for: @luajit_trees.

One repository holds every tree, each in its own package (@luajit_trees//NAME:
its headers, the header naming it, its VM), and flavours.bzl lists the trees
that were found. A tree that is missing (a clone without ../shared, a
machine without Debian's trixie or sid indexes) is left out, never failed:
`ljm --version` lists the trees compiled in, the suite names the ones it
could not cover.

What differs between trees that the preprocessor cannot see (enum values,
struct members) is probed here from the tree's own headers and handed to
recorder/vm/lj.h, the one place that deals with it, as LJM_LJ_* macros.
"""

# One line per LuaJIT: name (a C identifier), label (a Debian tree's
# .debian-version is appended), source (a directory, or an archive
# relative to the workspace root; ../shared/third_party/README.md; a leading
# "?": its absence is no gap), how its VM
# is built ("make", or "cmake" with arguments), and the defines its build
# uses that change layouts (also given to the recorder's unit).
LUAJIT_TREES = [
    ("luajit", "Debian 12 luajit", "/var/cache/ljmkit/luajit-src", "make", []),
    ("luajit2", "Debian 12 luajit2", "/var/cache/ljmkit/luajit2-src", "make", []),
    ("luajit_trixie", "Debian 13 luajit", "/var/cache/ljmkit/luajit-trixie-src", "make", []),
    ("luajit_sid", "Debian sid luajit", "/var/cache/ljmkit/luajit-sid-src", "make", []),
    # The installed luajit when it is none of the above (a newer trixie or sid).
    ("luajit_installed", "Debian installed luajit", "?/var/cache/ljmkit/luajit-installed-src", "make", []),
    ("upstream", "upstream LuaJIT v2.1 1ee778a4", "../shared/third_party/LuaJIT-2.1.1787165859.tar.gz", "make", []),
    ("tarantool", "Tarantool LuaJIT b52fe979", "../shared/third_party/tarantool-luajit-b52fe979.tar.gz",
     "cmake -DLUAJIT_ENABLE_GC64=ON", ["LUAJIT_SMART_STRINGS=1", "LUAJIT_ENABLE_GC64"]),
    ("tarantool_nogc64", "Tarantool LuaJIT b52fe979", "../shared/third_party/tarantool-luajit-b52fe979.tar.gz",
     "cmake -DLUAJIT_ENABLE_GC64=OFF", ["LUAJIT_SMART_STRINGS=1"]),
    # The fork Debian 12's tarantool 2.6 links in (fetched where tarantool is
    # installed): recorded inside tarantool itself, so no VM of its own.
    ("tarantool_deb12", "Debian 12 tarantool LuaJIT", "/var/cache/ljmkit/tarantool-luajit-src", "none",
     ["LUAJIT_SMART_STRINGS=1"]),
]

# Probes: macro -> (header, text whose presence sets it to 1).
_FEATURES = {
    "LJM_LJ_VMST_FUNCS": ("lj_obj.h", "LJ_VMST_LFUNC"),
    "LJM_LJ_FFI_FIN_ROOT": ("lj_obj.h", "GCROOT_FFI_FIN"),
    "LJM_LJ_STRHASH": ("lj_obj.h", "GCRef *strhash;"),
    "LJM_LJ_SBUF_MREF": ("lj_obj.h", "MRef p;"),
    "LJM_LJ_VMTHREAD": ("lj_obj.h", "vmthref"),
    "LJM_LJ_STRID": ("lj_obj.h", "StrID sid;"),
}

_TREE_BUILD = """# {label}: {source}
package(default_visibility = ["//visibility:public"])

# Its public and internal headers (lua.h, lj_obj.h, ...), luajit.h made from
# luajit_rolling.h where the tree has not been built, and ljm_flavour.h.
cc_library(
    name = "internal_headers",
    hdrs = glob(["tree/src/*.h", "gen/*.h"]),
    includes = ["gen", "tree/src"],
    defines = {defines},
)
"""

# A VM built from the tree as its packagers build it (stripped, no debug
# notes): the luajit executable (API exported for C modules) and the shared
# library under the soname programs linked with -lluajit-5.1 look for.
_VM = """
# {what}
genrule(
    name = "{name}",
    srcs = glob(["tree/**"], exclude = ["tree/src/*.o", "tree/src/*.a", "tree/src/*.so",
                                       "tree/src/luajit", "tree/.git/**"]),
    outs = ["{name}/luajit", "{name}/libluajit-5.1.so.2"],
    cmd = \"\"\"
set -e
root=$$(dirname $$(dirname $(location tree/src/lj_obj.h)))
t=$$(mktemp -d)
trap 'rm -rf "$$t"' EXIT
cp -rL "$$root" "$$t/tree"
{build}
strip --remove-section=.comment --remove-section=.note "$$t/luajit"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$$t/libluajit.so"
cp "$$t/luajit" $(location {name}/luajit)
cp "$$t/libluajit.so" $(location {name}/libluajit-5.1.so.2)
\"\"\",
)
"""

_MAKE = """make -s -C "$$t/tree/src" -j2 CC=cc Q= E=@: {flags}>"$$t/log" 2>&1 || {{ tail -n 30 "$$t/log"; exit 1; }}
cp "$$t/tree/src/luajit" "$$t/luajit"; cp -L "$$t/tree/src/libluajit.so" "$$t/libluajit.so\""""

_CMAKE = """(cmake -S "$$t/tree" -B "$$t/b" -DCMAKE_BUILD_TYPE=Release {args} && make -C "$$t/b" -j2 luajit-main) >"$$t/log" 2>&1 || {{ tail -n 30 "$$t/log"; exit 1; }}
cp "$$t/b/src/luajit" "$$t/luajit"; cp -L "$$t/b/src/libluajit.so" "$$t/libluajit.so\""""

def _c_string(s):
    return s.replace("\\", "\\\\").replace("\"", "\\\"")

def _tree(ctx, root, name, label, source, build, defines):
    """Sets up package NAME; returns (its label, "") or (None, why it is missing)."""
    src = ctx.path(source if source.startswith("/") else "%s/%s" % (root, source))
    if not src.exists:
        return None, "%s not found" % source
    if source.endswith(".tar.gz") or source.endswith(".tar.xz"):
        # tar, not ctx.extract: Debian 13's Bazel 4.2.3 dies in ctx.extract (the
        # commons-io it is packaged with lacks a class it loads there).
        tree = ctx.path(name + "/tree")
        r = ctx.execute(["mkdir", "-p", str(tree)])
        if r.return_code == 0:
            r = ctx.execute(["tar", "-xf", str(src), "-C", str(tree), "--strip-components=1"])
        if r.return_code != 0:
            return None, "%s: cannot unpack it: %s" % (source, r.stderr.strip())
    else:
        tree = src
        if not tree.get_child("src").get_child("lj_obj.h").exists:
            return None, "%s: no src/lj_obj.h" % source
        for child in tree.readdir():  # globs see the tree through these
            ctx.symlink(child, name + "/tree/" + child.basename)
    s = tree.get_child("src")
    if not s.get_child("luajit.h").exists:
        # luajit_rolling.h and the release number: what `make` writes.
        relver = tree.get_child(".relver")
        if not relver.exists or not ctx.read(relver).strip().isdigit():
            return None, "%s: no luajit.h and no release number (.relver): run make in it" % source
        text = ctx.read(s.get_child("luajit_rolling.h"))
        lines = [l for l in text.split("\n") if not l.startswith("#error")]
        ctx.file(name + "/gen/luajit.h", "\n".join(lines).replace("ROLLING", ctx.read(relver).strip()))
    version = tree.get_child(".debian-version")
    what = label + (" " + ctx.read(version).strip() if version.exists else "")
    head = [
        "#define LJM_FLAVOUR_NAME \"%s\"" % name,
        "#define LJM_FLAVOUR_LABEL \"%s\"" % _c_string(what),
        "#define LJM_FLAVOUR_SYM rec_flavour_%s" % name,
    ]
    for macro, (header, text) in sorted(_FEATURES.items()):
        h = s.get_child(header)
        head.append("#define %s %d" % (macro, 1 if h.exists and text in ctx.read(h) else 0))
    ctx.file(name + "/gen/ljm_flavour.h", "\n".join(head) + "\n")
    text = _TREE_BUILD.format(label = what, source = source, defines = repr(defines))
    if build == "make":
        text += _VM.format(name = "vm", what = "Its VM.", build = _MAKE.format(flags = ""))
        text += _VM.format(name = "vm_nogc64", build = _MAKE.format(flags = "XCFLAGS=-DLUAJIT_DISABLE_GC64 "),
                           what = "The same without GC64: a VM no build knows (the refusal's tests).")
    elif build != "none":  # "none": a program's own VM, headers only
        text += _VM.format(name = "vm", what = "Its VM.", build = _CMAKE.format(args = build[len("cmake "):]))
    ctx.file(name + "/BUILD.bazel", text)
    return what, ""

def _luajit_trees_impl(ctx):
    root = ctx.path(Label("@//:WORKSPACE")).dirname
    trees = list(LUAJIT_TREES)
    extra = ctx.os.environ.get("LJM_EXTRA_TREE", "")
    if extra:
        defines = [d for d in ctx.os.environ.get("LJM_EXTRA_DEFINES", "").split(" ") if d]
        trees.append(("extra", "LuaJIT tree " + extra, extra, "make", defines))
    found, vms, missing, labels = [], [], {}, {}
    for name, label, source, build, defines in trees:
        optional = source.startswith("?")
        what, why = _tree(ctx, root, name, label, source.lstrip("?"), build, defines)
        if why and name == "extra":  # asked for: say why it cannot be used
            fail("LJM_EXTRA_TREE=%s" % why)
        if why:
            if not optional:
                missing[name] = why
        else:
            found.append(name)
            labels[name] = what
            if build != "none":
                vms.append(name)
    ctx.file("BUILD.bazel", "exports_files([\"flavours.bzl\"])\n")
    ctx.file("flavours.bzl", "\n".join([
        "# The trees found (bazel/luajit_trees.bzl), in the order the recorder tries them.",
        "FLAVOURS = %s" % repr(found),
        "# The trees with a VM built here (@luajit_trees//NAME:vm).",
        "VMS = %s" % repr(vms),
        "LABELS = %s" % repr(labels),
        "MISSING = %s" % repr(missing),
        "",
    ]))

luajit_trees = repository_rule(
    implementation = _luajit_trees_impl,
    environ = ["LJM_EXTRA_TREE", "LJM_EXTRA_DEFINES"],
    local = True,
)
