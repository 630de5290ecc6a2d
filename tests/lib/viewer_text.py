"""viewer_text.py -- what viewers' command lines print, read back: go tool
pprof -tags' values per key, the roots of folded stacks (ljm's .folded,
heaptrack_print -F), and sizes as ljm's own tables print them."""
import re


def human(n):
    """ljm_fmt_human: bytes in binary units, one decimal above 1 KiB."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    u, a = 0, float(n)
    while abs(a) >= 1024 and u + 1 < len(units):
        a /= 1024
        u += 1
    return "%.0f B" % a if u == 0 else "%.1f %s" % (a, units[u])


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
