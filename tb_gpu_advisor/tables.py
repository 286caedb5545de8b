"""The tables people open after the advice: kernels, ops, memory, input pipeline, idle time.

Each table is built once per analysis (`build`) over the whole capture, as PyTorch's TensorBoard
plugin and the Profile tab count, and answered sorted, filtered and paged (`answer`): the `/table`
route and the `table` command give the same object (schema.json `TableResponse`). Times are µs; a
row's `trace` is its longest instance, for the trace viewer.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

import numpy as np

from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.profile import Flag, Kind

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
    return Table("kernels", group, KERNEL_COLUMNS, rows, "total_us", ("name", "short_name", "op"), notes)


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


BUILDERS: dict[str, Any] = {"kernels": kernels}


def _sort_key(key: str):
    def k(row: dict):
        v = row.get(key)
        if v is None:
            return (1, 0)
        if isinstance(v, str):
            return (0, v.lower())
        return (0, v)

    return k


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
    rows = t.rows
    wanted = {n for n in names}
    if wanted:
        rows = [r for r in rows if any(r.get(k) in wanted for k in t.search)]
    if q:
        low = q.lower()
        rows = [r for r in rows if any(low in str(r.get(k) or "").lower() for k in t.search)]
    present = [r for r in rows if r.get(sort) is not None]
    missing = [r for r in rows if r.get(sort) is None]
    present.sort(key=_sort_key(sort), reverse=order == "desc")
    ordered = present + missing
    out = {
        "table": t.table,
        "group": t.group,
        "columns": t.columns,
        "rows": ordered[offset : offset + limit],
        "total": len(rows),
        "all": len(t.rows),
        "offset": offset,
        "sort": sort,
        "order": order,
        "notes": t.notes,
    }
    out.update(t.extra)
    return out
