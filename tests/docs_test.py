#!/usr/bin/env python3
"""docs_test.py -- the docs a user reads work as written.

README.md and every doc/*.md page, and every other Markdown file of the
repository for links:
* every ```sh block runs, as written, in a scratch directory per page that
  holds the repository's files at their relative paths, with `ljm` on PATH
  (and as bazel-bin/cli/ljm, the modules as bazel-bin/recorder/ljm/recorder.so
  and bazel-bin/check/ljm/check_core.so):
  a page's blocks run in order, each under `set -e`, and must exit 0;
* a line of any other block that names a file of the repository (a
  command shown, not run: a GUI, a server, an install) is one of the
  commands other tests run (EXERCISED) -- so no command names a file that
  moved away unnoticed;
* every relative link resolves, and its #anchor names a heading there;
* nothing points at ../shared (a user's clone has no such folder).

usage: docs_test.py LJM RECORDER_SO CHECK_CORE_SO README.md [PAGE.md ...]
The repository is found from README.md (Bazel's runfiles link to it)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ljm, so, core, readme = (os.path.abspath(a) for a in sys.argv[1:5])
root = os.path.dirname(os.path.realpath(readme))
pages = [os.path.realpath(p) for p in [readme] + sys.argv[5:]]
failures = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


def rel(path):
    return os.path.relpath(path, root)


# Commands of non-sh blocks that name repository files, and the test or CI
# step that runs each (a regular expression over the whole line).
EXERCISED = {
    r"bash scripts/demo\.sh": ".ci/run: on fresh Debian 12 and 13 roots",
    r"bash scripts/test\.sh": ".ci/run",
    r"bash scripts/install\.sh( --uninstall)?( \S+)?": "tests/install_test.py",
    r"bash scripts/setup\.sh( --tests)?": "scripts/demo.sh and scripts/test.sh run it",
    r"(mkdir -p \S+ && )?cp -r examples/openresty/\. \S+": "tests/nginx_test.py",
    r"bash scripts/install\.sh +# .*": "tests/install_test.py",
    r"cd examples/openresty.*": "tests/nginx_test.py",
}

FENCE = re.compile(r"^(\s*)```+\s*([\w+-]*)\s*$")


def blocks(text):
    """(language, first line number, text) of each fenced block."""
    out, lang, start, body = [], None, 0, []
    for no, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m and lang is None:
            lang, start, body = m.group(2) or "", no, []
        elif m and lang is not None and not m.group(2):
            out.append((lang, start, "\n".join(body)))
            lang = None
        elif lang is not None:
            body.append(line)
    check(lang is None, "an unclosed code block")
    return out


def slug(heading):
    """GitHub's anchor for a heading."""
    h = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    text = open(path, encoding="utf-8").read()
    seen, out = {}, set()
    in_code = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_code = not in_code
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m and not in_code:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    for m in re.finditer(r'<a (?:name|id)="([^"]+)"', text):
        out.add(m.group(1))
    return out


def check_links(path):
    text = open(path, encoding="utf-8").read()
    # Links outside code: drop fenced blocks and inline code first.
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    for m in re.finditer(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        check(os.path.exists(dest) and os.path.realpath(dest).startswith(root + os.sep),
              "%s: link %s: no such file in the repository" % (rel(path), target))
        if anchor and os.path.isfile(dest) and dest.endswith(".md"):
            check(anchor in anchors(dest), "%s: link %s: no heading #%s in %s"
                  % (rel(path), target, anchor, rel(dest)))
    check("../shared" not in text and "shared/docs" not in text and "ljm-format.md §" not in text,
          "%s points at ../shared (a user's clone does not have it)" % rel(path))


def names_repo_file(line):
    for word in re.findall(r"[\w./-]+", line):
        word = word.rstrip(".,;:")
        if "/" in word and not word.startswith("/") and os.path.exists(os.path.join(root, word)) \
                and not word.startswith("bazel-"):
            return word
    return None


def link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def scratch_dir():
    """The repository's files at their relative paths (folders made anew,
    files hard-linked where possible): what a recipe writes stays here."""
    d = tempfile.mkdtemp(prefix="docs_test.")
    for name in os.listdir(root):
        if name.startswith(("bazel-", ".git")):
            continue
        src = os.path.join(root, name)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, os.path.join(d, name), symlinks=True, copy_function=link_or_copy)
        else:
            link_or_copy(src, os.path.join(d, name))
    os.makedirs(os.path.join(d, "bazel-bin", "cli"))
    os.makedirs(os.path.join(d, "bazel-bin", "recorder", "ljm"))
    os.symlink(ljm, os.path.join(d, "bazel-bin", "cli", "ljm"))
    os.symlink(so, os.path.join(d, "bazel-bin", "recorder", "ljm", "recorder.so"))
    os.makedirs(os.path.join(d, "bazel-bin", "check", "ljm"))
    os.symlink(core, os.path.join(d, "bazel-bin", "check", "ljm", "check_core.so"))
    os.makedirs(os.path.join(d, ".bin"))
    os.symlink(ljm, os.path.join(d, ".bin", "ljm"))
    return d


