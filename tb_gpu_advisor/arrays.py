"""Helpers on integer columns. Ids in a profile (names, metadata, ops, strings) are small and dense,
so their distinct values are found in linear time with a lookup table instead of a sort; values
spread wide (untrusted input) fall back to NumPy's sort."""

from __future__ import annotations

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
            return np.flatnonzero(present).astype(x.dtype) + x.dtype.type(lo)
    return np.unique(x, return_inverse=True)[0]


def _table(x: np.ndarray, lo: int, span: int) -> tuple[np.ndarray, np.ndarray]:
    """Each integer's slot in a table of `span` values from `lo`, and which slots are used."""
    # x - lo in intp for signed types (it can overflow a narrow one); unsigned ones cannot go below lo
    offset = (x - x.dtype.type(lo)).astype(np.intp) if x.dtype.kind == "u" else x.astype(np.intp) - lo
    present = np.zeros(span, bool)
    present[offset] = True
    return offset, present


def unique_rows(columns: list[np.ndarray]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Distinct rows of integer columns of one length: (rows as tuples, index of each element's row)."""
    n = len(columns[0]) if columns else 0
    if not n:
        return [], np.zeros(0, np.intp)
    values, codes, key, radix = [], [], np.zeros(n, np.int64), 1
    for c in columns:
        u, inv = unique_inverse(c)
        values.append(u)
        codes.append(inv)
    for u, inv in zip(values, codes, strict=True):
        if radix * len(u) >= 1 << 62:  # too many combinations for one key: sort the rows
            stacked = np.stack(codes).T
            urows, rinv = np.unique(stacked, axis=0, return_inverse=True)
            return [tuple(int(v[k]) for v, k in zip(values, r, strict=True)) for r in urows.tolist()], rinv.reshape(-1)
        if len(u) > 1:  # a column with one value adds nothing to the key
            key = key * len(u) + inv
            radix *= len(u)
    ukeys, inv = unique_inverse(key)
    rows = []
    for k in ukeys.tolist():
        parts = []
        for u in reversed(values):
            k, r = divmod(k, len(u))
            parts.append(int(u[r]))
        rows.append(tuple(reversed(parts)))
    return rows, inv


def first_index(keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each query, the index of its first occurrence in `keys` (non-negative integers), or -1."""
    keys = np.asarray(keys, np.int64)
    queries = np.asarray(queries, np.int64)
    out = np.full(len(queries), -1, np.intp)
    if not len(keys) or not len(queries):
        return out
    hi = int(keys.max())
    if int(keys.min()) >= 0 and hi < max(_TABLE_LIMIT, 4 * len(keys)):
        table = np.full(hi + 1, len(keys), np.intp)
        np.minimum.at(table, keys, np.arange(len(keys)))
        inside = (queries >= 0) & (queries <= hi)
        found = table[queries[inside]]
        out[inside] = np.where(found < len(keys), found, -1)
        return out
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    pos = np.minimum(np.searchsorted(sorted_keys, queries), len(keys) - 1)
    hit = sorted_keys[pos] == queries
    out[hit] = order[pos[hit]]
    return out
