"""Helpers on integer columns, and `Constant`, a column of one value. Ids in a profile (names, metadata, ops, strings) are small and dense,
so their distinct values are found in linear time with a lookup table instead of a sort; values
spread wide (untrusted input) fall back to NumPy's sort."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

_TABLE_LIMIT = 1 << 24  # a lookup table up to this many entries (16 M) instead of sorting


def unique_inverse(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, index of each element's value), like np.unique(x, return_inverse=True)."""
    x = np.asarray(x)
    if not len(x):
        return x[:0].astype(np.int64), np.zeros(0, np.intp)
    if x.dtype.kind not in "iu":
        u, inv = np.unique(x, return_inverse=True)
        return u, inv.reshape(-1)
    lo, hi = int(x.min()), int(x.max())
    if lo == hi:  # one value (a column the events do not carry is all -1): no lookup table
        return x[:1].copy(), np.zeros(len(x), np.intp)
    span = hi - lo + 1
    if span > max(_TABLE_LIMIT, 4 * len(x)):
        u, inv = np.unique(x, return_inverse=True)
        return u, inv.reshape(-1)
    offset, present = _table(x, lo, span)
    codes = np.cumsum(present) - 1
    return np.flatnonzero(present).astype(x.dtype) + x.dtype.type(lo), codes[offset]


def distinct(x: np.ndarray) -> np.ndarray:
    """Sorted distinct values, as np.unique(x) gives them (which imports numpy.ma on first use: 30 ms
    of a command's start)."""
    x = np.asarray(x).reshape(-1)
    if not len(x):
        return x.copy()
    if x.dtype.kind in "iu":
        lo, hi = int(x.min()), int(x.max())
        span = hi - lo + 1
        if span <= max(_TABLE_LIMIT, 4 * len(x)):
            present = _table(x, lo, span)[1]
            out = np.flatnonzero(present).astype(x.dtype, copy=False)
            out += x.dtype.type(lo)
            return out
    return np.unique(x, return_inverse=True)[0]


def isin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.isin(a, b) for integer arrays without np.isin, which sorts `b` with np.unique (importing
    numpy.ma) when its values span widely, as correlation ids do; other dtypes go to np.isin."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        return np.isin(a, b)
    if not len(b) or not a.size:
        return np.zeros(a.shape, bool)
    u = distinct(b)
    at = np.minimum(np.searchsorted(u, a), len(u) - 1)
    return u[at] == a


def percentile(x: Any, q: float) -> float:
    """np.percentile(x, q) (its default, linear interpolation between the closest ranks) without
    np.percentile, which imports numpy.ma on first use."""
    a = np.sort(np.asarray(x, dtype=np.float64).reshape(-1))
    if not len(a):
        return float("nan")
    at = (len(a) - 1) * q / 100.0
    lo = int(np.floor(at))
    hi = min(lo + 1, len(a) - 1)
    return float(a[lo] + (a[hi] - a[lo]) * (at - lo))


def median(x: Any) -> float:
    """np.median(x) as a float (the mean of the two middle values of an even count; NaN when there are
    none, or when one is NaN), without np.median, which imports numpy.ma on first use (a tenth of a
    command's start on a small file)."""
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    n = len(a)
    if not n or np.isnan(a).any():
        return float("nan")
    k = n // 2
    if n % 2:
        return float(np.partition(a, k)[k])
    part = np.partition(a, (k - 1, k))
    return float(np.mean(part[k - 1 : k + 1]))


def _offsets(x: np.ndarray, lo: int) -> np.ndarray:
    """x - lo for integers x >= lo, as intp."""
    # in intp for signed types (it can overflow a narrow one); unsigned ones cannot go below lo
    if x.dtype.kind == "u":
        return (x - x.dtype.type(lo)).astype(np.intp)
    out = x.astype(np.intp)  # a copy: offset in place
    out -= lo
    return out


def _table(x: np.ndarray, lo: int, span: int) -> tuple[np.ndarray, np.ndarray]:
    """Each integer's slot in a table of `span` values from `lo`, and which slots are used."""
    offset = _offsets(x, lo)
    present = np.zeros(span, bool)
    present[offset] = True
    return offset, present


