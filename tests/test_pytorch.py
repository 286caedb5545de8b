"""PyTorch profiler traces, on the real ResNet-50 traces of tests/data/pytorch (V100s; the DataLoader
in the training process, `num_workers=0`, against `num_workers=4`): discovery as the PyTorch
profiler plugin named runs, the steps the trace marks, input.bound, and agreement with Meta's
Holistic Trace Analysis (`holistictraceanalysis`, a test extra) on every number it also computes
from the same file: the temporal breakdown (idle / compute / non-compute time), idle time, and kernel
time by kernel, within 1%; the communication/computation overlap of the two_ranks_of_128 ranks; and
each step's breakdown (HTA's temporal and kernel-type breakdowns of one ProfilerStep), with the
differences in definition (idle over the device work's span, the last step dropped by default)
settled on hand counts from the raw events."""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tb_gpu_advisor.checks import run_checks
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.discovery import PYTORCH_TRACE, HostFile, discover
from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.model.profile import Kind
from tb_gpu_advisor.report.engine import analyse_file, read_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "pytorch")
US = 1_000_000  # ps per µs


@pytest.fixture(scope="module")
def files() -> dict[str, HostFile]:
    found, _ = discover(DATA)
    return {f"{f.run}:{f.host}": f for f in found}


def test_discovery_names_runs_by_folder_and_hosts_by_worker_and_span(files: dict[str, HostFile]) -> None:
    assert sorted(files) == [
        "resnet50_num_workers_0:worker0.1623143089861",
        "resnet50_num_workers_0:worker0.1623143566756",
        "resnet50_num_workers_4:worker0.1623212756351",
        "resnet50_num_workers_4:worker0.1623213129365",
        "two_ranks_of_128:rank0.1700000000000",
        "two_ranks_of_128:rank1.1700000000000",
    ]
    assert all(f.kind == PYTORCH_TRACE for f in files.values())


@pytest.mark.parametrize(
    "key", ["resnet50_num_workers_0:worker0.1623143089861", "resnet50_num_workers_4:worker0.1623212756351"]
)
def test_steps_are_the_profiler_steps_the_trace_marks(files: dict[str, HostFile], key: str) -> None:
    f = files[key]
    doc = json.loads(gzip.open(f.path).read())
    marked = sorted(
        int(e["name"].split("#")[1]) for e in doc["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep#")
    )
    a = analyse(read_file(f))
    assert a.profile.framework == "pytorch"
    assert a.steps.source == "host-markers" and a.steps.marker == "ProfilerStep"
    assert list(a.steps.number) == marked and len(marked) == 6
    # the GPU: the trace's deviceProperties; only GPU 0 runs work
    assert [d.name for d in a.profile.devices] == ["Tesla V100-DGXS-32GB"] * 4
    assert a.profile.devices[0].compute_capability == (7, 0) and a.profile.devices[0].sm_count == 80
    assert list(a.gpus) == [0] and a.idle == [1, 2, 3]


def test_input_bound_on_num_workers_0_not_on_num_workers_4(files: dict[str, HostFile]) -> None:
    """num_workers=0: the step waits in the DataLoader's __next__, which the finding names and tells
    to fix with worker processes; num_workers=4: the wait all but disappears."""
    ib = {}
    for key, f in files.items():
        _, rep = analyse_file(f)
        c = next(x for x in rep["checks"] if x["id"] == "input.bound")
        ib[key] = c
        assert rep["framework"] == "pytorch" and not rep["errors"]
    w0 = [c for k, c in ib.items() if "workers_0" in k]
    w4 = [c for k, c in ib.items() if "workers_4" in k]
    for c in w0:
        assert c["status"] == "critical" and c["metrics"][0]["value"] > 20
        assert "_SingleProcessDataLoaderIter.__next__" in c["summary"]
        assert "num_workers" in c["recommendation"] and "pin_memory=True" in c["recommendation"]
        assert "tf.data" not in c["recommendation"]
    for c in w4:
        assert c["status"] == "pass" and c["metrics"][0]["value"] < 2
    assert min(c["metrics"][0]["value"] for c in w0) > 10 * max(c["metrics"][0]["value"] for c in w4)


