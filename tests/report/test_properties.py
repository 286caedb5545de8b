"""Property-based tests (hypothesis): profiles with any mix of idle, copy-only, compute-only and
collective-only GPUs, missing stats, single events, zero durations and odd timings; every check runs
on each with no exception, no NaN or infinity in the report, every status known, and no estimated
saving beyond its step."""

import json
import math

from hypothesis import HealthCheck, given, settings
from support.hypothesis_profiles import profiles

from tb_gpu_advisor.checks import run_checks
from tb_gpu_advisor.checks.findings import STATUSES
from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report import report_json


def _finite(x) -> bool:
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    if isinstance(x, list):
        return all(_finite(v) for v in x)
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profiles())
def test_every_check_on_any_profile(w):
    p = read_profile_bytes(w.to_bytes(), "prop.xplane.pb", "h")
    a = analyse(p)
    findings, errors = run_checks(Measures(a))
    assert errors == [], errors
    report = report_json("r", "h", a.summary(), findings, errors)
    json.dumps(report, allow_nan=False)  # no NaN or infinity anywhere
    assert _finite(report)
    for f in findings:
        assert f.status in STATUSES
        if f.saving_ms is not None:
            assert f.saving_ms >= 0
            assert f.saving_pct is None or f.saving_pct <= 100 + 1e-6, (f.id, f.saving_pct)
    for g in a.gpus.values():  # the breakdown adds up, and nothing is negative
        assert (g.breakdown_ps >= 0).all() and (g.breakdown_ps.sum(axis=1) == g.steps.dur_ps).all()
