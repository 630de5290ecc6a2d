"""A LuaJIT 2.1 source tree the recorder is built for (one per flavour).

Each flavour slot points at a source tree: by default the Debian source
package fetched by scripts/setup.d/luajit-source.sh; a build may point a
slot at any other LuaJIT 2.1 tree (upstream v2.1, a fork) with
    bazel build --repo_env=LJM_LUAJIT_TREE=/path/to/LuaJIT //:ljm
(LJM_LUAJIT2_TREE for the second slot). The repository exposes the tree's
headers, a header naming the flavour, and the VM built from the tree.
"""

def _luajit_tree_impl(ctx):
    path = ctx.os.environ.get(ctx.attr.env, "") or ctx.attr.default
    tree = ctx.path(path)
    if not tree.get_child("src").get_child("lj_obj.h").exists:
        fail("%s: no LuaJIT source tree (src/lj_obj.h missing); run scripts/setup.sh or set %s" %
             (path, ctx.attr.env))
    for child in tree.readdir():
        ctx.symlink(child, child.basename)
    version = tree.get_child(".debian-version")
    if version.exists:
        label = "Debian %s %s" % (ctx.attr.flavour, ctx.read(version).strip())
    else:
        label = "%s tree %s" % (ctx.attr.flavour, path)
    ctx.template("BUILD.bazel", ctx.attr.build_file, {
        "%{flavour}": ctx.attr.flavour,
        "%{label}": label.replace("\\", "\\\\").replace("\"", "\\\""),
    })

luajit_tree = repository_rule(
    implementation = _luajit_tree_impl,
    attrs = {
        "flavour": attr.string(mandatory = True),
        "default": attr.string(mandatory = True),
        "env": attr.string(mandatory = True),
        "build_file": attr.label(mandatory = True),
    },
    environ = ["LJM_LUAJIT_TREE", "LJM_LUAJIT2_TREE"],
    local = True,
)
