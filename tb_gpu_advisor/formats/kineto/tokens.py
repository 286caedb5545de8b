"""The native tokenizer's side of the Kineto reader: `_kineto.c` fed the trace's text as it is
inflated (`tokenise`), and what it returns read as NumPy columns: the kept args by key, tagged values
as ints, rows grouped by equal keys."""

from __future__ import annotations

from typing import Callable

import numpy as np

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.common.settings import settings
from tb_gpu_advisor.formats.base import Budget, Data, LocalFile
from tb_gpu_advisor.formats.kineto import text

try:
    from tb_gpu_advisor.formats.kineto import _kineto
except ImportError:  # not built: the Python reader only
    _kineto = None  # type: ignore[assignment]

# value tags and event kinds, as _kineto.c writes them
T_ABSENT, T_INT, T_FLOAT, T_STR, T_TRUE, T_FALSE, T_NULL, T_RAW = range(8)
PH_X, PH_M, PH_I = 1, 2, 3
ARG_KEYS = (
    "device",
    "stream",
    "correlation",
    "External id",
    "external id",
    "bytes",
    "registers per thread",
    "shared memory",
    "est. achieved occupancy %",
    "grid",
    "block",
    "Input type",
    "Input Dims",
    "Input dims",
    "name",
    "Device Type",
    "Device Id",
    "Bytes",
    "Total Allocated",
    "Total Reserved",
    "Call stack",
    "blocks per SM",
    "Concrete Inputs",
)
A = {k: i for i, k in enumerate(ARG_KEYS)}
# An event (or a top-level member) longer than this is refused: the tokenizer keeps a unit cut by a
# piece's end until its end comes (3 GB inside one string cost 6 GB so kept, issue 51).
MAX_UNIT = 128 << 20
# Memory a trace's reading and analysis hold per event at their peak, for the projection that refuses
# a trace too dense to fit (measured with benchmarks/refusal_benchmark.py: 380 bytes an event on a
# trace of one kernel repeated, about 220 on the real 402 MB trace).
BYTES_PER_EVENT = 400


class Fallback(Exception):
    """The file needs the Python reader."""


def available() -> bool:
    """The tokenizer is built and not turned off (TB_GPU_ADVISOR_PURE_PYTHON=1)."""
    return _kineto is not None and not settings().pure_python


def tokenise(
    data: Data, path: str, limit: int, max_seconds: float, progress: Callable[[int, int], None] | None
) -> dict | None:
    """The tokenizer's columns for the file's text, or None when it needs the Python reader. The
    refusals (bombs, garbage, a file that changed) are text.Pieces' own, raised as they are; and a
    trace whose events, as many per byte as seen so far over the whole text, would take more
    memory than the budget allows (BYTES_PER_EVENT each) is refused as soon as that is seen."""
    assert _kineto is not None
    parser = _kineto.Parser()
    size = len(data)
    pieces = text.Pieces(data, path, limit, max_seconds)
    budget = Budget.of(limit, pieces.size, text.MEMORY_PER_FILE_BYTE)

    def project() -> None:
        pieces.project(parser.events, BYTES_PER_EVENT, "events", budget)

    if isinstance(data, LocalFile) and not pieces.gzip:
        if not _feed_file(parser, data, pieces, project, progress):
            return None
        return parser.finish() if parser.fallback is None else None
    pending: list = []  # text not parsed yet: the end of a unit cut by a piece's end, and what follows
    pending_len = need = 0
    for piece, done in pieces:
        if not pieces.gzip and not isinstance(data, LocalFile):
            # a buffer's plain text, whole: fed in steps, with no copy
            pos = 0
            while pos < size:
                soft = pos + text.CHUNK
                pos = parser.feed(piece, pos, soft, True)
                if pos < 0:
                    return None
                if pos < soft:
                    break
                pieces.text = pos
                project()
                if progress is not None:
                    progress(pos, size)
            pieces.text = size
            project()
            break
        pending.append(piece)
        pending_len += len(piece)
        if pending_len > MAX_UNIT:
            raise _too_long(path, pieces.text - pending_len)
        if pending_len < need:  # a unit longer than a piece: parsed again only once the text has doubled
            continue
        buf = b"".join(pending) if len(pending) > 1 else piece
        pos = parser.feed(buf, 0, len(buf), False)
        if pos < 0:
            return None
        left = bytes(memoryview(buf)[pos:])
        pending, pending_len = ([left], len(left)) if left else ([], 0)
        need = 2 * len(left) if len(left) > text.CHUNK else 0
        project()
        if progress is not None:
            progress(done, size)
    else:
        rest = b"".join(pending)
        if parser.feed(rest, 0, len(rest), True) < 0:
            return None
    if parser.fallback is not None:
        return None
    if progress is not None:
        progress(size, size)
    return parser.finish()


