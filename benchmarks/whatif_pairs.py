"""Print docs/whatif.md's tables: every real before/after pair, its what-if and what the fix realised;
the held-out pairs (no constant fitted on them) with each saving's stated range, and with the models'
errors and the profiler's spread refitted without the pair (leave-one-out), and again with the
before-run's step time logged beside it; the fitted pairs with their constants as fitted and refitted
without them; the profiler's cost, capture by capture; and the host's pace.

    PYTHONPATH=. python benchmarks/whatif_pairs.py                # the pairs' tables
    PYTHONPATH=. python benchmarks/whatif_pairs.py --profiler     # the profiler's cost per timed capture
    PYTHONPATH=. python benchmarks/whatif_pairs.py --wrappers     # the compiled model's wrappers' host time
    PYTHONPATH=. python benchmarks/whatif_pairs.py --pace         # the host's pace (HOST_PACE)

The pairs are tests/support/pairs.py's, which tests/graph/test_whatif.py grades, so the tables and the
tests cannot drift apart."""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from support import pairs as P  # noqa: E402
from support.step_graphs import capture_files, loaded  # noqa: E402

from tb_gpu_advisor.graph import profiler  # noqa: E402
from tb_gpu_advisor.graph.fixes import ERRORS, MIN_ERROR  # noqa: E402
from tb_gpu_advisor.measures import Measures  # noqa: E402


def _test_module():
    spec = importlib.util.spec_from_file_location("test_whatif", os.path.join(ROOT, "tests", "graph", "test_whatif.py"))
    assert spec and spec.loader
    t = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t)
    return t


def _err(g: P.Graded) -> str:
    if g.withheld:
        return "withheld"
    off = g.predicted - g.realised
    if abs(off) <= P.TOLERANCE * abs(g.realised):
        return f"{off / g.realised:+.0%}"
    if abs(off) <= g.noise:
        return "within noise"
    return f"**{off / g.realised:+.0%}: a miss**"


def loo(pair: P.Pair) -> P.Graded:
    """The pair graded with the models' errors and the profiler's spread refitted without it."""
    errors = P.held_out_errors(leave_out=pair)
    refit = {c: max(errors.get(c, P.TOLERANCE), MIN_ERROR) for c in pair.change.split("+")}
    with P.constants(spread=P.spread(leave_out=(pair.before, pair.after)), errors=refit):
        return P.grade(pair)


