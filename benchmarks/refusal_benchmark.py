"""Time and peak memory of refusing bombs and garbage (issues 27 and 38), each in a fresh process so its
peak RSS is its own, beside a process that only imports the advisor (the baseline); and the same
refusals in the command and a TensorBoard server; and the plugin cache's accounting of what an
analysis holds against what tracemalloc measures it holds.

The files, made in a scratch folder:
- `bomb.pt.trace.json.gz`: gzip of '{"traceEvents": [' and GB of JSON blank space (the issue's: 4.4 MB
  inflating to 4 GB, which cost 6-25 s and 2.1 GB before);
- `zeros.pt.trace.json`, `zeros.pt.trace.json.gz`, `zeros.xplane.pb`: a file of zeros (sparse) of
  --zeros-gb GB (the issue's 1.5 GB cost 6-15 s and 4.4 GB as a trace, 0.3 s and 35 MB as XSpace);
- `gz-zeros.pt.trace.json.gz`: gzip of 1 GB of zeros;
- `over.pt.trace.json.gz`: a real-shaped trace of 64 MB read with a 16 MB limit (the gzip trailer says so);
- (issue 38) `dense.pt.trace.json.gz`: one kernel event repeated, 6.6 MB inflating to --dense-gb GB
  (1.9: under the 2 GiB limit; it cost 56.8 s and 9.4 GB before), and `lines.xplane.pb`: a small
  profile and --lines empty lines (200,000: 2.8 MB, 45 s and 948 MB before); each read alone, then
  by `tb-gpu-advisor analyze` and by a TensorBoard server (`--server`);
- (issue 51, `--issue51`) small files that cost GBs: a 2.2 MB gzip of 640 MB of events whose keys repeat,
  a 3.4 MB gzip whose size trailer is not believed then 3 GB inside one string, a 1.5 MB gzip of an event
  named 1.5 GB long, an XSpace of 15M event-metadata entries (420 MB), one of 50M empty events (100 MB);
  by `tb-gpu-advisor analyze` and (`--server`) by a TensorBoard server, a host opened and the all-hosts view.

    python benchmarks/refusal_benchmark.py [--bomb-gb 4] [--zeros-gb 1.5] [--dense-gb 1.9]
                                           [--lines 200000] [--server] [--issue51] [--python-costs]
                                           [--xspace-costs] [--accounting] [--keep DIR]

The targets: each refusal within 1 s and 300 MB of RSS (over the baseline's), issue 38's within 3 s
and 300 MB in the command and the server, issue 51's within 10 s and 1 GB; the cache's accounting
within 2x of the measured figure.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

CHILD = r"""
import json, sys, time
from tb_gpu_advisor.formats.discovery import PYTORCH_TRACE, XPLANE, HostFile
from tb_gpu_advisor.report.engine import read_file
from tb_gpu_advisor.common.errors import ProfileReadError
path, limit = sys.argv[1], int(sys.argv[2])
if path == "-":
    print(json.dumps({"seconds": 0.0, "message": "(imports only)"}))
    sys.exit(0)
kind = XPLANE if path.endswith(".xplane.pb") else PYTORCH_TRACE
t = time.perf_counter()
try:
    read_file(HostFile("r", "h", path, 0, None, kind), max_bytes=limit or None)
    message = "READ (not refused)"
except ProfileReadError as e:
    message = e.message
print(json.dumps({"seconds": time.perf_counter() - t, "message": message}))
"""

# The command in a fresh interpreter that prints its own peak RSS (VmHWM: ru_maxrss would carry
# over this benchmark's own peak, which the forked child had before exec) and CPU time.
CLI = r"""
import os, resource, sys, time
from tb_gpu_advisor import cli
t = time.perf_counter()
code = cli.main(sys.argv[1:])
wall = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_SELF)
with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
sys.stdout.flush()
sys.stderr.write(f"\nSTATS {wall} {u.ru_utime + u.ru_stime} {hwm}\n")
os._exit(code)
"""


def gzip_stream(path: str, head: bytes, block: bytes, count: int) -> None:
    """gzip of `head` and `count` copies of `block`, written as made."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    with open(path, "wb") as f:
        f.write(z.compress(head))
        for _ in range(count):
            f.write(z.compress(block))
        f.write(z.flush())


