"""The memory table: allocated and reserved memory per device, its peak and what allocated around it."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from tb_gpu_advisor.model.analysis import Analysis
from tb_gpu_advisor.model.profile import PYTORCH, Kind
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
    column("allocator", "Allocator", None, False),
    column("peak_allocated_bytes", "Peak allocated (bytes)", "bytes"),
    column("peak_reserved_bytes", "Peak reserved (bytes)", "bytes"),
    column("stack_reserved_bytes", "Stack reserved at peak (bytes)", "bytes"),
    column("peak_time_ms", "Peak at (ms)", "ms"),
    column("free_bytes", "Free at peak (bytes)", "bytes"),
    column("fragmentation_pct", "Fragmentation at peak (%)", "%"),
    column("lifetime_peak_bytes", "Peak since start (bytes)", "bytes"),
    column("capacity_bytes", "Memory (bytes)", "bytes"),
    column("headroom_bytes", "Headroom (bytes)", "bytes"),
]
AROUND_PEAK = 20  # allocations listed before each device's peak
_GPU_ALLOCATOR = re.compile(r"GPU_(\d+)_bfc$")


@dataclasses.dataclass
class _Curve:
    """One allocator's records over the capture. `alloc` is what the curve draws; XSpace adds the
    TensorFlow allocator's own figures after each event."""

    device: int
    allocator: str
    label: str
    t: np.ndarray
    alloc: np.ndarray
    reserved: np.ndarray | None
    nbytes: np.ndarray  # the change each record made (> 0: an allocation)
    stack: np.ndarray | None = None
    free: np.ndarray | None = None
    fragmentation: np.ndarray | None = None
    lifetime_peak: np.ndarray | None = None

    def peak(self) -> int:
        """The record at the peak: PyTorch, the first with the most allocated; XSpace, as the profile
        plugin's memory profile counts it, the last with the most heap allocated plus stack reserved."""
        if self.stack is None:
            return int(np.argmax(self.alloc))
        in_use = self.alloc + self.stack
        return int(np.flatnonzero(in_use == in_use.max())[-1])


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


def _xspace_curves(a: Analysis) -> list[_Curve]:
    """One curve per allocator of the XSpace's MemoryAllocation/Deallocation events, keyed by its
    name as the profile plugin's memory profile keys them: `GPU_<id>_bfc` is GPU <id>, any other
    (`mklcpu`, `cpu`, `gpu_host_bfc`: host memory) the CPU."""
    h = a.host
    m = np.flatnonzero(np.isin(h.kind, np.array([Kind.MEMORY_ALLOC, Kind.MEMORY_FREE], np.int8)))
    if not len(m):
        return []

    def col(name: str) -> np.ndarray:  # a column of every host event, for its few memory events: not kept
        return h.peek_at(name, m)

    allocator = col("allocator")
    m, mine = m[allocator >= 0], allocator >= 0
    allocator, heap_all = allocator[mine], col("bytes")[mine]
    stack_all, free_all = col("reserved_bytes")[mine], col("available_bytes")[mine]
    frag_all, peak_all = col("fragmentation")[mine], col("peak_bytes")[mine]
    curves = []
    for alloc_id in np.unique(allocator).tolist():
        k = allocator == alloc_id
        name = a.profile.names[alloc_id]
        gpu = _GPU_ALLOCATOR.match(name)
        device = int(gpu.group(1)) if gpu else -1
        heap = heap_all[k]  # the allocator's bytes in use after each event
        curves.append(
            _Curve(
                device,
                name,
                f"GPU {device}" if gpu else f"CPU ({name})",
                h.start_ps[m[k]],
                heap,
                None,
                np.diff(heap, prepend=heap[:1]),
                stack=np.maximum(stack_all[k], 0),
                free=free_all[k],
                fragmentation=frag_all[k].astype(np.float64),
                lifetime_peak=peak_all[k],
            )
        )
    return sorted(curves, key=lambda c: (c.device < 0, c.device, c.allocator))


def _at(values: np.ndarray | None, i: int) -> int | None:
    return int(values[i]) if values is not None and values[i] >= 0 else None


def memory(a: Analysis, group: str | None = None) -> Table:
    """Memory per device over the capture: PyTorch's `[memory]` records (allocated and reserved as
    the allocator's totals; where the trace has no totals, PyTorch before 1.10, the running sum of the
    records' bytes per device is the allocated curve, as torch-tb-profiler does), or XSpace's allocator
    events (one row per allocator: heap bytes allocated, stack reserved, free and fragmentation after
    each event, and its peak since the program started). The peak, when it happens, the allocations
    just before it with the op running then, and headroom against the GPU's memory (its size less
    the peak reserved, or the memory in use at the peak where reserved is unknown: allocated, plus
    TensorFlow's stack reserved)."""
    p = a.profile
    rows: list[dict] = []
    series: list[dict] = []
    around: list[dict] = []
    notes: list[str] = []
    curves: list[_Curve] = []
    mem = p.memory
    if len(mem):
        for dev in np.unique(mem.device).tolist():
            sel = mem.device == dev
            t, nbytes, allocated, reserved = mem.start_ps[sel], mem.bytes[sel], mem.allocated[sel], mem.reserved[sel]
            alloc = allocated if (allocated >= 0).all() else np.cumsum(nbytes)
            res = reserved if (reserved >= 0).all() else None
            label = "CPU" if dev < 0 else f"GPU {dev}"
            curves.append(_Curve(int(dev), "", label, t, alloc, res, nbytes))
        if not (mem.allocated >= 0).all():
            notes.append(
                "the trace records no allocator totals (PyTorch before 1.10): allocated memory is the sum of the "
                "allocations and frees in the capture, from 0 at its start; reserved memory is unknown"
            )
    else:
        curves = _xspace_curves(a)
        if not curves:
            if p.framework == PYTORCH:
                notes.append("the trace has no memory records: profile with profile_memory=True")
            else:
                notes.append(
                    "the capture has no allocator events: profile with the memory profile on "
                    "(TensorFlow records it by default)"
                )
    capacity = {d.id: d.memory_bytes for d in p.devices}
    for c in curves:
        dev, t = c.device, c.t
        i = c.peak()
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
            for j, name in zip(before.tolist(), _innermost_ops(a, t[before])):
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
    return Table("memory", None, MEMORY_COLUMNS, rows, "peak_allocated_bytes", ("label",), notes, extra)
