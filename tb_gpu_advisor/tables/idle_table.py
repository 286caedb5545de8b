"""The idle table: GPU idle time by cause per stream (as HTA breaks it down) and launch delays."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.measures import EventTable, Kind, Measures, distinct, isin
from tb_gpu_advisor.tables.table import (
    INTEGER,
    US,
    Table,
    column,
    num,
    table,
    trace_link,
)

IDLE_COLUMNS = [
    column("device", "GPU", cell=INTEGER),
    column("stream", "Stream", cell=INTEGER),
    column("idle_us", "Idle (µs)", "us"),
    column("host_wait_us", "Host wait (µs)", "us"),
    column("kernel_wait_us", "Kernel wait (µs)", "us"),
    column("other_us", "Other (µs)", "us"),
    column("idle_pct", "Idle (% of the stream's span)", "pct"),
]
KERNEL_WAIT_PS = 30 * 1_000_000  # HTA's consecutive_kernel_delay: 30 µs
# the calls whose launch delay HTA measures (get_cuda_kernel_launch_stats), and HIP's
LAUNCH_NAMES = (
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "hipLaunchKernel",
    "hipExtLaunchKernel",
    "hipMemcpyAsync",
    "hipMemsetAsync",
)
_DEVICE_WORK = np.array(
    [Kind.KERNEL, Kind.COLLECTIVE, Kind.MEMSET, Kind.MEMCPY_H2D, Kind.MEMCPY_D2H, Kind.MEMCPY_D2D, Kind.MEMCPY_P2P],
    np.int8,
)


def _runtime_start(h: EventTable, corr: np.ndarray) -> np.ndarray:
    """For each correlation id, the start of the host runtime call with it (NaN where none)."""
    rt = np.flatnonzero(h.corr >= 0)
    keys, first = np.unique(h.corr[rt], return_index=True)
    out = np.full(len(corr), np.nan)
    if len(keys):
        pos = np.minimum(np.searchsorted(keys, corr), len(keys) - 1)
        found = keys[pos] == corr
        out[found] = h.start_ps[rt[first[pos[found]]]]
    return out


LAUNCH_DELAY = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "mean_us": {"type": ["number", "null"]},
        "p50_us": {"type": ["number", "null"]},
        "p95_us": {"type": ["number", "null"]},
        "max_us": {"type": ["number", "null"]},
    },
    "required": ["count", "mean_us", "p50_us", "p95_us", "max_us"],
    "additionalProperties": False,
}


@table(
    name="idle",
    label="Idle time",
    noun="streams",
    order=50,
    row="one GPU stream",
    row_type="IdleRow",
    columns=IDLE_COLUMNS,
    extra={"launch_delay": LAUNCH_DELAY},
)
def idle(m: Measures, group: str | None = None) -> Table:
    """GPU idle time per stream by cause, as Holistic Trace Analysis 0.5.0 breaks it down
    (`get_idle_time_breakdown`): between consecutive kernels, copies and memsets of a stream, the
    gap (the next start less the previous end) is host wait when the next one's runtime call started
    after the previous one ended (the host was late to enqueue it), kernel wait when it is shorter
    than 30 µs (launch overhead between back-to-back kernels), else other. Over the whole capture.
    Launch delay: from the end of each launch call (cudaLaunchKernel, cudaMemcpyAsync, ...) to the
    start of its device work, negative ones counted as 0 (HTA's `get_cuda_kernel_launch_stats`)."""
    h = m.host
    rows: list[dict] = []
    for g in m.gpus:
        ev = g.events
        work = np.isin(ev.kind, _DEVICE_WORK)
        for si in distinct(ev.stream[work]).tolist():
            sel = np.flatnonzero(work & (ev.stream == si))
            sel = sel[np.argsort(ev.start_ps[sel], kind="stable")]
            start, end = ev.start_ps[sel], ev.end_ps[sel]
            if len(sel) < 2:
                gap = np.zeros(0, np.int64)
                host_wait = kernel_wait = np.zeros(0, bool)
            else:
                prev_end = end[:-1]
                gap = start[1:] - prev_end
                runtime = _runtime_start(h, ev.corr[sel[1:]])
                with np.errstate(invalid="ignore"):
                    host_wait = runtime > prev_end
                kernel_wait = ~host_wait & (gap < KERNEL_WAIT_PS)
            other = ~host_wait & ~kernel_wait
            span = int(end.max() - start.min()) if len(sel) else 0
            total = int(gap.sum())
            i = int(np.argmax(gap)) if len(gap) else -1
            rows.append(
                {
                    "device": g.id,
                    "stream": m.stream_id(si),
                    "idle_us": num(total / US),
                    "host_wait_us": num(int(gap[host_wait].sum()) / US),
                    "kernel_wait_us": num(int(gap[kernel_wait].sum()) / US),
                    "other_us": num(int(gap[other].sum()) / US),
                    "idle_pct": num(100 * total / span if span > 0 else None),
                    "trace": trace_link(int(end[i]), int(start[i + 1]), g.id) if i >= 0 and gap[i] > 0 else None,
                }
            )
    notes = [] if rows else ["the capture has no GPU work"]
    launch = _launch_delay(m)
    if launch["count"] == 0 and rows:
        notes.append("no launch call pairs with its device work (no correlation ids): launch delay unknown")
    return Table("idle", None, [c.json() for c in IDLE_COLUMNS], rows, "idle_us", (), notes, {"launch_delay": launch})


def _launch_delay(m: Measures) -> dict:
    h = m.host
    ids = [i for i in (m.name_id(n) for n in LAUNCH_NAMES) if i >= 0]
    calls = np.flatnonzero(isin(h.name, np.asarray(ids, np.int32)) & (h.corr >= 0))
    delays = []
    for g in m.gpus:
        ev = g.events
        dev = np.flatnonzero(ev.corr >= 0)
        if not len(dev) or not len(calls):
            continue
        order = np.argsort(h.corr[calls], kind="stable")
        keys = h.corr[calls][order]
        pos = np.searchsorted(keys, ev.corr[dev])
        pos = np.minimum(pos, len(keys) - 1)
        hit = keys[pos] == ev.corr[dev]
        call = calls[order][pos[hit]]
        delays.append(np.maximum(ev.start_ps[dev[hit]] - h.end_ps[call], 0))
    d = np.concatenate(delays) / US if delays else np.zeros(0)
    if not len(d):
        return {"count": 0, "mean_us": None, "p50_us": None, "p95_us": None, "max_us": None}
    return {
        "count": int(len(d)),
        "mean_us": num(float(d.mean())),
        "p50_us": num(float(np.percentile(d, 50))),
        "p95_us": num(float(np.percentile(d, 95))),
        "max_us": num(float(d.max())),
    }
