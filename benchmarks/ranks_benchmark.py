"""Many ranks in one `analyze`, against one `analyze` per rank, side by side (issue 26).

1. A job of RANKS copies of a real ResNet-50 span (tests/data/pytorch/resnet50_num_workers_0), each
   given its own `distributedInfo` rank: RANKS single-rank `tb-gpu-advisor analyze FILE` runs one after
   the other, then one `analyze` over the job. Printed: wall times, the parent's peak RSS (its own,
   not its worker processes'), and the ratios with the targets (wall <= 0.75x, RSS <= 1.5x).
2. Jobs of SMALL ranks of a small trace (tests/support/kineto_writer.ddp_job): one `analyze --format json` (its
   `runs`), and the plugin's all-hosts `/report?run=R` through its WSGI app in a process of its own;
   wall time, the ranks in the job view, and the parent's peak RSS of each.

Every command runs in a fresh interpreter that prints its own peak RSS (VmHWM: the worker processes
are not counted).

    python benchmarks/ranks_benchmark.py [--ranks 64] [--small 64,1024] [--singles N]
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
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]  # the package, and tests/support: the writers
SPAN = os.path.join(
    ROOT, "tests", "data", "pytorch", "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"
)
WALL_TARGET, RSS_TARGET = 0.75, 1.5

# The peak RSS of this process's own memory: VmHWM (ru_maxrss would carry over the benchmark's own
# peak, which the forked child had before exec, on Linux).
PEAK = """
def peak_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
"""

CLI = (
    PEAK
    + """
import os, sys
from tb_gpu_advisor import cli
code = cli.main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write(f"\\nmaxrss_kb {peak_kb()}\\n")
os._exit(code)
"""
)

PLUGIN = (
    PEAK
    + """
import json, os, sys, time
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test, wrappers
from tb_gpu_advisor.plugin import GpuAdvisorPlugin

def main():
    logdir, run = sys.argv[1], sys.argv[2]
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir))
    c = test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    while True:
        r = c.get(f"/data/plugin/gpu_advisor/report?run={run}&wait=60")
        if r.status_code != 202:
            break
    body = json.loads(r.get_data())
    ranks = len(body["runs"][0]["ranks"]) if body.get("runs") else 0
    rss = peak_kb()
    print(json.dumps({"status": r.status_code, "reports": len(body.get("reports", [])), "ranks": ranks,
                      "body_bytes": len(r.get_data()),
                      "held_bytes": plugin.service.held_bytes(), "maxrss_kb": rss}))

if __name__ == "__main__":
    main()
"""
)


def run(code: list[str], *args: str) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MB and stdout of one command in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, *code, *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    rss = [line for line in p.stderr.splitlines() if line.startswith("maxrss_kb ")]
    if p.returncode not in (0, 1) or (not rss and code[1] == CLI):
        sys.exit(f"command failed ({p.returncode}): {p.stderr[-2000:]}")
    return wall, int(rss[-1].split()[1]) / 1024 if rss else 0.0, p.stdout


def copies(folder: str, n: int) -> list[str]:
    """`n` copies of the real span, rank r of n each: one job of n workers in one profiling cycle."""
    with gzip.open(SPAN) as f:
        doc = json.load(f)
    run = os.path.join(folder, "resnet_job")
    os.makedirs(run)
    paths = []
    for r in range(n):
        d = {k: v for k, v in doc.items() if k != "traceEvents"}
        d["distributedInfo"] = {"backend": "nccl", "rank": r, "world_size": n}
        d["traceEvents"] = doc["traceEvents"]
        path = os.path.join(run, f"worker{r}.1623143089861.pt.trace.json.gz")
        with open(path, "wb") as out:
            out.write(gzip.compress(json.dumps(d).encode(), compresslevel=1, mtime=0))
        paths.append(path)
    return paths


def small_job(folder: str, n: int) -> str:
    from support.kineto_writer import ddp_job

    run = os.path.join(folder, "small_job")
    os.makedirs(run)
    for r, w in ddp_job(n, steps=3, kernels_per_step=4).items():
        with open(os.path.join(run, f"rank{r}.1.pt.trace.json.gz"), "wb") as out:
            out.write(w.to_bytes())
    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--small", default="64,1024", help="sizes of the small jobs, comma-separated (0: none)")
    ap.add_argument("--singles", type=int, help="time only this many single-rank runs and scale (default: all)")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores, TB_GPU_ADVISOR_PROCESSES={os.environ.get('TB_GPU_ADVISOR_PROCESSES', '(default)')}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.ranks:
            paths = copies(tmp, args.ranks)
            timed = paths[: args.singles or len(paths)]
            walls, rsss = [], []
            for p in timed:
                w, r, _ = run(["-c", CLI], "analyze", p, "--format", "json")
                walls.append(w)
                rsss.append(r)
            singles = sum(walls) * len(paths) / len(timed)
            print(
                f"{len(timed)} single-rank runs: {sum(walls):.1f} s ({sum(walls) / len(timed):.2f} s each"
                + (f", {singles:.1f} s scaled to {len(paths)}" if len(timed) < len(paths) else "")
                + f"), peak RSS {max(rsss):.0f} MB"
            )
            wall, rss, out = run(["-c", CLI], "analyze", os.path.dirname(paths[0]), "--format", "json")
            doc = json.loads(out)
            ranks = len(doc["runs"][0]["ranks"]) if doc["runs"] else 0
            print(
                f"one analyze of {len(paths)} ranks: {wall:.1f} s, parent peak RSS {rss:.0f} MB, {ranks} ranks in the job"
            )
            print(f"  wall {wall / singles:.2f}x the single runs (target <= {WALL_TARGET}x)")
            print(f"  parent RSS {rss / max(rsss):.2f}x a single run's (target <= {RSS_TARGET}x)")
        for n in [int(x) for x in args.small.split(",") if int(x)]:
            run_dir = small_job(tmp, n)
            size = sum(os.path.getsize(os.path.join(run_dir, f)) for f in os.listdir(run_dir))
            print(f"{n} ranks of a small trace ({size / 1e6:.1f} MB in all):")
            wall, rss, out = run(["-c", CLI], "analyze", run_dir, "--format", "json")
            doc = json.loads(out)
            ranks = len(doc["runs"][0]["ranks"]) if doc["runs"] else 0
            print(f"  analyze --format json: {wall:.1f} s, {ranks} ranks in `runs`, parent peak RSS {rss:.0f} MB")
            wall, _, out = run(["-c", PLUGIN], tmp, "small_job")
            got = json.loads(out)
            shutil.rmtree(run_dir)
            print(
                f"  plugin /report?run=small_job: {wall:.1f} s, status {got['status']}, {got['ranks']} ranks, "
                f"{got['body_bytes'] / 1e6:.1f} MB of JSON, held {got['held_bytes']} bytes of analyses, "
                f"parent peak RSS {got['maxrss_kb'] / 1024:.0f} MB"
            )


if __name__ == "__main__":
    main()
