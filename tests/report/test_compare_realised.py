"""Predicted against realised in `diff` (report/realised.py through report/compare.py): where the run after
a change no longer has findings of the run before, the saving the before-run predicted for their fixes
beside what the step did, both steps without the profiler, in the text, the markdown and the JSON (what
the MCP tool and the tab's route answer), on real H200 pairs each also timed without the profiler
(tests/data/gpu_pairs, gpu_validation: their timings.json).

Every pair here is held out (tests/support/pairs.py: no constant of the what-if models was fitted on
it): the DataLoader's workers (loader_w0 → loader_w4), bf16 autocast with channels_last on ResNet-50 at
batch 256 (rn50_b256_fp32 → rn50_b256_bf16), bf16 on ViT (gpu_validation's vit_fp32 → vit_bf16), the
syncs taken out of a host-bound ResNet-50 (rn50_b64_sync → rn50_b64_fp32) and torch.compile on GPT-2
(gpt2_bf16 → gpt2_bf16_compile). The last two are captures whose steps without the profiler the model
knows only to within its measured error: the line says it cannot tell, rather than judging the
prediction wrong where the steps timed without the profiler say it was right."""

from __future__ import annotations

import json
import os

import pytest
from support.pairs import HELD_OUT
from support.step_graphs import analysed, run_path

from tb_gpu_advisor.cli import main
from tb_gpu_advisor.report.compare import compare
from tb_gpu_advisor.report.step import model_error

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")


def timed_saving(folder: str, before: str, after: str) -> float:
    """The saving the fix realised as timed without the profiler (timings.json: each run's median round)."""
    with open(os.path.join(DATA, folder, "timings.json")) as f:
        t = json.load(f)
    return t[before]["unprofiled_ms"] - t[after]["unprofiled_ms"]


def run_diff(capsys, *argv: str) -> str:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), (code, err)
    return out


def held_out(before: str, after: str) -> bool:
    return any(p.before == before and p.after == after for p in HELD_OUT)


# (folder, before, after, the findings gone, the change simulated, the line the text prints)
JUDGED = [
    (
        "gpu_pairs",
        "loader_w0",
        "loader_w4",
        ["input.bound"],
        "input",
        "predicted against realised: input.bound gone: input predicted to save 26.2 ms a step (21.8–31.6), "
        "realised 26.7 (33.0 → 6.4 ms, both without the profiler): inside the range",
    ),
    (
        "gpu_pairs",
        "rn50_b256_fp32",
        "rn50_b256_bf16",
        ["layout.channels-last", "precision.mixed-off"],
        "bf16+channels_last",
        "predicted against realised: layout.channels-last, precision.mixed-off gone: bf16+channels_last "
        "predicted to save 61.1 ms a step (55.5–67.9), realised 61.6 (116.2 → 54.6 ms, both without the "
        "profiler): inside the range",
    ),
    (
        "gpu_validation",
        "vit_fp32",
        "vit_bf16",
        ["precision.mixed-off"],
        "bf16",
        "predicted against realised: precision.mixed-off gone: bf16 predicted to save 140.0 ms a step "
        "(127.3–155.5), realised 134.3 (165.0 → 30.7 ms, both without the profiler): inside the range",
    ),
]


@pytest.mark.parametrize("folder,before,after,findings,change,line", JUDGED, ids=[f"{x[1]}-{x[2]}" for x in JUDGED])
def test_the_line_shows_the_prediction_its_range_and_what_the_step_did(
    folder, before, after, findings, change, line, capsys
):
    """The text prints the line under the step's verdict, the markdown the same line escaped, the JSON the
    numbers; each number checked here against the two reports by hand: the prediction and its range are
    the before-run's what-if (the finding's own, or its fixes simulated together where two are gone), the
    realised saving the change of the two reports' steps without the profiler."""
    assert held_out(before, after)
    a, b = run_path(folder, before), run_path(folder, after)
    text = run_diff(capsys, a, b).splitlines()
    assert f"  {line}" in text
    # beside the step's verdict: after it and the steps without the profiler, before the checks
    at = text.index(f"  {line}")
    assert text[at - 3].startswith("  verdict: ") and text[at + 1].startswith("  checks: ")
    markdown = run_diff(capsys, a, b, "--format", "markdown")
    escaped = line[0].upper() + line[1:].replace("_", "\\_")
    assert f"\n{escaped}.\n" in markdown

    d = json.loads(run_diff(capsys, a, b, "--format", "json"))
    r = d["realised"]
    (mb, rb), (_, ra) = analysed(folder, before), analysed(folder, after)
    assert r["findings"] == findings and r["change"] == change
    # the prediction and the range it stated: the finding's own what-if, or its fixes simulated together
    if len(findings) == 1:
        (f,) = [f for f in rb["checks"] if f["id"] == findings[0]]
        w = f["whatif"]
        predicted, low, high = w["saving_ms"], w["saving_low_ms"], w["saving_high_ms"]
    else:
        p = mb.predict(change)
        predicted, low, high = p.saving_ps / 1e9, p.low_ps / 1e9, p.high_ps / 1e9
    assert r["predicted_ms"] == pytest.approx(predicted, abs=1e-4)
    assert (r["low_ms"], r["high_ms"]) == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))
    # what the step did: each report's step without the profiler
    sb, sa = rb["step_model"]["step_ms"], ra["step_model"]["step_ms"]
    assert (r["before_step_ms"], r["after_step_ms"]) == (pytest.approx(sb, abs=1e-4), pytest.approx(sa, abs=1e-4))
    assert r["realised_ms"] == pytest.approx(sb - sa, abs=1e-3)
    assert r["error_pct"] == pytest.approx(100 * (predicted - (sb - sa)) / (sb - sa), abs=0.06)
    assert r["inside"] is True and low <= sb - sa <= high
    # the realised saving's range each step's measured error allows (the timed step = the model's / (1 + e))
    eb, ea = model_error(rb["step_model"]), model_error(ra["step_model"])
    lo = sb / (1 + eb["high_pct"] / 100) - sa / (1 + ea["low_pct"] / 100)
    hi = sb / (1 + eb["low_pct"] / 100) - sa / (1 + ea["high_pct"] / 100)
    assert r["realised_interval_ms"] == [pytest.approx(lo, abs=1e-3), pytest.approx(hi, abs=1e-3)]
    # and the judgement is the one the steps timed without the profiler give: inside the range
    assert low <= timed_saving(folder, before, after) <= high
    assert r["sentence"] == line.removeprefix("predicted against realised: ")


