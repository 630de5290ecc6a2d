"""nginxlib.py -- nginx with the OpenResty example (examples/openresty/)
under a scratch prefix, and wrk: what nginx_test.py, bench/nginx_bench.py and
bench/nginx_instructions.py share."""
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scratch_top():
    """A directory for prefixes, under /tmp: the workers (www-data) read the
    Lua files and write the streams, and Bazel's scratch is under /root."""
    top = tempfile.mkdtemp(prefix="ljm-nginx-", dir="/tmp")
    os.chmod(top, 0o755)
    return top


def make_prefix(top, name, example, so):
    """A prefix top/name/ holding the example (its directory), its
    configurations pointed at free ports and at the module so."""
    prefix = os.path.join(top, name) + "/"
    shutil.copytree(example, prefix)
    os.chmod(prefix, 0o755)
    for d in ("logs", "ljm", "cpath/ljm"):
        os.makedirs(prefix + d, exist_ok=True)
    shutil.copy(so, prefix + "cpath/ljm/recorder.so")
    shutil.chown(prefix + "ljm", user="www-data")
    ports = free_port(), free_port()
    # Workers run as www-data (as Debian's nginx.conf), which must reach the
    # prefix: where "/" itself is closed to others (a chroot made by
    # mktemp -d is 0700), they run as the test's user instead.
    closed = not os.stat("/").st_mode & 0o001
    for conf in ("always.conf", "on-demand.conf", "pprof.conf"):
        text = open(prefix + conf).read()
        if closed:
            text = text.replace("user www-data;", "user %s;" % pwd.getpwuid(os.getuid()).pw_name)
        text = text.replace("127.0.0.1:8080", "127.0.0.1:%d" % ports[0])
        text = text.replace("127.0.0.1:8081", "127.0.0.1:%d" % ports[1])
        text = text.replace('lua_package_path "${prefix}lua/?.lua;;";',
                            'lua_package_path "${prefix}lua/?.lua;;";\n'
                            '    lua_package_cpath "${prefix}cpath/?.so;;";')
        open(prefix + conf, "w").write(text)
    return prefix, ports


# The line of always.conf the benchmarks replace, and their sampled setting.
ALWAYS = 'require("ljm_nginx").always{ flush = 1 }'
SAMPLED = 'require("ljm_nginx").always{ flush = 1, suffix = ".ljm.gz", stacks = true, sample = "512k" }'


def opt_libs(root):
    """Builds recorder.so and the benchmarks' pass-through module
    (bench/recorder/passthrough.c) with -c opt; their paths."""
    subprocess.run(["bazel", "build", "-c", "opt", "--symlink_prefix=/", "//recorder:ljm/recorder.so",
                    "//bench:ljm_bench_pass.so"], cwd=root, check=True, capture_output=True)
    binp = subprocess.run(["bazel", "info", "-c", "opt", "bazel-bin"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()
    return (os.path.join(binp, "recorder", "ljm", "recorder.so"),
            os.path.join(binp, "bench", "ljm_bench_pass.so"))


def bench_prefix(top, name, example, so, pass_so, init):
    """make_prefix with the pass-through module on the cpath and always.conf
    running init in each worker instead of ALWAYS; (prefix, port)."""
    prefix, (port, _) = make_prefix(top, name, example, so)
    shutil.copy(pass_so, prefix + "cpath/ljm_bench_pass.so")
    conf = open(prefix + "always.conf").read()
    assert ALWAYS in conf
    open(prefix + "always.conf", "w").write(conf.replace(ALWAYS, init))
    return prefix, port


class Nginx:
    """nginx in the foreground (daemon off) with a prefix and configuration."""

    def __init__(self, prefix, conf, env=None):
        self.prefix = prefix
        self.proc = subprocess.Popen(["nginx", "-p", prefix, "-c", conf, "-g", "daemon off;"],
                                     env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)

    def workers(self):
        """Pids of the worker processes."""
        try:
            kids = open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)).read().split()
        except OSError:
            return []
        return sorted(int(k) for k in kids)

    def wait_ready(self, port, n=2, timeout=20):
        """Whether port accepts connections and n workers run, in time."""
        end = time.time() + timeout
        while time.time() < end:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                if len(self.workers()) == n:
                    return True
            except OSError:
                pass
            time.sleep(0.1)
        return False

    def quit(self, timeout=30):
        """Graceful stop (SIGQUIT): workers finish, run exit_worker_by_lua."""
        self.proc.send_signal(signal.SIGQUIT)
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            return False, out
        return self.proc.returncode == 0, out


def get(port, path):
    """(status, body) of GET path on 127.0.0.1:port."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def wrk(port, path, seconds):
    """wrk's run (2 threads, 16 connections) and the requests it counted."""
    p = subprocess.run(["wrk", "-t2", "-c16", "-d%ds" % seconds, "http://127.0.0.1:%d%s" % (port, path)],
                       capture_output=True, text=True, timeout=seconds + 60)
    m = re.search(r"(\d+) requests in", p.stdout)
    return p, int(m.group(1)) if m else 0


def served(prefix, path):
    """Requests for path nginx answered with 200 (its access log)."""
    n = 0
    for line in open(prefix + "logs/access.log"):
        if '"GET %s HTTP/1.1" 200 ' % path in line:
            n += 1
    return n


def log_problems(prefix):
    """Lines of nginx's error log above [notice]."""
    return [l for l in open(prefix + "logs/error.log")
            if re.search(r"\[(warn|error|crit|alert|emerg)\]", l)]


def load_one_worker(check, name, prefix, ng, wrk_args, seconds):
    """wrk (2 threads, 16 connections, wrk_args: a URL, or -s SCRIPT URL)
    for seconds against nginx ng of one recording worker, then a graceful
    stop: checks that wrk ran, nginx stopped, its error log holds nothing
    above [notice] and one stream was written; the streams."""
    p = subprocess.run(["wrk", "-t2", "-c16", "-d%ds" % seconds] + list(wrk_args),
                       capture_output=True, text=True, timeout=seconds + 60)
    check(p.returncode == 0, "%s: wrk ran (%r)" % (name, p.stderr[-300:]))
    ok, out = ng.quit()
    check(ok, "%s: nginx stopped gracefully (%s)" % (name, out[-300:]))
    check(not log_problems(prefix), "%s: nothing above [notice] in the error log: %s"
          % (name, log_problems(prefix)[:3]))
    streams = [os.path.join(prefix, "ljm", f) for f in os.listdir(prefix + "ljm")]
    check(len(streams) == 1, "%s: one worker, one stream (%s)" % (name, streams))
    return streams