def test_tensorflow_only_checks_say_why_on_pytorch(files: dict[str, HostFile]) -> None:
    _, rep = analyse_file(files["resnet50_num_workers_4:worker0.1623212756351"])
    c = {x["id"]: x for x in rep["checks"]}
    for check in ("placement.host-ops", "ops.eager", "host.thread-contention"):
        assert c[check]["status"] == "not-applicable" and "pytorch capture" in c[check]["reason"]
    assert "torch.compile" in c["xla.off"]["recommendation"]
    assert "autocast" in c["precision.mixed-off"]["recommendation"]
    assert rep["headline"]["device_op_time_pct"] is None  # no placement to measure in PyTorch


# -- agreement with Holistic Trace Analysis ------------------------------------------------------


def hta_numbers(path: str, tmp_path: Path) -> tuple[dict, dict]:
    """HTA's temporal breakdown and kernel time by kernel name (µs) for one trace file."""
    hta = pytest.importorskip("hta.trace_analysis")
    logging.disable(logging.WARNING)
    try:
        d = tmp_path / "trace"
        d.mkdir()
        shutil.copy(path, d)
        a = hta.TraceAnalysis(trace_dir=str(d))
        tb = a.get_temporal_breakdown(visualize=False).iloc[0]
        _, kb = a.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=100_000)
    finally:
        logging.disable(logging.NOTSET)
    temporal = {
        "idle": float(tb["idle_time(us)"]),
        "compute": float(tb["compute_time(us)"]),
        "non_compute": float(tb["non_compute_time(us)"]),
        "kernel": float(tb["kernel_time(us)"]),
    }
    return temporal, {row["name"]: float(row["sum (us)"]) for _, row in kb.iterrows()}


def advisor_numbers(path: str, f: HostFile) -> tuple[dict, dict]:
    """The same quantities from the advisor's own tables, over the window HTA analyses: the GPU work
    launched (paired by correlation id) before the last ProfilerStep starts."""
    from tb_gpu_advisor.model import intervals as iv

    p = read_file(f)
    host = p.host_events()
    last_step = int(host.start_ps[host.kind == Kind.STEP].max())
    launched = np.unique(host.corr[(host.corr >= 0) & (host.start_ps < last_step)])
    (ev,) = [x for x in (p.device_events(d.id) for d in p.devices) if len(x)]  # rank 1 runs on GPU 1
    keep = np.isin(ev.corr, launched)
    s, e, kind, name = ev.start_ps[keep], ev.end_ps[keep], ev.kind[keep], ev.name[keep]
    merged = iv.union(s, e)
    span = int(merged[1][-1] - merged[0][0])
    busy = iv.total(merged)
    compute = np.isin(kind, np.array([Kind.KERNEL], np.int8))
    compute_ps = iv.total(iv.union(s[compute], e[compute]))
    temporal = {
        "idle": (span - busy) / US,
        "compute": compute_ps / US,
        "non_compute": (busy - compute_ps) / US,
        "kernel": span / US,
    }
    by_kernel: dict[str, float] = {}
    for n, d in zip(name.tolist(), (e - s).tolist()):
        by_kernel[p.names[n]] = by_kernel.get(p.names[n], 0.0) + d / US
    return temporal, by_kernel


@pytest.mark.parametrize(
    "key",
    [
        "resnet50_num_workers_0:worker0.1623143089861",
        "resnet50_num_workers_0:worker0.1623143566756",
        "resnet50_num_workers_4:worker0.1623212756351",
        "resnet50_num_workers_4:worker0.1623213129365",
        "two_ranks_of_128:rank0.1700000000000",
        "two_ranks_of_128:rank1.1700000000000",
    ],
)
def test_temporal_breakdown_idle_time_and_kernel_time_agree_with_hta(
    files: dict[str, HostFile], key: str, tmp_path: Path
) -> None:
    f = files[key]
    theirs, theirs_by_kernel = hta_numbers(f.path, tmp_path)
    ours, ours_by_kernel = advisor_numbers(f.path, f)
    for k in ("idle", "compute", "non_compute", "kernel"):
        assert ours[k] == pytest.approx(theirs[k], rel=0.01), (k, ours, theirs)
    assert theirs["kernel"] > 500_000 and theirs["compute"] > 0  # a real amount of work was compared
    assert set(ours_by_kernel) == set(theirs_by_kernel)
    for name, us in theirs_by_kernel.items():
        assert ours_by_kernel[name] == pytest.approx(us, rel=0.01), name


