"""Many clients at once against a real TensorBoard serving the plugin on a copy of demo_logs/.

After one warm-up request per run, three loads in turn, each CLIENTS threads sending REQUESTS
requests over every demo run: only cached `report`s, only `timeline`s of a random window (as the
panel asks when panning), and the two alternating. The latencies per route are printed (p50, p95,
max), with the targets: report p95 under 20 ms, timeline p95 under 50 ms.

TensorBoard's server (werkzeug) closes the connection after every response and serves each request
on a new thread, as a browser meets it; that costs about 1 ms of the server's CPU per request here,
more than a cached report itself (0.3 ms).

    python benchmarks/load_benchmark.py [--clients 8] [--requests 1000] [--only report|timeline|mixed|checks]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tensorboard_process import get, start, stop  # noqa: E402

TARGETS_MS = {"report": 20.0, "timeline": 50.0, "checks": 20.0}


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def run_load(base: str, load: str, targets: list, extents: dict, clients: int, requests: int) -> None:
    """CLIENTS threads each sending REQUESTS requests of one load; prints the latencies per route."""
    times: dict[str, list[float]] = {"report": [], "timeline": [], "checks": []}
    lock = threading.Lock()

    def client(seed: int) -> None:
        rnd = random.Random(seed)
        mine: dict[str, list[float]] = {"report": [], "timeline": [], "checks": []}
        for i in range(requests):
            run, host = rnd.choice(targets)
            if load == "checks":
                route, params = "checks", {}
            elif load == "report" or load == "mixed" and i % 2 == 0:
                route, params = "report", {"run": run, "host": host}
            else:
                end = extents[(run, host)]
                a = rnd.uniform(0, end)
                b = min(end, a + rnd.uniform(end / 100, end))
                route, params = "timeline", {"run": run, "host": host, "start_ms": a, "end_ms": b, "width": 1200}
            t = time.perf_counter()
            status, _ = get(base, route, **params)
            mine[route].append(1000 * (time.perf_counter() - t))
            assert status == 200, (route, status)
        with lock:
            for k, v in mine.items():
                times[k].extend(v)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    total = sum(len(v) for v in times.values())
    print(f"{load} load, {clients} clients x {requests} requests over {len(targets)} runs: {total} in {wall:.1f} s")
    for route, v in times.items():
        if not v:
            continue
        p95 = percentile(v, 0.95)
        verdict = "meets" if p95 < TARGETS_MS[route] else "misses"
        print(
            f"  {route:8} n={len(v):5}  p50 {percentile(v, 0.5):6.1f} ms  p95 {p95:6.1f} ms  "
            f"max {max(v):6.1f} ms  ({verdict} the p95 target of {TARGETS_MS[route]:.0f} ms)",
            flush=True,
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=1000, help="per client")
    ap.add_argument(
        "--only",
        choices=("report", "timeline", "mixed", "checks"),
        help="run only this load (checks: the catalogue, bytes made once: TensorBoard's own cost per request)",
    )
    args = ap.parse_args(argv)
    root = tempfile.mkdtemp(prefix="tbga-load-")
    logdir = os.path.join(root, "logs")
    shutil.copytree(os.path.join(ROOT, "demo_logs"), logdir)
    log = open(os.path.join(root, "tensorboard.log"), "w")
    tb, port = start(logdir, log)
    base = f"http://127.0.0.1:{port}/data/plugin/gpu_advisor"
    try:
        runs = json.loads(get(base, "runs")[1])["runs"]
        targets = [(r["run"], h["host"]) for r in runs for h in r["hosts"]]
        extents = {}
        for run, host in targets:  # warm up: every analysis done and cached
            rep = json.loads(get(base, "report", run=run, host=host, wait=60)[1])
            extents[(run, host)] = rep.get("extent_ms") or 1.0
        for load in [args.only] if args.only else ["report", "timeline", "mixed"]:
            run_load(base, load, targets, extents, args.clients, args.requests)
    finally:
        stop(tb)
        log.close()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
