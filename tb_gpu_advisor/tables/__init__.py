"""The tables people open after the advice: kernels, ops, memory, input pipeline, idle time, each a
module of this package that declares itself (`@table`, tables/table.py); importing the package imports
every module in it, so the registry holds every table, in their declared order.

Each table is built once per analysis (`build`) over the whole capture, as PyTorch's TensorBoard
plugin and the Profile tab count, and answered sorted, filtered and paged (`answer`): the `/table`
route and the `table` command give the same object (schema.json `TableResponse`). Times are µs; a
row's `trace` is its longest instance, for the trace viewer.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Container, Iterable, Mapping, Protocol

import numpy as np

from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.tables.table import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_POINTS,
    REGISTRY,
    Table,
    TableError,
    TableSpec,
    short_name,
)

# every table module registers its table when imported: a new table is a new module here
for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_LINK_NAMES",
    "MAX_POINTS",
    "REGISTRY",
    "TABLES",
    "Table",
    "TableError",
    "answer",
    "build",
    "build_check",
    "catalogue",
    "link",
    "names",
    "short_name",
    "spec",
]


def names() -> tuple[str, ...]:
    """The tables' names, in their order."""
    return tuple(t.name for t in REGISTRY)


TABLES = names()  # as imported


def spec(table: str) -> TableSpec:
    """The declaration of a table; raises `TableError` for an unknown one."""
    for t in REGISTRY:
        if t.name == table:
            return t
    raise TableError(f"unknown table {table[:40]!r}; the tables are {', '.join(names())}")


def catalogue() -> list[dict]:
    """The tables as the panel lists them (the `/checks` route's `tables`)."""
    return [t.to_json() for t in REGISTRY]


# -- findings' links to their rows ---------------------------------------------------------------

MAX_LINK_NAMES = 50


class Linked(Protocol):
    """What linking reads and sets of a finding (checks.findings.Finding)."""

    id: str
    status: str
    device_id: int | None
    names: list[str]
    table: dict[str, Any] | None


def link(m: Measures, findings: Iterable[Linked], table_of: Mapping[str, str | None]) -> None:
    """Each finding's `table`: the table its check declares (`table_of`, `@check(table=...)`), filtered
    to the finding's own rows (what its evidence and details name, `Finding.names`, that are rows there
    by the table's `row_names`: at most 50), or at the time the table points at (its `at_ms`: the
    memory peak); None for checks without one, and for findings not applicable or in error."""
    valid: dict[str, Container[str]] = {}
    for f in findings:
        table = table_of.get(f.id)
        if table is None or f.status in ("not-applicable", "error"):
            f.table = None
            continue
        t = spec(table)
        names: list[str] = []
        if t.row_names is not None:
            if table not in valid:
                valid[table] = t.row_names(m)
            for n in f.names:
                if n in valid[table] and n not in names:
                    names.append(n)
                    if len(names) == MAX_LINK_NAMES:
                        break
        at_ms = t.at_ms(m, f.device_id) if t.at_ms is not None else None
        f.table = {"table": table, "name": names, "q": None, "at_ms": at_ms}


# -- the answer ------------------------------------------------------------------------------------


def build_check(table: str, group: str | None, step: int | None = None) -> str | None:
    """The grouping a request for `table` by `group` gets (the table's default when None); raises
    `TableError` for an unknown table or grouping, or a step asked of a table that is not per step."""
    t = spec(table)
    if step is not None and not t.per_step:
        per_step = [x.name for x in REGISTRY if x.per_step]
        raise TableError(f"the {table} table is over the whole capture; only {', '.join(per_step)} is per step")
    groups = tuple(g for g, _ in t.groups)
    if group is None or not groups:
        group = groups[0] if groups else None
    elif group not in groups:
        raise TableError(f"the {table} table groups by {' or '.join(groups)}, not {group[:40]!r}")
    return group


def build(m: Measures, table: str, group: str | None = None, step: int | None = None) -> Table:
    """The table `table` of an analysis, grouped by `group` (the table's default when None), over
    the whole capture or, for a table declared per step, the step numbered `step`."""
    group = build_check(table, group, step)
    builder = spec(table).build
    return builder(m, group, step) if step is not None else builder(m, group)


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
