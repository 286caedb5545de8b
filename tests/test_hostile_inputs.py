"""Files with absurd values still give a report: the bad value is skipped or clamped and said in the
report's warnings; nothing raises but the documented ProfileReadError; no NaN reaches the JSON.

Each case is also kept as a file in tests/corpus/ (regenerated with `python tests/test_hostile_inputs.py`),
and test_corpus reads every file there, so a file that once broke the advisor stays a test."""

from __future__ import annotations

import glob
import json
import math
import os
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios  # noqa: E402

from tb_gpu_advisor.analysis import analyse  # noqa: E402
from tb_gpu_advisor.checks import run_checks  # noqa: E402
from tb_gpu_advisor.errors import ProfileReadError  # noqa: E402
from tb_gpu_advisor.profile import CORE_COLUMNS, DEVICE_SPEC, HOST_SPEC, EventTable  # noqa: E402
from tb_gpu_advisor.report import report_json  # noqa: E402
from tb_gpu_advisor.xplane import xplane_pb2  # noqa: E402
from tb_gpu_advisor.xplane.reader import MAX_DUR_PS, read_profile_bytes  # noqa: E402

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def space_of(w) -> xplane_pb2.XSpace:
    s = xplane_pb2.XSpace()
    s.ParseFromString(w.to_bytes())
    return s


def plane(s: xplane_pb2.XSpace, prefix: str):
    return next(p for p in s.planes if p.name.startswith(prefix))


def stat_id(p, name: str) -> int:
    for sid, md in p.stat_metadata.items():
        if md.name == name:
            return sid
    sid = max(p.stat_metadata, default=0) + 1
    p.stat_metadata[sid].id = sid
    p.stat_metadata[sid].name = name
    return sid


def zero_durations() -> bytes:
    """Every GPU event of zero, negative or wrapped (2^64-1) duration."""
    s = space_of(scenarios.single_gpu())
    for k, line in enumerate(plane(s, "/device:GPU:0").lines):
        for ev in line.events:
            ev.duration_ps = (0, -5, 2**63 - 1)[k % 3] if k % 3 != 2 else -1
    return s.SerializeToString()


def no_host_lines() -> bytes:
    s = space_of(scenarios.single_gpu())
    del plane(s, "/host:CPU").lines[:]
    return s.SerializeToString()


def gpu_without_streams() -> bytes:
    s = space_of(scenarios.multi_gpu())
    del plane(s, "/device:GPU:1").lines[:]
    return s.SerializeToString()


def out_of_range_values() -> bytes:
    """A step_num of 2^64-1, a correlation id of 2^63, a grid of 2^40, a duration of 2^63-1, and
    one line stamped 0 beside epoch-stamped ones."""
    s = space_of(scenarios.single_gpu())
    host = plane(s, "/host:CPU")
    sn = stat_id(host, "step_num")
    for line in host.lines:
        for ev in line.events:
            for stat in ev.stats:
                if stat.metadata_id == sn:
                    stat.uint64_value = 2**64 - 1
                    break
            else:
                continue
            break
    gpu = plane(s, "/device:GPU:0")
    corr = stat_id(gpu, "correlation_id")
    kd = stat_id(gpu, "kernel_details")
    ev = gpu.lines[0].events[0]
    ev.stats.add(metadata_id=corr, uint64_value=2**63)
    ev.stats.add(metadata_id=kd, str_value="regs:32 shm:0 grid:1099511627776,1,1 block:128,1,1")
    gpu.lines[0].events[1].duration_ps = 2**63 - 1
    # every line stamped in epoch ns (as some profilers write them), and one stamped 0
    epoch = 1_795_300_000_000_000_000
    for p in s.planes:
        for line in p.lines:
            line.timestamp_ns += epoch
    extra = gpu.lines.add(id=999, name="Stream #999(Compute)", timestamp_ns=0)
    extra.events.add(metadata_id=ev.metadata_id, offset_ps=1000, duration_ps=1000)
    return s.SerializeToString()


def profiler_errors() -> bytes:
    s = space_of(scenarios.single_gpu())
    s.errors.append("CUPTI error: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")
    s.warnings.append("Some events were dropped: buffer full")
    return s.SerializeToString()


