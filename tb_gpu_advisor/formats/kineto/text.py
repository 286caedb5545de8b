"""A PyTorch trace's text: the file's bytes as they are or, for gzip, inflated in bounded pieces,
refusing garbage and bombs early (see `pieces`); and its JSON parsed."""

from __future__ import annotations

import io
import json as _json
import re
import time
import types
import zlib
from typing import Any, Iterator

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.base import Buffer
from tb_gpu_advisor.formats.kineto import GZIP_MAGIC

_fast_json: types.ModuleType | None
try:  # the fastest JSON parser here (benchmarks/pytorch_benchmark.py measured it); the standard one otherwise
    import orjson as _fast_json
except ImportError:  # pragma: no cover - orjson is a dependency
    _fast_json = None

MAX_INFLATED = 2**31  # a gzip that inflates beyond this is refused (a zip bomb, or not a trace)
MAX_INFLATE_S = 60.0  # and one that takes longer than this to inflate
CHUNK = 4 << 20  # bytes inflated at a time
BLANK_RUN = 16 << 20  # this much blank space in a row is no trace (a whitespace bomb)
_NONBLANK = re.compile(rb"[^ \t\r\n]")
BLANK = b" \t\r\n"  # JSON's whitespace


def loads(data: Buffer) -> Any:
    if _fast_json is not None:
        return _fast_json.loads(data)  # bytes, or a memoryview of them: no copy
    return _json.loads(bytes(data))


def _start(head: Buffer, path: str) -> bool:
    """Whether the trace's text has started in `head` (its first bytes, or the next ones while all
    before were blank); raises when it does not start as a JSON object does."""
    m = _NONBLANK.search(head)
    if m is None:
        return False
    first = head[m.start()]
    if first != ord("{"):
        raise ProfileReadError(
            path,
            f"not a PyTorch trace: a trace is a JSON object, starting with '{{', but this starts with {_byte(first)}",
        )
    return True


def _byte(b: int) -> str:
    return repr(chr(b)) if 32 < b < 127 else f"the byte 0x{b:02x}"


def inflate(data: Buffer, path: str, limit: int, max_seconds: float = MAX_INFLATE_S) -> Buffer:
    """The trace's JSON text: the bytes themselves (no copy) or, for gzip, inflated in bounded
    chunks (see `pieces`)."""
    view = memoryview(data).cast("B")
    if bytes(view[:2]) != GZIP_MAGIC:
        for _ in pieces(view, path, limit, max_seconds):
            pass
        return view
    out = io.BytesIO()
    for piece, _ in pieces(view, path, limit, max_seconds):
        out.write(piece)
    return out.getbuffer()


def pieces(data: Buffer, path: str, limit: int, max_seconds: float = MAX_INFLATE_S) -> Iterator[tuple[Buffer, int]]:
    """The trace's JSON text in pieces, each with how many of the file's bytes are read so far: the
    bytes themselves as one piece or, for gzip, inflated in bounded chunks. Refused early: text that
    does not start with '{', a NUL byte (never in JSON text), a run of over BLANK_RUN blank bytes (a
    whitespace bomb), more than `limit` bytes inflated (the gzip trailer's size says so before any
    work where it can), or inflating for over `max_seconds` (its own time: not the time the reader
    spends on the pieces it gets, so both readers refuse the same files)."""
    view = memoryview(data).cast("B")
    if bytes(view[:2]) != GZIP_MAGIC:
        if not _start(view[:BLANK_RUN], path):
            raise ProfileReadError(path, "not a PyTorch trace: the file is blank")
        yield view, len(view)
        return
    if len(view) >= 18 and int.from_bytes(view[-4:], "little") > limit:  # the true size is at least this
        raise ProfileReadError(path, f"the trace inflates to over {limit // 2**20} MB; raise the size limit to read it")
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    t0 = time.monotonic()
    pos = total = blank = blank_from = 0
    last = b""
    started = False
    while True:
        if d.eof:
            rest = len(d.unused_data)
            if not rest or bytes(d.unused_data[:2]) != GZIP_MAGIC:
                break
            pos = min(pos, len(view)) - rest  # another gzip member follows (members may be concatenated)
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            if d.unconsumed_tail:
                piece = d.decompress(d.unconsumed_tail, CHUNK)
            elif pos < len(view):
                piece = d.decompress(view[pos : pos + CHUNK], CHUNK)
                pos += CHUNK
            else:
                raise ProfileReadError(path, "not a readable gzip file: it is cut short")
        except zlib.error:
            raise ProfileReadError(path, "not a readable gzip file: its compressed data is damaged") from None
        if not piece:
            continue
        at = piece.find(b"\x00")
        if at >= 0:
            raise ProfileReadError(
                path, f"not a PyTorch trace: byte {total + at} of its text is 0x00, which JSON text never holds"
            )
        if not started:
            started = _start(piece, path)
        if _NONBLANK.search(piece) is None:
            if not blank:  # where the run began: after the last non-blank byte before it
                blank_from = total - len(last) + len(last.rstrip(BLANK))
            blank += len(piece)
            if blank >= BLANK_RUN:
                raise ProfileReadError(
                    path,
                    f"not a PyTorch trace: over {BLANK_RUN // 2**20} MB of blank space in a row from byte {blank_from}",
                )
        else:
            blank = 0
        total += len(piece)
        if total > limit:
            raise ProfileReadError(
                path, f"the trace inflates to over {limit // 2**20} MB; raise the size limit to read it"
            )
        if time.monotonic() - t0 > max_seconds:
            raise ProfileReadError(path, f"inflating the trace took over {max_seconds:.0f} s; given up")
        away = time.monotonic()
        yield piece, min(pos, len(view)) - len(d.unused_data)
        t0 += time.monotonic() - away
        last = piece
    if not started:
        raise ProfileReadError(path, "not a PyTorch trace: the file is blank")
