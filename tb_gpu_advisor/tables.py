"""The tables people open after the advice: kernels, ops, memory, input pipeline, idle time.

Each table is built once per analysis (`build`) over the whole capture, as PyTorch's TensorBoard
plugin and the Profile tab count, and answered sorted, filtered and paged (`answer`): the `/table`
route and the `table` command give the same object (schema.json `TableResponse`). Times are µs; a
row's `trace` is its longest instance, for the trace viewer.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterable

import numpy as np

from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.checks.texts import MULTI_WORKER_LOADER, tf_data_present
from tb_gpu_advisor.profile import PYTORCH, Flag, Kind

TABLES = ("kernels", "ops", "memory", "input", "idle")
GROUPS = {"kernels": ("name", "name_op"), "ops": ("op", "op_shape")}
MAX_LIMIT = 1000
DEFAULT_LIMIT = 200
MAX_POINTS = 2000  # memory curve points per device
US = 1e6  # ps per µs
MS = 1e9  # ps per ms


class TableError(ValueError):
    """A table request that cannot be answered: the message is for the user."""


@dataclasses.dataclass
class Table:
    """One table as built: every row, in no particular order."""

    table: str
    group: str | None
    columns: list[dict]
    rows: list[dict]
    sort: str  # the default sort column (descending)
    search: tuple[str, ...]  # the columns `q` looks in
    notes: list[str] = dataclasses.field(default_factory=list)
    extra: dict = dataclasses.field(default_factory=dict)  # answer-level fields (series, launch_delay, ...)
    # row orders by (column, descending) and the rows' lower-cased search text, made on first use: a
    # request then only masks and pages (a 100,000-row table re-sorted in Python took 0.4-1.9 s)
    cache: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def order(self, key: str, desc: bool) -> np.ndarray:
        """Row indices sorted by `key` (text case-insensitively), ties in row order, missing values last."""
        got = self.cache.get((key, desc))
        if got is None:
            values = [r.get(key) for r in self.rows]
            present = np.array([v is not None for v in values], bool)
            kept = [v for v in values if v is not None]
            if all(isinstance(v, (int, float)) for v in kept):
                column = np.array(kept, np.float64)
            else:
                column = np.array([v.lower() if isinstance(v, str) else v for v in kept], dtype=object)
            rank = np.unique(column, return_inverse=True)[1].reshape(-1) if len(kept) else np.zeros(0, np.intp)
            at = np.flatnonzero(present)
            got = np.concatenate([at[np.argsort(-rank if desc else rank, kind="stable")], np.flatnonzero(~present)])
            self.cache[(key, desc)] = got
        return got

    def haystack(self) -> list[str]:
        """Each row's search columns, lower-cased, joined by a character no query matches across."""
        got = self.cache.get("haystack")
        if got is None:
            got = self.cache["haystack"] = [
                "\x00".join(str(r.get(k) or "").lower() for k in self.search) for r in self.rows
            ]
        return got


def _col(key: str, label: str, unit: str | None = None, numeric: bool = True) -> dict:
    return {"key": key, "label": label, "unit": unit, "numeric": numeric}


def _trace(start_ps: int, end_ps: int, device: int | None) -> dict:
    return {"start_ms": start_ps / MS, "end_ms": end_ps / MS, "device": device}


def _num(x: float | None, digits: int = 3) -> float | None:
    if x is None or not np.isfinite(x):
        return None
    return round(float(x), digits)