# -- broken and hostile traces -------------------------------------------------------------------


@pytest.mark.parametrize(
    "data,message",
    [
        (b"", "the file is empty"),
        (b"{not json", "not a readable PyTorch trace (JSON"),
        (b'{"traceEvents": 5}', "no traceEvents list"),
        (b"[1, 2, 3]", "a trace is a JSON object, starting with '{', and this file does not start so"),
        (b"\x00" * 64, "a trace is a JSON object, starting with '{', and this file does not start so"),
        (b"  \n ", "the file is blank"),
        (b'{"traceEvents": []}', "no host or GPU events"),
        (b"\x1f\x8b\x08\x00garbage", "not a readable gzip file"),
    ],
)
def test_broken_traces_give_the_documented_error(data: bytes, message: str) -> None:
    with pytest.raises(ProfileReadError, match="t.pt.trace.json") as e:
        read_pytorch_trace_bytes(data, "t.pt.trace.json", "h")
    assert message in str(e.value)


def test_truncated_and_hostile_traces(files: dict[str, HostFile], tmp_path: Path) -> None:
    raw = gzip.open(files["resnet50_num_workers_4:worker0.1623212756351"].path).read()
    with pytest.raises(ProfileReadError, match="JSON"):
        read_pytorch_trace_bytes(raw[: len(raw) // 2], "t.pt.trace.json", "h")
    # a gzip that inflates beyond the limit is refused, not read
    with pytest.raises(ProfileReadError, match="inflates to 29 MB, over the 1 MB limit"):
        read_pytorch_trace_bytes(gzip.compress(raw), "t.pt.trace.json.gz", "h", limit=1 << 20)
    # absurd values and markup in names: skipped or kept as text, and the file still reads
    doc = {
        "traceEvents": [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "<img src=x onerror=alert(1)>",
                "pid": 1,
                "tid": 1,
                "ts": 10,
                "dur": 5,
            },
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": "soon", "dur": 1},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1e300, "dur": 1},
            {
                "ph": "X",
                "cat": "kernel",
                "name": "k",
                "pid": 0,
                "tid": 7,
                "ts": 12,
                "dur": -4,
                "args": {"grid": [2**40, 1, 1]},
            },
            {
                "ph": "X",
                "cat": "kernel",
                "name": "k",
                "pid": 2**70,
                "tid": 7,
                "ts": 12,
                "dur": 1,
                "args": {"device": 2**70},
            },
            "not an event",
        ]
    }
    p = read_pytorch_trace_bytes(json.dumps(doc).encode(), "t.pt.trace.json", "h")
    assert "<img src=x onerror=alert(1)>" in p.names.strings
    k = p.device_events(0)
    assert len(k) == 1 and int(k.dur_ps[0]) == 0 and int(k.grid_x[0]) == 2**31 - 1
    assert any("skipped" in w for w in p.warnings)
    a = analyse(p)
    findings, errors = run_checks(Measures(a))
    assert errors == [] and findings


def test_a_real_trace_captured_here_with_torch(tmp_path: Path) -> None:
    """torch (CPU build) writes a trace through tensorboard_trace_handler: discovered, its four
    profiled steps found, and the slow DataLoader seen."""
    import subprocess
    import sys

    pytest.importorskip("torch")
    subprocess.run(
        # one torch thread: with two, on a loaded 2-core machine, 3 ms of compute took 350-550 ms a step
        # (threads waiting on each other) and the input wait fell under the critical share
        [sys.executable, os.path.join(ROOT, "scripts", "capture_torch_cpu.py"), str(tmp_path), "--slow-ms", "3"]
        + ["--threads", "1"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (f,) = discover(str(tmp_path))[0]
    assert f.kind == PYTORCH_TRACE and f.run == "torch_cpu" and f.path.endswith(".pt.trace.json")
    m, rep = analyse_file(f)
    a = m.analysis
    assert a.profile.framework == "pytorch" and a.profile.time_base == "profile-start"
    assert a.steps.source == "host-markers" and len(a.steps) == 4
    assert not rep["errors"]
    c = {x["id"]: x for x in rep["checks"]}
    # the DataLoader sleeps 3 ms a sample, 16 samples a batch, in the training process: at least 48 ms of
    # input wait a step, whatever the machine; its share of the step falls when a busy CPU slows the
    # model, so the status is critical on an idle machine and at least a warning on a loaded one
    ib = c["input.bound"]
    assert ib["status"] in ("critical", "warning") and "DataLoader" in ib["summary"]
    assert next(m["value"] for m in ib["metrics"] if m["name"] == "input_ms_per_step") >= 48 * 0.95
    assert c["capture.no-gpu"]["status"] == "info" and "ProfilerActivity.CUDA" in c["capture.no-gpu"]["recommendation"]


def test_comm_comp_overlap_agrees_with_hta(tmp_path: Path) -> None:
    """The share of NCCL time overlapped by compute kernels on each rank of two_ranks_of_128 (both
    steps), against HTA's `get_comm_comp_overlap` on the same two files, within 0.01 points (it
    rounds to two decimals): 14.95% on rank 0, 19.93% on rank 1. HTA drops the last ProfilerStep
    unless told (`include_last_profiler_step`): by default it gives 11.81% and 20.05%, the first step
    only; told, the same window as ours."""
    hta = pytest.importorskip("hta.trace_analysis")
    d = tmp_path / "ranks"
    shutil.copytree(os.path.join(DATA, "two_ranks_of_128"), d)
    logging.disable(logging.WARNING)
    try:
        df = hta.TraceAnalysis(trace_dir=str(d), include_last_profiler_step=True).get_comm_comp_overlap(visualize=False)
    finally:
        logging.disable(logging.NOTSET)
    theirs = dict(zip(df["rank"].tolist(), df["comp_comm_overlap_pctg"].tolist()))
    ours = {}
    for f in discover(str(d))[0]:
        a = analyse(read_file(f))
        (g,) = a.headline()["per_gpu"]
        ours[int(f.host.removeprefix("rank").split(".")[0])] = g["comm_overlap_pct"]
    assert set(ours) == set(theirs) == {0, 1}
    for rank in (0, 1):
        assert ours[rank] == pytest.approx(theirs[rank], abs=0.01), rank
    assert ours[0] == pytest.approx(14.946, abs=0.001) and ours[1] == pytest.approx(19.926, abs=0.001)
    # a GPU without collectives has no overlap to report
    (f,) = [x for x in discover(os.path.join(DATA, "resnet50_num_workers_4"))[0] if "1623212756351" in x.host]
    assert analyse(read_file(f)).headline()["per_gpu"][0]["comm_overlap_pct"] is None


def test_memory_records_are_read_with_their_device_and_totals(files: dict[str, HostFile]) -> None:
    """The `[memory]` records of the real V100 trace (PyTorch 1.8: `Bytes` only, no totals): every one
    inside the capture read, per device; the running sum's peak is hand-counted from the raw JSON."""
    f = files["resnet50_num_workers_0:worker0.1623143089861"]
    raw = json.JSONDecoder().raw_decode(gzip.open(f.path, "rt").read().lstrip())[0]
    marks = [e for e in raw["traceEvents"] if e.get("name") == "[memory]"]
    p = read_file(f)
    assert len(p.memory) == len(marks) == 12838
    assert set(p.memory.device.tolist()) == {-1, 0}  # host memory and GPU 0
    assert (p.memory.allocated == -1).all() and (p.memory.reserved == -1).all()  # not recorded in 1.8
    assert np.all(np.diff(p.memory.start_ps) >= 0)
    for device, type_ in ((0, 1), (-1, 0)):
        by_hand = np.cumsum([e["args"]["Bytes"] for e in marks if e["args"]["Device Type"] == type_]).max()
        assert np.cumsum(p.memory.bytes[p.memory.device == device]).max() == by_hand
    assert by_hand == 57803264  # the host's peak, as counted above for device -1


def test_memory_records_with_totals_and_bad_values() -> None:
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 100, "dur": 10},
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 105,
         "args": {"Device Type": 1, "Device Id": 2, "Bytes": 512, "Total Allocated": 1536, "Total Reserved": 2097152}},
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 102,
         "args": {"Device Type": 1, "Device Id": 2, "Bytes": 1024, "Total Allocated": 1024, "Total Reserved": 2097152}},
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": "soon", "args": {}},
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 106, "args": {"Device Type": 1, "Device Id": 2**40}},
    ]  # fmt: skip
    p = read_pytorch_trace_bytes(json.dumps({"traceEvents": events}).encode(), "t.pt.trace.json", "h")
    assert p.memory.bytes.tolist() == [1024, 512]  # sorted by time
    assert p.memory.allocated.tolist() == [1024, 1536] and p.memory.device.tolist() == [2, 2]
    assert p.memory.reserved.max() == 2097152
    assert any("2 unreadable event(s)" in w for w in p.warnings)


