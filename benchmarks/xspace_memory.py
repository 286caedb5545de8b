"""Where the memory of one XSpace analysis goes: traced Python/NumPy memory (tracemalloc) and RSS after
each stage, and the bytes the event tables keep (per stream and thread, and merged per host and GPU).

    python benchmarks/xspace_memory.py [--size 80mb|5x|small] [FILE]

With no FILE, builds read_benchmark.py's file of that size in a scratch folder.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import sys
import tempfile
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?")
    ap.add_argument("--size", default="80mb")
    args = ap.parse_args(argv)
    scratch = None
    path = args.file
    if path is None:
        import read_benchmark

        scratch = tempfile.mkdtemp(prefix="tbga-mem-")
        path = os.path.join(scratch, "bench.xplane.pb")
        read_benchmark.build(path, read_benchmark.SIZES[args.size])
    try:
        tracemalloc.start()
        from tb_gpu_advisor.checks import run_checks
        from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
        from tb_gpu_advisor.measures import Measures
        from tb_gpu_advisor.model.analysis import analyse

        def stage(name: str) -> None:
            now, peak = tracemalloc.get_traced_memory()
            print(f"{name:28} traced {now / 1e6:7.1f} MB (peak {peak / 1e6:7.1f})  RSS {_rss_mb():7.1f} MB")
            tracemalloc.reset_peak()

        stage("imports")
        with open(path, "rb") as f:
            data = f.read()
        p = read_profile_bytes(data, path, "bench")
        stage(f"read ({os.path.getsize(path) / 1e6:.1f} MB file)")
        del data
        gc.collect()
        stage("file's bytes dropped")
        a = analyse(p)
        a.summary()
        stage("analysed, summary")
        run_checks(Measures(a))
        stage("checks")
        tables = {
            "streams": [s.events for s in p.streams],
            "threads": [t.events for t in p.threads],
            "merged host": [a.host],
            "merged GPUs": [g.events for g in a.gpus.values()],
        }
        kept = {k: sum(t.nbytes_kept() for t in v) / 1e6 for k, v in tables.items()}
        print("tables keep: " + ", ".join(f"{k} {v:.1f} MB" for k, v in kept.items()), f"({p.event_count:,} events)")
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
        print(f"peak RSS {maxrss:.0f} MB (with tracemalloc's own overhead)")
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
