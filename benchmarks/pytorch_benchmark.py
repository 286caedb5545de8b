"""PyTorch traces: which JSON parser, and the advisor's read and analysis against Meta's Holistic Trace
Analysis parsing the same file, on the real ResNet-50 traces in tests/data/pytorch.

For each file: the inflated JSON parsed by the standard `json`, `orjson` and `msgspec` (best of
three; the Python reader, the native one's fallback, uses the fastest, orjson, with `json` as its
own fallback), the advisor's whole read into a Profile, its analysis and checks, and HTA's
`TraceAnalysis` on the file (its own parse).

    python benchmarks/pytorch_benchmark.py
"""

from __future__ import annotations

import glob
import gzip
import json
import logging
import os
import shutil
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
    import msgspec
    import orjson

    from tb_gpu_advisor.checks import run_checks
    from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.model.analysis import analyse

    files = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "pytorch", "*", "*.pt.trace.json.gz")))
    print(
        f"{'file':42} {'JSON MB':>8} {'json':>6} {'orjson':>7} {'msgspec':>8} | {'read':>6} {'analyse+checks':>14} | {'HTA':>6}"
    )
    for path in files:
        raw = open(path, "rb").read()
        text = gzip.decompress(raw)
        t_json = best(lambda text=text: json.loads(text))
        t_orjson = best(lambda text=text: orjson.loads(text))
        t_msgspec = best(lambda text=text: msgspec.json.decode(text))
        t_read = best(lambda raw=raw, path=path: read_pytorch_trace_bytes(raw, path, "h"))
        p = read_pytorch_trace_bytes(raw, path, "h")
        t_analyse = best(lambda p=p: run_checks(Measures(analyse(p))))
        t_hta = float("nan")
        try:
            from hta.trace_analysis import TraceAnalysis

            logging.disable(logging.WARNING)
            with tempfile.TemporaryDirectory() as d:
                shutil.copy(path, d)
                t = time.perf_counter()
                TraceAnalysis(trace_dir=d)
                t_hta = time.perf_counter() - t
        except ImportError:
            pass
        name = os.path.relpath(path, os.path.join(ROOT, "tests", "data", "pytorch"))
        print(
            f"{name[:42]:42} {len(text) / 1e6:8.1f} {t_json:6.2f} {t_orjson:7.2f} {t_msgspec:8.2f} | "
            f"{t_read:6.2f} {t_analyse:14.2f} | {t_hta:6.2f}"
        )
    print("seconds; read includes gunzip and parsing; HTA: TraceAnalysis(trace_dir) on a copy of the file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
