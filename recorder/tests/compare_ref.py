"""compare_ref.py -- recorded stream vs. the reference report of the same script.

usage: compare_ref.py STREAM REPORT.txt [--seed] [--skip-name NAME]...

Every reference row with at least 100 events must appear under the same
name in the same section with a count within 2% or 8 events, whichever is
larger (the reference's GC-paced rows vary by a few events from run to
run, and by as much between LuaJIT builds: sid's OpenResty frees 3 more
INTERNAL blocks of ~100 than Tarantool's VM did). With --seed, the sets of
ALLOCATIONS and REALLOCATIONS names must also be equal. --skip-name
exempts a name whose count is a documented reference artefact.
Prints one line per problem and exits 1 if there is any.
"""
import sys

import ljmread  # tests/lib/ljmread.py, the shared stream reader


def main(argv):
    stream, report = argv[1], argv[2]
    seed = "--seed" in argv
    skip = [argv[i + 1] for i, a in enumerate(argv) if a == "--skip-name"]
    ours, info = ljmread.decode(open(stream, "rb").read())
    ref = ljmread.parse_report(open(report).read())
    bad = []
    if not info["complete"]:
        bad.append("stream has no epilogue")
    checked = 0
    for (sec, name), counts in sorted(ref.items()):
        if name in skip:
            continue
        for c in counts:
            if c < 100:
                continue
            checked += 1
            mine = ours.get((sec, name), [])
            cands = mine + [sum(mine)]
            if not any(abs(m - c) <= max(0.02 * c, 8) for m in cands):
                bad.append("%s %s: reference %d events, recorded %s" % (sec, name, c, mine))
    if seed:
        for sec in ("ALLOCATIONS", "REALLOCATIONS"):
            a = {n for (s, n) in ref if s == sec}
            b = {n for (s, n) in ours if s == sec}
            if a != b:
                bad.append("%s names differ: reference only %s, recorded only %s"
                           % (sec, sorted(a - b), sorted(b - a)))
    for b in bad:
        print("%s: %s" % (stream, b))
    print("%s: %d rows >= 100 events checked, %d problems" % (stream, checked, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