# -- HTA's per-step breakdown --------------------------------------------------------------------
#
# HTA 0.5.0 has no per-step breakdown call; what it has is an `iteration` on every event (a host event
# is in the ProfilerStep whose marker holds its start; device work in the step of the runtime call that
# launched it, paired by correlation id), `get_profiler_steps`, and its `IterationFilter`
# (hta/common/trace_filter.py) to keep one iteration's events. Its temporal breakdown and kernel-type
# breakdown run on that filtered trace are HTA's per-step breakdown. HTA measures a step over the span
# of its device work (first start to last end); the advisor, like torch-tb-profiler, over the step's
# window (max(previous end, marker start) to max(marker end, end of that device work)). So the device
# time agrees where the definitions meet, and the idle time differs by the window's time outside the span.


def _hta_per_step(ta: Any) -> dict[tuple[int, int], dict | None]:
    """(rank, step) -> HTA's per-step figures (µs); None for a step that launched no device work."""
    import copy

    from hta.analyzers.breakdown_analysis import BreakdownAnalysis
    from hta.common.trace_filter import IterationFilter

    out: dict[tuple[int, int], dict | None] = {}
    for rank, df in ta.t.traces.items():
        for step in ta.get_profiler_steps():
            t = copy.copy(ta.t)
            t.traces = {rank: IterationFilter(int(step))(df)}
            gpu = t.traces[rank][t.traces[rank]["stream"].ne(-1)]
            if gpu.empty:
                out[rank, int(step)] = None
                continue
            tb = BreakdownAnalysis.get_temporal_breakdown(t, visualize=False).iloc[0]
            types, kernels = BreakdownAnalysis.get_gpu_kernel_breakdown(
                t, visualize=False, duration_ratio=1.0, num_kernels=1_000_000, include_memory_kernels=True
            )
            by_type = dict(zip(types["kernel_type"], types["sum"].astype(float)))
            out[rank, int(step)] = {
                "idle": float(tb["idle_time(us)"]),
                "compute": float(tb["compute_time(us)"]),
                "non_compute": float(tb["non_compute_time(us)"]),
                "span": float(tb["kernel_time(us)"]),
                # communication no compute kernel runs beside (alone, or beside a copy)
                "comm_exposed": by_type.get("COMMUNICATION", 0.0) + by_type.get("COMMUNICATION overlapping MEMORY", 0.0),
                "compute_beside_memory": sum(v for k, v in by_type.items() if k.startswith("COMPUTATION overlapping")
                                             and "MEMORY" in k),
                "memset": float(kernels.loc[kernels["name"].str.startswith("Memset"), "sum (us)"].sum()),
                "kernels": len(gpu),
            }  # fmt: skip
    return out


