"""clitest.py -- what the ljm command-line tests share: running the binary,
counting checks, and the one-line-error rule."""
import subprocess


class Checks:
    """Counts checks and collects the failed ones."""

    def __init__(self, name):
        self.name, self.count, self.failures = name, 0, []

    def __call__(self, cond, what):
        """Counts one check; returns whether it held."""
        self.count += 1
        if not cond:
            self.failures.append(what)
        return bool(cond)

    def done(self, minimum=1):
        """Prints the failures and the tally; returns the exit status."""
        for f in self.failures:
            print("FAIL", f)
        print("%s: %d checks, %d failures" % (self.name, self.count, len(self.failures)))
        return 1 if self.failures or self.count < minimum else 0


def uleb(v):
    """ULEB128, as ljm and ljh streams write numbers."""
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def read_uleb(data, pos):
    """The ULEB128 number at data[pos]: (value, position after it)."""
    v = s = 0
    while True:
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << s
        s += 7
        if not b & 0x80:
            return v, pos


def run(ljm, args, stdin=None, timeout=120):
    return subprocess.run([ljm] + args, input=stdin, capture_output=True, timeout=timeout)


def one_line(p):
    """Errors and warnings are exactly one line on stderr."""
    return p.stderr.count(b"\n") == 1


def formats_table(help_text):
    """The formats table of `ljm convert --help` (text): one (line, name,
    suffixes) per format, the line as printed."""
    table = help_text.split("\nformats:\n")[-1].split("\n\n")[0].splitlines()
    rows = []
    for line in table:
        fields = line.split()
        if not fields:
            continue
        sfx = []
        for f in fields[1:]:
            if not f.startswith("."):
                break
            sfx.append(f)
        rows.append((line, fields[0], sfx))
    return rows
