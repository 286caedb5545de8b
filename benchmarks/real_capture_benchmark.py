"""The whole command against the converter's whole process, on real captures (issue 42).

read_benchmark.py times files replicated from a writer-made scenario, which has few distinct op
names; this one times real captures, made here (scripts/capture_transformer.py) or committed:

- `tf_80mb`: a Keras transformer (12 layers, tensorflow-cpu, no XLA: every op run and profiled as
  itself) profiled through the TensorBoard callback over 180 steps: about 80 MB, 3 M events,
  7,500 distinct host event names, 5,500 ops;
- `tf_3mb`: the same model over 6 steps, about 3 MB;
- `jax`: the same stack in JAX (12 layers, one jitted step, 100 steps) when JAX can be imported
  (`--jax-path DIR` adds DIR to the capture's PYTHONPATH, for a JAX installed apart);
- `gpu`: every committed GPU capture (tests/data/gpu/, and tests/data/gpu_pairs/ where present), each
  its own run: the command's time per MB.

For each file, in fresh processes, in turn, best of `--repeat`: the command as a user runs it,
`python -m tb_gpu_advisor.cli analyze RUN --format json` (the `tb-gpu-advisor` console script's
entry; start-up, imports, read, analysis, checks, JSON), the package's bytecode compiled first; and
the profile plugin's converter as a whole process (its import, a scratch copy of the file,
`overview_page`). Wall and CPU seconds and peak RSS are each process's own (wait4). It prints the
ratios the targets are about (the 80 MB-class file: time at most 0.15x, peak RSS at most 0.25x; the
3 MB-class: time at most 1.0x) and the machine's load average.

    python benchmarks/real_capture_benchmark.py [--keep DIR] [--repeat 2] [--only tf_80mb,tf_3mb,jax,gpu]
                                                [--jax-path DIR] [--json OUT]

The captures take minutes (the 80 MB one 85 s of CPU, 5 minutes on a loaded machine); with `--keep`
they are made once.
"""

from __future__ import annotations

import argparse
import compileall
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CAPTURE = os.path.join(ROOT, "scripts", "capture_transformer.py")
# name: (framework, layers, steps)
CAPTURES = {"tf_80mb": ("keras", 12, 180), "tf_3mb": ("keras", 12, 6), "jax": ("jax", 12, 100)}
TARGETS = {"tf_80mb": (0.15, 0.25), "tf_3mb": (1.0, None)}  # time ratio, memory ratio

CONVERT = """
import os, shutil, sys, tempfile
from xprof.convert import raw_to_tool_data
with tempfile.TemporaryDirectory() as scratch:  # the converter writes beside the file it is given
    copy = os.path.join(scratch, os.path.basename(sys.argv[1]))
    shutil.copy(sys.argv[1], copy)
    out, _ = raw_to_tool_data.xspace_to_tool_data([copy], "overview_page", {})
assert out
"""

COUNT = """
import json, sys
from tb_gpu_advisor.report.engine import read_path
p = read_path(sys.argv[1])
host = {int(i) for t in p.threads for i in set(t.events.name.tolist())}
print(json.dumps({"events": p.event_count, "names": len(p.names), "host_names": len(host), "ops": len(p.ops)}))
"""


def env(extra_path: str | None = None) -> dict[str, str]:
    path = [ROOT] + ([extra_path] if extra_path else []) + [os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)), TF_CPP_MIN_LOG_LEVEL="3")