def held_out() -> None:
    print("\nHeld-out pairs (no constant fitted on them), each saving with its stated range:\n")
    print(
        "| before → after | what-if | predicted (ms) | range | realised (ms) | error | in range | "
        "leave-one-out range | in it | new step predicted / timed (ms) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for p in P.HELD_OUT:
        g, lg = P.grade(p), loo(p)
        rows.append((g, lg))
        print(
            f"| `{p.before}` → `{p.after}` | {p.change} | {g.predicted:.2f} | {g.low:.2f}–{g.high:.2f} | "
            f"{g.realised:.2f} (±{g.noise:.2f}) | {_err(g)} | {'yes' if g.inside else '**no**'} | "
            f"{lg.low:.2f}–{lg.high:.2f} | {'yes' if lg.inside else '**no**'} | "
            f"{g.new_step:.2f} / {p.timed_after():.2f} |"
        )
    n = len(rows)
    print(
        f"\nWithin 25% (or the pair's noise): {sum(g.within for g, _ in rows)} of {n}; the realised saving "
        f"inside its stated range: {sum(g.inside for g, _ in rows)} of {n}; inside the leave-one-out range: "
        f"{sum(lg.inside for _, lg in rows)} of {n}."
    )
    errors = P.held_out_errors()
    print("\nEach model's largest error on its held-out pairs (graph/fixes' ERROR):")
    for c in sorted(errors):
        print(f"  {c}: {errors[c]:.0%} (stated: {ERRORS[c]:.0%})")


def logged() -> None:
    """The held-out pairs as a user who logs the step time gets them (tests/support/pairs.py's
    grade_logged: the before-run copied with its timed rounds logged as `step_time_ms` beside it)."""
    print(
        "\nThe same held-out pairs with the before-run's step time logged (`step_time_ms`: each timed round's "
        "mean step, written with SummaryWriter beside a copy of the capture; the profiler's basis `logged`):\n"
    )
    print("| before → after | what-if | predicted (ms) | range | realised (ms) | error | in range |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for i, p in enumerate(P.HELD_OUT):
            g = P.grade_logged(p, os.path.join(d, str(i)))
            rows.append(g)
            print(
                f"| `{p.before}` → `{p.after}` | {p.change} | {g.predicted:.2f} | {g.low:.2f}–{g.high:.2f} | "
                f"{g.realised:.2f} (±{g.noise:.2f}) | {_err(g)} | {'yes' if g.inside else '**no**'} |"
            )
    n = len(rows)
    print(
        f"\nWithin 25% (or the pair's noise): {sum(g.within for g in rows)} of {n}; the realised saving inside "
        f"its stated range: {sum(g.inside for g in rows)} of {n}."
    )


def fitted() -> None:
    print("\nFitted pairs (a constant was set from them), with the constant as fitted and refitted without:\n")
    print(
        "| before → after | what-if | fitted on it | predicted (ms) | without it (ms) | realised (ms) | error | without it |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for p in P.FITTED:
        g = P.grade(p)
        if "replay" in p.fitted or "XSpace" in p.fitted:
            lg = g  # a single capture set it: nothing to refit it from
        else:  # the profiler's per-event cost: the median of the others' fitted multiples
            others = [
                k for r in P.PROFILER_FITTED if r not in (p.before, p.after) and (k := P.fitted_scale("pairs", r))
            ]
            with P.constants(scale=statistics.median(others) if others else 1.0):
                lg = P.grade(p)
        print(
            f"| `{p.before}` → `{p.after}` | {p.change} | {p.fitted} | {g.predicted:.2f} | {lg.predicted:.2f} | "
            f"{g.realised:.2f} (±{g.noise:.2f}) | {_err(g)} | {_err(lg)} |"
        )


def captured() -> None:
    t = _test_module()
    print("\nPairs of captures on an H100 (tests/data/gpu; the profiler's cost kept, as in both captures):\n")
    print("| before → after | what-if | predicted change (ms) | measured (ms) | error |")
    print("| --- | --- | --- | --- | --- |")
    for before, after, change in t.CAPTURED_PAIRS:
        w = loaded(capture_files(os.path.join(t.GPU_DIR, before))[0]).what_if
        pr = w.predict(change, profiled=True)
        realised = t._mean_step(os.path.join(t.GPU_DIR, before)) - t._mean_step(os.path.join(t.GPU_DIR, after))
        predicted = pr.saving_ps / 1e9
        print(
            f"| `{before}` → `{after}` | {change} | {predicted:.2f} | {realised:.2f} | {(predicted - realised) / realised:+.0%} |"
        )
    print("\nThe shared V100 pair (DataLoader workers 0 → 4), each span of the 0-worker run:")
    for f in capture_files(os.path.join(t.V100_DIR, "resnet50_num_workers_0")):
        pr = loaded(f).what_if.predict("input", profiled=True)
        print(f"  {os.path.basename(f)}: saving {pr.saving_ps / 1e9:.1f} ms, new step {pr.new_step_ps / 1e9:.1f} ms")


def profiler_table() -> None:
    print("\nThe profiler's cost, each capture with its step timed without the profiler:\n")
    print(
        "| capture | profiler's share of the captured step | step without it: modelled (the report's range) / "
        "timed (ms) | error | within 10% or in range | the constants' multiple that fits |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for f, r in P.timed_runs():
        w = P.what_if(os.path.join(P.FOLDERS[f], r))
        timed = P.TIMINGS[f][r]["unprofiled_ms"]
        rounds = P.TIMINGS[f][r]["rounds_ms"]
        noise = (max(rounds) - min(rounds)) / 2
        # the report's range (report/whatif.py): the cost's range, widened by the step spread's
        _, a, _, _ = loaded(capture_files(os.path.join(P.FOLDERS[f], r))[0])
        half = (Measures(a).step_spread.half_range_ps or 0.0) / 1e9
        lo, hi = (x / 1e9 for x in w.step_range_ps())
        lo, hi = max(lo - half, 0.0), hi + half
        base = w.base.period_ps / 1e9
        k = P.fitted_scale(f, r)
        share = P.profiler_share(f, r)
        err = (base - timed) / timed
        inside = lo - noise <= timed <= hi + noise
        print(
            f"| `{r}` | {share:.0%} | {base:.2f} ({lo:.2f}–{hi:.2f}) / {timed:.2f} (±{noise:.2f}) | {err:+.1%} | "
            f"{'yes' if inside or abs(err) <= 0.1 else '**no**'} | {'—' if k is None else f'{k:.2f}'} |"
        )
    print(f"\nThe spread over captures where the profiler costs {P.SPREAD_SHARE:.0%} of the step or more: {P.spread()}")
    print(f"(graph/profiler.py's COST_SPREAD: {profiler.COST_SPREAD})")


def wrappers() -> None:
    """The compiled model's wrappers' own host time (graph/fixes/reduce_overhead.py), per parameter."""
    path = capture_files(os.path.join(P.FOLDERS["pairs"], "gpt2_bf16_compile"))[0]
    p, _, g, _ = loaded(path)
    host, names = p.host_events(), p.names.strings
    st, en = host.start_ps, host.start_ps + host.dur_ps

    def rows(prefix: str) -> np.ndarray:
        ids = [i for i, n in enumerate(names) if n.startswith(prefix)]
        return np.flatnonzero(np.isin(host.name, ids) & (st >= g.window[0]) & (st < g.window[1]))

    params = len(rows("torch::autograd::AccumulateGrad")) / g.steps
    print(f"gpt2_bf16_compile: {params:.0f} parameters a step")
    inner = rows("## Call CompiledFxGraph")
    for outer in ("Torch-Compiled Region", "autograd::engine::evaluate_function: CompiledFunctionBackward"):
        own = []
        for o in rows(outer):
            inside = inner[(st[inner] >= st[o]) & (en[inner] <= en[o]) & (host.thread[inner] == host.thread[o])]
            own.append((host.dur_ps[o] - host.dur_ps[inside].sum()) / 1e9)
        mean = statistics.fmean(own)
        print(f"  {outer}: {mean:.3f} ms a call outside its compiled graph, {mean / params * 1e3:.2f} µs a parameter")


def pace() -> None:
    """The host's pace without the profiler, before and after a capture in one process (HOST_PACE)."""
    print("\nThe host's work of a step without the profiler, after a capture over before it, in one process:\n")
    print("| file | run | after / before |")
    print("| --- | --- | --- |")
    for f, r, ratio in P.host_paces():
        print(f"| `{f}` | `{r}` | {ratio:.2f} |")
    print(f"\nThe range: {P.host_pace()} (graph/profiler.py's HOST_PACE: {profiler.HOST_PACE})")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiler", action="store_true", help="the profiler's cost per timed capture")
    ap.add_argument("--wrappers", action="store_true", help="the compiled model's wrappers' host time")
    ap.add_argument("--pace", action="store_true", help="the host's pace without the profiler, minutes apart")
    args = ap.parse_args(argv)
    if args.pace:
        pace()
        return
    if args.profiler:
        profiler_table()
        return
    if args.wrappers:
        wrappers()
        return
    held_out()
    logged()
    fitted()
    captured()


if __name__ == "__main__":
    main()