@dataclasses.dataclass
class _Groups:
    """Events grouped by an integer key: per group its count, total, min and max duration, and its
    longest event (the first in `order` of each group)."""

    keys: np.ndarray
    inverse: np.ndarray
    count: np.ndarray
    total: np.ndarray
    longest: np.ndarray  # event index of each group's longest event
    shortest: np.ndarray

    @staticmethod
    def of(keys: np.ndarray, dur: np.ndarray) -> _Groups:
        uniq, inv = np.unique(keys, return_inverse=True)
        n = len(uniq)
        count = np.bincount(inv, minlength=n)
        total = np.bincount(inv, weights=dur.astype(np.float64), minlength=n)
        order = np.lexsort((-dur, inv))  # by group, the longest first
        first = np.searchsorted(inv[order], np.arange(n))
        last = np.r_[first[1:], len(order)] - 1
        return _Groups(uniq, inv, count, total, order[first], order[last])

    def weighted(self, values: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """Per group, the mean of `values` weighted by `weight`, over the finite values (NaN where none)."""
        ok = np.isfinite(values)
        w = np.where(ok, weight, 0).astype(np.float64)
        num = np.bincount(self.inverse, weights=np.where(ok, values, 0) * w, minlength=len(self.keys))
        den = np.bincount(self.inverse, weights=w, minlength=len(self.keys))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def short_name(name: str) -> str:
    """A kernel's name without return type, namespaces, template arguments and parameters:
    `void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)` -> `vectorized_elementwise_kernel`."""
    s = name.strip()
    if s.startswith("void "):
        s = s[5:]
    cut = len(s)
    for i, c in enumerate(s):
        if c in "<(":
            cut = i
            break
    head = s[:cut].strip().rsplit("::", 1)[-1].strip()
    return (head or s)[:200]


# -- kernels -------------------------------------------------------------------------------------

KERNEL_COLUMNS = [
    _col("short_name", "Kernel", None, False),
    _col("op", "Op", None, False),
    _col("device", "GPU"),
    _col("calls", "Calls"),
    _col("total_us", "Total (µs)", "us"),
    _col("mean_us", "Mean (µs)", "us"),
    _col("min_us", "Min (µs)", "us"),
    _col("max_us", "Max (µs)", "us"),
    _col("device_share_pct", "Share of GPU kernel time (%)", "pct"),
    _col("grid", "Grid", None, False),
    _col("block", "Block", None, False),
    _col("registers", "Registers / thread"),
    _col("shared_memory_bytes", "Shared memory (bytes)", "bytes"),
    _col("sm_efficiency_pct", "Est. SM efficiency (%)", "pct"),
    _col("occupancy_pct", "Est. achieved occupancy (%)", "pct"),
    _col("tensor_cores", "Tensor Cores", None, False),
    _col("name", "Full name", None, False),
]


# an AMD kernel on the matrix cores: MFMA instructions, or Tensile's matrix-instruction tag (`_MI32x32x8x1`)
AMD_MATRIX = re.compile(r"mfma|_MI\d+x\d+x\d+", re.IGNORECASE)
AMD_LABELS = {
    "device": "GPU",
    "sm_efficiency_pct": "Est. CU efficiency (%)",
    "tensor_cores": "Matrix cores (MFMA)",
}


def _dims(x: int, y: int, z: int) -> str:
    return f"{x},{y},{z}" if x > 0 else ""


def kernels(a: Analysis, group: str = "name") -> Table:
    """Kernels (NCCL's included; copies and memsets are not kernels) of each GPU over the whole
    capture, by name or by name and launching op. Grid, block, registers, shared memory and the op
    are the longest instance's (a kernel launched with several shapes shows the one `trace` opens).
    SM efficiency: min(blocks per SM, 1) weighted by time, blocks per SM being the grid's blocks over
    the GPU's SMs (n/a without the SM count); occupancy: the trace's `est. achieved occupancy %`
    weighted by time over the instances that have it."""
    p = a.profile
    rows: list[dict] = []
    notes: list[str] = []
    for g in a.gpus.values():
        ev = g.events
        sel = np.flatnonzero(np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8)))
        if not len(sel):
            continue
        name, op, dur = ev.name[sel].astype(np.int64), ev.op[sel].astype(np.int64), ev.dur_ps[sel]
        keys = name * (len(p.ops) + 1) + (op + 1) if group == "name_op" else name
        gr = _Groups.of(keys, dur)
        device_total = float(dur.sum())
        grid = ev.grid_x[sel].astype(np.float64) * ev.grid_y[sel] * ev.grid_z[sel]
        sm = g.device.sm_count
        eff = np.where(grid > 0, np.minimum(grid / sm, 1.0), np.nan) if sm else np.full(len(sel), np.nan)
        sm_eff = gr.weighted(eff, dur)
        occ = gr.weighted(ev.occupancy[sel].astype(np.float64), dur)
        tc = np.bincount(gr.inverse, weights=(ev.flags[sel] & Flag.TENSOR_CORE) > 0, minlength=len(gr.keys)) > 0
        start, end = ev.start_ps[sel], ev.end_ps[sel]
        for j in range(len(gr.keys)):
            i = int(gr.longest[j])
            e = int(sel[i])
            full = p.names[int(name[i])]
            launched = ev.grid_x[e] > 0
            total = float(gr.total[j])
            rows.append(
                {
                    "name": full,
                    "short_name": short_name(full),
                    "op": p.op_name(int(op[i])),
                    "device": g.id,
                    "calls": int(gr.count[j]),
                    "total_us": _num(total / US),
                    "mean_us": _num(total / gr.count[j] / US),
                    "min_us": _num(dur[gr.shortest[j]] / US),
                    "max_us": _num(dur[i] / US),
                    "device_share_pct": _num(100 * total / device_total if device_total else None),
                    "grid": _dims(int(ev.grid_x[e]), int(ev.grid_y[e]), int(ev.grid_z[e])),
                    "block": _dims(int(ev.block_x[e]), int(ev.block_y[e]), int(ev.block_z[e])),
                    "registers": int(ev.regs[e]) if launched else None,
                    "shared_memory_bytes": int(ev.shmem[e]) if launched else None,
                    "sm_efficiency_pct": _num(100 * sm_eff[j]),
                    "occupancy_pct": _num(occ[j]),
                    "tensor_cores": bool(tc[j]),
                    "trace": _trace(int(start[i]), int(end[i]), g.id),
                }
            )
        if not sm and (grid > 0).any():
            notes.append(
                f"GPU {g.id}: the trace does not give the GPU's number of SMs, so SM efficiency is not estimated"
            )
    if not rows:
        notes.append("the capture has no GPU kernels")
    columns = KERNEL_COLUMNS
    if a.gpus and all(g.device.is_amd for g in a.gpus.values()):
        # AMD's words: compute units, and matrix cores (MFMA) where NVIDIA has Tensor Cores
        for r in rows:
            r["tensor_cores"] = bool(AMD_MATRIX.search(r["name"]))
        notes = [n.replace("number of SMs", "number of compute units") for n in notes]
        columns = [{**c, "label": AMD_LABELS.get(c["key"], c["label"])} for c in KERNEL_COLUMNS]
    return Table("kernels", group, columns, rows, "total_us", ("name", "short_name", "op"), notes)