def _write_ddp_job(root: Path, name: str, **kw: Any) -> str:
    from support.kineto_writer import ddp_job

    run = root / name
    run.mkdir()
    for r, w in ddp_job(8, **kw).items():
        (run / f"rank{r}.1700000000000.pt.trace.json.gz").write_bytes(w.to_bytes())
    return str(run)


PER_STEP_TRACES = [
    "resnet50_num_workers_0/worker0.1623143089861",
    "resnet50_num_workers_0/worker0.1623143566756",
    "resnet50_num_workers_4/worker0.1623212756351",
    "resnet50_num_workers_4/worker0.1623213129365",
    "two_ranks_of_128",
    "ddp_slow_rank",
    "ddp_exposed",
]


@pytest.fixture(scope="module")
def per_step(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, dict]]:
    """Per trace: (ours, HTA's), each {(rank, step): figures}, HTA loaded once per folder with the last
    step kept (its default drops it: see test_hta_drops_the_last_step_by_default)."""
    hta = pytest.importorskip("hta.trace_analysis")
    root = tmp_path_factory.mktemp("per_step")
    folders = {}
    for name in PER_STEP_TRACES[:4]:
        d = root / name.replace("/", "_")
        d.mkdir()
        shutil.copy(os.path.join(DATA, name + ".pt.trace.json.gz"), d)
        folders[name] = str(d)
    folders["two_ranks_of_128"] = str(shutil.copytree(os.path.join(DATA, "two_ranks_of_128"), root / "two_ranks"))
    folders["ddp_slow_rank"] = _write_ddp_job(root, "ddp_slow_rank", compute_us={5: 30_000.0})
    folders["ddp_exposed"] = _write_ddp_job(root, "ddp_exposed", overlap=False, transfer_us=12_000.0)
    out = {}
    logging.disable(logging.WARNING)
    try:
        for name, folder in folders.items():
            ta = hta.TraceAnalysis(trace_dir=folder, include_last_profiler_step=True)
            theirs = _hta_per_step(ta)
            ours = {}
            for f in discover(folder)[0]:
                a = analyse(read_file(f))
                rank = a.profile.rank if a.profile.rank is not None else 0
                (g,) = a.gpus.values()
                origin_us = a.profile.origin_ns / 1000
                for row in a.step_breakdown(device_id=g.id):
                    ours[rank, row["step"]] = {
                        "window": (row["end_ms"] - row["start_ms"]) * 1000,
                        "start": origin_us + row["start_ms"] * 1000,  # the file's clock, µs
                        "end": origin_us + row["end_ms"] * 1000,
                        **{k: v * 1000 for k, v in row["breakdown_ms"].items()},
                    }
            out[name] = (ours, theirs)
    finally:
        logging.disable(logging.NOTSET)
    return out