def _feed_file(
    parser: object,
    src: LocalFile,
    pieces: text.Pieces,
    project: Callable[[], None],
    progress: Callable[[int, int], None] | None,
) -> bool:
    """A local file's plain text fed to the tokenizer from one buffer, read into with pread, the end of
    each read the tokenizer left (a unit cut by the read's end) moved to the buffer's start: the text
    is copied once, by the read (feeding pieces and joining what was left to the next took 12% more
    time than the mapped file it replaces, which a file cut short faulted). The buffer doubles when
    a unit fills it. Refuses as text.Pieces does: text not starting with '{', a blank file, a file
    that changed. False when the tokenizer needs the Python reader."""
    size = src.size
    buf = bytearray(text.CHUNK)
    have = pos = 0
    started = False
    while pos < size:
        if len(buf) - have < text.CHUNK // 2:
            if len(buf) >= MAX_UNIT:
                raise _too_long(src.path, pos - have)
            buf.extend(bytes(len(buf)))
        n = min(len(buf) - have, size - pos)
        with memoryview(buf) as view, view[have : have + n] as part:
            src.read_into(part, pos)
        pieces.values.feed(buf, have, have + n)
        with memoryview(buf) as view, view[have : have + n] as part:
            if not started:
                started = text.starts(part, src.path)
                if not started and pos + n >= text.BLANK_RUN:
                    raise ProfileReadError(src.path, "not a PyTorch trace: the file is blank")
        pos += n
        have += n
        with memoryview(buf) as view, view[:have] as text_read:  # not the bytes of an earlier read past it
            used = parser.feed(text_read, 0, have, pos >= size)  # type: ignore[attr-defined]
        if used < 0:
            return False
        buf[: have - used] = buf[used:have]
        have -= used
        pieces.text = pos
        project()
        if progress is not None:
            progress(pos, size)
    if not started:
        raise ProfileReadError(src.path, "not a PyTorch trace: the file is blank")
    src.verify()
    return True


def _too_long(path: str, at: int) -> ProfileReadError:
    return ProfileReadError(
        path,
        f"not a PyTorch trace the advisor reads: an event in it runs over {MAX_UNIT >> 20} MB (from byte {at}), "
        "where profilers write events of a few kB",
    )


class Args:
    """The kept args values, by key: rows (ascending), tags and values."""

    def __init__(self, cols: dict) -> None:
        row = np.frombuffer(cols["a_row"], np.uint32)
        key = np.frombuffer(cols["a_key"], np.uint8)
        tag = np.frombuffer(cols["a_tag"], np.uint8)
        val = np.frombuffer(cols["a_val"], np.int64)
        order = np.argsort(key, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(key, minlength=len(ARG_KEYS)))])
        self.by_key = []
        for k in range(len(ARG_KEYS)):
            sel = order[bounds[k] : bounds[k + 1]]
            self.by_key.append((row[sel], tag[sel], val[sel]))  # rows as uint32: searched, not computed on

    def get(self, key: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(tags, values) of `key` for `rows` (ascending event rows); T_ABSENT where not given."""
        krows, ktag, kval = self.by_key[A[key]]
        tags = np.zeros(len(rows), np.uint8)
        vals = np.zeros(len(rows), np.int64)
        if len(krows) and len(rows):
            at = np.minimum(np.searchsorted(krows, rows.astype(np.uint32)), len(krows) - 1)  # rows < 2**32
            hit = krows[at] == rows
            tags[hit] = ktag[at[hit]]
            vals[hit] = kval[at[hit]]
        return tags, vals


def tagged_int(tags: np.ndarray, vals: np.ndarray, default: int) -> np.ndarray:
    """rules.as_int on tagged values: numbers as int64 (floats cut toward zero), others the default;
    a string (which the Python rule may read as digits) needs the Python reader."""
    if np.any(tags == T_STR):
        raise Fallback
    out = np.full(len(tags), default, np.int64)
    ints = tags == T_INT
    out[ints] = vals[ints]
    floats = tags == T_FLOAT
    if floats.any():
        f = np.trunc(vals[floats].view(np.float64))
        ok = (f >= -(2.0**63)) & (f < 2.0**63)
        out[np.flatnonzero(floats)[ok]] = f[ok].astype(np.int64)
    return out


def dense(values: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """Small non-negative ints (< size) renumbered 0..n-1 in their order, without sorting."""
    used = np.zeros(size, bool)
    used[values] = True
    remap = np.cumsum(used) - 1
    return remap[values], int(used.sum())


def first_seen(values: np.ndarray) -> list[int]:
    """The distinct values in order of first appearance."""
    if not len(values):
        return []
    _, at = np.unique(values, return_index=True)
    return values[np.sort(at)].tolist()


def group_codes(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A group number per row (rows with equal keys share one), groups numbered in order of their first
    row; and each group's first row. Sorts only the heads of runs of equal keys (events of one thread
    or stream come in runs)."""
    n = len(keys[0])
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    change = np.zeros(n, bool)
    change[0] = True
    for k in keys:
        change[1:] |= k[1:] != k[:-1]
    heads = np.flatnonzero(change)
    hk = [k[heads] for k in keys]
    order = np.lexsort(hk[::-1])  # stable: a group's first head comes first
    new = np.zeros(len(heads), bool)
    new[0] = True
    for k in hk:
        sk = k[order]
        new[1:] |= sk[1:] != sk[:-1]
    group_sorted = np.cumsum(new) - 1
    first_head = order[new]  # each group's earliest head, groups in key order
    rank = np.empty(len(first_head), np.int64)
    rank[np.argsort(first_head, kind="stable")] = np.arange(len(first_head))
    group_of_head = np.empty(len(heads), np.int64)
    group_of_head[order] = rank[group_sorted]
    codes = np.repeat(group_of_head, np.diff(np.append(heads, n)))
    return codes, np.sort(heads[first_head])
