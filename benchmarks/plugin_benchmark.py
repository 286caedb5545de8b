"""The plugin inside a real TensorBoard on the 80 MB benchmark file: cold and warm `report` times, and
TensorBoard's memory while the same file is rewritten.

- cold: the first `report?wait=` request on the run, which reads and analyses the file;
- export: the trace viewer link's data for the top finding (bounded: its window in full, the rest
  thinned);
- warm: 200 more requests for the same report (served from memory), p50 and p95;
- rewrites: the file is rewritten ten times (new size and modification time) and, once the plugin
  has looked at the logdir again, the report requested after each (a new analysis each time);
  TensorBoard's resident memory (VmRSS) is printed after each: it must stay level, as the cache holds
  one entry per file, not one per version.

    python benchmarks/plugin_benchmark.py [--copies 600] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from read_benchmark import build  # noqa: E402
from tensorboard_process import get, rss_mb, start, stop  # noqa: E402

DISCOVERY_TTL_S = 5.0  # service.AdvisorService's default


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=600, help="copies of the scenario (600: the 80 MB file)")
    ap.add_argument("--rewrites", type=int, default=10)
    ap.add_argument("--keep", help="build the logdir in this folder and keep it")
    args = ap.parse_args(argv)
    root = args.keep or tempfile.mkdtemp(prefix="tbga-plugin-bench-")
    logdir = os.path.join(root, "logs")
    path = os.path.join(logdir, "run", "plugins", "profile", "s1", "bench.xplane.pb")
    if not os.path.exists(path):
        build(path, args.copies)
    log = open(os.path.join(root, "tensorboard.log"), "w")
    tb, port = start(logdir, log)
    base = f"http://127.0.0.1:{port}/data/plugin/gpu_advisor"
    try:
        idle_mb = rss_mb(tb.pid)
        run, host = "run/s1", "bench"
        t = time.perf_counter()
        status, _ = get(base, "/report", run=run, host=host, wait=60)
        cold = time.perf_counter() - t
        assert status == 200, status
        warm = []
        for _ in range(200):
            t = time.perf_counter()
            get(base, "/report", run=run, host=host)
            warm.append(time.perf_counter() - t)
        warm.sort()
        print(f"file: {os.path.getsize(path) / 1e6:.1f} MB; TensorBoard idle RSS {idle_mb:.0f} MB")
        print(f"cold report: {cold:.3f} s (read, analyse, check, over HTTP)")
        print(
            f"warm report: p50 {1000 * statistics.median(warm):.1f} ms, p95 {1000 * warm[int(0.95 * len(warm))]:.1f} ms"
        )
        print(f"RSS after the cold report: {rss_mb(tb.pid):.0f} MB")
        # the trace viewer link of the top finding: a bounded export
        report = json.loads(get(base, "/report", run=run, host=host)[1])
        top = next(c for c in report["checks"] if c["evidence"])
        t = time.perf_counter()
        status, body = get(base, "/export", run=run, host=host, finding=top["id"], evidence=0)
        took = time.perf_counter() - t
        events = len(json.loads(body)["traceEvents"])
        print(f"export for {top['id']}'s evidence: {took:.2f} s, {len(body) / 1e6:.1f} MB, {events:,} events")
        for i in range(args.rewrites):
            with open(path, "ab") as f:  # an unknown XSpace field (number 100): a new size, the same events
                f.write(bytes([0xA2, 0x06, i + 1]) + b"x" * (i + 1))
            os.utime(path, (time.time() + i + 1, time.time() + i + 1))
            time.sleep(DISCOVERY_TTL_S + 0.5)  # the plugin looks at the logdir again after this long
            t = time.perf_counter()
            status, _ = get(base, "/report", run=run, host=host, wait=60)
            print(
                f"rewrite {i + 1:2}: report {time.perf_counter() - t:.2f} s, status {status}, RSS {rss_mb(tb.pid):.0f} MB"
            )
    finally:
        stop(tb)
        log.close()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
