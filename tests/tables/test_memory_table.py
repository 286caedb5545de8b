"""The memory table's XSpace rows against the profile plugin's `memory_profile`: one row per
allocator, the peak (heap allocated plus stack reserved, the last event at the most), the heap and
stack parts, free memory, fragmentation and the allocator's peak since the program started, exact,
on a writer-made GPU file and on a real tensorflow-cpu capture made here."""

from __future__ import annotations

import os

import pytest
from conftest import convert
from support.xplane_writer import GPU_SPECS, ProfileWriter

from tb_gpu_advisor import tables
from tb_gpu_advisor.formats.xplane import xplane_pb2
from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse

MIB = 1 << 20


def _memory(data: bytes, path: str = "/x/host.xplane.pb", host: str = "host") -> dict:
    return tables.answer(tables.build(Measures(analyse(read_profile_bytes(data, path, host))), "memory"))


def _peak_events(data: bytes) -> dict[str, list[tuple[int, int]]]:
    """By hand from the raw file: each allocator's events at its most heap plus stack memory, in
    the file's order (lines, then events), as (offset in the line, time from the profile's start)
    in ps."""
    space = xplane_pb2.XSpace()
    space.ParseFromString(data)
    events: dict[str, list[tuple[int, int, int]]] = {}
    for plane in space.planes:
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            for ev in line.events:
                st = {names.get(s.metadata_id): s for s in ev.stats}
                if "allocator_name" not in st:
                    continue
                a = st["allocator_name"]
                alloc = a.str_value or plane.stat_metadata[a.ref_value].name
                in_use = sum(st[k].int64_value for k in ("bytes_allocated", "bytes_reserved") if k in st)
                events.setdefault(alloc, []).append((in_use, ev.offset_ps, line.timestamp_ns * 1000 + ev.offset_ps))
    out = {}
    for alloc, evs in events.items():
        top = max(e[0] for e in evs)
        out[alloc] = [(off, at) for in_use, off, at in evs if in_use == top]
    return out


def _assert_agrees(doc: dict, theirs: dict, peaks: dict[str, list[tuple[int, int]]]) -> None:
    """Every allocator the converter lists is a row, with its peak stats exactly. The peak's time:
    the converter takes the last event at the peak in the file's order and gives its offset in
    its line; we take the last in time and give it from the profile's start (the trace viewer's
    zero). With one line, or the last line's event the latest, they are the same event."""
    rows = {r["allocator"]: r for r in doc["rows"]}
    assert sorted(rows) == sorted(theirs)
    for name, t in theirs.items():
        r, s = rows[name], t["profileSummary"]
        peak = s["peakStats"]
        assert r["peak_allocated_bytes"] == int(peak["heapAllocatedBytes"]), name
        assert r["stack_reserved_bytes"] == int(peak.get("stackReservedBytes", 0)), name
        assert r["peak_allocated_bytes"] + r["stack_reserved_bytes"] == int(peak["peakBytesInUse"]), name
        assert r["free_bytes"] == int(peak.get("freeMemoryBytes", 0)), name
        assert r["fragmentation_pct"] == pytest.approx(100 * peak.get("fragmentation", 0.0), abs=1e-3), name
        assert r["lifetime_peak_bytes"] == int(s["peakBytesUsageLifetime"]), name
        assert int(s.get("peakStatsTimePs", 0)) == peaks[name][-1][0], name
        assert r["peak_time_ms"] == pytest.approx(max(at for _, at in peaks[name]) / 1e9, abs=1e-6), name
        assert r["peak_reserved_bytes"] is None  # PyTorch's caching-allocator figure; TensorFlow has none


