"""Writes a synchronous data-parallel job of N ranks as PyTorch traces (support.kineto_writer),
for the browser tests and the job-view benchmark: `<logdir>/<run>/<worker>.<span>.pt.trace.json.gz`,
one file per rank and profiling cycle.

    python scripts/write_ddp_job.py LOGDIR RUN --ranks 1024 [--cycles 2] [--slow-rank 682] [--small]

The slow rank computes 30 ms a step against 20 ms in the first cycle only, so cycles differ; `--small`
writes 2 steps of 4 kernels (about 2 KB a rank) instead of 4 steps of 20.
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]  # the package, and tests/support: the writers

from support.kineto_writer import ddp_job  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("logdir")
    p.add_argument("run")
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--cycles", type=int, default=1)
    p.add_argument("--slow-rank", type=int, default=None)
    p.add_argument("--small", action="store_true")
    a = p.parse_args()
    run = os.path.join(a.logdir, a.run)
    os.makedirs(run, exist_ok=True)
    shape = {"steps": 2, "kernels_per_step": 4} if a.small else {}
    for cycle in range(a.cycles):
        slow = {a.slow_rank: 30_000.0} if a.slow_rank is not None and cycle == 0 else {}
        span = 1_700_000_000_000 + 100_000 * cycle
        for r, w in ddp_job(a.ranks, compute_us=slow, **shape).items():
            with open(os.path.join(run, f"node{r // 8:03d}_{10000 + r}.{span}.pt.trace.json.gz"), "wb") as f:
                f.write(w.to_bytes())


if __name__ == "__main__":
    main()