# -- ops -----------------------------------------------------------------------------------------

OP_COLUMNS = [
    _col("name", "Op", None, False),
    _col("input_shapes", "Input shapes", None, False),
    _col("calls", "Calls"),
    _col("device_us", "Device self (µs)", "us"),
    _col("host_self_us", "Host self (µs)", "us"),
    _col("host_total_us", "Host total (µs)", "us"),
    _col("stack", "Call stack", None, False),
]
# what nests on a thread: ops, step markers, input waits (a DataLoader's __next__ is an op in
# PyTorch's own tree) and annotations (`nccl:all_to_all` inside `record_param_comms`); runtime
# calls are leaves
_NESTING = (Kind.FRAMEWORK_OP, Kind.STEP, Kind.INPUT_WAIT, Kind.EAGER, Kind.HOST_OTHER)


_TF_OP = re.compile(r"^([^\s:]+):[A-Za-z_]\w*$")  # `name:Type`, a TensorFlow op's host event


def _op_labels(a: Analysis) -> tuple[np.ndarray, list[str]]:
    """Each host event's op (-1: none) and the names of the ops past `Profile.ops`: XSpace's
    runtime ops (ReadVariableOp, AssignVariableOp, ...), which the reader keeps apart from compute
    ops but the Profile tab's op table lists."""
    p, h = a.profile, a.host
    label = np.where(h.kind == Kind.FRAMEWORK_OP, h.op, -1).astype(np.int64)
    extra: list[str] = []
    if p.framework == PYTORCH:
        return label, extra
    other = np.flatnonzero(h.kind == Kind.HOST_OTHER)
    index: dict[str, int] = {}
    by_name: dict[int, int] = {}
    for nid in np.unique(h.name[other]).tolist():
        m = _TF_OP.match(p.names[nid])
        if m:
            by_name[nid] = len(p.ops) + index.setdefault(m.group(1), len(index))
    if by_name:
        ids = np.fromiter(by_name.keys(), np.int64)
        vals = np.fromiter(by_name.values(), np.int64)
        names = h.name[other].astype(np.int64)
        pos = np.minimum(np.searchsorted(ids, names), len(ids) - 1)
        hit = ids[pos] == names
        label[other[hit]] = vals[pos[hit]]
        extra = list(index)
    return label, extra


