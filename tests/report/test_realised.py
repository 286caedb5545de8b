"""Predicted against realised (report/realised.py), on real before/after pairs captured on an H200
(tests/data/gpu_pairs, gpu_validation): the findings the after-run no longer has, their fixes predicted
together on the before-run, beside the change of the two steps without the profiler."""

from __future__ import annotations

import os

import pytest
from support.step_graphs import PAIRS_DIR, VALIDATION_DIR

from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.report.engine import analyse_file
from tb_gpu_advisor.report.realised import realised


def _analysed(folder: str, run: str):
    files, _ = discover(os.path.join(folder, run))
    assert len(files) == 1
    return analyse_file(files[0])


def _pair(folder: str, before: str, after: str):
    m, b = _analysed(folder, before)
    _, a = _analysed(folder, after)

    def predict(change: str) -> dict | None:
        pr = m.predict(change)
        return pr.to_json() if pr is not None else None

    return b, a, predict


@pytest.mark.parametrize(
    "folder,before,after,findings,change",
    [
        # bf16 autocast and channels_last at once: both findings gone, predicted together
        (
            PAIRS_DIR,
            "rn50_b256_fp32",
            "rn50_b256_bf16",
            ("layout.channels-last", "precision.mixed-off"),
            "bf16+channels_last",
        ),
        (VALIDATION_DIR, "vit_fp32", "vit_bf16", ("precision.mixed-off",), "bf16"),
        (PAIRS_DIR, "loader_w0", "loader_w4", ("input.bound",), "input"),
    ],
)
def test_a_fix_the_after_run_made_shows_its_prediction_beside_what_the_step_did(
    folder, before, after, findings, change
):
    b, a, predict = _pair(folder, before, after)
    r = realised(b, a, predict)
    assert r is not None
    assert set(findings) <= set(r.findings) and r.change == change
    # both steps without the profiler, each from its own report
    assert r.before_step_ms == b["step_model"]["step_ms"] and r.after_step_ms == a["step_model"]["step_ms"]
    assert r.realised_ms == pytest.approx(b["step_model"]["step_ms"] - a["step_model"]["step_ms"])
    assert r.low_ms <= r.predicted_ms <= r.high_ms
    # on these pairs the prediction came true: inside its range, within 25%
    assert r.inside, r.sentence
    assert abs(r.error_pct) <= 25, r.sentence
    j = r.to_json()
    assert j["inside"] is True and j["profiler"] == ["capture", "capture"] and change in j["sentence"]


def test_one_finding_gone_needs_no_simulation_and_several_need_one():
    b, a, _ = _pair(PAIRS_DIR, "rn50_b256_fp32", "rn50_b256_bf16")
    assert realised(b, a) is None  # two fixes at once: their saving together is not the sum of each alone
    vb, va, _ = _pair(VALIDATION_DIR, "vit_fp32", "vit_bf16")
    r = realised(vb, va)
    finding = next(f for f in vb["checks"] if f["id"] == "precision.mixed-off")
    assert r is not None and r.predicted_ms == pytest.approx(finding["saving_ms"], abs=1e-3)


def test_nothing_gone_nothing_to_compare():
    """The same run on both sides: no finding of the before-run is gone."""
    b, _, _ = _pair(PAIRS_DIR, "rn50_b64_fp32", "rn50_b64_fp32")
    assert realised(b, b) is None