def sparse_zeros(path: str, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


def measure(path: str, limit: int = 0) -> dict:
    env = {**os.environ, "PYTHONPATH": ROOT}
    p = subprocess.Popen([sys.executable, "-c", CHILD, path, str(limit)], stdout=subprocess.PIPE, env=env)
    out = p.stdout.read() if p.stdout else b""
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    doc = json.loads(out) if p.returncode == 0 else {"seconds": float("nan"), "message": f"exit {p.returncode}"}
    doc["peak_rss_mb"] = usage.ru_maxrss / 1024  # KiB on Linux
    return doc


# --- issue 38: the dense gzip and the file of empty lines, in the command and in a server ----------


def hostile_logdir(work: str, dense_gb: float, lines: int) -> dict[str, tuple[str, str]]:
    """A logdir with the two runs of issue 38: {label: (run, host)}."""
    from support import hostile_profile

    logdir = os.path.join(work, "logdir")
    dense = os.path.join(logdir, "dense")
    os.makedirs(dense, exist_ok=True)
    hostile_profile.dense_gzip(os.path.join(dense, "w.1.pt.trace.json.gz"), int(dense_gb * 1e9))
    session = os.path.join(logdir, "lines", "plugins", "profile", "s")
    os.makedirs(session, exist_ok=True)
    with open(os.path.join(session, "h.xplane.pb"), "wb") as f:
        f.write(hostile_profile.empty_lines(lines))
    return RUNS


RUNS = {"dense gzip": ("dense", "w.1"), "empty lines": ("lines/s", "h")}


def command(logdir: str, run: str, *more: str) -> dict:
    """`tb-gpu-advisor analyze LOGDIR --run RUN --format json` in a fresh interpreter: wall and CPU
    seconds, peak RSS (MB: its own, and the highest of any process under it, sampled: the worker
    processes a job's files are read in), exit code, and the error line it printed (or the first
    report's error, for a file read and reported unreadable)."""
    env = {**os.environ, "PYTHONPATH": ROOT}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(
            [sys.executable, "-c", CLI, "analyze", logdir, "--run", run, "--format", "json", *more],
            stdout=out,
            stderr=err,
            env=env,
        )
        tree = Sampler(p.pid, own=True)
        p.wait(600)
        tree.stop()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    stats = stderr.rsplit("STATS ", 1)[-1].split()
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    message = errors[0][len("error: ") :] if errors else ""
    if not message and stdout.strip():
        reports = json.loads(stdout).get("reports") or [{}]
        message = (reports[0].get("errors") or [""])[0]
    return {
        "seconds": float(stats[0]),
        "cpu_s": float(stats[1]),
        "peak_mb": max(int(stats[2]) / 1024, tree.tree_peak / 1024),
        "exit": p.returncode,
        "message": message,
    }


def _children(pid: int) -> list[int]:
    """A process's children: those of each of its threads (TensorBoard's worker threads start them)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def _tree(pid: int) -> list[int]:
    """A process and its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += _children(p)
    return out


def _status(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))
    except (OSError, StopIteration):
        return 0


