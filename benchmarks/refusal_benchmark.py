"""Time and peak memory of refusing bombs and garbage (issue 27), each in a fresh process so its peak
RSS is its own, beside a process that only imports the advisor (the baseline).

The files, made in a scratch folder:
- `bomb.pt.trace.json.gz`: gzip of '{"traceEvents": [' and GB of JSON blank space (the issue's: 4.4 MB
  inflating to 4 GB, which cost 6-25 s and 2.1 GB before);
- `zeros.pt.trace.json`, `zeros.pt.trace.json.gz`, `zeros.xplane.pb`: a file of zeros (sparse) of
  --zeros-gb GB (the issue's 1.5 GB cost 6-15 s and 4.4 GB as a trace, 0.3 s and 35 MB as XSpace);
- `gz-zeros.pt.trace.json.gz`: gzip of 1 GB of zeros;
- `over.pt.trace.json.gz`: a real-shaped trace of 64 MB read with a 16 MB limit (the gzip trailer says so).

    python benchmarks/refusal_benchmark.py [--bomb-gb 4] [--zeros-gb 1.5] [--keep DIR]

The target: each refusal within 1 s and 300 MB of RSS (over the baseline's).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bomb-gb", type=float, default=4.0)
    ap.add_argument("--zeros-gb", type=float, default=1.5)
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
                f"{os.path.basename(path):28} {size:9.1f} {r['seconds']:8.3f} {r['peak_rss_mb']:8.0f} {extra:9.0f}  "
                f"{r['message'][:90]}"
            )
        print(f"slowest refusal {worst_s:.3f} s; most memory over the baseline {worst_mb:.0f} MB (target: 1 s, 300 MB)")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
