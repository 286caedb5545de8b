"""The command imports what it uses and no more (issue 42): on a file as small as a demo run, the
interpreter's start and the imports are most of `tb-gpu-advisor analyze DIR --format json`. Read from
`python -X importtime`: the modules that one XSpace file's JSON report does not need are not
imported, and the number of modules the command imports is bounded (a count, not seconds: the
machine's speed does not move it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "demo_logs" / "12_multi_gpu_imbalance"

# What serves other commands, other formats or other outputs, and what the advisor never needs
NOT_IMPORTED = (
    "multiprocessing",  # worker processes: several files, or the plugin
    "tb_gpu_advisor.present",  # text, markdown, the timeline, the trace export
    "tb_gpu_advisor.serve.service",  # the plugin's cache
    "tb_gpu_advisor.plugin",
    "tb_gpu_advisor.job.ranks",
    "tb_gpu_advisor.job.diff",
    "tb_gpu_advisor.report.compare",
    "tb_gpu_advisor.formats.kineto.native",  # PyTorch traces' readers
    "tb_gpu_advisor.formats.kineto.reader",
    "tb_gpu_advisor.formats.xplane.xplane_pb2",  # the pure-Python decoder's protobuf: the scanner reads it
    "google.protobuf",
    "tensorboard",
    "tensorflow",
    "torch",
    "pandas",
    "scipy",
    "dask",
    "orjson",  # the PyTorch reader's JSON
    "numpy.ma",  # np.median and np.unique's masked paths (7-17 ms, docs/performance.md)
)
# every module the command imports (the interpreter's own, NumPy's, the advisor's): 297 on one XSpace run,
# 300 on a PyTorch trace at issue 42. Issue 48 split three modules: the command's own went from 1 to 9
# (cli/, a module per command) and the what-if's from 1 to 14 (graph/fixes/, a module per fix model,
# graph/facts.py, graph/profiler.py): 338 on a PyTorch trace then; measures/applied.py and
# measures/arrival.py (issue 50) are two more, and issue 49's fix models (autocast, channels_last,
# reduce_overhead) and the realised-saving module more again: 350 on the XSpace run
MAX_MODULES = 356


def imported(*args: str) -> list[tuple[str, int]]:
    """(module, its own import time in µs) of each module `python -X importtime -m tb_gpu_advisor.cli
    *args` imports, in order."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-X", "importtime", "-m", "tb_gpu_advisor.cli", *args]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    found = re.findall(r"^import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)\s*$", r.stderr, re.M)
    return [(name, int(us)) for us, name in found]


def test_one_file_as_json_imports_what_it_uses() -> None:
    modules = imported("analyze", str(RUN), "--format", "json")
    names = [m for m, _ in modules]
    assert "tb_gpu_advisor.checks" in names and "numpy" in names  # it did analyse the file
    unused = sorted({m for m in names if any(m == x or m.startswith(x + ".") for x in NOT_IMPORTED)})
    assert unused == []
    assert len(names) <= MAX_MODULES, f"{len(names)} modules imported"


def test_a_pytorch_trace_as_json_imports_what_it_uses() -> None:
    """The PyTorch reader's path: its readers, and none of the rest (np.isin of correlation ids and
    np.median imported numpy.ma, model/arrays.py's isin and median do not)."""
    trace = ROOT / "tests" / "data" / "gpu" / "torch_eager"
    names = [m for m, _ in imported("analyze", str(trace), "--format", "json")]
    assert "tb_gpu_advisor.formats.kineto.native" in names
    kineto = tuple(x for x in NOT_IMPORTED if not x.startswith(("tb_gpu_advisor.formats.kineto", "orjson")))
    unused = sorted({m for m in names if any(m == x or m.startswith(x + ".") for x in kineto)})
    assert unused == []
    assert len(names) <= MAX_MODULES, f"{len(names)} modules imported"


def test_the_rule_sees_a_module_it_should_not_import() -> None:
    """The text output imports the presentation (and the test finds it)."""
    names = [m for m, _ in imported("analyze", str(RUN))]
    assert "tb_gpu_advisor.present.render" in names