def run_page(path):
    page_blocks = blocks(open(path, encoding="utf-8").read())
    ran = 0
    d = scratch_dir()
    env = dict(os.environ, PATH=os.path.join(d, ".bin") + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
               HOME=d, LC_ALL="C.UTF-8", GOCACHE=os.path.join(d, ".gocache"))
    env.pop("LUA_CPATH", None)
    env.pop("LUA_PATH", None)
    for lang, start, body in page_blocks:
        where = "%s:%d" % (rel(path), start)
        if lang == "sh":
            ran += 1
            try:
                p = subprocess.run(["bash", "-c", "set -e\n" + body], cwd=d, env=env,
                                   capture_output=True, text=True, timeout=120)
                ok, out = p.returncode == 0, (p.stdout[-600:] + p.stderr[-900:])
                rc = p.returncode
            except subprocess.TimeoutExpired:
                ok, out, rc = False, "timed out after 120 s", "-"
            check(ok, "%s: the sh block fails (exit %s):\n%s\n--- output:\n%s" % (where, rc, body, out))
            print("ran %s (%d lines): %s" % (where, body.count("\n") + 1, "ok" if ok else "FAILED"))
        else:
            for line in body.splitlines():
                cmd = re.sub(r"^\s*[$#]\s+", "", line).split("  #")[0].strip()
                f = names_repo_file(cmd)
                if not f or lang in ("text", "lua", "c", "nginx", "json"):
                    continue
                known = [v for k, v in EXERCISED.items() if re.fullmatch(k, cmd)]
                check(bool(known), "%s: `%s` names %s but is not run by any test "
                      "(make it a ```sh block, or add what runs it to EXERCISED)" % (where, cmd, f))
    shutil.rmtree(d, ignore_errors=True)
    return ran


total = 0
for page in pages:
    total += run_page(page)
# Links in every Markdown file a user may open.
for dirpath, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if not x.startswith((".", "bazel-")) and x not in ("node_modules",)]
    if rel(dirpath).startswith("testdata"):
        continue
    for f in files:
        if f.endswith(".md"):
            check_links(os.path.join(dirpath, f))
# The README's `ljm convert` row names every output of the registry
# (`ljm convert --help`) by one of its suffixes, and no suffix it lacks.
helptext = subprocess.run([ljm, "convert", "--help"], capture_output=True, text=True).stdout
table = helptext.split("\nformats:\n")[-1].split("\n\n")[0].splitlines()
registered = {line.split()[0]: {f for f in line.split()[1:] if f.startswith(".")} for line in table}
with open(readme, encoding="utf-8") as f:
    row = [line for line in f if line.startswith("| `ljm convert")]
check(len(row) == 1, "README has %d `ljm convert` rows" % len(row))
named = set(re.findall(r"`(\.[\w.]+)`", row[0] if row else ""))
check(len(registered) >= 11, "convert --help lists %d formats" % len(registered))
for fmt, sfx in sorted(registered.items()):
    check(bool(sfx & named), "README's convert row names no suffix of %s (%s)" % (fmt, sorted(sfx)))
every = set().union(*registered.values()) if registered else set()
check(named <= every, "README's convert row names %s, which no format has" % sorted(named - every))
check(total >= 10, "only %d sh blocks ran" % total)
print("%d sh blocks ran, %d checks, %d failed" % (total, checks, len(failures)))
sys.exit(1 if failures else 0)
