"""Building each table (tb_gpu_advisor/tables/) and answering one request, on the real ResNet-50
traces in tests/data/pytorch: best of three per table, after the analysis. Then the ops table of a
written PyTorch 2.x trace with Python stacks (python_function events: N calls, each a frame, a
built-in and the op it runs) and, apart, linking the frames (measures/stacks.py).

    python benchmarks/tables_benchmark.py [N]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
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
    from tb_gpu_advisor.formats.discovery import discover
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.model.analysis import analyse
    from tb_gpu_advisor.report.engine import read_file

    files, _ = discover(os.path.join(ROOT, "tests", "data", "pytorch"))
    for f in sorted(files, key=lambda f: f.path):
        a = analyse(read_file(f))
        head = f"{f.run} {f.host}: {len(a.host)} host events, {sum(len(g.events) for g in a.gpus.values())} GPU events"
        cells = [f"{t} {1000 * best(lambda t=t, a=a: tables.build(Measures(a), t)):.1f} ms" for t in tables.TABLES]
        k = tables.build(Measures(a), "kernels")
        cells.append(f"answer {1000 * best(lambda k=k: tables.answer(k, sort='short_name', q='gemm')):.2f} ms")
        print(head)
        print("  " + ", ".join(cells))
    stacks(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
    return 0


def stacks(n: int) -> None:
    from tb_gpu_advisor import tables
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.measures.stacks import PythonFrames
    from tb_gpu_advisor.model.analysis import analyse
    from tb_gpu_advisor.report.engine import read_path

    def ev(cat: str, name: str, ts: float, dur: float) -> dict:
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}}

    events = [ev("python_function", "train.py(1): <module>", 0, n * 10 + 5)]
    for i in range(n):
        t = 1 + i * 10
        events += [
            ev("python_function", f"model.py({i % 500}): layer{i % 500}", t, 8),
            ev("python_function", "<built-in method relu of type object at 0x1>", t + 1, 6),
            ev("cpu_op", f"aten::op{i % 300}", t + 2, 4),
        ]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "w.1.pt.trace.json")
        with open(path, "w") as fh:
            json.dump({"schemaVersion": 1, "traceEvents": events}, fh)
        a = analyse(read_path(path))
    ops = best(lambda: tables.build(Measures(a), "ops"))
    link = best(lambda: PythonFrames(a.host, a.profile.names))
    print(f"PyTorch 2.x stacks: {len(a.host)} host events, {2 * n + 1} python_function")
    print(f"  ops {1000 * ops:.1f} ms, of which linking the frames {1000 * link:.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
