"""GPU memory: each GPU's peak use against its capacity."""

from __future__ import annotations

import dataclasses

import numpy as np

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