DEVICE_PARTS = ("device_compute", "device_collectives", "memcpy_h2d", "memcpy_d2h", "memcpy_d2d")


@pytest.mark.parametrize("name", PER_STEP_TRACES)
def test_per_step_breakdown_agrees_with_hta(per_step: dict[str, tuple[dict, dict]], name: str) -> None:
    """Every step of every shared trace and of two writer-made 8-rank jobs, each rank, against HTA's
    breakdown of the same step (HTA's IterationFilter, then its temporal and kernel-type breakdowns):

    - the same steps (HTA keeps the last one when told; each launched device work);
    - within 1%, as the issue asks; they agree to 5 µs a step, which is asserted (a memset is 1-2 µs, so
      a memset counted on the wrong side would fail it);
    - GPU busy (the advisor's compute + collectives + copies) is HTA's compute + non-compute time;
    - the advisor's compute is HTA's compute plus the memsets: the advisor counts a memset as compute,
      as torch-tb-profiler's Kernel + Memset; HTA puts it with the copies (MEMORY), its non-compute;
    - collectives not overlapped by compute are HTA's COMMUNICATION time alone or beside a copy (the
      two differ by the memsets run beside a collective, 3 µs a step on two_ranks_of_128);
    - idle time differs by definition, not by error: HTA's is over the span of the step's device work,
      the advisor's over the step's window, which holds that span; the difference is exactly the
      window's time outside the span (test_hta_per_step_idle_leaves_out_the_input_wait says which
      one the step's time is)."""
    ours, theirs = per_step[name]
    assert sorted(ours) == sorted(theirs) and all(t is not None for t in theirs.values())
    assert len(ours) >= 2
    for key, o in ours.items():
        t = theirs[key]
        busy = sum(o[c] for c in DEVICE_PARTS)
        assert busy == pytest.approx(t["compute"] + t["non_compute"], abs=5), (name, key)
        assert o["device_compute"] == pytest.approx(t["compute"] + t["memset"], abs=5), (name, key)
        assert o["device_collectives"] == pytest.approx(t["comm_exposed"], abs=5), (name, key)
        assert t["span"] <= o["window"] + 1
        idle = o["window"] - busy
        assert idle - t["idle"] == pytest.approx(o["window"] - t["span"], abs=2), (name, key)
    # what was compared: a real amount of compute; collectives on the multi-rank traces only
    assert min(o["device_compute"] for o in ours.values()) > 10_000
    collectives = sum(o["device_collectives"] for o in ours.values())
    assert (collectives > 100_000) == (not name.startswith("resnet50")), collectives