def test_writer_gpu_allocators_agree_with_the_converter() -> None:
    """GPU 0 (A100, 40 GiB), by hand: heap 100, 300, 250 + 100 stack, 320 + 30 stack, 100 MiB.
    Heap alone peaks at 300 MiB (20 µs); heap plus stack reaches 350 MiB at 30 and again at 40 µs,
    and the converter's peak is the last: heap 320, stack 30 MiB at 40 µs, 1 GiB free, 25%
    fragmented; headroom the GPU's 40 GiB less 350 MiB. GPU 1 has one allocation, the pinned host
    allocator (`gpu_host_bfc`) is host memory: the CPU's row."""
    w = ProfileWriter(host="host")
    w.gpu(0)
    w.gpu(1)
    th = w.thread("tf_Compute")
    events = [  # µs, heap, stack, free, fragmentation, free event
        (10, 100, 0, 2000, 0.5, False),
        (20, 300, 0, 1800, 0.1, False),
        (30, 250, 100, 1750, 0.2, False),
        (40, 320, 30, 1024, 0.25, False),
        (50, 100, 0, 1900, 0.4, True),
    ]
    for us, heap, stack, free, frag, is_free in events:
        th.memory(us, heap * MIB, 400 * MIB, "GPU_0_bfc", is_free, stack * MIB, free * MIB, frag)
    th.memory(15, 64 * MIB, 64 * MIB, "GPU_1_bfc", available=1000 * MIB)
    th.memory(16, 4 * MIB, 8 * MIB, "gpu_host_bfc", available=60 * MIB)
    data = w.to_bytes()
    doc = _memory(data)
    peaks = _peak_events(data)
    assert peaks["GPU_0_bfc"] == [(30_000_000, 30_000_000), (40_000_000, 40_000_000)]  # 350 MiB twice
    _assert_agrees(doc, convert(data, "memory_profile")["memoryProfilePerAllocator"], peaks)
    g0, g1, cpu = doc["rows"]
    assert (g0["label"], g0["device"], g1["device"], cpu["label"], cpu["device"]) == (
        "GPU 0", 0, 1, "CPU (gpu_host_bfc)", -1
    )  # fmt: skip
    assert (g0["peak_allocated_bytes"], g0["stack_reserved_bytes"], g0["peak_time_ms"]) == (320 * MIB, 30 * MIB, 0.04)
    assert (g0["free_bytes"], g0["fragmentation_pct"], g0["lifetime_peak_bytes"]) == (1024 * MIB, 25.0, 400 * MIB)
    assert g0["headroom_bytes"] == GPU_SPECS["A100"].memory_bytes - 350 * MIB
    assert cpu["capacity_bytes"] is None and cpu["headroom_bytes"] is None
    # each allocator has its own curve and allocations before its peak (the heap's growth at each
    # event: the first event's is unknown, the heap before the capture not being recorded)
    assert [(s["device"], s["allocator"]) for s in doc["series"]] == [
        (0, "GPU_0_bfc"),
        (1, "GPU_1_bfc"),
        (-1, "gpu_host_bfc"),
    ]
    assert [x["bytes"] for x in doc["around_peak"] if x["allocator"] == "GPU_0_bfc"] == [200 * MIB, 70 * MIB]


def test_real_tensorflow_cpu_capture_agrees_with_the_converter(tmp_path_factory: pytest.TempPathFactory) -> None:
    """tensorflow-cpu (scripts/capture_tf_cpu.py) records its `mklcpu` allocator's events on the
    compute threads: the CPU's row, equal to the converter's peak stats (its peak time is the
    event's offset in its thread's line, which starts a few µs after the profile; the peak is
    reached several times on two threads)."""
    from test_real_capture import _capture

    f = _capture(tmp_path_factory, "tf_memory", "--slow-map-ms", "5")
    data = open(f.path, "rb").read()
    doc = _memory(data, f.path, f.host)
    theirs = convert(data, "memory_profile")["memoryProfilePerAllocator"]
    assert "mklcpu" in theirs or "cpu" in theirs
    _assert_agrees(doc, theirs, _peak_events(data))
    assert all(r["device"] == -1 and r["peak_allocated_bytes"] > 0 for r in doc["rows"]) and not doc["notes"]
    assert os.path.getsize(f.path) > 10_000
