"""Issue 40's budget: the step graph and its what-ifs add at most 20% to `analyze`.

Times the whole command, `python -m tb_gpu_advisor.cli analyze FILE --format json`, as a process,
with the step graph (the default) and without it (`TB_GPU_ADVISOR_WHATIF=0`: each saving its check's
own estimate), alternating the two, best of `--repeat`, on:

- the 325 MB Kineto file: the real V100 span replicated x10 (benchmarks/kineto_benchmark.py's build);
- the 80 MB XSpace: the realistic scenario x600 (benchmarks/read_benchmark.py's build);
- the real H200 pairs' ResNet-50 and GPT-2 captures (tests/data/gpu_pairs), as users have them.

It prints each file's CPU time (user + system of the child: on a shared machine the command's own
work) and wall time with and without, and the ratio the target is about: (with - without) / without.
This machine's CPU time of one command varies by up to 40% from run to run (the same command, 2.4 s
or 3.6 s), more than the what-ifs cost; so it also prints what they add measured in one process: the
checks and the step model run on one analysed file with the what-ifs off and on, alternating, best of
`--repeat` each ("added"), and that over the command's CPU time without them ("added ratio").

    python benchmarks/whatif_benchmark.py [--repeat 3] [--skip-big] [--keep DIR]
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)


def once(path: str, whatif: bool) -> tuple[float, float]:
    """(CPU s, wall s) of one whole `analyze` process."""
    env = {**os.environ, "TB_GPU_ADVISOR_WHATIF": "1" if whatif else "0", "PYTHONPATH": ROOT}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "tb_gpu_advisor.cli", "analyze", path, "--format", "json"],
        capture_output=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert r.returncode in (0, 1, 3), r.stderr.decode()[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


ADDED = """
import os, sys, time
from tb_gpu_advisor.checks import Options
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report.engine import read_file, run_checks, step_model_json
from tb_gpu_advisor.serve.selection import select

a = analyse(read_file(select(sys.argv[1], None, None)[0]))
best = {}
for _ in range(int(sys.argv[2])):
    for whatif in ("0", "1"):
        os.environ["TB_GPU_ADVISOR_WHATIF"] = whatif
        t = time.process_time()
        m = Measures(a)
        findings, _ = run_checks(m, Options({}))
        step_model_json(m, findings)
        best[whatif] = min(best.get(whatif, 1e9), time.process_time() - t)
print(best["1"] - best["0"])
"""


def added(path: str, repeat: int) -> float:
    """CPU seconds the step graph and its what-ifs add to the checks of one analysed file, in one
    process (best of `repeat` with and without, alternating)."""
    folder = os.path.dirname(path)
    if folder.endswith(os.path.join("plugins", "profile", "s")):
        folder = os.path.dirname(os.path.dirname(os.path.dirname(folder)))
    env = {**os.environ, "PYTHONPATH": ROOT}
    r = subprocess.run([sys.executable, "-c", ADDED, folder, str(repeat)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    return float(r.stdout.split()[-1])


def measure(path: str, repeat: int) -> dict:
    best: dict[str, float] = {}
    for _ in range(repeat):
        for whatif in (True, False):
            cpu, wall = once(path, whatif)
            key = "with" if whatif else "without"
            best[f"{key}_cpu"] = min(best.get(f"{key}_cpu", cpu), cpu)
            best[f"{key}_wall"] = min(best.get(f"{key}_wall", wall), wall)
    best["ratio_cpu"] = (best["with_cpu"] - best["without_cpu"]) / best["without_cpu"]
    best["ratio_wall"] = (best["with_wall"] - best["without_wall"]) / best["without_wall"]
    best["added"] = added(path, repeat)
    best["ratio_added"] = best["added"] / best["without_cpu"]
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-big", action="store_true", help="only the committed captures")
    ap.add_argument("--keep", help="build the big files here and leave them")
    args = ap.parse_args(argv)
    scratch = args.keep or tempfile.mkdtemp(prefix="whatif_benchmark_", dir="/tmp")
    files: list[tuple[str, str]] = []
    try:
        if not args.skip_big:
            import kineto_benchmark
            import read_benchmark

            kineto = os.path.join(scratch, "kineto", "rank0.pt.trace.json")
            if not os.path.exists(kineto):
                os.makedirs(os.path.dirname(kineto), exist_ok=True)
                kineto_benchmark.build(kineto, 10)
            xspace = os.path.join(scratch, "xspace", "plugins", "profile", "s", "host.xplane.pb")
            if not os.path.exists(xspace):
                os.makedirs(os.path.dirname(xspace), exist_ok=True)
                read_benchmark.build(xspace, read_benchmark.SIZES["80mb"])
            files += [("325 MB Kineto (V100 x10)", kineto), ("80 MB XSpace (scenario x600)", xspace)]
        for run in ("rn50_b64_fp32", "gpt2_bf16"):
            path = glob.glob(os.path.join(ROOT, "tests", "data", "gpu_pairs", run, "*.pt.trace.json.gz"))[0]
            files.append((f"{run} (H200, real)", path))
        print(
            f"{'file':34} {'MB':>8} {'with cpu':>9} {'without':>9} {'ratio':>7} {'with wall':>10} {'without':>9}"
            f" {'added':>7} {'added ratio':>11}"
        )
        for label, path in files:
            b = measure(path, args.repeat)
            mb = os.path.getsize(path) / 1e6
            print(
                f"{label:34} {mb:8.1f} {b['with_cpu']:8.2f}s {b['without_cpu']:8.2f}s {100 * b['ratio_cpu']:+6.1f}% "
                f"{b['with_wall']:9.2f}s {b['without_wall']:8.2f}s {b['added']:6.2f}s {100 * b['ratio_added']:+10.1f}%",
                flush=True,
            )
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
