#!/usr/bin/env python3
"""snapshot_files_test.py -- where rec.snapshot() writes (VM under test):
a device node, a FIFO, a directory and a socket are refused with a message
naming the kind of file and left as they were; a symbolic link (also a
relative one, a chain, a dangling one) is followed: the link stays, its
target gets the snapshot; under `ulimit -f` the host survives and the
error is "File too large", on a full file system "No space left on
device" (not "Input/output error"); nothing temporary is left behind.
Runs as root (mknod, mount in a private namespace): as any other user it
fails.
usage: snapshot_files_test.py SOFILE"""
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys

import testlib

res = testlib.Results("snapshot_files")
so = testlib.runfile(sys.argv[1])
out = testlib.scratch("snapshot_files")
env = testlib.module_cpath(so, "snapshot_files_cpath")
shutil.rmtree(out)
os.makedirs(out)
os.chdir(out)

# Prints "path<TAB>ok<TAB>message<TAB>errno" per snapshot; arg[1] = how
# many strings of 1 KiB to keep alive first.
SCRIPT = os.path.join(out, "snap.lua")
with open(SCRIPT, "w") as f:
    f.write("""local rec = require "ljm.recorder"
keep = {}
for i = 1, tonumber(arg[1]) do keep[i] = string.rep(string.char(65 + i % 26), 1000) .. i end
for i = 2, #arg do
  local ok, msg, code = rec.snapshot(arg[i])
  print(arg[i], ok, msg, code)
end
print("alive")
""")


def snap(paths, keep=10, preexec=None, wrap=None):
    cmd = [testlib.LUAJIT, SCRIPT, str(keep)] + paths
    p = subprocess.run((wrap or []) + cmd, capture_output=True, text=True, env=env,
                       timeout=300, preexec_fn=preexec)
    got = {}
    for line in p.stdout.splitlines():
        f = line.split("\t")
        if len(f) == 4:
            got[f[0]] = f[1:] if f[1] == "nil" else f[1:2]
    return p, got


def is_snapshot(path):
    with open(path, "rb") as f:
        return f.read(4) in (b"ljh\x01", b"ljh\x02")


res.check(os.getuid() == 0, "runs as root (mknod, mount): uid %d" % os.getuid())

# Files that are not regular: refused, left as they were.
os.mknod("null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
os.mkfifo("fifo")
os.mkdir("dir")
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind("sock")  # relative: the scratch path is too long for AF_UNIX
os.symlink("null", "link_to_null")
kinds = {"null": ("character device", stat.S_ISCHR, 22),
         "link_to_null": ("character device", stat.S_ISCHR, 22),
         "fifo": ("FIFO", stat.S_ISFIFO, 22),
         "dir": ("directory", stat.S_ISDIR, 21),
         "sock": ("socket", stat.S_ISSOCK, 22)}
p, got = snap(list(kinds))
res.check(p.returncode == 0 and "alive" in p.stdout, "host alive: %d %r" % (p.returncode, p.stderr))
for name, (kind, test, code) in kinds.items():
    g = got.get(name, [])
    res.check(len(g) == 3 and g[0] == "nil" and g[1] == "%s: is a %s, not a regular file" % (name, kind)
              and g[2] == str(code), "%s refused: %r" % (name, g))
    target = os.path.realpath(name)
    res.check(test(os.stat(target).st_mode), "%s is still a %s" % (target, kind))
res.check(os.path.islink("link_to_null"), "the link to the device stays a link")
sock.close()

# Symbolic links are followed.
os.mkdir("sub")
with open("target", "w") as f:
    f.write("old")
os.symlink("target", "link")
os.symlink("../target2", "sub/rel")          # relative to the link's directory
os.symlink("sub/rel", "chain")                # a chain: chain -> sub/rel -> ../target2
os.symlink(os.path.join(out, "made"), "dangling")
with open("target2", "w") as f:
    f.write("old")
p, got = snap(["link", "chain", "dangling"])
for link, target in (("link", "target"), ("chain", "target2"), ("dangling", "made")):
    res.check(got.get(link, [None])[0] == "true", "snapshot via %s: %r" % (link, got.get(link)))
    res.check(os.path.islink(link), "%s is still a link" % link)
    res.check(os.path.isfile(target) and not os.path.islink(target) and is_snapshot(target),
              "%s's target %s holds the snapshot" % (link, target))
res.check(os.path.islink("sub/rel"), "the chain's middle link stays")

# ulimit -f: the host survives, the error keeps its errno.
with open("big.ljh", "w") as f:
    f.write("old")


def small_fsize():
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))


p, got = snap(["big.ljh"], keep=2000, preexec=small_fsize)
res.check(p.returncode == 0 and "alive" in p.stdout,
          "ulimit -f: the host lives on: exit %d %r" % (p.returncode, p.stderr))
res.check(got.get("big.ljh") == ["nil", "big.ljh: File too large", "27"],
          "ulimit -f: nil, File too large, EFBIG: %r" % got.get("big.ljh"))
res.check(open("big.ljh").read() == "old", "ulimit -f: the old file stays")

# A full file system (a 64 KiB tmpfs in a private mount namespace).
os.mkdir("full")
sh = "mount -t tmpfs -o size=64k tmpfs full && exec \"$@\""
p, got = snap(["full/x.ljh"], keep=2000, wrap=["unshare", "-m", "sh", "-c", sh, "sh"])
res.check(p.returncode == 0 and "alive" in p.stdout, "full: host alive: %d %r" % (p.returncode, p.stderr))
res.check(got.get("full/x.ljh") == ["nil", "full/x.ljh: No space left on device", "28"],
          "full disk: ENOSPC, not EIO: %r" % got.get("full/x.ljh"))

res.check(not [f for f in os.listdir(out) if ".tmp" in f], "no temporary file left: %s" % os.listdir(out))
res.finish()
