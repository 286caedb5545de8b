"""The kernel figures (SM efficiency, occupancy, utilization per step: analysis.kernel_efficiency) on
the 80 MB XSpace of read_benchmark.py, with the native integral (_intervals.c) and with NumPy's, in
one process, best of 3 each, three rounds.

    python benchmarks/kernel_figures_benchmark.py [--copies 600]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from read_benchmark import build  # noqa: E402

from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes  # noqa: E402
from tb_gpu_advisor.model import intervals as iv  # noqa: E402
from tb_gpu_advisor.model.analysis import Analysis, analyse, kernel_efficiency  # noqa: E402


def every_gpu_ms(a: Analysis) -> float:
    t = time.perf_counter()
    for g in a.gpus.values():
        lo = np.r_[g.steps.start_ps, g.steps.start_ps[:1]]  # each step, then the span of the steps
        hi = np.r_[g.steps.end_ps, g.steps.end_ps[-1:]]
        kernel_efficiency(g.events, g.device.sm_count, lo, hi)
    return (time.perf_counter() - t) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=600)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.xplane.pb")
        events = build(path, args.copies)
        a = analyse(read_profile_bytes(open(path, "rb").read(), path, "bench"))
    native = iv._native
    if native is None:
        print("the native interval module is not built: nothing to compare")
        return 1
    print(f"{events:,} events, {len(a.gpus)} GPUs")
    try:
        for _ in range(3):
            iv._native = native
            x = min(every_gpu_ms(a) for _ in range(3))
            iv._native = None
            y = min(every_gpu_ms(a) for _ in range(3))
            print(f"kernel figures, every GPU: native {x:.1f} ms, NumPy {y:.1f} ms ({y / x:.2f}x)")
    finally:
        iv._native = native
    return 0


if __name__ == "__main__":
    sys.exit(main())