def _hand_count(path: str) -> dict[int, tuple[float, float, float, float, int]]:
    """From the raw JSON, per ProfilerStep: marker start and end, and the first start, last end (µs)
    and number of the device events launched by the runtime calls that start inside the marker (HTA's
    rule for a step's device work)."""
    doc = json.loads(gzip.open(path).read())
    ev = [e for e in doc["traceEvents"] if isinstance(e, dict) and e.get("ph") == "X"]
    markers = {int(e["name"].split("#")[1]): e for e in ev if e["name"].startswith("ProfilerStep#")}
    runtime = [e for e in ev if e.get("cat") in ("Runtime", "cuda_runtime") and "correlation" in e.get("args", {})]
    device: dict[int, list[dict]] = {}
    for e in ev:
        if e.get("cat") in ("Kernel", "Memcpy", "Memset", "kernel", "gpu_memcpy", "gpu_memset"):
            device.setdefault(e["args"]["correlation"], []).append(e)
    out = {}
    for n, m in markers.items():
        launched = [
            d
            for r in runtime
            if m["ts"] <= r["ts"] < m["ts"] + m["dur"]
            for d in device.get(r["args"]["correlation"], [])
        ]
        first = min(d["ts"] for d in launched)
        last = max(d["ts"] + d["dur"] for d in launched)
        out[n] = (m["ts"], m["ts"] + m["dur"], first, last, len(launched))
    return out


@pytest.mark.parametrize("span", ["1623143089861", "1623143566756"])
def test_hta_per_step_idle_leaves_out_the_input_wait(per_step: dict[str, tuple[dict, dict]], span: str) -> None:
    """With num_workers=0 each step opens with the DataLoader's `__next__` in the training process:
    the GPU has nothing to run until it returns. HTA's per-step span starts at the step's first device
    work, so its idle time leaves that wait out; the advisor's step (torch-tb-profiler's) holds it.

    By hand from the raw events: HTA's span is the first start to the last end of the device work
    launched inside the marker, and that work starts after `__next__` returns. The step the user waits
    for is the window: the advisor's mean step is the plugin's 177.59 ms (1623143089861); HTA's spans
    are 117-120 ms. So the advisor is right about the step's idle time, and HTA about the idle time
    between the first and the last kernel, which is all it claims."""
    name = f"resnet50_num_workers_0/worker0.{span}"
    path = os.path.join(DATA, name + ".pt.trace.json.gz")
    ours, theirs = per_step[name]
    by_hand = _hand_count(path)
    doc = json.loads(gzip.open(path).read())
    waits = [e for e in doc["traceEvents"] if "_SingleProcessDataLoaderIter.__next__" in str(e.get("name"))]
    assert len(waits) == len(by_hand) == len(ours) == 6
    for (rank, step), o in ours.items():
        m_start, m_end, first, last, _ = by_hand[step]
        t = theirs[rank, step]
        assert t["span"] == pytest.approx(last - first, abs=1), step
        assert o["start"] - 1 <= first and last <= o["end"] + 1  # the step's window holds HTA's span
        (wait,) = [w for w in waits if m_start <= w["ts"] < m_end]
        assert wait["ts"] + wait["dur"] <= first  # the GPU's first work of the step comes after the input
        # the wait within the step's window (its start can fall in the previous step's GPU tail)
        in_window = wait["ts"] + wait["dur"] - max(wait["ts"], o["start"])
        assert in_window > 30_000, step
        assert o["host_input_wait"] >= 0.95 * in_window, step  # the advisor's step counts it
        # HTA's step idle leaves out the window's time outside its span, which holds the whole wait
        assert o["window"] - t["span"] >= in_window - 1, step
    if span == "1623143089861":
        assert np.mean([o["window"] for o in ours.values()]) == pytest.approx(177_592.2, rel=1e-4)
        assert all(117_000 < t["span"] < 120_000 for t in theirs.values())


