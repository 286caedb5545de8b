"""The memory table: allocated and reserved memory per device, its peak and what allocated around it."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.measures import PYTORCH, Measures
from tb_gpu_advisor.tables.table import (
    COUNT,
    INTEGER,
    MAX_POINTS,
    MS,
    Table,
    column,
    num,
    table,
    trace_link,
)

MEMORY_COLUMNS = [
    column("label", "Device", None, False),
    column("device", "Id", cell=INTEGER),
    column(
        "allocator",
        "Allocator",
        None,
        False,
        doc="XSpace: the allocator's name (GPU_0_bfc, mklcpu, gpu_host_bfc); PyTorch: empty",
    ),
    column("peak_allocated_bytes", "Peak allocated (bytes)", "bytes", cell=COUNT),
    column(
        "peak_reserved_bytes",
        "Peak reserved (bytes)",
        "bytes",
        cell=COUNT,
        doc="PyTorch: the caching allocator's most reserved memory; null for XSpace",
    ),
    column(
        "stack_reserved_bytes",
        "Stack reserved at peak (bytes)",
        "bytes",
        cell=COUNT,
        doc="XSpace: TensorFlow's stack-reserved bytes at the peak (the peak is heap allocated plus this)",
    ),
    column("peak_time_ms", "Peak at (ms)", "ms"),
    column(
        "free_bytes", "Free at peak (bytes)", "bytes", cell=COUNT, doc="XSpace: the allocator's free memory at the peak"
    ),
    column(
        "fragmentation_pct", "Fragmentation at peak (%)", "%", doc="XSpace: the allocator's fragmentation at the peak"
    ),
    column(
        "lifetime_peak_bytes",
        "Peak since start (bytes)",
        "bytes",
        cell=COUNT,
        doc="XSpace: the allocator's peak bytes in use since the program started, at its last event",
    ),
    column("capacity_bytes", "Memory (bytes)", "bytes", cell=COUNT),
    column("headroom_bytes", "Headroom (bytes)", "bytes", cell=COUNT),
]
SERIES = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "device": {"type": "integer"},
            "allocator": {"type": "string"},
            "label": {"type": "string"},
            "capacity_bytes": {"type": ["integer", "null"]},
            "points": {
                "type": "array",
                "items": {
                    "type": "array",
                    "prefixItems": [{"type": "number"}, {"type": "number"}, {"type": ["number", "null"]}],
                    "minItems": 3,
                    "maxItems": 3,
                },
            },
        },
        "required": ["device", "allocator", "label", "capacity_bytes", "points"],
        "additionalProperties": False,
    },
}
AROUND = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "device": {"type": "integer"},
            "allocator": {"type": "string"},
            "name": {"type": "string"},
            "bytes": {"type": "integer"},
            "t_ms": {"type": "number"},
        },
        "required": ["device", "allocator", "name", "bytes", "t_ms"],
        "additionalProperties": False,
    },
}
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


def _at(values: np.ndarray | None, i: int) -> int | None:
    return int(values[i]) if values is not None and values[i] >= 0 else None


def _peak_ms(m: Measures, device: int | None) -> float | None:
    """When a finding about memory points: its device's peak (the last curve of the device), else the
    first curve's; the peak's time as the table's `peak_time_ms` gives it."""
    peaks = {c.device: num(float(c.peak_ps) / MS, 6) for c in m.memory_curves.curves}
    return peaks.get(device) if device is not None else next(iter(peaks.values()), None)


@table(
    name="memory",
    label="Memory",
    noun="devices",
    order=30,
    row="one device (-1: the host), or with XSpace one allocator",
    row_type="MemoryRow",
    columns=MEMORY_COLUMNS,
    extra={"series": SERIES, "around_peak": AROUND},
    at_ms=_peak_ms,
)
def memory(m: Measures, group: str | None = None) -> Table:
    """Memory per device over the capture (its curves: `Measures.memory_curves`, PyTorch's `[memory]`
    records or XSpace's allocator events). The peak, when it happens, the allocations just before it
    with the op running then, and headroom against the GPU's memory (its size less the peak reserved,
    or the memory in use at the peak where reserved is unknown: allocated, plus TensorFlow's stack
    reserved)."""
    rows: list[dict] = []
    series: list[dict] = []
    around: list[dict] = []
    notes: list[str] = []
    found = m.memory_curves
    if found.records and not found.totals:
        notes.append(
            "the trace records no allocator totals (PyTorch before 1.10): allocated memory is the sum of the "
            "allocations and frees in the capture, from 0 at its start; reserved memory is unknown"
        )
    elif not found.records and not found.curves:
        if m.framework == PYTORCH:
            notes.append("the trace has no memory records: profile with profile_memory=True")
        else:
            notes.append(
                "the capture has no allocator events: profile with the memory profile on "
                "(TensorFlow records it by default)"
            )
    capacity = {d.id: d.memory_bytes for d in m.devices}
    for c in found.curves:
        dev, t = c.device, c.t
        i = c.peak
        cap = capacity.get(dev) if dev >= 0 else None
        peak_res = int(c.reserved.max()) if c.reserved is not None else None
        peak = int(c.alloc[i])
        stack = _at(c.stack, i)
        in_use = peak_res if peak_res is not None else peak + (stack or 0)
        frag = float(c.fragmentation[i]) if c.fragmentation is not None else None
        rows.append(
            {
                "device": dev,
                "label": c.label,
                "allocator": c.allocator,
                "peak_allocated_bytes": peak,
                "peak_reserved_bytes": peak_res,
                "stack_reserved_bytes": stack,
                "peak_time_ms": num(float(t[i]) / MS, 6),
                "free_bytes": _at(c.free, i),
                "fragmentation_pct": num(frag * 100, 3) if frag is not None else None,
                "lifetime_peak_bytes": _at(c.lifetime_peak, len(t) - 1),
                "capacity_bytes": cap,
                "headroom_bytes": (cap - in_use) if cap else None,
                "trace": trace_link(int(t[i]), int(t[i]), dev if dev >= 0 else None),
            }
        )
        series.append(
            {
                "device": dev,
                "allocator": c.allocator,
                "label": c.label,
                "capacity_bytes": cap,
                "points": _downsample(t, c.alloc, c.reserved),
            }
        )
        before = np.flatnonzero(c.nbytes[: i + 1] > 0)[-AROUND_PEAK:]
        if len(before):
            for j, name in zip(before.tolist(), m.ops_at(t[before])):
                around.append(
                    {
                        "device": dev,
                        "allocator": c.allocator,
                        "name": name,
                        "bytes": int(c.nbytes[j]),
                        "t_ms": round(float(t[j]) / MS, 6),
                    }
                )
    extra = {"series": series, "around_peak": around}
    return Table(
        "memory", None, [c.json() for c in MEMORY_COLUMNS], rows, "peak_allocated_bytes", ("label",), notes, extra
    )