def unique_rows(columns: list[np.ndarray]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Distinct rows of integer columns of one length, in lexicographic order: (rows as tuples,
    index of each element's row)."""
    n = len(columns[0]) if columns else 0
    if not n:
        return [], np.zeros(0, np.intp)
    key: np.ndarray | None = None
    radix = 1
    for c in columns:
        c = np.asarray(c)
        if c.dtype == bool:
            c = c.view(np.uint8)
        lo, hi = int(c.min()), int(c.max())
        if lo == hi:  # a column with one value adds nothing to the key
            continue
        if hi - lo < n:  # dense values: their offset from the smallest is their code
            span = hi - lo + 1
            code = _offsets(c, lo).astype(np.int64, copy=False)
        else:
            u, code = unique_inverse(c)
            span = len(u)
        if key is None:
            key, radix = code, span
            continue
        if radix * span >= 1 << 62:  # too many combinations for one key: renumber the rows so far
            u, key = unique_inverse(key)
            radix = len(u)
        key = key * span + code
        radix *= span
    if key is None:
        return [tuple(int(c[0]) for c in columns)], np.zeros(n, np.intp)
    u, inv = unique_inverse(key)
    first = np.empty(len(u), np.intp)
    first[inv] = np.arange(n)  # an element of each row: they are all alike
    return list(zip(*(np.asarray(c)[first].tolist() for c in columns), strict=True)), inv


def first_index(keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each query, the index of its first occurrence in `keys` (non-negative integers), or -1."""
    keys = np.asarray(keys, np.int64)
    queries = np.asarray(queries, np.int64)
    if not len(keys) or not len(queries):
        return np.full(len(queries), -1, np.intp)
    hi = int(keys.max())
    if int(keys.min()) >= 0 and hi < max(_TABLE_LIMIT, 4 * len(keys)):
        # slot k + 1 holds key k's first index; slot 0 and the last answer the queries out of range
        table = np.full(hi + 3, len(keys), np.intp)
        np.minimum.at(table, keys + 1, np.arange(len(keys)))
        table[table == len(keys)] = -1
        slot = np.clip(queries, -1, hi + 1)
        slot += 1
        return table[slot]
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    pos = np.minimum(np.searchsorted(sorted_keys, queries), len(keys) - 1)
    hit = sorted_keys[pos] == queries
    out = np.full(len(queries), -1, np.intp)
    out[hit] = order[pos[hit]]
    return out


def constant_key(value: Any) -> Any:
    """A constant's value as a set member: every NaN the same."""
    return "nan" if value != value else value


class Constant:
    """A column of one value, kept as that value until read (a thread's index, a stat that no event of
    a line carries): most such columns are never read."""

    __slots__ = ("n", "value", "dtype")

    def __init__(self, n: int, value: Any, dtype: np.dtype | type) -> None:
        self.n, self.value, self.dtype = n, value, np.dtype(dtype)

    def __call__(self) -> np.ndarray:
        return np.full(self.n, self.value, self.dtype)

    def at(self, rows: np.ndarray) -> np.ndarray:
        return np.full(len(rows), self.value, self.dtype)

    def astype(self, dtype: np.dtype | type) -> Constant:
        return Constant(self.n, self.value, dtype)

    def map(self, f: Callable[[np.ndarray], np.ndarray], dtype: np.dtype | type | None = None) -> Constant:
        """`f` (a NumPy function of an array) on the value."""
        return Constant(self.n, f(np.array([self.value], self.dtype))[0].item(), dtype or self.dtype)

    def select(self, index: np.ndarray) -> Constant:
        """The column at `index` (a mask, or indices): the same value."""
        return Constant(int(np.count_nonzero(index)) if index.dtype == bool else len(index), self.value, self.dtype)


class Sparse:
    """A column of one value but at a few rows (a stat few events of a line carry: the memory events
    among a thread's millions of calls): those rows (ascending) and their values, kept so until read."""

    __slots__ = ("n", "rows", "values", "fill", "dtype")

    def __init__(self, n: int, rows: np.ndarray, values: np.ndarray, fill: Any, dtype: np.dtype | type) -> None:
        self.n, self.rows, self.fill, self.dtype = n, rows, fill, np.dtype(dtype)
        self.values = values.astype(self.dtype, copy=False)

    def __call__(self) -> np.ndarray:
        out = np.full(self.n, self.fill, self.dtype)
        out[self.rows] = self.values
        return out

    def at(self, rows: np.ndarray) -> np.ndarray:
        out = np.full(len(rows), self.fill, self.dtype)
        if len(self.rows):
            pos = np.minimum(np.searchsorted(self.rows, rows), len(self.rows) - 1)
            hit = self.rows[pos] == rows
            out[hit] = self.values[pos[hit]]
        return out

    def astype(self, dtype: np.dtype | type) -> Sparse:
        return Sparse(self.n, self.rows, self.values, self.fill, dtype)

    def map(self, f: Callable[[np.ndarray], np.ndarray], dtype: np.dtype | type | None = None) -> Sparse:
        """`f` (a NumPy function of an array) on every value, the fill's included."""
        dt = np.dtype(dtype or self.dtype)
        return Sparse(self.n, self.rows, f(self.values), f(np.array([self.fill], self.dtype))[0].item(), dt)

    def select(self, index: np.ndarray) -> Sparse | np.ndarray:
        """The column at `index`: a mask, or a permutation of the rows (other indices: made whole)."""
        if index.dtype == bool:
            kept = index[self.rows]
            at = (np.cumsum(index) - 1)[self.rows[kept]]
            return Sparse(int(np.count_nonzero(index)), at, self.values[kept], self.fill, self.dtype)
        where = np.full(self.n, -1, np.int64)
        where[index] = np.arange(len(index))
        if len(index) != self.n or (where < 0).any():  # not a permutation: made whole
            return self()[index]
        new = where[self.rows]
        order = np.argsort(new, kind="stable")
        return Sparse(self.n, new[order], self.values[order], self.fill, self.dtype)


class Merged:
    """A merged table's column not computed yet (`EventTable.concat`): the parts' columns (arrays, or
    functions that make them), the bounds of each part in their concatenation, and the order that
    sorts it by start."""

    __slots__ = ("parts", "bounds", "order", "dtype")

    def __init__(self, parts: list[Any], bounds: np.ndarray, order: np.ndarray, dtype: np.dtype):
        self.parts, self.bounds, self.order, self.dtype = parts, bounds, order, dtype

    def __call__(self) -> np.ndarray:
        whole = np.concatenate([c() if callable(c) else c for c in self.parts]).astype(self.dtype, copy=False)
        return take_in_runs(whole, self.order)

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The column's values at `rows`: each part's gathered where those rows come from it, a
        constant part's filled in; the whole column is not made (but for many rows, when making it
        and dropping it costs less than a pass over the rows for each part)."""
        if len(rows) * 8 > len(self.order):
            return self()[rows]
        pos = self.order[rows]
        out = np.empty(len(pos), self.dtype)
        part = np.searchsorted(self.bounds, pos, side="right") - 1
        for j in np.flatnonzero(np.bincount(part, minlength=len(self.parts))).tolist():
            sel = part == j
            c = self.parts[j]
            if isinstance(c, Constant):
                out[sel] = c.value
            elif isinstance(c, Sparse):
                out[sel] = c.at(pos[sel] - self.bounds[j])
            else:
                out[sel] = (c() if callable(c) else c)[pos[sel] - self.bounds[j]]
        return out


class Unkept:
    """A column of a table of some of another table's rows (`rows()` finds them, each time): gathered
    from the other's column each time it is read, and not kept. For columns read once or twice, on a
    table kept while others are read often (a GPU's kernels)."""

    __slots__ = ("table", "key", "rows", "dtype")
    kept = False

    def __init__(self, table: Any, key: str, rows: Callable[[], np.ndarray], dtype: np.dtype) -> None:
        self.table, self.key, self.rows, self.dtype = table, key, rows, dtype

    def __call__(self) -> np.ndarray:
        return self.table.column(self.key)[self.rows()]

    def at(self, i: np.ndarray) -> np.ndarray:
        return self.table.column(self.key)[self.rows()[i]]


def take_in_runs(a: np.ndarray, index: np.ndarray, run: int = 1 << 15) -> np.ndarray:
    """a[index]; an int32 `index` a run at a time (indexing with it whole converts it to intp first:
    8 bytes a value made and dropped, and 1.6x the time)."""
    if index.dtype == np.intp:
        return a[index]
    out = np.empty(len(index), a.dtype)
    for c in range(0, len(index), run):
        np.take(a, index[c : c + run], out=out[c : c + run])
    return out
