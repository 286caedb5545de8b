"""Building each table (tb_gpu_advisor/tables/) and answering one request, on the real ResNet-50
traces in tests/data/pytorch: best of three per table, after the analysis.

    python benchmarks/tables_benchmark.py
"""

from __future__ import annotations

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    from tb_gpu_advisor import tables
    from tb_gpu_advisor.analysis import analyse
    from tb_gpu_advisor.discovery import discover
    from tb_gpu_advisor.engine import read_file

    files, _ = discover(os.path.join(ROOT, "tests", "data", "pytorch"))
    for f in sorted(files, key=lambda f: f.path):
        a = analyse(read_file(f))
        head = f"{f.run} {f.host}: {len(a.host)} host events, {sum(len(g.events) for g in a.gpus.values())} GPU events"
        cells = [f"{t} {1000 * best(lambda t=t, a=a: tables.build(a, t)):.1f} ms" for t in tables.TABLES]
        k = tables.build(a, "kernels")
        cells.append(f"answer {1000 * best(lambda k=k: tables.answer(k, sort='short_name', q='gemm')):.2f} ms")
        print(head)
        print("  " + ", ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