def _op_calls(a: Analysis, label: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each op call on the host: (host event index, self time ps, merged-away mask). Self time is
    the call's time less its direct children's (nested ops, step markers, input waits, annotations
    and runtime calls on its thread), as PyTorch's plugin and the Profile tab count it. A call whose one child is
    a call of the same op is counted once (PyTorch's plugin merges them as the autograd profiler
    does): the child is merged away and the parent's self time is the child's."""
    h = a.host
    kind = h.kind
    runtime = (kind == Kind.LAUNCH) | ((kind == Kind.HOST_OTHER) & (h.corr >= 0))
    idx = np.flatnonzero(np.isin(kind, np.array(_NESTING, np.int8)) | runtime)
    n = len(idx)
    starts, ends = h.start_ps[idx], h.end_ps[idx]
    # plain lists: the walk below reads them one value at a time
    start_l, end_l, is_rt = starts.tolist(), ends.tolist(), runtime[idx].tolist()
    child_ps = [0] * n  # direct children's time
    kids = [0] * n  # direct children that are not runtime calls
    only_kid = [-1] * n  # the last of them (the only one where kids == 1)
    threads = h.thread[idx]
    for t in np.unique(threads).tolist():
        sel = np.flatnonzero(threads == t)
        order = sel[np.lexsort((-ends[sel], starts[sel]))].tolist()  # by start, the longer first
        stack: list[int] = []
        for j in order:
            s_, e = start_l[j], end_l[j]
            while stack and s_ >= end_l[stack[-1]]:
                stack.pop()
            if stack:
                top = stack[-1]
                if e > end_l[top]:
                    continue  # overlaps its enclosing event without fitting in it: no tree holds it
                child_ps[top] += e - s_
                if not is_rt[j]:
                    kids[top] += 1
                    only_kid[top] = j
            if not is_rt[j]:
                stack.append(j)
    ops = label[idx].tolist()
    dur = (ends - starts).tolist()
    self_ps = np.zeros(len(h), np.int64)
    merged = np.zeros(len(h), bool)
    gone = [False] * n
    op_pos = np.flatnonzero(label[idx] >= 0)
    for j in op_pos[np.lexsort((-ends[op_pos], starts[op_pos]))].tolist():  # parents before children
        if gone[j]:
            continue
        node = j
        while kids[node] == 1 and ops[only_kid[node]] == ops[j]:
            node = only_kid[node]  # one child, the same op: merged into this call
            gone[node] = True
        self_ps[idx[j]] = dur[j] - child_ps[node]
    merged[idx[np.flatnonzero(gone)]] = True
    calls = idx[op_pos]
    calls = calls[~merged[calls]]
    return calls, self_ps[calls], merged


def ops(a: Analysis, group: str = "op") -> Table:
    """Framework ops over the whole capture (PyTorch ATen ops; TensorFlow ops by name; JAX
    primitives): calls and host time from the host's op events, device time from the device
    events attributed to the op (PyTorch: the kernels, copies and memsets launched by the op itself,
    paired through the runtime call's external id; XSpace: the TF or XLA op each GPU event names)."""
    p = a.profile
    h = a.host
    label, extra = _op_labels(a)
    calls, self_ps, _ = _op_calls(a, label)
    op = label[calls]
    n_ops = len(p.ops) + len(extra)
    host_total = np.bincount(op, weights=h.dur_ps[calls].astype(np.float64), minlength=n_ops)
    host_self = np.bincount(op, weights=self_ps.astype(np.float64), minlength=n_ops)
    count = np.bincount(op, minlength=n_ops)
    device = np.zeros(n_ops)
    device_count = np.zeros(n_ops, np.int64)
    longest = np.full(n_ops, -1, np.int64)  # host event index of each op's longest call
    if len(calls):
        order = np.lexsort((-h.dur_ps[calls], op))
        first = np.r_[True, op[order][1:] != op[order][:-1]]
        longest[op[order][first]] = calls[order][first]
    dev_longest: dict[int, tuple[int, int, int]] = {}  # op -> (dur, start, device), ops seen only on a GPU
    for g in a.gpus.values():
        ev = g.events
        sel = ev.op >= 0
        o = ev.op[sel].astype(np.int64)
        device += np.bincount(o, weights=ev.dur_ps[sel].astype(np.float64), minlength=n_ops)
        device_count += np.bincount(o, minlength=n_ops)
        if len(o):
            d, st = ev.dur_ps[sel], ev.start_ps[sel]
            k = np.lexsort((-d, o))
            first = np.r_[True, o[k][1:] != o[k][:-1]]
            for i in k[first].tolist():
                if int(d[i]) > dev_longest.get(int(o[i]), (-1, 0, 0))[0]:
                    dev_longest[int(o[i])] = (int(d[i]), int(st[i]), g.id)
    by_shape = group == "op_shape"
    rows: dict[tuple[str, str], dict] = {}
    for i in np.flatnonzero((count > 0) | (device_count > 0)).tolist():
        name = p.op_name(i) if i < len(p.ops) else extra[i - len(p.ops)]
        shape = p.ops.shape[i] if by_shape and i < len(p.ops.shape) else ""
        key = (name, shape)
        r = rows.get(key)
        if r is None:
            r = rows[key] = {
                "name": name,
                "input_shapes": shape,
                "calls": 0,
                "device_us": 0.0,
                "host_self_us": 0.0,
                "host_total_us": 0.0,
                "stack": "",
                "trace": None,
                "_longest": -1,
            }
        r["calls"] += int(count[i]) if count[i] else int(device_count[i])
        r["device_us"] += device[i] / US
        r["host_self_us"] += host_self[i] / US
        r["host_total_us"] += host_total[i] / US
        if longest[i] >= 0 and h.dur_ps[longest[i]] > r["_longest"]:
            j = int(longest[i])
            r["_longest"] = int(h.dur_ps[j])
            r["trace"] = _trace(int(h.start_ps[j]), int(h.end_ps[j]), None)
        elif r["trace"] is None and i in dev_longest:
            dur_ps, start_ps, gpu = dev_longest[i]
            r["trace"] = _trace(start_ps, start_ps + dur_ps, gpu)
    out = []
    for r in rows.values():
        del r["_longest"]
        for col in ("device_us", "host_self_us", "host_total_us"):
            r[col] = _num(r[col])
        if not a.gpus:
            r["device_us"] = None
        out.append(r)
    notes = []
    if not out:
        notes.append("the capture has no framework ops")
    if by_shape and p.framework == PYTORCH:
        notes.append("input shapes: each op is shown with the first input shapes the trace records for it")
    if p.framework == PYTORCH and out and not any(p.ops.shape):
        notes.append("the trace has no input shapes: profile with record_shapes=True")
    sort = "device_us" if a.gpus else "host_self_us"
    return Table("ops", group, OP_COLUMNS, out, sort, ("name", "input_shapes", "stack"), notes)


# -- memory --------------------------------------------------------------------------------------

MEMORY_COLUMNS = [
    _col("label", "Device", None, False),
    _col("device", "Id"),
    _col("peak_allocated_bytes", "Peak allocated (bytes)", "bytes"),
    _col("peak_reserved_bytes", "Peak reserved (bytes)", "bytes"),
    _col("peak_time_ms", "Peak at (ms)", "ms"),
    _col("capacity_bytes", "Memory (bytes)", "bytes"),
    _col("headroom_bytes", "Headroom (bytes)", "bytes"),
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
        for d in p.devices:
            alloc_id = p.names.get(f"GPU_{d.id}_bfc")
            sel = m[h.allocator[m] == alloc_id] if alloc_id >= 0 else m[:0]
            if len(sel):
                heap = h.bytes[sel]  # the allocator's bytes in use after each event
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
                "peak_time_ms": _num(float(t[i]) / MS, 6),
                "capacity_bytes": cap,
                "headroom_bytes": (cap - (peak_res if peak_res is not None else peak)) if cap else None,
                "trace": _trace(int(t[i]), int(t[i]), dev if dev >= 0 else None),
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


# -- input pipeline ------------------------------------------------------------------------------

INPUT_COLUMNS = [
    _col("stage", "Stage", None, False),
    _col("calls", "Calls"),
    _col("self_us", "Self (µs)", "us"),
    _col("total_us", "Total (µs)", "us"),
    _col("slowest", "Slowest", None, False),
]


def input_pipeline(a: Analysis, group: str | None = None) -> Table:
    """The tf.data stages (`Iterator::Root::Prefetch::ParallelMapV2`...) over the capture: calls,
    total time and self time (a stage's time less the stages nested in it on its thread, as the
    profile plugin's input pipeline analyzer counts it), the slowest stage by self time, and whether
    the pipeline prefetches or maps in parallel. Without tf.data stages (PyTorch), the host's waits
    for input (the DataLoader's `__next__`) are the rows."""
    p = a.profile
    h = a.host
    stage = h.kind == Kind.INPUT_STAGE
    notes: list[str] = []
    iterators = [i for i, n in enumerate(p.names.strings) if n.startswith("Iterator::")]
    if iterators:  # the pipeline's own stages, not the prefetch thread's Produce/Consume marks
        stage &= np.isin(h.name, np.asarray(iterators, np.int32))
    if not stage.any():
        stage = h.kind == Kind.INPUT_WAIT
    idx = np.flatnonzero(stage)
    self_ps = h.dur_ps[idx].astype(np.int64)
    for t in np.unique(h.thread[idx]).tolist():
        sel = np.flatnonzero(h.thread[idx] == t)
        stack: list[int] = []
        for k in sel[np.lexsort((-h.end_ps[idx[sel]], h.start_ps[idx[sel]]))].tolist():
            s = int(h.start_ps[idx[k]])
            while stack and s >= h.end_ps[idx[stack[-1]]]:
                stack.pop()
            if stack:
                self_ps[stack[-1]] -= int(h.dur_ps[idx[k]])
            stack.append(k)
    rows = []
    if len(idx):
        gr = _Groups.of(h.name[idx].astype(np.int64), h.dur_ps[idx])
        own = np.bincount(gr.inverse, weights=self_ps.astype(np.float64), minlength=len(gr.keys))
        slowest = int(np.argmax(own))
        for j in range(len(gr.keys)):
            e = int(idx[gr.longest[j]])
            rows.append(
                {
                    "stage": p.names[int(gr.keys[j])],
                    "calls": int(gr.count[j]),
                    "self_us": _num(own[j] / US),
                    "total_us": _num(gr.total[j] / US),
                    "slowest": j == slowest,
                    "trace": _trace(int(h.start_ps[e]), int(h.end_ps[e]), None),
                }
            )
    names = [str(r["stage"]) for r in rows]
    if not rows:
        notes.append(
            "the capture has no input pipeline events (tf.data stages or a DataLoader's __next__)"
            if p.framework != PYTORCH
            else "the trace shows no DataLoader: the input is not read through torch.utils.data, or not profiled"
        )
    elif p.framework == PYTORCH:
        notes.append(
            "PyTorch traces have no pipeline stages: the rows are the training loop's waits for the next batch"
        )
    # what input.bound's advice reads too, so the table and the advice say the same
    present = tf_data_present(names)
    extra = {
        "prefetch": "`prefetch`" in present,
        "parallel_map": "a parallel `map`" in present or any(MULTI_WORKER_LOADER in n for n in names),
    }
    return Table("input", None, INPUT_COLUMNS, rows, "self_us", ("stage",), notes, extra)


# -- idle time -----------------------------------------------------------------------------------

IDLE_COLUMNS = [
    _col("device", "GPU"),
    _col("stream", "Stream"),
    _col("idle_us", "Idle (µs)", "us"),
    _col("host_wait_us", "Host wait (µs)", "us"),
    _col("kernel_wait_us", "Kernel wait (µs)", "us"),
    _col("other_us", "Other (µs)", "us"),
    _col("idle_pct", "Idle (% of the stream's span)", "pct"),
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


def _runtime_start(h, corr: np.ndarray) -> np.ndarray:
    """For each correlation id, the start of the host runtime call with it (NaN where none)."""
    rt = np.flatnonzero(h.corr >= 0)
    keys, first = np.unique(h.corr[rt], return_index=True)
    out = np.full(len(corr), np.nan)
    if len(keys):
        pos = np.minimum(np.searchsorted(keys, corr), len(keys) - 1)
        found = keys[pos] == corr
        out[found] = h.start_ps[rt[first[pos[found]]]]
    return out


def idle(a: Analysis, group: str | None = None) -> Table:
    """GPU idle time per stream by cause, as Holistic Trace Analysis 0.5.0 breaks it down
    (`get_idle_time_breakdown`): between consecutive kernels, copies and memsets of a stream, the
    gap (the next start less the previous end) is host wait when the next one's runtime call started
    after the previous one ended (the host was late to enqueue it), kernel wait when it is shorter
    than 30 µs (launch overhead between back-to-back kernels), else other. Over the whole capture.
    Launch delay: from the end of each launch call (cudaLaunchKernel, cudaMemcpyAsync, ...) to the
    start of its device work, negative ones counted as 0 (HTA's `get_cuda_kernel_launch_stats`)."""
    p = a.profile
    h = a.host
    rows: list[dict] = []
    for g in a.gpus.values():
        ev = g.events
        work = np.isin(ev.kind, _DEVICE_WORK)
        for si in np.unique(ev.stream[work]).tolist():
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
                    "stream": int(p.streams[si].stream_id) if 0 <= si < len(p.streams) else int(si),
                    "idle_us": _num(total / US),
                    "host_wait_us": _num(int(gap[host_wait].sum()) / US),
                    "kernel_wait_us": _num(int(gap[kernel_wait].sum()) / US),
                    "other_us": _num(int(gap[other].sum()) / US),
                    "idle_pct": _num(100 * total / span if span > 0 else None),
                    "trace": _trace(int(end[i]), int(start[i + 1]), g.id) if i >= 0 and gap[i] > 0 else None,
                }
            )
    notes = [] if rows else ["the capture has no GPU work"]
    launch = _launch_delay(a)
    if launch["count"] == 0 and rows:
        notes.append("no launch call pairs with its device work (no correlation ids): launch delay unknown")
    return Table("idle", None, IDLE_COLUMNS, rows, "idle_us", (), notes, {"launch_delay": launch})


def _launch_delay(a: Analysis) -> dict:
    p = a.profile
    h = a.host
    ids = [i for i in (p.names.get(n) for n in LAUNCH_NAMES) if i >= 0]
    calls = np.flatnonzero(np.isin(h.name, np.asarray(ids, np.int32)) & (h.corr >= 0))
    delays = []
    for g in a.gpus.values():
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
        "mean_us": _num(float(d.mean())),
        "p50_us": _num(float(np.percentile(d, 50))),
        "p95_us": _num(float(np.percentile(d, 95))),
        "max_us": _num(float(d.max())),
    }


# -- findings' links to their rows ---------------------------------------------------------------

# the table each check's evidence is in
CHECK_TABLES = {
    "kernels.launch-bound": "kernels",
    "kernels.small": "kernels",
    "fusion.xla-candidates": "kernels",
    "tensorcore.unused": "kernels",
    "precision.mixed-off": "kernels",
    "precision.fp16-no-tensorcore": "kernels",
    "allreduce.count": "kernels",
    "allreduce.cost": "kernels",
    "multigpu.imbalance": "kernels",
    "tensorcore.dims": "ops",
    "precision.fp16-softmax": "ops",
    "precision.dynamic-loss-scale": "ops",
    "ops.eager": "ops",
    "placement.host-ops": "ops",
    "offload.small-model": "ops",
    "xla.recompile": "ops",
    "input.bound": "input",
    "multigpu.input": "input",
    "steps.gaps": "idle",
    "steps.host-work": "idle",
    "host.thread-contention": "idle",
    "multigpu.serialized": "idle",
    "multigpu.launch-skew": "idle",
    "multigpu.batch": "memory",
}
MAX_LINK_NAMES = 50


def _strings(x: Any) -> Iterable[str]:
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from _strings(v)


def link_findings(a: Analysis, report: dict) -> None:
    """Each finding's `table`: the table its evidence is in, filtered to the finding's own kernels or
    ops (the names in its evidence and details that are rows there, at most 50), or with the time of
    the memory peak; None for checks without one, and for findings not applicable or in error."""
    valid: dict[str, set[str]] = {}
    peaks: dict[int, float] | None = None
    for c in report.get("checks", []):
        table = CHECK_TABLES.get(c["id"])
        if table is None or c["status"] in ("not-applicable", "error"):
            c["table"] = None
            continue
        names: list[str] = []
        at_ms = None
        if table in ("kernels", "ops"):
            if table not in valid:
                valid[table] = _row_names(a, table)
            seen: set[str] = set()
            for n in _strings([c.get("evidence"), c.get("details")]):
                if n in valid[table] and n not in seen:
                    seen.add(n)
                    names.append(n)
                    if len(names) == MAX_LINK_NAMES:
                        break
        elif table == "memory":
            if peaks is None:
                peaks = {r["device"]: r["peak_time_ms"] for r in memory(a).rows}
            dev = c.get("device_id")
            at_ms = peaks.get(dev) if dev is not None else next(iter(peaks.values()), None)
        c["table"] = {"table": table, "name": names, "q": None, "at_ms": at_ms}


def _row_names(a: Analysis, table: str) -> set[str]:
    p = a.profile
    if table == "ops":
        return {p.op_name(i) for i in range(len(p.ops))}
    out: set[str] = set()
    for g in a.gpus.values():
        ev = g.events
        k = np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8))
        out.update(p.names[int(i)] for i in np.unique(ev.name[k]).tolist())
    return out


