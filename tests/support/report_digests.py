"""Digests of everything the advisor reports on demo_logs and the shared traces.

A refactor must leave these unchanged. Floats are rounded to 10 significant
digits before hashing: numpy's summation order depends on the CPU's SIMD
width, and the last bits of a sum may differ between machines.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path

from tb_gpu_advisor.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
DIGESTS_FILE = ROOT / "tests" / "data" / "report_digests.json"
LOGDIRS = {
    "demo_logs": ROOT / "demo_logs",
    "pytorch": ROOT / "tests" / "data" / "pytorch",
    "jax": ROOT / "tests" / "data" / "jax_cpu_capture",
}
TABLES = {
    ("demo_logs", "01_healthy"): ("kernels", "ops", "memory", "input", "idle"),
    ("demo_logs", "pytorch_resnet50_num_workers_0"): ("kernels", "ops", "memory", "idle"),
    ("demo_logs", "02_input_bound"): ("input",),
}


def _rounded(x):
    if isinstance(x, float):
        return float(f"{x:.10g}")
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items() if k != "advisor_version"}
    if isinstance(x, list):
        return [_rounded(v) for v in x]
    return x


def _digest(x) -> str:
    text = json.dumps(_rounded(x), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cli_json(argv: list[str]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(argv)
    assert rc == 0, f"{argv}: exit {rc}"
    return json.loads(out.getvalue())


def digests() -> dict[str, str]:
    d: dict[str, str] = {}
    for name, logdir in LOGDIRS.items():
        a = _cli_json(["analyze", str(logdir), "--format", "json"])
        for r in a["reports"]:
            d[f"{name} report {r['run']} {r['host']}"] = _digest(r)
        d[f"{name} runs"] = _digest(a["runs"])
        d[f"{name} overview"] = _digest(a["overview"])
        s = _cli_json(["summary", str(logdir), "--json"])
        for r in s["reports"]:
            d[f"{name} summary {r['run']} {r['host']}"] = _digest(r)
    for (name, run), kinds in TABLES.items():
        for kind in kinds:
            t = _cli_json(["table", kind, str(LOGDIRS[name]), "--run", run, "--format", "json"])
            d[f"{name} table {kind} {run}"] = _digest(t)
    return d
