"""The noise decision of `diff` on real captures made here with torch (CPU build): two captures of the
same program are unchanged (no status change, no regression, the step time within noise), and a real
before/after pair (a DataLoader whose samples take 1 ms each, then 0 ms) is called an improvement with
its interval. The shared GPU pair (num_workers 0 -> 4) is in tests/report/test_compare.py.

The repeated captures are two profiling cycles of one run (`schedule(..., repeat=2)`, a trace file
each, after 6 warm-up steps), a fraction of a second apart: the interval covers the steps' variation
within each capture, not a change of the machine's load between two captures made at different
times. On this shared 2-core machine, two processes run one after the other differed by 40% in mean
step time once (steps of 27 to 60 ms against 22 to 30 ms, measured while writing this test): a real
difference between those captures, which no test over their steps can call noise. One intra-op
thread (`--threads 1`) keeps the steps steadier here: with two, one capture had steps of 37 to 440 ms."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.disturbed import undisturbed

from tb_gpu_advisor.cli import main
from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.report.compare import compare, regressions
from tb_gpu_advisor.report.engine import analyse_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS = 8
DISTURBED = "other work on this machine disturbed every capture's steps"
PROGRAM = ["--steps", str(STEPS), "--threads", "1", "--skip-first", "6"]


def _capture(tmp_path_factory, name: str, *args: str) -> str:
    pytest.importorskip("torch")
    logdir = tmp_path_factory.mktemp(name)
    script = os.path.join(ROOT, "scripts", "capture_torch_cpu.py")
    subprocess.run([sys.executable, script, str(logdir), *PROGRAM, *args], check=True, capture_output=True, timeout=300)
    return str(logdir)


def _steady(path: str, within: float = 0.05) -> bool:
    """Whether the capture's steps were not disturbed by other work on the machine: their standard
    deviation within 5% of their mean (undisturbed here: 2 to 4%; disturbed: 7% with steps of 22 then
    27 ms once other work started, 34% with steps of 26 to 60 ms, at load averages of 4 to 7 on 2 cores)."""
    d = _analysed(path)[0].steps.dur_ps
    print(f"{path}: steps' stdev {100 * float(d.std() / d.mean()):.1f}% of their mean")
    return float(d.std()) < within * float(d.mean())


@pytest.fixture(scope="module")
def slow_loader(tmp_path_factory):
    """The same program captured twice (two profiling cycles): each sample takes 1 ms to load. -> the two
    trace files, in the order they were written. Captured again (five tries at most) while other work
    on the machine disturbs the steps: the noise decision is about the program, and a capture slowed by
    the machine is a different measurement of it."""

    def capture() -> list[str] | None:
        logdir = _capture(tmp_path_factory, "slow", "--slow-ms", "1", "--repeat", "2")
        files = sorted(discover(logdir)[0], key=lambda f: f.path)
        assert len(files) == 2 and files[0].run == files[1].run == "torch_cpu"
        return [f.path for f in files] if all(_steady(f.path) for f in files) else None

    return undisturbed(capture, 5, DISTURBED)


def _steady_capture(tmp_path_factory, name: str, *args: str) -> str:
    """A capture of one profiling cycle whose steps other work on the machine did not scatter (five
    tries at most): in a fresh clone's full run a pair once came out so spread that 17 ms less input
    wait a step was called "same" (alone, "faster"). Their stdev within 20% of their mean: the 0 ms
    loader's short steps vary by 7-14% on an idle machine, 70% when other work runs."""

    def capture() -> str | None:
        logdir = _capture(tmp_path_factory, name, *args)
        return logdir if _steady(logdir, 0.2) else None

    return undisturbed(capture, 5, DISTURBED)


@pytest.fixture(scope="module")
def slow_once(tmp_path_factory):
    return _steady_capture(tmp_path_factory, "slow_once", "--slow-ms", "1")


@pytest.fixture(scope="module")
def fast_loader(tmp_path_factory):
    return _steady_capture(tmp_path_factory, "fast", "--slow-ms", "0")


def _analysed(path: str):
    """A logdir with one trace, or a trace file."""
    if os.path.isfile(path):
        from tb_gpu_advisor.serve.selection import pick

        (f,) = pick(path, None, None, "before")
        return analyse_file(f)
    (f,) = discover(path)[0]
    return analyse_file(f)


def test_repeated_captures_of_one_program_are_unchanged(slow_loader, capsys):
    base, new = (_analysed(x) for x in slow_loader)
    d = compare(base, new, all_checks=True)  # the unchanged checks listed too: input.bound is one
    assert d["steps"]["base"]["count"] == d["steps"]["new"]["count"] == STEPS
    # 16 samples of 1 ms each: the step waits about 17 ms for input in both captures, critical in both
    ib = next(c for c in d["checks"] if c["id"] == "input.bound")
    assert (ib["base_status"], ib["new_status"]) == ("critical", "critical")
    # its share of the step moves with the rest of the step (a cycle 12% shorter with the same wait put
    # it up 7.6 points): the check is judged by its time, the wait, which did not move beyond the noise
    assert ib["verdict"] == "unchanged"
    t = ib["time"]
    assert abs(t["delta_ms"]) < 1.0 and t["base_ms"] > 15 and t["new_ms"] > 15, t
    assert t["grown_ms"] is None and not t["cut"]
    # nothing called: no check fixed, new, worse or better, the step time within noise, no regression
    assert {k: d["summary"][k] for k in ("fixed", "new", "worse", "better")} == {
        "fixed": [],
        "new": [],
        "worse": [],
        "better": [],
    }, d["summary"]
    # the mean step of two cycles of one process can drift apart by more than the steps' own spread
    # (in one run under load the second was 10.8% faster, stdev 0.6 ms: "faster", rightly so for those
    # captures; compare.py's docstring has the drift measured here). A gate with a margin above that
    # drift calls no regression.
    assert abs(d["steps"]["delta_pct"]) < 15, d["steps"]
    assert regressions(d, 15) == []
    assert main(["diff", *slow_loader, "--fail-on", "15"]) == 0
    out = capsys.readouterr().out
    if d["summary"]["step"] == "same" or ib["within_noise"]:
        assert "unchanged (within noise)" in out


def test_a_real_improvement_is_called_with_its_interval(slow_once, fast_loader, capsys):
    """1 ms per sample -> 0 ms: about 17 ms less input wait per step, beyond any noise of the steps."""
    d = compare(_analysed(slow_once), _analysed(fast_loader))
    s = d["steps"]
    assert d["summary"]["step"] == "faster" and s["significant"] is True
    lo, hi = s["interval_ms"]
    assert lo <= s["delta_ms"] <= hi < -5, s  # the whole interval is more than 5 ms faster
    ib = next(c for c in d["checks"] if c["id"] == "input.bound")
    assert ib["base_status"] == "critical" and ib["verdict"] in ("fixed", "better")
    t = ib["time"]
    assert t["cut"] and t["delta_ms"] < -10 and t["interval_ms"][1] < -10, t
    assert main(["diff", slow_once, fast_loader, "--format", "json", "--fail-on", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"]["interval_ms"] == pytest.approx(s["interval_ms"])  # the same seed, the same interval
    # the reverse is a regression: the whole interval is above +5% of the step
    assert main(["diff", fast_loader, slow_once, "--fail-on", "5"]) == 1
    assert "regression: mean step time" in capsys.readouterr().err