UNTOLD = [
    (
        "gpu_pairs",
        "rn50_b64_sync",
        "rn50_b64_fp32",
        "predicted against realised: steps.syncs gone: syncs predicted to save 0.78 ms a step (0.32–3.27), "
        "realised 0.06 (33.15 → 33.09 ms, both without the profiler): cannot tell, the model's measured error "
        "allows a realised -26.18 to +26.30 ms",
    ),
    (
        "gpu_pairs",
        "gpt2_bf16",
        "gpt2_bf16_compile",
        "predicted against realised: tensorcore.dims, xla.off gone: compile predicted to save 14.8 ms a step "
        "(10.2–26.9), realised -0.6 (40.9 → 41.5 ms, both without the profiler): cannot tell, the model's "
        "measured error allows a realised -17.9 to +15.6 ms",
    ),
]


@pytest.mark.parametrize("folder,before,after,line", UNTOLD, ids=[f"{x[1]}-{x[2]}" for x in UNTOLD])
def test_where_the_steps_without_the_profiler_cannot_tell_the_line_says_so(folder, before, after, line, capsys):
    """The profiler costs 12.04 ms of rn50_b64_fp32's captured step and 9.92 ms of gpt2_bf16_compile's, a
    host-bound step the model knows only to within -28.6% to +64.4%: the change of the two steps without
    the profiler could be of either sign (the step's verdict is uncertain). The model's realised saving
    lies outside the stated range, yet the steps timed without the profiler realised 2.32 and 15.45 ms,
    inside it: "outside the range" would have blamed a prediction that came true. The line gives the
    range the error allows instead, which holds the timed saving."""
    assert held_out(before, after)
    a, b = run_path(folder, before), run_path(folder, after)
    assert f"  {line}\n" in run_diff(capsys, a, b)
    r = json.loads(run_diff(capsys, a, b, "--format", "json"))["realised"]
    assert r["inside"] is None
    assert not r["low_ms"] <= r["realised_ms"] <= r["high_ms"]  # the estimate alone would read "outside"
    timed = timed_saving(folder, before, after)
    assert r["low_ms"] <= timed <= r["high_ms"]
    lo, hi = r["realised_interval_ms"]
    assert lo < 0 < hi and lo <= timed <= hi
    d = compare(analysed(folder, before), analysed(folder, after))
    assert d["verdict"]["verdict"] == d["apart"]["verdict"] == "uncertain"


def test_no_finding_gone_no_line(capsys):
    """TF32 on GPT-2 (gpt2_fp32 → gpt2_tf32): no finding of the run before simulated that fix, and every one
    that simulated another (autocast, torch.compile, fusing the small kernels) still fires after it:
    nothing to set against a prediction. The JSON's field is null and no format prints the line."""
    a, b = run_path("gpu_pairs", "gpt2_fp32"), run_path("gpu_pairs", "gpt2_tf32")
    assert "predicted against realised" not in run_diff(capsys, a, b)
    assert "Predicted against realised" not in run_diff(capsys, a, b, "--format", "markdown")
    assert json.loads(run_diff(capsys, a, b, "--format", "json"))["realised"] is None


def test_a_job_diff_carries_it_in_its_median_rank(capsys):
    """The V100 DataLoader pair, two profiling cycles a side, compared as jobs: the median rank's comparison
    has the line (input.bound gone), in the JSON and in the text; both of its steps are host-bound, known
    without the profiler only to within the model's -28.6% to +64.4%, so it cannot tell."""
    a, b = run_path("pytorch", "resnet50_num_workers_0"), run_path("pytorch", "resnet50_num_workers_4")
    d = json.loads(run_diff(capsys, a, b, "--format", "json"))
    r = d["median"]["realised"]
    assert r["findings"] == ["input.bound"] and r["change"] == "input" and r["inside"] is None
    assert f"  predicted against realised: {r['sentence']}\n" in run_diff(capsys, a, b)
