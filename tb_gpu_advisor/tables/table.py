"""The tables' shared parts: the Table, its columns, grouping and names.

The tables people open after the advice: kernels, ops, memory, input pipeline, idle time.

Each table is built once per analysis (`build`) over the whole capture, as PyTorch's TensorBoard
plugin and the Profile tab count, and answered sorted, filtered and paged (`answer`): the `/table`
route and the `table` command give the same object (schema.json `TableResponse`). Times are µs; a
row's `trace` is its longest instance, for the trace viewer.
"""

from __future__ import annotations

import dataclasses

import numpy as np

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


def column(key: str, label: str, unit: str | None = None, numeric: bool = True) -> dict:
    return {"key": key, "label": label, "unit": unit, "numeric": numeric}


def trace_link(start_ps: int, end_ps: int, device: int | None) -> dict:
    return {"start_ms": start_ps / MS, "end_ms": end_ps / MS, "device": device}


def num(x: float | None, digits: int = 3) -> float | None:
    if x is None or not np.isfinite(x):
        return None
    return round(float(x), digits)


@dataclasses.dataclass
class Groups:
    """Events grouped by an integer key: per group its count, total, min and max duration, and its
    longest event (the first in `order` of each group)."""

    keys: np.ndarray
    inverse: np.ndarray
    count: np.ndarray
    total: np.ndarray
    longest: np.ndarray  # event index of each group's longest event
    shortest: np.ndarray

    @staticmethod
    def of(keys: np.ndarray, dur: np.ndarray) -> Groups:
        uniq, inv = np.unique(keys, return_inverse=True)
        n = len(uniq)
        count = np.bincount(inv, minlength=n)
        total = np.bincount(inv, weights=dur.astype(np.float64), minlength=n)
        order = np.lexsort((-dur, inv))  # by group, the longest first
        first = np.searchsorted(inv[order], np.arange(n))
        last = np.r_[first[1:], len(order)] - 1
        return Groups(uniq, inv, count, total, order[first], order[last])

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