def test_hta_drops_the_last_step_by_default(per_step: dict[str, tuple[dict, dict]], tmp_path: Path) -> None:
    """HTA's TraceAnalysis keeps, by default, only the events of the host before the last
    ProfilerStep starts, and the device work they launched: the last step is gone, from
    `get_profiler_steps` too. On these traces that step is complete: by hand it launched as much
    device work as the step before, and that work ends before the capture does. torch-tb-profiler and
    the advisor keep it (they drop a last step only when it launched under 80% of the step before's
    device work: a cut capture), so the advisor is right to count it; told
    `include_last_profiler_step=True`, HTA gives it the advisor's figures (above), and the other
    steps are the same either way."""
    hta = pytest.importorskip("hta.trace_analysis")
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(os.path.join(DATA, "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz"), one)
    cases = {
        "two_ranks_of_128": (os.path.join(DATA, "two_ranks_of_128"), 552),
        "resnet50_num_workers_0/worker0.1623143089861": (str(one), 10),
    }
    for name, (folder, last) in cases.items():
        logging.disable(logging.WARNING)
        try:
            ta = hta.TraceAnalysis(trace_dir=folder)
            default = _hta_per_step(ta)
            steps = [int(s) for s in ta.get_profiler_steps()]
        finally:
            logging.disable(logging.NOTSET)
        ours, told = per_step[name]
        assert max(s for _, s in ours) == last and last not in steps
        assert sorted(default) == sorted(k for k in ours if k[1] != last)
        for key, t in default.items():
            assert t == told[key]
        for f in sorted(os.listdir(folder)):
            by_hand = _hand_count(os.path.join(folder, f))
            doc = json.loads(gzip.open(os.path.join(folder, f)).read())
            capture_end = max(
                e["ts"] + e.get("dur", 0) for e in doc["traceEvents"] if isinstance(e, dict) and "ts" in e
            )
            assert by_hand[last][3] < capture_end
            rank = (doc.get("distributedInfo") or {}).get("rank", 0)
            launched = by_hand[last][4]
            assert launched >= 0.8 * by_hand[last - 1][4] and told[rank, last]["kernels"] == launched


def test_a_trace_without_device_properties_says_so(files: dict[str, HostFile]) -> None:
    """two_ranks_of_128 has no `deviceProperties`: the header says the trace gives none, not "GPU 0:
    GPU 0  cc ?, ? SMs, ? GiB"; the V100 trace, which has them, is named with its figures."""
    from tb_gpu_advisor.present import render

    _, bare = analyse_file(files["two_ranks_of_128:rank0.1700000000000"])
    _, v100 = analyse_file(files["resnet50_num_workers_0:worker0.1623143089861"])
    (d,) = bare["devices"]
    assert d["sm_count"] is None and d["compute_capability"] is None
    assert "  GPU 0: the trace gives no device properties (model, SMs, memory)" in render.text(bare).splitlines()
    assert "  GPU 0: Tesla V100-DGXS-32GB  cc 7.0, 80 SMs, 31.74 GiB" in render.text(v100).splitlines()


def test_host_work_on_pytorch_claims_the_idle_time_its_ops_leave(files: dict[str, HostFile]) -> None:
    """Every PyTorch op runs on the host and launches kernels, so none is a compute op misplaced on the
    host (placement.host-ops does not apply to PyTorch). They used to claim the GPU's idle time as
    `host_ops` anyway, ahead of the main thread's work: on the V100 trace steps.host-work measured
    15.13 ms per step of host work while the GPU idles yet saved 0.02 ms, the rest reported by no
    check. Now the host work claims it, less what the breakdown counts as launch wait."""
    a = analyse(read_file(files["resnet50_num_workers_0:worker0.1623143089861"]))
    findings = {f.id: f for f in run_checks(Measures(a))[0]}
    work = findings["steps.host-work"]
    assert findings["placement.host-ops"].status == "not-applicable"
    measured = work.metric("host_work_ms_per_step")
    assert round(measured, 2) == 15.13
    # its saving is the step re-timed with the fix its advice names, torch.compile(mode="reduce-overhead")
    # (docs/whatif.md): more than the host work the GPU idles for, as the host, freed from dispatching
    # the step op by op, loads the next batch while the GPU runs: down to the compiled GPU work, no lower
    w = work.whatif
    assert w["change"] == "reduce-overhead" and w["bound"] == "host" and w["new_bound"] == "GPU"
    assert work.saving_ms > measured
    m = Measures(a)
    compiled = m.what_if.changed("reduce-overhead")
    assert w["new_step_ms"] >= float(compiled.d_dur.sum()) / m.step_graph.steps / 1e9 - 1
