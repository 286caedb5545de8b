"""GPU memory: each GPU's peak use against its capacity, and the memory curves of the capture (what the
memory table shows and a finding about memory points at)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from tb_gpu_advisor.model.arrays import distinct
from tb_gpu_advisor.model.profile import EventTable, Kind, Profile


@dataclasses.dataclass(frozen=True, slots=True)
class MemoryPeak:
    device_id: int
    peak_gib: float
    memory_gib: float
    peak_pct: float
    from_capture: bool  # the peak of what was allocated in the capture: a lower bound


def memory_peaks(p: Profile, host: EventTable) -> tuple[MemoryPeak, ...]:
    """Per GPU with a memory size and allocator records: peak bytes in use against capacity. XSpace:
    the GPU's BFC allocator's `peak_bytes_in_use`; PyTorch: the largest `Total Allocated` of its
    `[memory]` records, or, in traces that do not record totals (PyTorch before 1.10), the largest
    running sum of their bytes, which leaves out what was allocated before the capture began
    (`from_capture`: the peak is then a lower bound)."""
    h = host
    # the host table's allocator columns are read here only, at the memory events: not kept on it
    at = np.flatnonzero((h.kind == Kind.MEMORY_ALLOC) | (h.kind == Kind.MEMORY_FREE))
    peak_bytes = h.peek_at("peak_bytes", at) if len(at) else np.zeros(0, np.int64)
    at, peak_bytes = at[peak_bytes >= 0], peak_bytes[peak_bytes >= 0]
    allocator = h.peek_at("allocator", at) if len(at) else np.zeros(0, np.int32)
    records = p.memory
    rows = []
    for d in p.devices:
        if not d.memory_bytes:
            continue
        alloc = p.names.get(f"GPU_{d.id}_bfc")
        m = allocator == alloc if alloc >= 0 else np.zeros(len(at), bool)
        from_capture = False
        on_device = records.device == d.id
        if np.any(m):
            peak = int(peak_bytes[m].max())
        elif np.any(on_device):
            totals = records.allocated[on_device]
            from_capture = not np.any(totals >= 0)
            peak = int(np.cumsum(records.bytes[on_device]).max()) if from_capture else int(totals.max())
        else:
            continue
        rows.append(
            MemoryPeak(
                device_id=d.id,
                peak_gib=peak / 2**30,
                memory_gib=d.memory_bytes / 2**30,
                peak_pct=100.0 * peak / d.memory_bytes,
                from_capture=from_capture,
            )
        )
    return tuple(rows)


# XSpace's allocators: `GPU_<id>_bfc` is GPU <id>, any other (`mklcpu`, `cpu`, `gpu_host_bfc`) host memory
_GPU_ALLOCATOR = re.compile(r"GPU_(\d+)_bfc$")


@dataclasses.dataclass(frozen=True, slots=True)
class MemoryCurve:
    """One allocator's (or, with PyTorch's `[memory]` records, one device's) records over the capture.
    `alloc` is what the curve draws; XSpace adds the TensorFlow allocator's own figures after each
    event. `peak`: the record at the peak (see `memory_curves`)."""

    device: int  # -1: the host
    allocator: str  # XSpace: the allocator's name; PyTorch: ""
    label: str
    t: np.ndarray  # ps
    alloc: np.ndarray
    reserved: np.ndarray | None
    nbytes: np.ndarray  # the change each record made (> 0: an allocation)
    peak: int
    stack: np.ndarray | None = None
    free: np.ndarray | None = None
    fragmentation: np.ndarray | None = None
    lifetime_peak: np.ndarray | None = None

    @property
    def peak_ps(self) -> int:
        """When the peak is (ps from the profile's start)."""
        return int(self.t[self.peak])


@dataclasses.dataclass(frozen=True, slots=True)
class MemoryCurves:
    """Every memory curve of the capture, and what its records are: PyTorch's `[memory]` records
    (`records`), with the allocator's totals (`totals`) or without (PyTorch before 1.10), else
    XSpace's allocator events."""

    curves: tuple[MemoryCurve, ...]
    records: bool
    totals: bool


def _peak(alloc: np.ndarray, stack: np.ndarray | None) -> int:
    """The record at the peak: PyTorch, the first with the most allocated; XSpace, as the profile
    plugin's memory profile counts it, the last with the most heap allocated plus stack reserved."""
    if stack is None:
        return int(np.argmax(alloc))
    in_use = alloc + stack
    return int(np.flatnonzero(in_use == in_use.max())[-1])


def _xspace_curves(p: Profile, host: EventTable) -> list[MemoryCurve]:
    """One curve per allocator of the XSpace's MemoryAllocation/Deallocation events, keyed by its
    name as the profile plugin's memory profile keys them."""
    h = host
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
    for alloc_id in distinct(allocator).tolist():
        k = allocator == alloc_id
        name = p.names[alloc_id]
        gpu = _GPU_ALLOCATOR.match(name)
        device = int(gpu.group(1)) if gpu else -1
        heap = heap_all[k]  # the allocator's bytes in use after each event
        stack = np.maximum(stack_all[k], 0)
        curves.append(
            MemoryCurve(
                device,
                name,
                f"GPU {device}" if gpu else f"CPU ({name})",
                h.start_ps[m[k]],
                heap,
                None,
                np.diff(heap, prepend=heap[:1]),
                _peak(heap, stack),
                stack=stack,
                free=free_all[k],
                fragmentation=frag_all[k].astype(np.float64),
                lifetime_peak=peak_all[k],
            )
        )
    return sorted(curves, key=lambda c: (c.device < 0, c.device, c.allocator))


def memory_curves(p: Profile, host: EventTable) -> MemoryCurves:
    """Memory per device over the capture: PyTorch's `[memory]` records (allocated and reserved as
    the allocator's totals; where the trace has no totals, PyTorch before 1.10, the running sum of the
    records' bytes per device is the allocated curve, as torch-tb-profiler does), or XSpace's allocator
    events (one curve per allocator: heap bytes allocated, stack reserved, free and fragmentation after
    each event, and its peak since the program started)."""
    mem = p.memory
    if not len(mem):
        return MemoryCurves(tuple(_xspace_curves(p, host)), False, False)
    curves = []
    for dev in distinct(mem.device).tolist():
        sel = mem.device == dev
        t, nbytes, allocated, reserved = mem.start_ps[sel], mem.bytes[sel], mem.allocated[sel], mem.reserved[sel]
        alloc = allocated if (allocated >= 0).all() else np.cumsum(nbytes)
        res = reserved if (reserved >= 0).all() else None
        label = "CPU" if dev < 0 else f"GPU {dev}"
        curves.append(MemoryCurve(int(dev), "", label, t, alloc, res, nbytes, _peak(alloc, None)))
    return MemoryCurves(tuple(curves), True, bool((mem.allocated >= 0).all()))
