"""Many clients at once against a real TensorBoard serving the plugin on a copy of demo_logs/.

After one warm-up request per run, three loads in turn, each CLIENTS threads sending REQUESTS
requests over every demo run: only cached `report`s, only `timeline`s of a random window (as the
panel asks when panning), and the two alternating. Printed per route: the latency end to end
through TensorBoard's server (p50, p95, max) and the plugin's own handling time from its
`Server-Timing: app;dur=` header (p50, p95), with issue 27's targets: the plugin's p95 at most 5 ms
for a cached report, end to end p95 at most 50 ms; and the server's RSS before the loads, its peak
while they ran (sampled every 0.1 s) and after them, with the target after <= 1.2x before.

TensorBoard's server (werkzeug) closes the connection after every response and serves each request
on a new thread, as a browser meets it; that costs about 1 ms of the server's CPU per request here,
more than a cached report itself (0.3 ms). Loopback only; the requests are bounded by the options.

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
from tensorboard_process import get, get_timed, rss_mb, start, stop  # noqa: E402

TARGETS_MS = {"report": 50.0, "timeline": 50.0, "checks": 50.0}  # end to end, p95
APP_TARGETS_MS = {"report": 5.0}  # the plugin's own time (Server-Timing), p95
RSS_RATIO = 1.2  # after the loads, at most this times the RSS before them


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def run_load(base: str, load: str, targets: list, extents: dict, clients: int, requests: int) -> None:
    """CLIENTS threads each sending REQUESTS requests of one load; prints the latencies per route."""
    times: dict[str, list[float]] = {"report": [], "timeline": [], "checks": []}
    app: dict[str, list[float]] = {"report": [], "timeline": [], "checks": []}
    lock = threading.Lock()

    def client(seed: int) -> None:
        rnd = random.Random(seed)
        mine: dict[str, list[float]] = {"report": [], "timeline": [], "checks": []}
        mine_app: dict[str, list[float]] = {"report": [], "timeline": [], "checks": []}
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
            status, app_ms = get_timed(base, route, **params)
            mine[route].append(1000 * (time.perf_counter() - t))
            assert status == 200 and app_ms is not None, (route, status, app_ms)
            mine_app[route].append(app_ms)
        with lock:
            for k, v in mine.items():
                times[k].extend(v)
                app[k].extend(mine_app[k])

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
        verdict = "meets" if p95 <= TARGETS_MS[route] else "misses"
        print(
            f"  {route:8} n={len(v):5}  end to end: p50 {percentile(v, 0.5):6.1f} ms  p95 {p95:6.1f} ms  "
            f"max {max(v):6.1f} ms  ({verdict} the p95 target of {TARGETS_MS[route]:.0f} ms)",
            flush=True,
        )
        a95 = percentile(app[route], 0.95)
        target = APP_TARGETS_MS.get(route)
        said = f"({'meets' if a95 <= target else 'misses'} the p95 target of {target:.0f} ms)" if target else ""
        print(
            f"  {'':8} {'':7}  plugin's own (Server-Timing): p50 {percentile(app[route], 0.5):6.2f} ms  "
            f"p95 {a95:6.2f} ms  {said}",
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
        before = rss_mb(tb.pid)
        peak = [before]
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.wait(0.1):
                peak.append(rss_mb(tb.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        for load in [args.only] if args.only else ["report", "timeline", "mixed"]:
            run_load(base, load, targets, extents, args.clients, args.requests)
        sampling.set()
        sampler.join()
        time.sleep(2.0)  # let the server's request threads end
        after = rss_mb(tb.pid)
        verdict = "meets" if after <= RSS_RATIO * before else "misses"
        print(
            f"server RSS: {before:.0f} MB before the loads, peak {max(peak):.0f} MB, {after:.0f} MB after "
            f"({after / before:.2f}x; {verdict} the target of {RSS_RATIO}x)"
        )
    finally:
        stop(tb)
        log.close()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
