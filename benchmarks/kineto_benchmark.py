"""Issue 26's targets for PyTorch traces: the native Kineto reader against the Python one and HTA.

Builds the real V100 span (tests/data/pytorch/resnet50_num_workers_0, ResNet-50, 75,718 events, 35 MB
of JSON) replicated along time: x10 (~350 MB of JSON) and x32 (~1.1 GB), plain JSON one event a line
as the profiler writes it, each copy shifted past the previous one with its steps, correlation and
external ids renumbered, one profiler span over all, and `distributedInfo` with `"rank": 0` (HTA needs
it). Then, each in a fresh process so its peak RSS (ru_maxrss) is its own (the files are built in
another child: Linux starts a child's ru_maxrss from its parent's RSS at the fork):

- the advisor's read (`engine.read_file`: the file mapped, tokenised, the Profile built), native and
  with TB_GPU_ADVISOR_PURE_PYTHON=1;
- HTA 0.5.0's `TraceAnalysis(trace_dir=...)` load of the same file;
- the whole `analyze` (read, analysis, checks; `engine.analyse_file`), native and pure, with the
  read's share.

Times are wall and CPU (user + system, getrusage): on a shared machine the CPU time is the
read's own work, and "per core" means it. It prints the ratios the targets are about: time <= 0.10x HTA's, peak RSS <= 0.25x HTA's and <= 1x the
JSON's size, >= 300 MB/s of JSON per core, and the x32 file's time per MB within 1.2x of the x10's.
The files go in a scratch folder under /tmp, deleted at the end.

With --gzip it also reads the first file gzipped (level 6), as `use_gzip=True` writes it.

    python benchmarks/kineto_benchmark.py [--copies 10,32] [--skip-hta] [--skip-pure] [--gzip] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SPAN = os.path.join(
    ROOT, "tests", "data", "pytorch", "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"
)
STEP = re.compile(r"^ProfilerStep#(\d+)$")
IDS = ("correlation", "External id", "external id")


def build(path: str, copies: int) -> int:
    """The span `copies` times along time, written event by event; returns the file's size."""
    with gzip.open(SPAN) as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    trace = next(e for e in events if e.get("cat") == "Trace")
    period = float(trace["dur"]) + 1000.0  # µs: each copy starts 1 ms after the previous one ends
    steps = max((int(m.group(1)) for e in events if (m := STEP.match(str(e.get("name"))))), default=0) + 1
    top = 1 + max(
        [int(v) for e in events for k, v in (e.get("args") or {}).items() if k in IDS and isinstance(v, int)]
        + [int(e["id"]) for e in events if isinstance(e.get("id"), int)]
    )
    doc["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 1}
    head = json.dumps(doc)[:-1]
    with open(path, "w") as out:
        out.write(head + ',\n  "traceEvents": [\n')
        first = True
        for k in range(copies):
            for e in events:
                if e is trace:
                    continue
                e = dict(e)
                if isinstance(e.get("ts"), (int, float)):
                    e["ts"] = e["ts"] + k * period
                if k:
                    args = e.get("args")
                    if args:
                        e["args"] = args = dict(args)
                        for key in IDS:
                            if isinstance(args.get(key), int) and args[key] >= 0:
                                args[key] += k * top
                    if isinstance(e.get("id"), int):
                        e["id"] += k * top
                    m = STEP.match(str(e.get("name")))
                    if m:
                        e["name"] = f"ProfilerStep#{int(m.group(1)) + k * steps}"
                out.write(("" if first else ",\n") + "  " + json.dumps(e))
                first = False
        span = dict(trace, dur=trace["dur"] + (copies - 1) * period)
        out.write(",\n  " + json.dumps(span) + "\n]}\n")
    return os.path.getsize(path)


CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
mode, path = sys.argv[1], sys.argv[2]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode == "hta":
    import logging
    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, c = time.perf_counter(), cpu()
    TraceAnalysis(trace_dir=os.path.dirname(path))
    out = {{"s": time.perf_counter() - t, "cpu": cpu() - c}}
else:
    from tb_gpu_advisor.formats.discovery import discover
    from tb_gpu_advisor.report import engine
    (f,) = discover(os.path.dirname(os.path.dirname(path)))[0]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, c = time.perf_counter(), cpu()
    if mode == "read":
        p = engine.read_file(f)
        out = {{"s": time.perf_counter() - t, "cpu": cpu() - c, "events": p.event_count}}
    else:
        a, rep = engine.analyse_file(f)
        out = {{"s": time.perf_counter() - t, "cpu": cpu() - c, "checks": len(rep["checks"])}}
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["rss0_mb"] = rss0 / 1024
print(json.dumps(out))
"""


def child(mode: str, path: str, pure: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TB_GPU_ADVISOR_PURE_PYTHON", None)
    if pure:
        env["TB_GPU_ADVISOR_PURE_PYTHON"] = "1"
    r = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=ROOT), mode, path], env=env, capture_output=True, text=True
    )
    if r.returncode:
        raise SystemExit(f"{mode} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def show(what: str, r: dict, mb: float) -> None:
    print(
        f"  {what + ':':26} {r['s']:6.2f} s wall, {r['cpu']:6.2f} s CPU ({mb / r['cpu']:4.0f} MB/s), "
        f"peak RSS {r['rss_mb']:5.0f} MB"
    )


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--build"]:
        build(argv[1], int(argv[2]))
        return 0
    if argv[:1] == ["--gzip"]:
        with open(argv[1], "rb") as src, gzip.open(argv[2], "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 4 << 20)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", default="10,32")
    ap.add_argument("--skip-hta", action="store_true")
    ap.add_argument("--skip-pure", action="store_true")
    ap.add_argument("--gzip", action="store_true", help="also read the first file gzipped")
    ap.add_argument("--keep", help="build the files here and leave them")
    args = ap.parse_args(argv)
    scratch = args.keep or tempfile.mkdtemp(prefix="kineto_benchmark_", dir="/tmp")
    per_mb = {}
    try:
        for n, copies in enumerate(int(c) for c in args.copies.split(",")):
            run = os.path.join(scratch, f"x{copies}", "run")
            os.makedirs(run, exist_ok=True)
            path = os.path.join(run, "worker0.1623143089861.pt.trace.json")
            if not os.path.exists(path):  # built in a child: a child's peak RSS starts from its parent's
                subprocess.run([sys.executable, __file__, "--build", path, str(copies)], check=True)
            size = os.path.getsize(path)
            mb = size / 1e6
            print(f"x{copies}: {mb:.0f} MB of JSON ({path})")
            nat = child("read", path)
            per_mb[copies] = nat["cpu"] / mb
            show("native read", nat, mb)
            print(f"    (after imports {nat['rss0_mb']:.0f} MB; {nat['events']} events)")
            if n == 0:
                if not args.skip_pure:
                    show("Python read", child("read", path, pure=True), mb)
                if not args.skip_hta:
                    hta = child("hta", path)
                    show("HTA load", hta, mb)
                    t, c, r = nat["s"] / hta["s"], nat["cpu"] / hta["cpu"], nat["rss_mb"] / hta["rss_mb"]
                    print(
                        f"  native / HTA: time {t:.3f}x wall, {c:.3f}x CPU (target <= 0.10x); "
                        f"peak RSS {r:.3f}x (target <= 0.25x)"
                    )
                print(f"  native peak RSS / JSON size: {nat['rss_mb'] / mb:.2f}x (target <= 1x)")
                print(f"  native throughput: {mb / nat['cpu']:.0f} MB/s per core (CPU time; target >= 300)")
                if args.gzip:  # the same trace as the profiler writes it with use_gzip=True
                    gz = os.path.join(scratch, f"x{copies}gz", "run", os.path.basename(path) + ".gz")
                    if not os.path.exists(gz):
                        os.makedirs(os.path.dirname(gz), exist_ok=True)
                        subprocess.run([sys.executable, __file__, "--gzip", path, gz], check=True)
                    show(f"native read, gzip ({os.path.getsize(gz) / 1e6:.0f} MB)", child("read", gz), mb)
                for pure_mode in (False,) if args.skip_pure else (False, True):
                    a = child("analyze", path, pure=pure_mode)
                    show(f"analyze, {'Python' if pure_mode else 'native'} read", a, mb)
        if len(per_mb) > 1:
            (c0, a), (c1, b) = list(per_mb.items())[:2]
            print(f"CPU time per MB, x{c1} / x{c0}: {b / a:.2f} (target <= 1.2: linear)")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
