"""The step without the profiler (a report's `step_model.step_ms`, docs/whatif.md) against the step timed
without the profiler, on every capture the tests hold with both (tests/data/gpu_pairs and
tests/data/gpu_validation: `timings.json`'s `unprofiled_ms`, the median round). Prints a row per capture
and the error's range for the two kinds of capture `diff` tells apart (report/compare.py,
STEP_MODEL_ERROR): GPU-bound with the profiler's cost under 1% of the captured step, and the others.

    .venv/bin/python scripts/step_model_error.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tb_gpu_advisor.formats.discovery import discover  # noqa: E402
from tb_gpu_advisor.report.engine import analyse_file  # noqa: E402
from tb_gpu_advisor.report.step import model_error  # noqa: E402

SETS = ("tests/data/gpu_pairs", "tests/data/gpu_validation")


def main() -> None:
    rows: dict[str, list[float]] = {}
    print("| capture | captured (ms) | without the profiler (ms) | timed (ms) | error | the profiler | bound |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for folder in SETS:
        with open(os.path.join(ROOT, folder, "timings.json")) as f:
            timings = json.load(f)
        for name in sorted(timings):
            path = os.path.join(ROOT, folder, name)
            if not os.path.isdir(path):
                continue
            (one,) = discover(path)[0]
            sm = analyse_file(one)[1]["step_model"]
            timed = timings[name]["unprofiled_ms"]
            err = 100 * (sm["step_ms"] / timed - 1)
            rows.setdefault(model_error(sm)["kind"], []).append(err)
            print(
                f"| `{name}` | {sm['captured_step_ms']:.2f} | {sm['step_ms']:.2f} | {timed:.2f} | {err:+.1f}% "
                f"| {sm['profiler_pct']:.1f}% | {sm['bound']} |"
            )
    print()
    for kind, errs in rows.items():
        print(
            f"{kind}: {len(errs)} captures, error {min(errs):+.1f}% to {max(errs):+.1f}%, "
            f"median |error| {statistics.median(abs(e) for e in errs):.1f}%"
        )


if __name__ == "__main__":
    main()