def truncated() -> bytes:
    data = scenarios.multi_gpu().to_bytes()
    return data[: len(data) // 2]


def garbage() -> bytes:
    return bytes(range(256)) * 8


CASES = {
    "truncated": truncated,
    "garbage": garbage,
    "zero_durations": zero_durations,
    "no_host_lines": no_host_lines,
    "gpu_without_streams": gpu_without_streams,
    "out_of_range_values": out_of_range_values,
    "profiler_errors": profiler_errors,
}


def report_of(data: bytes, name: str = "f.xplane.pb") -> dict:
    """The whole pipeline on bytes: a report, or ProfileReadError."""
    a = analyse(read_profile_bytes(data, name, "h"))
    findings, errors = run_checks(a)
    rep = report_json("r", "h", a.summary(), findings, errors)
    text = json.dumps(rep, allow_nan=False)  # raises on NaN or infinity
    assert json.loads(text) == rep
    return rep


def assert_sound(rep: dict) -> None:
    assert rep["errors"] == [], rep["errors"]  # no check failed
    assert all(c["status"] != "error" for c in rep["checks"])
    assert len(rep["checks"]) == 33


@pytest.mark.parametrize("case", sorted(set(CASES) - {"truncated", "garbage"}))
def test_absurd_values_give_a_report(case):
    rep = report_of(CASES[case]())
    assert_sound(rep)


@pytest.mark.parametrize("case", ["truncated", "garbage"])
def test_broken_files_give_the_documented_error(case):
    with pytest.raises(ProfileReadError, match="f.xplane.pb"):
        report_of(CASES[case]())


BASES = [scenarios.single_gpu().to_bytes(), scenarios.multi_gpu().to_bytes(), out_of_range_values()]


@settings(max_examples=250, deadline=5000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(
    base=st.sampled_from(range(len(BASES))),
    edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=8),
    cut=st.one_of(st.none(), st.floats(0, 1)),
)
def test_fuzz_mutated_files(base, edits, cut):
    """Bytes of real-looking profiles, changed in up to eight places and maybe cut short: the whole
    pipeline gives a report with no failed check and no NaN, or ProfileReadError; in bounded time
    (the deadline). Runs in `make test`, 250 cases."""
    data = bytearray(BASES[base])
    for where, value in edits:
        data[int(where * len(data))] = value
    if cut is not None:
        data = data[: int(cut * len(data))]
    try:
        rep = report_of(bytes(data))
    except ProfileReadError:
        return
    assert not any(c["status"] == "error" for c in rep["checks"]), rep["errors"]


def test_out_of_range_values_are_skipped_and_said():
    rep = report_of(out_of_range_values())
    warnings = " | ".join(rep["warnings"])
    assert "step_num" in warnings and "correlation_id" in warnings
    assert "clamped" in warnings  # the 2^63-1 duration
    assert "grid" in warnings or "kernel_details" in warnings
    assert "skipped" in warnings  # the line stamped 0 beside epoch-stamped lines
    p = read_profile_bytes(out_of_range_values(), "f.xplane.pb", "h")
    ev = p.device_events(0)
    assert int(ev.dur_ps.max()) <= MAX_DUR_PS and int(ev.end_ps.max()) > 0  # clamped, no wrap
    assert int(ev.grid_x.max()) < 2**31 and int(ev.grid_x.min()) >= 0


def test_the_profilers_own_errors_reach_the_user():
    from tb_gpu_advisor import render

    rep = report_of(profiler_errors())
    assert rep["capture_errors"] == [
        "CUPTI error: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        "Some events were dropped: buffer full",
    ]
    text, md = render.text(rep), render.markdown(rep)
    assert "the profiler said: CUPTI error: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" in text
    assert "**The profiler said:** Some events were dropped: buffer full" in md


def test_empty_tables_have_every_column():
    for spec in (CORE_COLUMNS, DEVICE_SPEC, HOST_SPEC):
        t = EventTable.concat([], spec)
        assert sorted(t.keys()) == sorted(spec) and len(t) == 0


def test_corpus():
    """Every file kept in tests/corpus/ reads to a report or to the documented error, in bounded
    time."""
    files = sorted(glob.glob(os.path.join(CORPUS, "*.xplane.pb")))
    assert len(files) >= len(CASES)
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        t = time.perf_counter()
        try:
            rep = report_of(data, os.path.basename(path))
        except ProfileReadError as e:
            assert os.path.basename(path) in str(e)
        else:
            assert not any(c["status"] == "error" for c in rep["checks"]), path
            for c in rep["checks"]:
                for m in c["metrics"]:
                    assert not (isinstance(m["value"], float) and math.isnan(m["value"]))
        assert time.perf_counter() - t < 10, path


if __name__ == "__main__":
    os.makedirs(CORPUS, exist_ok=True)
    for name, make in CASES.items():
        with open(os.path.join(CORPUS, f"{name}.xplane.pb"), "wb") as f:
            f.write(make())
