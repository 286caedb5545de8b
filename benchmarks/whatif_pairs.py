"""Print docs/whatif.md's tables: every real before/after pair, its what-if and what the fix realised.

    PYTHONPATH=. python benchmarks/whatif_pairs.py

The pairs and their changes are the ones tests/graph/test_whatif.py checks (imported from it), so the
tables and the test cannot drift apart."""

from __future__ import annotations

import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
_spec = importlib.util.spec_from_file_location("test_whatif", os.path.join(ROOT, "tests", "graph", "test_whatif.py"))
assert _spec and _spec.loader
t = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(t)


def _triples(params) -> list[tuple[str, str, str]]:
    return [tuple(p.values) if hasattr(p, "values") else tuple(p) for p in params]


def _unprofiled(title: str, folder: str, timings: dict, params) -> None:
    print(f"\n{title}\n")
    print(
        "| before → after | what-if | predicted saving (ms) | realised (ms) | error | new step predicted / timed (ms) | bound before → after |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for before, after, change in _triples(params):
        w = t.loaded(t._files(os.path.join(folder, before))[0]).what_if
        pr = w.predict(change)
        realised = timings[before]["unprofiled_ms"] - timings[after]["unprofiled_ms"]
        noise = sum((max(timings[r]["rounds_ms"]) - min(timings[r]["rounds_ms"])) / 2 for r in (before, after))
        predicted = pr.saving_ps / 1e9
        off = predicted - realised
        if abs(off) <= t.TOLERANCE * abs(realised):
            err = f"{off / realised:+.0%}"
        elif abs(off) <= noise:
            err = "within noise"
        else:
            err = f"**{off / realised:+.0%}: a miss**"
        print(
            f"| `{before}` → `{after}` | {change} | {predicted:.2f} | {realised:.2f} (±{noise:.2f}) | {err} | "
            f"{pr.new_step_ps / 1e9:.2f} / {timings[after]['unprofiled_ms']:.2f} | {pr.bound} → {pr.new_bound} |"
        )


def _captured() -> None:
    print("\nPairs of captures on an H100 (tests/data/gpu; the profiler's cost kept, as in both captures):\n")
    print("| before → after | what-if | predicted change (ms) | measured (ms) | error |")
    print("| --- | --- | --- | --- | --- |")
    for before, after, change in _triples(t.CAPTURED_PAIRS):
        w = t.loaded(t._files(os.path.join(t.GPU_DIR, before))[0]).what_if
        pr = w.predict(change, profiled=True)
        realised = t._mean_step(os.path.join(t.GPU_DIR, before)) - t._mean_step(os.path.join(t.GPU_DIR, after))
        predicted = pr.saving_ps / 1e9
        print(
            f"| `{before}` → `{after}` | {change} | {predicted:.2f} | {realised:.2f} | {(predicted - realised) / realised:+.0%} |"
        )


def _v100() -> None:
    print("\nThe shared V100 pair (DataLoader workers 0 → 4), each span of the 0-worker run:")
    for f in t._files(os.path.join(t.V100_DIR, "resnet50_num_workers_0")):
        pr = t.loaded(f).what_if.predict("input", profiled=True)
        print(f"  {os.path.basename(f)}: saving {pr.saving_ps / 1e9:.1f} ms, new step {pr.new_step_ps / 1e9:.1f} ms")


def main() -> None:
    _unprofiled("Real pairs on an H200 (tests/data/gpu_pairs):", t.PAIRS_DIR, t.TIMINGS, t.UNPROFILED_PAIRS)
    _captured()
    _v100()
    _unprofiled("Pairs kept apart (tests/data/gpu_validation):", t.VALIDATION_DIR, t.VALIDATION, t.HELD_OUT_PAIRS)


if __name__ == "__main__":
    main()
