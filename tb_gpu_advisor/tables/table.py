"""The tables' shared parts: the Table, its columns, grouping and names, and the registry.

A table module declares its table once, with `@table(...)` on its builder: its name, what a row is,
its columns (with the JSON of their cells), groupings, whether it can be one step's, what its answer
adds, and how a finding's evidence is linked to its rows. The registry (`REGISTRY`) gives the CLI's
choices, the `/checks` route's list of tables the panel shows, and the table parts of schema.json
(scripts/write_schema.py); tables/__init__.py imports every module of the package, so a new table is
its module (and its test).

Each table is built once per analysis (`build`) over the whole capture, as PyTorch's TensorBoard
plugin and the Profile tab count, and answered sorted, filtered and paged (`answer`): the `/table`
route and the `table` command give the same object (schema.json `TableResponse`). Times are µs; a
row's `trace` is its longest instance, for the trace viewer.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Container

import numpy as np

from tb_gpu_advisor.measures import Measures, short_kernel_name

short_name = short_kernel_name  # a kernel's name as the kernels table shows it (measures/kernel_names.py)
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


# the JSON Schema of a column's cells, where it is not a measured number (or null)
NUMBER = {"type": ["number", "null"]}
INTEGER = {"type": "integer"}
COUNT = {"type": ["integer", "null"]}
TEXT = {"type": "string"}
FLAG = {"type": "boolean"}


@dataclasses.dataclass(frozen=True)
class Column:
    """A column: its key in the rows, its label and unit in the answer (`json`), and in schema.json the
    JSON Schema of its cells (`cell`: a number or null unless said) and their description."""

    key: str
    label: str
    unit: str | None = None
    numeric: bool = True
    cell: dict[str, Any] | None = None
    doc: str | None = None

    def json(self) -> dict:
        """The column as an answer lists it (schema.json `TableColumn`)."""
        return {"key": self.key, "label": self.label, "unit": self.unit, "numeric": self.numeric}

    def schema(self) -> dict[str, Any]:
        out = dict(self.cell or (NUMBER if self.numeric else TEXT))
        if self.doc:
            out["description"] = self.doc
        return out


def column(
    key: str,
    label: str,
    unit: str | None = None,
    numeric: bool = True,
    cell: dict[str, Any] | None = None,
    doc: str | None = None,
) -> Column:
    return Column(key, label, unit, numeric, cell, doc)


TRACE_CELL = {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/TableTrace"}]}  # every row's `trace`


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """A table as its module declares it (`@table`)."""

    name: str  # its id: the route's and the command's `table`
    label: str  # the panel's tab
    noun: str  # what a row is, in the panel's words ("the finding's 3 kernels")
    order: int  # its place among the tables (the panel's tabs, the command's choices)
    row: str  # what a row is, in schema.json
    row_type: str  # the row's type in schema.json ("KernelRow")
    columns: tuple[Column, ...]
    build: Callable[..., Table]  # (measures, group) or, for a per-step table, (measures, group, step)
    groups: tuple[tuple[str, str], ...] = ()  # (value, label) of each grouping, the default first
    per_step: bool = False  # can be limited to one step
    extra: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # answer fields: JSON Schema
    # a finding that links to this table (@check(table=...)): the row names its evidence is matched
    # against, or the time it points at on a device (the memory peak)
    row_names: Callable[[Measures], Container[str]] | None = None
    at_ms: Callable[[Measures, int | None], float | None] | None = None

    def to_json(self) -> dict[str, Any]:
        """The panel's entry (the `/checks` route's `tables`)."""
        return {
            "id": self.name,
            "label": self.label,
            "noun": self.noun,
            "groups": [list(g) for g in self.groups],
            "per_step": self.per_step,
        }

    def row_schema(self) -> dict[str, Any]:
        """The rows' JSON Schema (schema.json's `row_type`)."""
        props = {c.key: c.schema() for c in self.columns} | {"trace": TRACE_CELL}
        return {
            "type": "object",
            "description": f"{self.name}: {self.row}",
            "properties": props,
            "required": list(props),
            "additionalProperties": False,
        }


class NamedRows:
    """The names of a table's rows as a finding's link asks for them (`name in rows`): a mask over the
    profile's name ids, so that each name a finding gives is looked up by its id, and the file's
    thousands of names are not made into strings for the few a finding names (issue 42)."""

    __slots__ = ("m", "mask")

    def __init__(self, m: Measures, ids: np.ndarray) -> None:
        self.m = m
        self.mask = np.zeros(len(m.name_strings) + 1, bool)  # the last entry, for id -1: no name
        self.mask[ids[ids >= 0]] = True

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.mask[self.m.name_id(name)])


REGISTRY: list[TableSpec] = []


def table(
    *,
    name: str,
    label: str,
    noun: str,
    order: int,
    row: str,
    row_type: str,
    columns: list[Column],
    groups: tuple[tuple[str, str], ...] = (),
    per_step: bool = False,
    extra: dict[str, dict[str, Any]] | None = None,
    row_names: Callable[[Measures], Container[str]] | None = None,
    at_ms: Callable[[Measures, int | None], float | None] | None = None,
) -> Callable[[Callable[..., Table]], Callable[..., Table]]:
    """Declare a table: its builder is decorated (see TableSpec for the fields)."""

    def register(fn: Callable[..., Table]) -> Callable[..., Table]:
        if any(t.name == name for t in REGISTRY):
            raise ValueError(f"duplicate table {name}")
        REGISTRY.append(
            TableSpec(
                name,
                label,
                noun,
                order,
                row,
                row_type,
                tuple(columns),
                fn,
                groups,
                per_step,
                extra or {},
                row_names,
                at_ms,
            )
        )
        REGISTRY.sort(key=lambda t: t.order)
        return fn

    return register


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
