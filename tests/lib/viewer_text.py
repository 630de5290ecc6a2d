"""viewer_text.py -- what viewers' command lines print, read back: go tool
pprof -tags' values per key, and the roots of folded stacks (ljm's .folded,
heaptrack_print -F)."""
import re


def tag_values(text, key):
    """go tool pprof -tags: value -> figure, for one key."""
    m = re.search(r"^ %s: Total .*\n((?:\s+[0-9.]+\S* \(.*\): .*\n?)*)" % re.escape(key), text, re.M)
    out = {}
    for line in (m.group(1) if m else "").splitlines():
        f = re.match(r"\s+([0-9.]+)\S* \(.*\): (.*)$", line)
        if f:
            out[f.group(2)] = float(f.group(1))
    return out


def folded_roots(text):
    """Folded lines: root frame -> the sum of its lines' counts."""
    out = {}
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        root = stack.split(";")[0]
        out[root] = out.get(root, 0) + int(n)
    return out
