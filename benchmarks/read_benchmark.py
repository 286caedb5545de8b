"""Read-speed and memory benchmark: a writer-made profile with one million device events.

Prints the advisor's read (and read + analyse) time and peak memory, and the profile plugin's own
converter (overview page, on the same bytes with a scratch path) for comparison, with ratios.
Each measurement runs in a fresh subprocess so peak RSS is its own.

    python benchmarks/read_benchmark.py [--events 1000000] [--file PATH] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def build(path: str, events: int) -> None:
    from tb_gpu_advisor.xplane.writer import GPU_SPECS, ProfileWriter

    w = ProfileWriter("bench", fmt="new")
    gpu = w.gpu(0, GPU_SPECS["A100"])
    streams = [gpu.stream(7 + i, "Compute") for i in range(4)]
    py = w.thread("python", 1)
    kernels = [
        ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", "model/dense_{}/MatMul:MatMul", "(half[256,1024];half[1024,1024])"),
        ("void Eigen::internal::EigenMetaKernel<Eigen::half>", "model/relu_{}:Relu", "(half[256,1024])"),
        ("ampere_sgemm_128x64_nn", "model/head_{}/MatMul:MatMul", "(float[256,1024];float[1024,10])"),
    ]
    per_step = 1000
    t = 0.0
    for i in range(events):
        if i % per_step == 0:
            py.step(i // per_step, t, per_step * 25.0)
        name, op, shape = kernels[i % 3]
        streams[i % 4].kernel(name, t, 20.0, op=op.format(i % 50), shape=shape, grid=(80, 1, 1),
                              block=(256, 1, 1), launch=py if i % 10 == 0 else None)
        t += 25.0
    with open(path, "wb") as f:
        f.write(w.to_bytes())


READ = """
import sys, time, resource
from tb_gpu_advisor.xplane.reader import read_profile_bytes
from tb_gpu_advisor.analysis import analyse
from tb_gpu_advisor.checks import run_checks
data = open(sys.argv[1], 'rb').read()
t0 = time.perf_counter()
p = read_profile_bytes(data, sys.argv[1], 'bench')
t1 = time.perf_counter()
a = analyse(p); a.headline()
t2 = time.perf_counter()
run_checks(a)
t3 = time.perf_counter()
print(t1 - t0, t2 - t0, t3 - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, p.event_count)
"""

CONVERT = """
import os, sys, time, resource, tempfile
from xprof.convert import raw_to_tool_data
data = open(sys.argv[1], 'rb').read()
with tempfile.TemporaryDirectory() as scratch:
    t0 = time.perf_counter()
    out, _ = raw_to_tool_data.xspace_to_tools_data_from_byte_string(
        [data], [os.path.join(scratch, 'bench.xplane.pb')], 'overview_page', {})
    t1 = time.perf_counter()
assert out
print(t1 - t0, t1 - t0, t1 - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, 0)
"""

BASELINE = "import sys, resource; data = open(sys.argv[1], 'rb').read(); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)"


def measure(code: str, path: str) -> tuple[float, float, float, int, int]:
    """(read s, read + analyse s, full report s, peak RSS bytes, events) of one fresh process."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", GLOG_minloglevel="3")
    out = subprocess.run([sys.executable, "-c", code, path], check=True, capture_output=True, text=True, env=env)
    a, b, c, rss, n = out.stdout.strip().splitlines()[-1].split()
    return float(a), float(b), float(c), int(rss), int(n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--file", help="profile to use (built if missing)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    path = args.file or os.path.join(tempfile.gettempdir(), f"tbga_bench_{args.events}.xplane.pb")
    if not os.path.exists(path):
        t0 = time.perf_counter()
        build(path, args.events)
        print(f"built {path} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    size = os.path.getsize(path)
    base = int(subprocess.run([sys.executable, "-c", BASELINE, path], check=True, capture_output=True,
                              text=True).stdout.split()[-1])  # fmt: skip
    ours = [measure(READ, path) for _ in range(args.repeat)]
    theirs = [measure(CONVERT, path) for _ in range(args.repeat)]
    read_s = min(o[0] for o in ours)
    total_s = min(o[1] for o in ours)
    report_s = min(o[2] for o in ours)
    conv_s = min(t[0] for t in theirs)
    ours_rss = min(o[3] for o in ours) - base
    conv_rss = min(t[3] for t in theirs) - base
    result = {
        "file_mb": size / 1e6,
        "events": ours[0][4],
        "advisor_read_s": read_s,
        "advisor_read_and_analyse_s": total_s,
        "advisor_full_report_s": report_s,
        "converter_overview_s": conv_s,
        "time_ratio_advisor_to_converter": total_s / conv_s,
        "advisor_peak_mb_over_file_in_memory": ours_rss / 1e6,
        "converter_peak_mb_over_file_in_memory": conv_rss / 1e6,
        "memory_ratio_advisor_to_converter": ours_rss / conv_rss if conv_rss > 0 else None,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"profile: {result['file_mb']:.1f} MB, {result['events']} events (best of {args.repeat})")
        print(f"advisor read:               {read_s:7.2f} s")
        print(f"advisor read + analyse:     {total_s:7.2f} s")
        print(f"advisor full report:        {report_s:7.2f} s  (read, analyse and all {len(__import__('tb_gpu_advisor.checks', fromlist=['REGISTRY']).REGISTRY)} checks)")
        print(f"converter (overview page):  {conv_s:7.2f} s")
        print(f"time ratio advisor/converter: {result['time_ratio_advisor_to_converter']:.2f}")
        print(f"peak memory beyond the file bytes: advisor {ours_rss / 1e6:.0f} MB, converter {conv_rss / 1e6:.0f} MB,"
              f" ratio {result['memory_ratio_advisor_to_converter']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
