"""What a user may name on the command line: one profile file, or a folder at any depth of a capture
(the run folder, its `plugins`, `plugins/profile` or a session in it), each answered with the same
analysis; and the exported trace keeping the step numbers. (The Keras `logs/` against `logs/train`
case is in tests/test_real_capture.py, on a capture made there; the empty-logdir message in
tests/serve/test_cli.py.)"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout

import pytest
from support import hostile_profile

from tb_gpu_advisor.cli import main
from tb_gpu_advisor.present.export import chrome_trace
from tb_gpu_advisor.report.engine import analyse_file
from tb_gpu_advisor.serve.selection import select

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "demo_logs")
SESSION = "2026_11_22_10_00_00"
RUN02 = os.path.join(DEMO, "02_input_bound")
XPLANE = os.path.join(RUN02, "plugins", "profile", SESSION, "gpu-worker-0.xplane.pb")
TORCH = os.path.join(ROOT, "tests", "data", "pytorch", "resnet50_num_workers_4")
TORCH_FILE = os.path.join(TORCH, "worker0.1623213129365.pt.trace.json.gz")


def analyze_json(path: str, *args: str) -> tuple[int, dict]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(["analyze", path, "--format", "json", *args])
    return code, json.loads(buf.getvalue())


def input_bound(report: dict) -> dict:
    return next(c for c in report["checks"] if c["id"] == "input.bound")


def test_a_single_xplane_file():
    code, out = analyze_json(XPLANE)
    assert code == 0
    (r,) = out["reports"]
    # named as the Profile tab names it: the run folder and the session
    assert (r["run"], r["host"]) == (f"02_input_bound/{SESSION}", "gpu-worker-0")
    assert input_bound(r)["status"] == "critical" and input_bound(r)["metrics"][0]["value"] == pytest.approx(
        61.74, abs=0.01
    )
    assert analyze_json(XPLANE, "--fail-on", "critical")[0] == 1


def test_a_single_pytorch_trace():
    code, out = analyze_json(TORCH_FILE)
    assert code == 0
    (r,) = out["reports"]
    assert (r["run"], r["host"], r["framework"]) == ("resnet50_num_workers_4", "worker0.1623213129365", "pytorch")
    assert r["steps"]["count"] == 6 and input_bound(r)["status"] == "pass"


@pytest.mark.parametrize(
    "path",
    [
        RUN02,
        os.path.join(RUN02, "plugins"),
        os.path.join(RUN02, "plugins", "profile"),
        os.path.join(RUN02, "plugins", "profile", SESSION),
        XPLANE,
    ],
)
def test_every_depth_of_a_capture_gives_the_same_analysis(path):
    code, out = analyze_json(path)
    assert code == 0
    (r,) = out["reports"]
    assert r["host"] == "gpu-worker-0" and r["run"].endswith(SESSION)
    assert input_bound(r)["metrics"][0]["value"] == pytest.approx(61.74, abs=0.01)
    assert r["steps"]["mean_ms"] == pytest.approx(23.368, abs=0.001)


def test_inside_plugins_profile_only_that_part_is_analysed(tmp_path):
    """A session folder named inside a run with two sessions: that session only."""
    import shutil

    run = tmp_path / "train"
    for s in ("s1", "s2"):
        d = run / "plugins" / "profile" / s
        d.mkdir(parents=True)
        shutil.copy(XPLANE, d / "host.xplane.pb")
    assert [f.run for f in select(str(run), None, None)] == ["s1", "s2"]
    assert [f.run for f in select(str(run / "plugins" / "profile" / "s2"), None, None)] == ["s2"]
    assert [f.run for f in select(str(run / "plugins"), None, None)] == ["s1", "s2"]


def test_export_keeps_the_step_numbers():
    """PyTorch's step markers are exported as it wrote them, ProfilerStep#N; the others carry step_num."""
    (f,) = select(TORCH, None, "worker0.1623213129365")
    m, rep = analyse_file(f)
    a = m.analysis
    doc = json.loads("".join(chrome_trace(a, rep)))
    steps = [e for e in doc["traceEvents"] if "step_num" in e.get("args", {})]
    assert [e["name"] for e in steps] == [f"ProfilerStep#{n}" for n in range(16, 22)]
    assert [e["args"]["step_num"] for e in steps] == a.steps.number.tolist() == list(range(16, 22))
    assert not any(e.get("name") == "ProfilerStep" for e in doc["traceEvents"])
    (f,) = select(RUN02, None, None)
    m, rep = analyse_file(f)
    a = m.analysis
    doc = json.loads("".join(chrome_trace(a, rep)))
    steps = [e for e in doc["traceEvents"] if "step_num" in e.get("args", {})]
    assert [(e["name"], e["args"]["step_num"]) for e in steps] == [("train", n) for n in range(6)]


def test_unknown_schemes_are_a_usage_error():
    """Issue 51: a logdir of a scheme no file system reads (`nosuch://`) ended in a traceback, exit 1;
    it is a usage error (exit 2) with a message, as a missing folder is. A local `file://` URL is read
    as its path."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": ROOT}
    for cmd in (["analyze", "nosuch://x/logs"], ["runs", "nosuch://x/logs"], ["mcp", "nosuch://x/logs"]):
        done = subprocess.run(
            [sys.executable, "-m", "tb_gpu_advisor.cli", *cmd], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 2 and not done.stdout, (cmd, done.returncode, done.stderr[-500:])
        assert done.stderr.startswith("error: nosuch://x/logs: no file system here reads nosuch://"), done.stderr
        assert "Traceback" not in done.stderr
    code, doc = analyze_json("file://" + RUN02)
    assert code == 0 and input_bound(doc["reports"][0])["status"] == "critical"


def test_deep_folders_beside_a_run_list_it(tmp_path):
    """Issue 51: 1,100 nested folders beside a run gave a RecursionError traceback (exit 1); the run is
    listed, in under 10 s, the interpreter's start included."""
    import shutil
    import subprocess
    import sys
    import time

    shutil.copytree(RUN02, tmp_path / "02_input_bound")
    hostile_profile.nested_folders(str(tmp_path / "deep"), 1100)
    try:
        t = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "tb_gpu_advisor.cli", "runs", str(tmp_path)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": ROOT},
            timeout=120,
        )
    finally:
        hostile_profile.remove_nested(str(tmp_path / "deep"))
    assert time.monotonic() - t < 10 and done.returncode == 0, done.stderr[-500:]
    assert done.stdout.startswith(f"02_input_bound/{SESSION}  gpu-worker-0 (")