def timed(cmd: list[str], extra_path: str | None = None) -> dict[str, float]:
    """Wall and CPU seconds and peak RSS (MB) of one process, its output thrown away."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env(extra_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert p.stderr is not None
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):  # 1: the command found problems
        raise RuntimeError(f"{cmd[:4]} exited {p.returncode}: {err.decode(errors='replace')[-2000:]}")
    return {"s": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}


def best(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: min(r[k] for r in runs) for k in runs[0]}


def capture(name: str, root: str, jax_path: str | None) -> str | None:
    """The run folder of capture `name` under `root`, made if it is not there; None if it cannot be."""
    framework, layers, steps = CAPTURES[name]
    run = os.path.join(root, name)
    if not glob.glob(os.path.join(run, "**", "*.xplane.pb"), recursive=True):
        shutil.rmtree(run, ignore_errors=True)
        cmd = [sys.executable, CAPTURE, run, "--framework", framework, "--layers", str(layers), "--steps", str(steps)]
        t = time.perf_counter()
        r = subprocess.run(cmd, env=env(jax_path if framework == "jax" else None), capture_output=True, text=True)
        if r.returncode:
            print(f"{name}: not captured ({r.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
            return None
        print(f"{name}: captured in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return run


def the_file(run: str) -> str:
    (path,) = [
        p
        for p in glob.glob(os.path.join(run, "**", "*"), recursive=True)
        if p.endswith((".xplane.pb", ".pt.trace.json", ".pt.trace.json.gz"))
    ]
    return path


def measure(run: str, repeat: int, converter: bool) -> dict:
    path = the_file(run)
    out: dict = {
        "file": os.path.relpath(path, ROOT) if path.startswith(ROOT) else path,
        "mb": os.path.getsize(path) / 1e6,
    }
    counted = subprocess.run([sys.executable, "-c", COUNT, path], env=env(), capture_output=True, text=True, check=True)
    out.update(json.loads(counted.stdout))
    command = [sys.executable, "-m", "tb_gpu_advisor.cli", "analyze", run, "--format", "json"]
    runs: dict[str, list] = {"command": [], "converter": []}
    for _ in range(repeat):  # in turn, so that both see the machine alike
        runs["command"].append(timed(command))
        if converter:
            runs["converter"].append(timed([sys.executable, "-c", CONVERT, path]))
    out["command"] = best(runs["command"])
    if converter:
        out["converter"] = c = best(runs["converter"])
        out["ratio"] = {k: out["command"][k] / c[k] for k in ("s", "cpu", "rss_mb")}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="make the captures in this folder and keep them (made once)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each process; the best is kept")
    ap.add_argument("--only", default="tf_80mb,tf_3mb,jax,gpu")
    ap.add_argument("--jax-path", help="a folder with JAX in it, for the JAX capture's PYTHONPATH")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args(argv)
    # as installed: the bytecode compiled (a checkout run with PYTHONDONTWRITEBYTECODE=1 would compile
    # the advisor's modules at every start and time that too)
    compileall.compile_dir(os.path.join(ROOT, "tb_gpu_advisor"), quiet=1)
    only = args.only.split(",")
    root = args.keep or tempfile.mkdtemp(prefix="tbga-real-")
    load = [os.getloadavg()[0]]
    results: dict[str, dict] = {}
    try:
        for name in (n for n in CAPTURES if n in only):
            run = capture(name, root, args.jax_path)
            if run is not None:
                results[name] = measure(run, args.repeat, converter=True)
                print(f"{name}: done", file=sys.stderr)
        if "gpu" in only:
            for folder in ("gpu", "gpu_pairs"):
                for run in sorted(glob.glob(os.path.join(ROOT, "tests", "data", folder, "*", ""))):
                    name = f"{folder}/{os.path.basename(os.path.dirname(run))}"
                    results[name] = measure(run, args.repeat, converter=the_file(run).endswith(".xplane.pb"))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    load.append(os.getloadavg()[0])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load": load, "results": results}, f, indent=1)
    print(f"load average (1 min) at the start and the end: {load[0]:.1f}, {load[1]:.1f}; best of {args.repeat}")
    print(f"{'file':34} {'MB':>6} {'events':>9} {'names':>6} {'ops':>5} | {'command s':>9} {'cpu':>6} {'MB':>5} "
          f"{'s/MB':>6} | {'converter':>9} {'cpu':>6} {'MB':>6} | {'time x':>6} {'cpu x':>6} {'RSS x':>6}")  # fmt: skip
    for name, r in results.items():
        c = r["command"]
        line = (f"{name:34} {r['mb']:>6.1f} {r['events']:>9,} {r['host_names']:>6,} {r['ops']:>5,} | {c['s']:>8.3f}s "
                f"{c['cpu']:>5.2f}s {c['rss_mb']:>5.0f} {c['s'] / r['mb']:>6.3f} | ")  # fmt: skip
        if "converter" in r:
            v, x = r["converter"], r["ratio"]
            line += f"{v['s']:>8.3f}s {v['cpu']:>5.2f}s {v['rss_mb']:>6.0f} | {x['s']:>6.3f} {x['cpu']:>6.3f} {x['rss_mb']:>6.3f}"
            if name in TARGETS:
                t, m = TARGETS[name]
                line += f"  (targets: time <= {t}x{f', RSS <= {m}x' if m else ''})"
        else:
            line += f"{'-':>9} {'-':>6} {'-':>6} | (a PyTorch trace: no converter)"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