# -- the answer ------------------------------------------------------------------------------------


def build_check(table: str, group: str | None) -> str | None:
    """The grouping a request for `table` by `group` gets (the table's default when None); raises
    `TableError` for an unknown table or grouping."""
    if table not in TABLES:
        raise TableError(f"unknown table {table[:40]!r}; the tables are {', '.join(TABLES)}")
    groups = GROUPS.get(table)
    if group is None or not groups:
        group = groups[0] if groups else None
    elif group not in groups:
        raise TableError(f"the {table} table groups by {' or '.join(groups)}, not {group[:40]!r}")
    return group


def build(a: Analysis, table: str, group: str | None = None) -> Table:
    """The table `table` of an analysis, grouped by `group` (the table's default when None)."""
    group = build_check(table, group)
    builder = BUILDERS.get(table)
    if builder is None:
        return Table(table, group, [], [], "", (), [f"the {table} table is not available yet"])
    return builder(a, group)


BUILDERS: dict[str, Any] = {"kernels": kernels, "ops": ops, "memory": memory, "input": input_pipeline, "idle": idle}


def answer(
    t: Table,
    sort: str | None = None,
    order: str | None = None,
    offset: int = 0,
    limit: int = DEFAULT_LIMIT,
    q: str | None = None,
    names: Iterable[str] = (),
) -> dict:
    """The table's answer: rows matching `q` (case-insensitive substring of the name-like columns)
    and `names` (exact), sorted (missing values last either way) and paged."""
    keys = {c["key"] for c in t.columns}
    sort = sort or t.sort
    if sort not in keys and t.columns:
        raise TableError(f"the {t.table} table has no column {sort[:40]!r}")
    if order not in (None, "asc", "desc"):
        raise TableError("order must be 'asc' or 'desc'")
    if not 0 <= limit <= MAX_LIMIT:
        raise TableError(f"limit must be between 0 and {MAX_LIMIT}")
    if offset < 0:
        raise TableError("offset must not be negative")
    order = order or ("desc" if next((c["numeric"] for c in t.columns if c["key"] == sort), True) else "asc")
    ordered = t.order(sort, order == "desc") if t.rows else np.zeros(0, np.intp)
    wanted = {n for n in names}
    keep = np.ones(len(t.rows), bool)
    if wanted:
        keep &= np.array([any(r.get(k) in wanted for k in t.search) for r in t.rows], bool)
    if q:
        low = q.lower().replace("\x00", "")
        keep &= np.array([low in h for h in t.haystack()], bool)
    ordered = ordered[keep[ordered]] if len(ordered) else ordered
    out = {
        "table": t.table,
        "group": t.group,
        "columns": t.columns,
        "rows": [t.rows[i] for i in ordered[offset : offset + limit].tolist()],
        "total": int(keep.sum()),
        "all": len(t.rows),
        "offset": offset,
        "sort": sort,
        "order": order,
        "notes": t.notes,
    }
    out.update(t.extra)
    return out
