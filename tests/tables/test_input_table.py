"""The input table on PyTorch (tb_gpu_advisor/tables/input_table.py, measures/input.py `loader_input`):
the DataLoader's `__next__` waits per step, worker processes or not, the batch's host-to-device copies
and whether the step waits on them, the pin-memory thread. Each number against a count made here from
the raw trace JSON: on DataLoader runs captured in the test with torch on the CPU (0 and 4 workers),
on the real V100 ResNet-50 pair (tests/data/pytorch) and on the H200 pair (tests/data/gpu_pairs)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

from tb_gpu_advisor import tables
from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report.engine import read_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")


def table_of(f) -> dict:
    return tables.answer(tables.build(Measures(analyse(read_file(f))), "input"))


class Raw:
    """The trace's complete events, read here without the advisor."""

    def __init__(self, path: str) -> None:
        with (gzip.open if path.endswith(".gz") else open)(path, "rt") as fh:
            doc = json.load(fh)
        self.events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
        self.steps = sorted(
            (e["ts"], e["ts"] + e["dur"])
            for e in self.events
            if e["name"].startswith("ProfilerStep#") and e.get("cat") in ("user_annotation", "Operator", "cpu_op")
        )

    def named(self, test) -> list[dict]:
        return [e for e in self.events if test(e["name"])]

    def in_step(self, events: list[dict]) -> list[float]:
        """Per step, the time (µs) of the events that start in it, as the ProfilerStep markers bound it."""
        return [sum(e["dur"] for e in events if a <= e["ts"] < b) for a, b in self.steps]


def check_row(row: dict, events: list[dict], raw: Raw) -> None:
    """A row's calls, total and per-step times are its events' counted from the raw JSON."""
    per_step = raw.in_step(events)
    assert row["calls"] == len(events)
    assert row["total_us"] == pytest.approx(sum(e["dur"] for e in events), abs=0.01)
    assert row["per_step_us"] == pytest.approx(sum(per_step) / len(raw.steps), abs=0.01)
    assert row["max_step_us"] == pytest.approx(max(per_step), abs=0.01)


def loader_next(name: str) -> bool:
    return "DataLoader" in name and name.endswith("__next__")


@pytest.fixture(scope="module")
def cpu_captures(tmp_path_factory):
    """A DataLoader run captured with torch on the CPU, with 0 and with 4 worker processes (3 profiled
    steps, one torch thread, 2 ms to load each sample, so that the loader without workers waits)."""
    pytest.importorskip("torch")
    logdir = tmp_path_factory.mktemp("loader")
    script = os.path.join(ROOT, "scripts", "capture_torch_cpu.py")
    for workers in (0, 4):
        subprocess.run(
            [sys.executable, script, str(logdir), "--run", f"w{workers}", "--workers", str(workers)]
            + ["--steps", "3", "--threads", "1", "--slow-ms", "2"],
            check=True,
            timeout=600,
        )
    found, _ = discover(str(logdir))
    return {f.run: f for f in found}


@pytest.mark.parametrize("workers", [0, 4])
def test_a_real_cpu_dataloader_capture(cpu_captures, workers):
    """Without a GPU the rows are the DataLoader's `__next__` waits: calls, total, per step and the
    largest step's as counted from the raw JSON, all of the wait in the steps waited on (the loop
    stops for it); the loader's class says whether it has workers; no copy, no pinned memory."""
    f = cpu_captures[f"w{workers}"]
    raw, doc = Raw(f.path), table_of(f)
    assert len(raw.steps) == 3
    (row,) = doc["rows"]
    waits = raw.named(loader_next)
    assert len(waits) >= 3 and {e["name"] for e in waits} == {row["stage"]}
    check_row(row, waits, raw)
    assert row["part"] == "wait" and row["waited_us"] == pytest.approx(row["per_step_us"] * 3, abs=0.01)
    iterator = "_MultiProcessingDataLoaderIter" if workers else "_SingleProcessDataLoaderIter"
    assert iterator in row["stage"]
    assert doc["workers"] is bool(workers) and doc["parallel_map"] is bool(workers) and doc["pin_memory"] is None
    assert any(("worker processes" if workers else "num_workers=0") in n for n in doc["notes"])
    if not workers:  # 16 samples of 2 ms a batch, loaded while the step waits
        assert row["per_step_us"] > 16 * 2000


GPU_RUNS = [
    ("pytorch/resnet50_num_workers_0", False, False),
    ("pytorch/resnet50_num_workers_4", True, False),
    ("gpu_pairs/loader_w0", False, False),
    ("gpu_pairs/loader_w4", True, True),
]


@pytest.mark.parametrize(("run", "workers", "pinned"), GPU_RUNS, ids=[r[0] for r in GPU_RUNS])
def test_real_gpu_dataloader_runs(run, workers, pinned):
    """The real V100 ResNet-50 pair and the H200 pair: the waits as above; the batch's copies (every
    host-to-device copy of these steps: the input and its labels, 2 a step), their times, from
    pinned memory only with pin_memory=True (loader_w4); the step waits on all of a pageable copy (it
    is synchronous) and, here, on the pinned ones too (nothing else runs on the GPU then); the
    pin-memory thread (loader_w4): the runtime calls of the one thread that runs nothing else."""
    (f, *_) = sorted(discover(os.path.join(DATA, run))[0], key=lambda f: f.path)
    raw, doc = Raw(f.path), table_of(f)
    rows = {r["part"]: r for r in doc["rows"]}
    assert doc["workers"] is workers and doc["pin_memory"] is pinned
    waits = raw.named(loader_next)
    check_row(rows["wait"], waits, raw)
    copies = raw.named(lambda n: n.startswith("Memcpy HtoD"))
    assert len(copies) == 2 * len(raw.steps)
    check_row(rows["copy"], copies, raw)
    assert rows["copy"]["stage"] == f"Memcpy HtoD ({'Pinned' if pinned else 'Pageable'} -> Device)"
    assert rows["copy"]["waited_us"] == pytest.approx(rows["copy"]["total_us"], abs=0.01)
    assert 0 <= rows["wait"]["waited_us"] <= rows["wait"]["per_step_us"] * len(raw.steps) + 0.01
    if pinned:
        threads: dict[tuple, list[dict]] = {}
        for e in raw.events:
            threads.setdefault((e["pid"], e["tid"]), []).append(e)
        (pin,) = [
            evs
            for evs in threads.values()
            if all(e["name"].startswith("cuda") for e in evs)
            and any(e["name"] == "cudaPointerGetAttributes" for e in evs)
        ]
        check_row(rows["pin thread"], pin, raw)
        assert rows["pin thread"]["waited_us"] is None
    else:
        assert "pin thread" not in rows
    assert set(rows) <= {"wait", "copy", "pin thread"} and len(doc["rows"]) == len(rows)
