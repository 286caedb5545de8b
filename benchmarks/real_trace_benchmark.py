"""Big real profiles (issue 26 on real captures, not replicated ones): for each PyTorch trace or XSpace
file given, each step in a fresh process so its peak RSS (ru_maxrss) is its own:

- the read (`engine.read_path`, the file mapped), native and with TB_GPU_ADVISOR_PURE_PYTHON=1 (wall,
  CPU, MB/s per core, peak RSS);
- the two readers' Profiles compared table by table (tests/formats/test_kineto_native.py's `assert_same`,
  tests/formats/test_native.py's `equal_profiles`);
- the whole `tb-gpu-advisor analyze RUN --format json` (wall, peak RSS over the file's size), its
  steps and its checks' statuses.

    python benchmarks/real_trace_benchmark.py FILE [FILE ...] [--json OUT] [--skip-pure]

scripts/capture_gpu/big_on_device.sh makes the files on a GPU machine and runs this there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import json, os, resource, sys, time
sys.path[:0] = [{root!r}, os.path.join({root!r}, "tests")]
mode, path = sys.argv[1], sys.argv[2]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
os.environ["TB_GPU_ADVISOR_PURE_PYTHON"] = "1" if mode == "pure" else "0"
from tb_gpu_advisor.report import engine
t, c = time.perf_counter(), cpu()
if mode == "compare":  # both readers on the file's bytes, compared table by table
    def read(pure):
        os.environ["TB_GPU_ADVISOR_PURE_PYTHON"] = "1" if pure else "0"
        return engine.read_path(path)
    a, b = read(False), read(True)
    if ".pt.trace.json" in path:
        from test_kineto_native import assert_same
        assert_same(a, b)
    else:
        from test_native import equal_profiles
        equal_profiles(a, b)
    out = {{"same": True, "events": a.event_count}}
else:  # the file mapped, as the command reads it
    p = engine.read_path(path)
    out = {{"s": time.perf_counter() - t, "cpu": cpu() - c, "events": p.event_count}}
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

COMMAND = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", "analyze", sys.argv[1], "--format", "json"],
                   capture_output=True)
s = time.perf_counter() - t
assert r.returncode in (0, 1), r.stderr.decode()[-2000:]
rep = json.loads(r.stdout)["reports"][0]
print(json.dumps({"s": s, "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "failure": rep.get("failure"), "steps": (rep.get("steps") or {}).get("count"),
                  "statuses": {c["id"]: c["status"] for c in rep["checks"]}}))
"""


def child(script: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True)
    if r.returncode:
        return {"error": r.stderr[-3000:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def run_dir(path: str) -> str:
    """The TensorBoard run a profile file belongs to (its plugins/profile/SESSION, or its folder)."""
    d = os.path.dirname(path)
    parts = d.split(os.sep)
    if len(parts) > 3 and parts[-3:-1] == ["plugins", "profile"]:
        return os.sep.join(parts[:-3])
    return d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--skip-pure", action="store_true", help="no Python read and no comparison")
    args = ap.parse_args(argv)
    results = {}
    for path in args.files:
        mb = os.path.getsize(path) / 1e6
        r = results[os.path.basename(path)] = {"mb": mb}
        print(f"{os.path.basename(path)}: {mb:.1f} MB", flush=True)
        for mode in ("native",) if args.skip_pure else ("native", "pure", "compare"):
            x = r[mode] = child(CHILD.format(root=ROOT), mode, path)
            if "cpu" in x:
                print(f"  {mode} read: {x['s']:.2f} s wall, {x['cpu']:.2f} s CPU ({mb / x['cpu']:.0f} MB/s per core), "
                      f"peak RSS {x['rss_mb']:.0f} MB, {x['events']:,} events", flush=True)  # fmt: skip
            else:
                print(f"  {mode}: {x}", flush=True)
        x = r["analyze"] = child(COMMAND, run_dir(path))
        if "s" in x:
            print(f"  analyze: {x['s']:.2f} s, peak RSS {x['rss_mb']:.0f} MB ({x['rss_mb'] / mb:.2f}x the file), "
                  f"{x['steps']} steps, failure {x['failure']}", flush=True)  # fmt: skip
        else:
            print(f"  analyze: {x}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
