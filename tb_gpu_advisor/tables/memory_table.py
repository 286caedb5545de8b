"""The memory table: allocated and reserved memory per device, its peak and what allocated around it."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.profile import PYTORCH, Kind
from tb_gpu_advisor.tables.table import (
    MAX_POINTS,
    MS,
    Table,
    column,
    num,
    trace_link,
)

MEMORY_COLUMNS = [
    column("label", "Device", None, False),
    column("device", "Id"),
    column("peak_allocated_bytes", "Peak allocated (bytes)", "bytes"),
    column("peak_reserved_bytes", "Peak reserved (bytes)", "bytes"),
    column("peak_time_ms", "Peak at (ms)", "ms"),
    column("capacity_bytes", "Memory (bytes)", "bytes"),
    column("headroom_bytes", "Headroom (bytes)", "bytes"),
]
AROUND_PEAK = 20  # allocations listed before each device's peak


def _downsample(t: np.ndarray, alloc: np.ndarray, reserved: np.ndarray | None) -> list[list]:
    """At most MAX_POINTS points: in each run of consecutive records, the one with the most allocated
    (so the peak is always a point)."""
    n = len(t)
    if n > MAX_POINTS:
        edges = np.linspace(0, n, MAX_POINTS + 1).astype(np.int64)
        keep = np.array([lo + int(np.argmax(alloc[lo:hi])) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo])
    else:
        keep = np.arange(n)
    return [
        [round(float(t[i]) / MS, 6), int(alloc[i]), int(reserved[i]) if reserved is not None else None]
        for i in keep.tolist()
    ]


def _innermost_ops(a: Analysis, times: np.ndarray) -> list[str]:
    """The innermost framework op running on the host at each time (on any thread: the latest
    started of those covering it), "" where none."""
    h = a.host
    ops = np.flatnonzero((h.kind == Kind.FRAMEWORK_OP) & (h.op >= 0))
    out = []
    starts, ends = h.start_ps[ops], h.end_ps[ops]
    for t in times.tolist():
        j = int(np.searchsorted(starts, t, side="right"))  # host events are sorted by start
        best = ""
        for k in range(j - 1, max(j - 2000, 0) - 1, -1):
            if ends[k] >= t:
                best = a.profile.op_name(int(h.op[ops[k]]))
                break
        out.append(best)
    return out


def memory(a: Analysis, group: str | None = None) -> Table:
    """Memory per device over the capture: PyTorch's `[memory]` records (allocated and reserved as
    the allocator's totals; where the trace has no totals, PyTorch before 1.10, the running sum of the
    records' bytes per device is the allocated curve, as torch-tb-profiler does), or XSpace's GPU
    allocator events (`GPU_<id>_bfc`: bytes allocated after each event). The peak, when it happens,
    the allocations just before it with the op running then, and headroom against the GPU's memory
    (its size less the peak reserved, or allocated where reserved is unknown)."""
    p = a.profile
    rows: list[dict] = []
    series: list[dict] = []
    around: list[dict] = []
    notes: list[str] = []
    curves: list[tuple[int, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]] = []
    mem = p.memory
    if len(mem):
        for dev in np.unique(mem.device).tolist():
            sel = mem.device == dev
            t, nbytes, allocated, reserved = mem.start_ps[sel], mem.bytes[sel], mem.allocated[sel], mem.reserved[sel]
            alloc = allocated if (allocated >= 0).all() else np.cumsum(nbytes)
            res = reserved if (reserved >= 0).all() else None
            curves.append((int(dev), t, alloc, res, nbytes))
        if not (mem.allocated >= 0).all():
            notes.append(
                "the trace records no allocator totals (PyTorch before 1.10): allocated memory is the sum of the "
                "allocations and frees in the capture, from 0 at its start; reserved memory is unknown"
            )
    else:
        h = a.host
        m = np.flatnonzero(np.isin(h.kind, np.array([Kind.MEMORY_ALLOC, Kind.MEMORY_FREE], np.int8)))
        # the allocator columns of every host event, for its few memory events: read, not kept (peek)
        allocator = h.peek("allocator")[m] if len(m) else np.zeros(0, np.int32)
        in_use = h.peek("bytes")[m] if len(m) else np.zeros(0, np.int64)
        for d in p.devices:
            alloc_id = p.names.get(f"GPU_{d.id}_bfc")
            mine = allocator == alloc_id if alloc_id >= 0 else np.zeros(len(m), bool)
            sel = m[mine]
            if len(sel):
                heap = in_use[mine]  # the allocator's bytes in use after each event
                curves.append((d.id, h.start_ps[sel], heap, None, np.diff(heap, prepend=heap[:1])))
        if not curves:
            if p.framework == PYTORCH:
                notes.append("the trace has no memory records: profile with profile_memory=True")
            else:
                notes.append(
                    "the capture has no GPU allocator events: profile with the memory profile on "
                    "(TensorFlow records it by default on GPU)"
                )
    capacity = {d.id: d.memory_bytes for d in p.devices}
    for dev, t, alloc, res, nbytes in curves:
        i = int(np.argmax(alloc))
        label = "CPU" if dev < 0 else f"GPU {dev}"
        cap = capacity.get(dev) if dev >= 0 else None
        peak_res = int(res.max()) if res is not None else None
        peak = int(alloc[i])
        rows.append(
            {
                "device": dev,
                "label": label,
                "peak_allocated_bytes": peak,
                "peak_reserved_bytes": peak_res,
                "peak_time_ms": num(float(t[i]) / MS, 6),
                "capacity_bytes": cap,
                "headroom_bytes": (cap - (peak_res if peak_res is not None else peak)) if cap else None,
                "trace": trace_link(int(t[i]), int(t[i]), dev if dev >= 0 else None),
            }
        )
        series.append({"device": dev, "label": label, "capacity_bytes": cap, "points": _downsample(t, alloc, res)})
        before = np.flatnonzero(nbytes[: i + 1] > 0)[-AROUND_PEAK:]
        if len(before):
            for j, name in zip(before.tolist(), _innermost_ops(a, t[before])):
                around.append(
                    {"device": dev, "name": name, "bytes": int(nbytes[j]), "t_ms": round(float(t[j]) / MS, 6)}
                )
    extra = {"series": series, "around_peak": around}
    return Table("memory", None, MEMORY_COLUMNS, rows, "peak_allocated_bytes", ("label",), notes, extra)
