"""Comparing two runs: the demo's before/after pairs with known deltas (02_input_bound ->
18_input_prefetched_after_02, 08_fp32_on_tensor_core_gpu -> 19_mixed_precision_after_08), a run
against itself, the real PyTorch pair, the verdicts, the `diff` command's outputs and exit codes,
and the `compare` route. (tests/test_real_capture.py compares two tensorflow-cpu captures made in
the test run.)"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout

import jsonschema
import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test, wrappers

from tb_gpu_advisor.cli import main
from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.plugin import GpuAdvisorPlugin
from tb_gpu_advisor.present import render_diff
from tb_gpu_advisor.report.compare import (
    Noise,
    check_verdict,
    compare,
    regressions,
    status_verdict,
    step_samples,
    step_verdict,
)
from tb_gpu_advisor.report.engine import analyse_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "demo_logs")
SESSION = "2026_11_22_10_00_00"
with open(os.path.join(ROOT, "tb_gpu_advisor", "schema.json")) as _f:
    SCHEMA = json.load(_f)


def run_of(prefix: str, root: str = DEMO):
    (f,) = [x for x in discover(root)[0] if x.run.startswith(prefix)]
    return analyse_file(f)


@pytest.fixture(scope="module")
def analyses():
    return {k: run_of(k) for k in ("02_", "18_", "08_", "19_")}


def by_id(d: dict) -> dict:
    return {c["id"]: c for c in d["checks"]}


def test_input_bound_then_prefetch(analyses):
    d = compare(analyses["02_"], analyses["18_"])
    jsonschema.validate(d, {**SCHEMA, "$ref": "#/$defs/Diff"}, cls=jsonschema.Draft202012Validator)
    s = d["steps"]
    assert s["base"]["mean_ms"] == pytest.approx(23.368, abs=0.01) and s["new"]["mean_ms"] == pytest.approx(
        9.386, abs=0.01
    )
    assert s["delta_ms"] == pytest.approx(-13.98, abs=0.01) and s["delta_pct"] == pytest.approx(-59.8, abs=0.1)
    assert s["base"]["count"] == s["new"]["count"] == 6
    bd = {r["category"]: r for r in d["breakdown_ms"]}
    assert bd["host_input_wait"]["delta_ms"] == pytest.approx(-13.97, abs=0.01)
    assert bd["device_compute"]["delta_ms"] == pytest.approx(0.0, abs=0.001)  # the same model
    c = by_id(d)
    assert c["input.bound"]["verdict"] == "fixed" and (
        c["input.bound"]["base_status"],
        c["input.bound"]["new_status"],
    ) == ("critical", "pass")
    assert c["input.bound"]["base_value"] == pytest.approx(61.74, abs=0.01)
    assert c["steps.gaps"]["verdict"] == "fixed"
    assert d["summary"] == {
        "fixed": ["input.bound", "steps.gaps"],
        "new": [],
        "worse": [],
        "better": [],
        "exposed": [],
        "within_noise": [],
        "unchanged": 41,  # of 43 host checks (capture.warmup, capture.range-profiler, steps.allocator: issue 50)
        "captured_step": "faster",
        "step": "faster",
        "basis": "captured",
    }
    # the unchanged checks are counted, not listed
    assert [x["id"] for x in d["checks"]] == ["input.bound", "steps.gaps"] and not d["all_checks"]
    # the steps vary by 0.62 ms (base) and 0.05 ms (new): a 14 ms change is far beyond that
    assert s["significant"] is True and s["confidence"] == 0.95
    assert s["interval_ms"] == pytest.approx([-14.41, -13.51], abs=0.01)
    # the profiler costs next to nothing in either (TensorFlow's XSpace): the captured steps are the basis
    assert d["verdict"]["basis"] == "captured" and d["verdict"]["interval_ms"] == s["interval_ms"]
    t = c["input.bound"]["time"]
    assert t["measure"] == "input wait" and t["wait"] and t["cut"] and t["grown_ms"] is None
    assert t["share"]["base_pct"] == pytest.approx(c["input.bound"]["base_value"], abs=0.01)  # its thresholds' basis
    assert t["share"]["significant"] is True
    assert t["delta_ms"] == pytest.approx(-13.97, abs=0.01) and t["interval_ms"] == pytest.approx(
        [-14.40, -13.52], abs=0.01
    )
    assert regressions(d, 5) == []


def test_fp32_then_mixed_precision(analyses):
    d = compare(analyses["08_"], analyses["19_"])
    assert d["steps"]["delta_ms"] == pytest.approx(-9.83, abs=0.01)
    bd = {r["category"]: r for r in d["breakdown_ms"]}
    assert bd["device_compute"]["base_ms"] == pytest.approx(16.708, abs=0.01)
    assert bd["device_compute"]["new_ms"] == pytest.approx(6.883, abs=0.01)
    fp16 = next(h for h in d["headline"] if h["key"] == "fp16_compute_pct")
    assert fp16["base"] == 0.0 and fp16["new"] == pytest.approx(99.14, abs=0.01)
    c = by_id(d)
    assert c["precision.mixed-off"]["verdict"] == "fixed" and c["tensorcore.unused"]["verdict"] == "fixed"
    # the unchanged input copy is now 5.2% of a shorter step: a warning, the next thing to fix, but the
    # same 0.39 ms in both runs: its share of the step grew by 2.97 points, its time did not. Exposed by
    # the fix, not a regression of it
    assert c["input.bound"]["verdict"] == "exposed" and c["input.bound"]["new_status"] == "warning"
    t = c["input.bound"]["time"]
    assert t["delta_ms"] == pytest.approx(0.0, abs=0.001) and t["share"]["delta_pts"] == pytest.approx(2.97, abs=0.01)
    assert t["share"]["interval_pts"][0] > 2.9 and t["share"]["significant"] and t["grown_ms"] is None
    assert d["summary"]["exposed"] == ["input.bound"] and not c["input.bound"]["within_noise"]
    # the kernel that moved most: the fp32 convolution, gone
    k = d["kernels"][0]
    assert k["name"] == "volta_scudnn_128x64_relu_interior_nn_v1" and k["new_ms"] == 0.0
    assert k["delta_ms"] == pytest.approx(-9.422, abs=0.01)
    assert regressions(d, 5) == regressions(d, 0) == []


def test_a_run_against_itself_changes_nothing(analyses):
    d = compare(analyses["02_"], analyses["02_"])
    assert d["steps"]["delta_ms"] == 0 and d["summary"]["step"] == "same" and d["steps"]["significant"] is False
    lo, hi = d["steps"]["interval_ms"]
    assert lo < 0 < hi
    assert d["checks"] == [] and d["summary"]["unchanged"] == 43  # every host check
    every = compare(analyses["02_"], analyses["02_"], all_checks=True)
    assert len(every["checks"]) == 43 and all(c["verdict"] == "unchanged" for c in every["checks"])
    assert all(r["delta_ms"] == 0 for r in d["breakdown_ms"]) and all(r["delta_ms"] == 0 for r in d["kernels"])
    assert regressions(d, 0) == []


def test_pytorch_num_workers_0_then_4():
    """The shared real pair (ResNet-50 on a V100, DataLoader num_workers 0 then 4), decided with the steps'
    noise. The input wait goes from 35.50 to 0.29 ms per step: the improvement, with its interval. The mean
    step time drops 12.10 ms (154.91 -> 142.81 ms, steps as PyTorch's plugin draws them), but the new run's
    steps spread from 118.6 to 202.6 ms (stdev 35.3 ms): that change is inside the noise, and so is kernels.launch-bound's pass -> warning
    (its launch wait is 45 ms in the first step and about 2 ms in the others)."""
    data = os.path.join(ROOT, "tests", "data", "pytorch")
    files = {f.run: f for f in discover(data)[0]}  # two spans per run: the last of each
    base, new = analyse_file(files["resnet50_num_workers_0"]), analyse_file(files["resnet50_num_workers_4"])
    d = compare(base, new)
    ib = by_id(d)["input.bound"]
    assert ib["base_status"] == "critical" and ib["verdict"] == "fixed"
    # with the steps as PyTorch's plugin draws them (the GPU tail in), the GPU's idle gaps of the
    # num_workers=0 run show too: steps.gaps goes from a warning (17.8% idle) to a pass (0.05%)
    assert d["summary"]["fixed"] == ["input.bound", "steps.gaps"]
    t = ib["time"]
    assert t["delta_ms"] == pytest.approx(-35.21, abs=0.01) and t["cut"] and t["share"]["significant"]
    assert t["interval_ms"] == pytest.approx([-40.01, -32.08], abs=0.01)
    assert t["share"]["delta_pts"] == pytest.approx(-22.71, abs=0.05) and t["share"]["interval_pts"][1] < -20
    s = d["steps"]
    assert s["delta_ms"] == pytest.approx(-12.10, abs=0.01) and s["new"]["stdev_ms"] == pytest.approx(35.32, abs=0.01)
    assert s["interval_ms"][0] < -25 and s["interval_ms"][1] > 15 and s["significant"] is False
    assert d["summary"]["step"] == "same"
    # kernels.launch-bound pass -> warning: a wait (45 ms in the first step, about 2 ms in the others)
    # that did not grow beyond the noise: exposed
    lb = by_id(d)["kernels.launch-bound"]
    assert (lb["base_status"], lb["new_status"], lb["verdict"]) == ("pass", "warning", "exposed")
    assert lb["time"]["grown_ms"] is None and lb["time"]["share"]["interval_pts"][0] < 0
    # with the input wait gone, the batch's synchronous copies from pageable memory (`.to(device)`
    # without pin_memory: each waits for the GPU) hold the host back, 10% of the step by the step graph:
    # they were there before; a wait that grows while the step does not is exposed, not a regression
    assert by_id(d)["steps.syncs"]["verdict"] == "exposed"
    assert d["summary"]["exposed"] == ["kernels.launch-bound", "steps.syncs"]
    assert regressions(d, 0) == []
    text = render_diff.diff_text(d)
    assert "-12.10 ms (-7.8%) per step, 95% interval -35.52 to +16.55 ms" in text
    assert "verdict: unchanged (within noise), on the captured steps: -12.10 ms (-7.8%)" in text
    assert "input wait: 35.504 ms → 0.292 ms per step, -35.21 ms, 95% interval -40.01 to -32.08 ms" in text
    assert "EXPOSED kernels.launch-bound           pass → warning: a wait that grew" in text


def test_noise_decision_is_repeatable():
    """The bootstrap's seed is fixed: the same two runs give the same intervals every time."""
    data = os.path.join(ROOT, "tests", "data", "pytorch")
    files = {f.run: f for f in discover(data)[0]}
    base, new = analyse_file(files["resnet50_num_workers_0"]), analyse_file(files["resnet50_num_workers_4"])
    assert compare(base, new) == compare(base, new)


def test_too_few_steps_for_an_interval():
    """One or two steps in a run: no interval, the step time judged by size alone, checks by status."""
    f = os.path.join(ROOT, "tests", "data", "pytorch", "resnet50_num_workers_0")
    (one,) = [x for x in discover(f)[0] if x.host == "worker0.1623143566756"]
    a, r = analyse_file(one)
    samples = step_samples(a)
    assert samples.shape == (6, 3)
    short = Noise(samples[:2], samples)
    assert short.step() == (None, None) and short.share("input.bound") is None
    steps = {"delta_ms": -3.0, "delta_pct": -4.5, "significant": None}
    assert step_verdict(steps) == "same" and step_verdict({**steps, "delta_pct": -5.5}) == "faster"


@pytest.mark.parametrize(
    "base,new,grown,cut,expected",
    [
        # a problem gone, its time cut beyond the noise: fixed; without its time cut: within noise
        ("critical", "pass", False, True, ("fixed", False)),
        ("critical", "pass", False, False, ("unchanged", True)),
        ("critical", "warning", False, True, ("better", False)),
        # a problem that appears or gets more severe: new or worse only with its time grown beyond the
        # noise; else another change exposed it (its share of a shorter step grew)
        ("pass", "warning", True, False, ("new", False)),
        ("pass", "critical", False, False, ("exposed", False)),
        ("warning", "critical", False, True, ("exposed", False)),
        ("warning", "critical", True, False, ("worse", False)),
        # the same status: its time decides
        ("warning", "warning", True, False, ("worse", False)),
        ("critical", "critical", False, True, ("better", False)),
        ("warning", "warning", False, False, ("unchanged", False)),
        ("pass", "pass", True, False, ("unchanged", False)),
    ],
)
def test_check_verdicts_follow_their_own_time(base, new, grown, cut, expected):
    assert check_verdict({"status": base}, {"status": new}, grown, cut) == expected


@pytest.mark.parametrize(
    "base,new,expected",
    [
        ({"status": "critical"}, {"status": "pass"}, "fixed"),
        ({"status": "pass"}, {"status": "warning"}, "new"),
        ({"status": "warning"}, {"status": "critical"}, "worse"),
        ({"status": "critical"}, {"status": "warning"}, "better"),
        ({"status": "warning"}, {"status": "warning"}, "unchanged"),
        ({"status": "info"}, {"status": "pass"}, "unchanged"),
        (None, {"status": "critical"}, "new"),
    ],
)
def test_status_verdicts(base, new, expected):
    """A job's checks, which declare no time, are judged by their status."""
    assert status_verdict(base, new) == expected


def out_of(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(argv)
    return code, buf.getvalue()


def test_diff_command_outputs_and_exit_codes(capsys):
    args = ["diff", DEMO, DEMO, "--run", "02_input_bound", "--new-run", "18_input_prefetched_after_02"]
    code, text = out_of(args)
    assert code == 0
    assert (
        "step time: 23.37 ms ± 0.62 (6 steps) → 9.39 ms ± 0.05 (6 steps): -13.98 ms (-59.8%) per step, "
        "95% interval -14.41 to -13.51 ms" in text
    )
    assert "verdict: faster, on the captured steps: -13.98 ms (-59.8%), interval -14.41 to -13.51 ms" in text
    # the paths the user typed name the two sides, not only the runs' sessions
    assert f"  before: {DEMO}  (run 02_input_bound/{SESSION}, host gpu-worker-0)" in text
    assert f"  after:  {DEMO}  (run 18_input_prefetched_after_02/{SESSION}, host gpu-worker-0)" in text
    # the savings are the step re-timed with the input wait gone (docs/whatif.md)
    assert "FIXED   input.bound" in text and "saving per step: 14.166 ms → 0.455 ms" in text
    code, md = out_of(args + ["--format", "markdown"])
    assert md.startswith("### GPU Advisor comparison: `02_input_bound/") and "| `input.bound` | **fixed** |" in md
    code, js = out_of(args + ["--format", "json"])
    assert json.loads(js)["schema"] == "tb-gpu-advisor/diff@2"
    # the gate: the fix passes, the reverse regresses, a run against itself passes
    assert out_of(args + ["--fail-on-regression", "5"])[0] == 0
    reverse = ["diff", DEMO, DEMO, "--run", "18_input_prefetched_after_02", "--new-run", "02_input_bound"]
    assert out_of(reverse + ["--fail-on-regression", "5"])[0] == 1
    err = capsys.readouterr().err
    assert "regression: mean step time 9.386 -> 23.368 ms (+149.0%, interval +13.510 to +14.420 ms)" in err
    assert "regression: input.bound: input wait 0.455 -> 14.428 ms per step (+13.510 ms beyond the noise" in err
    assert out_of(["diff", DEMO, DEMO, "--run", "02_input_bound", "--fail-on-regression", "0"])[0] == 0
    # files directly, and the errors
    f02 = os.path.join(DEMO, "02_input_bound", "plugins", "profile", SESSION, "gpu-worker-0.xplane.pb")
    f18 = os.path.join(DEMO, "18_input_prefetched_after_02", "plugins", "profile", SESSION, "gpu-worker-0.xplane.pb")
    assert out_of(["diff", f02, f18])[0] == 0
    assert out_of(["diff", DEMO, f18])[0] == 2
    assert "holds 39 profiles; name the before one with --run/--host" in capsys.readouterr().err
    assert out_of(["diff", f02, os.path.join(DEMO, "nope.xplane.pb")])[0] == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert out_of(["diff", f02, os.path.join(DEMO, "02_input_bound", "README.md")])[0] == 2
    assert "not a profile" in capsys.readouterr().err


def test_compare_route():
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=DEMO, multiplexer=None))
    c = test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    q = {
        "run": f"19_mixed_precision_after_08/{SESSION}",
        "host": "gpu-worker-0",
        "base_run": f"08_fp32_on_tensor_core_gpu/{SESSION}",
        "base_host": "gpu-worker-0",
    }
    r = c.get("/data/plugin/gpu_advisor/compare", query_string=q)
    assert r.status_code == 200
    d = json.loads(r.data)
    jsonschema.validate(d, {**SCHEMA, "$ref": "#/$defs/Diff"}, cls=jsonschema.Draft202012Validator)
    assert d["base"]["run"].startswith("08_") and d["new"]["run"].startswith("19_")
    assert d["summary"]["fixed"] == ["precision.mixed-off", "tensorcore.unused"]
    assert [x["id"] for x in d["checks"]] == ["input.bound", "precision.mixed-off", "tensorcore.unused"]
    again = c.get("/data/plugin/gpu_advisor/compare", query_string=q)
    assert again.data == r.data  # made once, served from memory
    every = json.loads(c.get("/data/plugin/gpu_advisor/compare", query_string={**q, "all_checks": "1"}).data)
    assert every["all_checks"] and len(every["checks"]) == len(d["checks"]) + d["summary"]["unchanged"]
    assert c.get("/data/plugin/gpu_advisor/compare", query_string={**q, "all_checks": "yes"}).status_code == 400
    r = c.get("/data/plugin/gpu_advisor/compare", query_string={**q, "base_run": "nope"})
    assert r.status_code == 404
    r = c.get("/data/plugin/gpu_advisor/compare", query_string={k: v for k, v in q.items() if k != "base_host"})
    assert r.status_code == 400