def _helper(pid: int) -> bool:
    """multiprocessing's fork server or resource tracker, for a child of the server (not a process that
    reads a file; those the fork server forks share its command line)."""
    line = _cmdline(pid)
    return "multiprocessing.forkserver" in line or "multiprocessing.resource_tracker" in line


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Sampler:
    """The RSS of a server and of each process under it, sampled every few ms while it runs: the
    server's highest RSS over its own before, and the highest peak (VmHWM) of a process under it over
    the RSS of the fork server it was forked from (they share its pages). `own`: a command's tree,
    whose highest peak (VmHWM) of any process, the command's own included, is `tree_peak` (KiB)."""

    def __init__(self, pid: int, own: bool = False):
        self.pid, self.base = pid, (0 if own else _status(pid, "VmRSS"))
        self.server = self.children = self.tree_peak = 0
        self.own = own
        kids = _tree(pid)[1:]
        self.fork_base = max((_status(k, "VmRSS") for k in kids if "forkserver" in _cmdline(k)), default=0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.own:
                self.tree_peak = max([self.tree_peak, *(_status(k, "VmHWM") for k in _tree(self.pid))])
            else:
                self.server = max(self.server, _status(self.pid, "VmRSS") - self.base)
                helpers = {k for k in _children(self.pid) if _helper(k)}
                for k in _tree(self.pid)[1:]:
                    if k not in helpers:  # the fork server's own VmHWM is the server's, from before its exec
                        self.children = max(self.children, _status(k, "VmHWM") - self.fork_base)
            time.sleep(0.005)

    def stop(self) -> tuple[float, float]:
        """(server MB, reading processes MB) over their bases."""
        self._stop.set()
        self._thread.join()
        return self.server / 1024, max(0, self.children) / 1024


def served(logdir: str, runs: dict[str, tuple[str, str]], hosts: bool = False) -> dict[str, dict]:
    """Each run's full analysis asked of a TensorBoard server over `logdir` (the panel's request when
    a host is opened), with the advisor's plugin only (tensorboard_process.ADVISOR_ONLY), after a
    small run's (a run "warm" added): seconds until its answer, the memory the server and its
    processes took meanwhile, what the server kept after (`after_mb`), the answer's status and
    message. `hosts`: the all-hosts view's report of each instead (made in a worker process),
    labelled "<label> (all hosts)"."""
    import tensorboard_process as tbp

    out: dict[str, dict] = {}
    warm = os.path.join(logdir, "warm")
    os.makedirs(warm, exist_ok=True)
    shutil.copy(
        os.path.join(ROOT, "tests", "corpus", "torch_cpu_small.pt.trace.json"), os.path.join(warm, "w.1.pt.trace.json")
    )
    with tempfile.TemporaryFile("w+") as log:
        tb, port = tbp.start(logdir, log, advisor_only=True)
        try:
            base = f"http://127.0.0.1:{port}/data/plugin/gpu_advisor"
            while tbp.get(base, "report", run="warm", host="w.1", wait=10)[0] == 202:  # its fork server started
                pass
            time.sleep(1.0)  # the server settled (its first requests' threads)
            asks = [(label, run, {"host": host}) for label, (run, host) in runs.items()]
            if hosts:
                asks = [(f"{label} (all hosts)", run, {}) for label, (run, _) in runs.items()]
            for label, run, which in asks:
                sampler = Sampler(tb.pid)
                t = time.perf_counter()
                while True:
                    try:
                        status, body = tbp.get(base, "report", run=run, wait=10, **which)
                    except urllib.error.HTTPError as e:  # a 4xx: the answer is in it
                        status, body = e.code, e.read()
                        if body[:2] == b"\x1f\x8b":
                            body = gzip.decompress(body)
                    if status != 202:
                        break
                seconds = time.perf_counter() - t
                server_mb, children_mb = sampler.stop()
                doc = json.loads(body) if body else {}
                message = doc.get("error", {}).get("message", "") if isinstance(doc.get("error"), dict) else ""
                if not message and doc.get("reports"):
                    message = (doc["reports"][0].get("errors") or [""])[0]
                time.sleep(0.5)  # what the server keeps once it has answered
                out[label] = {
                    "seconds": seconds,
                    "server_mb": server_mb,
                    "children_mb": children_mb,
                    "after_mb": (_status(tb.pid, "VmRSS") - sampler.base) / 1024,
                    "status": status,
                    "message": message,
                    "alive": tb.poll() is None,
                }
        finally:
            tbp.stop(tb)
    return out


def issue38(work: str, dense_gb: float, lines: int, server: bool) -> float:
    """Prints the command's (and with `server` the server's) time and memory on issue 38's files;
    returns the worst seconds."""
    runs = hostile_logdir(work, dense_gb, lines) if not os.path.isdir(os.path.join(work, "logdir")) else RUNS
    logdir = os.path.join(work, "logdir")
    worst = 0.0
    print(f"\nissue 38 (target: each within 3 s and 300 MB), files in {logdir}")
    print(f"{'file':14} {'where':8} {'seconds':>8} {'cpu s':>6} {'peak MB':>8}  message")
    for label, (run, _) in runs.items():
        r = command(logdir, run)
        worst = max(worst, r["seconds"])
        print(
            f"{label:14} {'command':8} {r['seconds']:8.3f} {r['cpu_s']:6.2f} {r['peak_mb']:8.0f}  {r['message'][:110]}"
        )
    if server:
        for label, r in served(logdir, runs).items():
            worst = max(worst, r["seconds"])
            print(
                f"{label:14} {'server':8} {r['seconds']:8.3f} {'':6} {max(r['server_mb'], r['children_mb']):8.0f}  "
                f"({r['status']}; server +{r['server_mb']:.0f} MB, its processes +{r['children_mb']:.0f} MB; "
                f"{'alive' if r['alive'] else 'DEAD'}) {r['message'][:80]}"
            )
    return worst


# --- issue 51: small files that cost GBs, in the command and in a server ---------------------------

ISSUE51 = {
    "duplicate keys": ("dup", "w.1"),  # 2.2 MB gzip, 640 MB of events with "ph" twice: 102 s, 7,955 MB
    "untrusted trailer": ("trailer", "w.1"),  # 3.4 MB gzip, 3 GB in one string: 26.8 s, 6,176 MB
    "1.5 GB name": ("name", "w.1"),  # 1.5 MB gzip: 90 s, 7.2 GB
    "15M metadata": ("meta/s", "h"),  # 429 MB XSpace: 7,245 MB (7,888 MB in TensorBoard)
    "50M empty events": ("events/s", "h"),  # 96 MB XSpace: 4.8 s, 1.75 GB, kept by TensorBoard
}
ISSUE51_TARGET = (10.0, 1024.0)  # seconds, MB: each refused or read within them


def issue51_logdir(work: str) -> str:
    """A logdir of issue 51's five files (tests/support/hostile_profile.py makes them), made once."""
    from support import hostile_profile as h

    logdir = os.path.join(work, "logdir51")
    makers = {
        "dup": h.duplicate_keys_gzip,
        "trailer": h.untrusted_trailer_gzip,
        "name": h.long_name_gzip,
        "meta/s": h.many_metadata_xspace,
        "events/s": h.empty_events_xspace,
    }
    for run, host in ISSUE51.values():
        if "/" in run:
            folder, session = run.split("/")
            path = os.path.join(logdir, folder, "plugins", "profile", session, f"{host}.xplane.pb")
        else:
            path = os.path.join(logdir, run, f"{host}.pt.trace.json.gz")
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            makers[run](path)
    return logdir


def issue51(work: str, server: bool) -> float:
    """Prints the command's (and with `server` a TensorBoard's: a host opened, and the all-hosts
    view) time and memory on issue 51's files; returns the worst seconds."""
    logdir = issue51_logdir(work)
    worst = 0.0
    print(
        f"\nissue 51 (target: each within {ISSUE51_TARGET[0]:.0f} s and {ISSUE51_TARGET[1]:.0f} MB), files in {logdir}"
    )
    print(f"{'file':30} {'where':8} {'seconds':>8} {'peak MB':>8}  message")
    for label, (run, _) in ISSUE51.items():
        r = command(logdir, run)
        worst = max(worst, r["seconds"])
        print(
            f"{label:30} {'command':8} {r['seconds']:8.2f} {r['peak_mb']:8.0f}  exit {r['exit']}: {r['message'][:100]}"
        )
    if server:
        for label, r in {**served(logdir, ISSUE51), **served(logdir, ISSUE51, hosts=True)}.items():
            worst = max(worst, r["seconds"])
            print(
                f"{label:30} {'server':8} {r['seconds']:8.2f} {max(r['server_mb'], r['children_mb']):8.0f}  "
                f"({r['status']}; server +{r['server_mb']:.0f} MB, +{r['after_mb']:.0f} MB after, its processes "
                f"+{r['children_mb']:.0f} MB; {'alive' if r['alive'] else 'DEAD'}) {r['message'][:70]}"
            )
    return worst


# --- what the projections assume, measured: the Python reader's and XSpace's costs per thing held -----

PEAK = r"""
import json, sys, time
from tb_gpu_advisor.common.errors import ProfileReadError
def hwm():  # VmHWM (ru_maxrss would carry over the benchmark's own peak, which the child had before exec)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
path, how = sys.argv[1], sys.argv[2]
import numpy.ma
from tb_gpu_advisor.formats.discovery import XPLANE, HostFile
from tb_gpu_advisor.formats.kineto.reader import read_python
from tb_gpu_advisor.formats.xplane import reader
from tb_gpu_advisor.report.engine import read_file
base = hwm()  # the imports' before the read
t = time.perf_counter()
try:
    if how == "python":
        read_python(open(path, "rb").read(), path, "h", limit=8 << 30)
    else:
        read_file(HostFile("r", "h", path, 0, None, XPLANE), max_bytes=8 << 30)
    message = "read"
except ProfileReadError as e:
    message = e.message
print(json.dumps({"mb": (hwm() - base) / 1024,
                  "seconds": time.perf_counter() - t, "message": message}))
"""


def _peak(path: str, how: str, pure: bool = False) -> dict:
    """What reading `path` took in a fresh process (peak RSS over the imports', MB; seconds)."""
    env = {**os.environ, "PYTHONPATH": ROOT, "TB_GPU_ADVISOR_PURE_PYTHON": "1" if pure else "0"}
    p = subprocess.run([sys.executable, "-c", PEAK, path, how], capture_output=True, text=True, env=env, timeout=600)
    return (
        json.loads(p.stdout) if p.returncode == 0 else {"mb": float("nan"), "seconds": 0.0, "message": p.stderr[-200:]}
    )


def python_costs(work: str, mb: int = 40) -> None:
    """The Python reader's peak on texts of `mb` MB of one shape each (read whole, as a file the native
    tokenizer does not mirror is), beside text.PythonCost's projection of it: the projection must be
    the larger (it refuses a file from it)."""
    from tb_gpu_advisor.formats.kineto.text import PythonCost

    n = mb << 20

    def events(e: bytes) -> bytes:
        body = e * (n // len(e))
        return b'{"traceEvents": [' + body[:-1] + b"]}"

    def args(item: bytes) -> bytes:
        return events(b'{"ph":"M","args":{"x":[' + item * 1000 + item[:-1] + b"]}},")

    with gzip.open(
        os.path.join(ROOT, "tests/data/pytorch/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
    ) as f:
        real = f.read()
    shapes = {
        "kernel events": events(b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},'),
        "keys twice": events(
            b'{"ph": "X", "ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},'
        ),
        "one-key events": events(b'{"ph":"X","ts":1},'),
        "instants": events(b'{"ph":"i"},'),
        "nested objects": events(b'{"a":{}},'),
        "ops with shapes": events(
            b'{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":5,"dur":3,"args":{"External id":9,'
            b'"Input Dims":[[64,512],[512,512]],"Input type":["float","float"]}},'
        ),
        "lists of objects": args(b"{},"),
        "lists of lists": args(b"[],"),
        "lists of ints": args(b"1000,"),
        "lists of floats": args(b"1.5,"),
        "lists of strings": args(b'"ab",'),
        "real trace": real,
    }
    print(
        f"\nthe Python reader (text.PythonCost): {'shape':18} {'text MB':>8} {'peak MB':>8} {'x text':>7} {'projected MB':>13}  read?"
    )
    for name, text in shapes.items():
        path = os.path.join(work, "shape.pt.trace.json")
        with open(path, "wb") as f:
            f.write(text)
        cost = PythonCost()
        for pos in range(0, len(text), 4 << 20):
            cost.add(text[pos : pos + (4 << 20)])
        r = _peak(path, "python")
        print(
            f"{'':37}{name:18} {len(text) / 2**20:8.1f} {r['mb']:8.0f} {r['mb'] * 2**20 / len(text):7.1f} "
            f"{cost.need(len(text)) / 2**20:13.0f}  {r['message'][:60]}"
        )


def xspace_costs(work: str, entries: int = 1_000_000) -> None:
    """XSpace's peak, native and pure, on files of `entries` event metadata entries (distinct ids;
    the same id; a quarter as many with four stats each) and 5 times as many empty events, per thing
    the census counts (scan.py's BYTES_PER_*)."""
    import numpy as np
    from support import hostile_profile as h

    from tb_gpu_advisor.formats.xplane import _xdecode

    def distinct(path: str, n: int, stats: int) -> None:
        ids = np.arange(1, n + 1, dtype=np.uint32)
        varint = np.stack([(ids & 0x7F) | 0x80, ((ids >> 7) & 0x7F) | 0x80, ((ids >> 14) & 0x7F) | 0x80, ids >> 21], 1)
        tail = h._field(0x12, b"model/MatMul:MatMu") + b"\x2a\x04\x08\x01\x10\x05" * stats  # name, stats
        meta_len, entry_len = 5 + len(tail), 5 + 2 + 5 + len(tail)
        rows = np.zeros((n, 2 + entry_len), np.uint8)
        rows[:, :3] = (0x22, entry_len, 0x08)
        rows[:, 3:7] = varint
        rows[:, 7:10] = (0x12, meta_len, 0x08)
        rows[:, 10:14] = varint
        rows[:, 14:] = np.frombuffer(tail, np.uint8)
        line = h._field(0x1A, b"\x08\x01" + h._field(0x12, b"python") + h._field(0x22, b"\x08\x01\x10\x01\x18\x01"))
        h._write_plane(path, b"\x08\x01" + h._field(0x12, b"/host:CPU") + line, [(rows.tobytes(), 1)])

    files = {
        "distinct metadata": lambda p: distinct(p, entries, 0),
        "metadata, 4 stats": lambda p: distinct(p, entries // 4, 4),
        "one metadata id": lambda p: h.many_metadata_xspace(p, entries),
        "empty events": lambda p: h.empty_events_xspace(p, 5 * entries),
    }
    print(f"\nXSpace (scan.py): {'file':18} {'MB':>6} {'decoder':>7} {'peak MB':>8} {'seconds':>8}  census")
    for name, make in files.items():
        path = os.path.join(work, "costs.xplane.pb")
        make(path)
        with open(path, "rb") as f:
            census = _xdecode.census(f.read())
        for pure in (False, True):
            r = _peak(path, "xspace", pure)
            counted = {k: v for k, v in census.items() if v > 1}
            print(
                f"{'':18}{name:18} {os.path.getsize(path) / 2**20:6.1f} {'pure' if pure else 'native':>7} "
                f"{r['mb']:8.0f} {r['seconds']:8.2f}  {counted} {r['message'][:40]}"
            )


# --- the cache's accounting against a measured figure ----------------------------------------------


ACCOUNTED = r"""
import gc, json, sys, tracemalloc
from tb_gpu_advisor import formats
from tb_gpu_advisor.formats.discovery import HostFile, discover
from tb_gpu_advisor.report import engine
from tb_gpu_advisor.serve.service import held_bytes
path = sys.argv[1]
f = HostFile("r", "h", path, 0, None, formats.for_file(path).name)
engine.analyse_file(discover(sys.argv[2])[0][0])  # imports and first calls, before the measure
gc.collect()
tracemalloc.start()
a, report = engine.analyse_file(f)
gc.collect()
measured = tracemalloc.get_traced_memory()[0]
tracemalloc.stop()
print(json.dumps({"accounted": held_bytes(a, report), "measured": measured}))
"""


def accounting(work: str, extra: list[str]) -> float:
    """The plugin cache's count of what an analysis and its report hold (service.held_bytes) against
    tracemalloc's count of what the analysis kept, each file in a fresh process; prints them and
    returns the worst ratio (either way)."""
    from support import hostile_profile

    lines = os.path.join(work, "lines9000.xplane.pb")
    with open(lines, "wb") as f:
        f.write(hostile_profile.empty_lines(9000))
    dense = os.path.join(work, "dense64.pt.trace.json.gz")
    hostile_profile.dense_gzip(dense, 64 << 20)
    files = [
        os.path.join(ROOT, "tests/data/gpu/jax_train/plugins/profile/2026_11_26_11_19_31/vm.xplane.pb"),
        os.path.join(ROOT, "tests/data/pytorch/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"),
        os.path.join(ROOT, "demo_logs/tf_cpu_capture/train/plugins/profile/2026_11_22_05_29_27/vm.xplane.pb"),
        os.path.join(ROOT, "tests/data/jax_cpu_capture/plugins/profile/2026_11_22_08_30_21/vm.xplane.pb"),
        os.path.join(ROOT, "demo_logs/17_multi_gpu_partial_capture/plugins/profile/2026_11_22_10_00_00/bert-8gpu-host.xplane.pb"),
        lines,
        dense,
        *extra,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": ROOT}
    warm = os.path.join(ROOT, "demo_logs", "01_healthy")
    print("\nthe cache's accounting (service.held_bytes) against tracemalloc (target: within 2x)")
    print(f"{'file':44} {'MB':>7} {'accounted MB':>13} {'measured MB':>12} {'ratio':>6}")
    worst = 1.0
    for path in files:
        p = subprocess.run([sys.executable, "-c", ACCOUNTED, path, warm], capture_output=True, text=True, env=env)
        if p.returncode:
            print(f"{os.path.basename(path)[:44]:44} failed: {p.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(p.stdout)
        ratio = r["accounted"] / max(r["measured"], 1)
        worst = max(worst, ratio, 1 / max(ratio, 1e-9))
        print(
            f"{os.path.basename(path)[:44]:44} {os.path.getsize(path) / 2**20:7.1f} {r['accounted'] / 2**20:13.1f} "
            f"{r['measured'] / 2**20:12.1f} {ratio:6.2f}"
        )
    return worst


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bomb-gb", type=float, default=4.0)
    ap.add_argument("--zeros-gb", type=float, default=1.5)
    ap.add_argument("--dense-gb", type=float, default=1.9)
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument(
        "--server", action="store_true", help="issue 38's (and 51's) files also through a TensorBoard server"
    )
    ap.add_argument("--issue51", action="store_true", help="issue 51's five files (530 MB on disk), in the command")
    ap.add_argument("--python-costs", action="store_true", help="the Python reader's peak per shape of text")
    ap.add_argument("--xspace-costs", action="store_true", help="XSpace's peak per thing its census counts")
    ap.add_argument("--accounting", nargs="*", metavar="FILE", help="the cache's accounting, on these files too")
    ap.add_argument("--keep", help="make the files here and keep them")
    args = ap.parse_args(argv)
    work = args.keep or tempfile.mkdtemp(prefix="tbga-refusal-")
    os.makedirs(work, exist_ok=True)
    try:
        files: list[tuple[str, int]] = []
        bomb = os.path.join(work, "bomb.pt.trace.json.gz")
        gzip_stream(bomb, b'{"traceEvents": [', b" " * (1 << 20), int(args.bomb_gb * 1024))
        files.append((bomb, 0))
        for name in ("zeros.pt.trace.json", "zeros.pt.trace.json.gz", "zeros.xplane.pb"):
            sparse_zeros(os.path.join(work, name), int(args.zeros_gb * 2**30))
            files.append((os.path.join(work, name), 0))
        gz_zeros = os.path.join(work, "gz-zeros.pt.trace.json.gz")
        gzip_stream(gz_zeros, b"", bytes(1 << 20), 1024)
        files.append((gz_zeros, 0))
        over = os.path.join(work, "over.pt.trace.json.gz")
        event = b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},'
        gzip_stream(over, b'{"traceEvents": [', event * 13_000, 64)  # about 64 MB
        files.append((over, 16 << 20))
        hostile_logdir(work, args.dense_gb, args.lines)
        files.append((os.path.join(work, "logdir", "dense", "w.1.pt.trace.json.gz"), 0))
        files.append((os.path.join(work, "logdir", "lines", "plugins", "profile", "s", "h.xplane.pb"), 0))

        base = measure("-")
        print(f"baseline (imports only): peak RSS {base['peak_rss_mb']:.0f} MB")
        print(f"{'file':28} {'size MB':>9} {'seconds':>8} {'peak MB':>8} {'over base':>9}  message")
        worst_s = worst_mb = 0.0
        for path, limit in files:
            r = measure(path, limit)
            extra = r["peak_rss_mb"] - base["peak_rss_mb"]
            worst_s, worst_mb = max(worst_s, r["seconds"]), max(worst_mb, extra)
            size = os.path.getsize(path) / 2**20
            print(
                f"{os.path.relpath(path, work).replace('plugins/profile/s/', '')[-28:]:28} {size:9.1f} {r['seconds']:8.3f} {r['peak_rss_mb']:8.0f} {extra:9.0f}  "
                f"{r['message'][:90]}"
            )
        print(f"slowest refusal {worst_s:.3f} s; most memory over the baseline {worst_mb:.0f} MB (target: 1 s, 300 MB)")
        issue38(work, args.dense_gb, args.lines, args.server)
        if args.issue51:
            issue51(work, args.server)
        if args.python_costs:
            python_costs(work)
        if args.xspace_costs:
            xspace_costs(work)
        if args.accounting is not None:
            accounting(work, args.accounting)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
