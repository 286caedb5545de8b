"""A PyTorch trace's text: the file's bytes as they are or, for gzip, inflated in bounded pieces,
refusing garbage and bombs early (see `Pieces`); and its JSON parsed.

A local file (`base.LocalFile`) is read in pieces with `pread`, never mapped, so a trace truncated or
written again while it is read gives ProfileReadError(CHANGED), never a fault; for gzip, the
compressed bytes are read in pieces too."""

from __future__ import annotations

import io
import json as _json
import mmap
import re
import time
import types
import zlib
from typing import Any, Callable, Iterator

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.base import Budget, Buffer, Data, LocalFile
from tb_gpu_advisor.formats.kineto import GZIP_MAGIC

_fast_json: types.ModuleType | None
try:  # the fastest JSON parser here (benchmarks/pytorch_benchmark.py measured it); the standard one otherwise
    import orjson as _fast_json
except ImportError:  # pragma: no cover - orjson is a dependency
    _fast_json = None

MAX_INFLATE_S = 60.0  # a gzip that takes longer than this to inflate is refused
CHUNK = 4 << 20  # bytes inflated (or read) at a time
FIRST = 256 << 10  # bytes inflated first: what they took of the file says whether to believe the trailer
BLANK_RUN = 16 << 20  # this much blank space in a row is no trace (a whitespace bomb)
_NONBLANK = re.compile(rb"[^ \t\r\n]")
BLANK = b" \t\r\n"  # JSON's whitespace
# No string or number of a trace is this long (the longest kernel names are a few kB): a run of this
# many bytes without a quote is refused as it streams in, before a reader holds it (issue 51: a 1.5 GB
# event name cost 90 s and 7.2 GB; 3 GB inside one string 26.8 s and 6,176 MB).
MAX_VALUE = 64 << 20
_STEP = 4 << 20  # bytes searched at a time (below MAX_VALUE: a run is only ever longer across steps)
# The gzip trailer's size (the text's size modulo 2^32) is believed when the text inflated so far,
# scaled to the whole file, comes within this factor of it: a file cut short ends in garbage.
TRAILER_AGREES = 2.0
# A trace's reading and analysis may hold this many times its size on disk (base.Budget; real traces
# take up to about 30: their text inflates up to 30 times, and costs up to about 1.6 times itself).
MEMORY_PER_FILE_BYTE = 64.0
TRUNCATED = "not a readable gzip file: it is truncated (its compressed data ends before the trace does: cut short while copied or written?)"


def loads(data: Buffer) -> Any:
    if _fast_json is not None:
        return _fast_json.loads(data)  # bytes, or a memoryview of them: no copy
    return _json.loads(bytes(data))


def starts(head: Buffer, path: str) -> bool:
    """Whether the trace's text has started in `head` (its first bytes, or the next ones while all
    before were blank); raises when it does not start as a JSON object does. The byte is not quoted:
    a file named like a trace may be a link to any file."""
    m = _NONBLANK.search(head)
    if m is None:
        return False
    if head[m.start()] != ord("{"):
        raise ProfileReadError(
            path, "not a PyTorch trace: a trace is a JSON object, starting with '{', and this file does not start so"
        )
    return True


def inflate(data: Data, path: str, limit: int, max_seconds: float = MAX_INFLATE_S) -> Buffer:
    """The trace's JSON text, whole, for the Python reader: the bytes themselves (no copy), a local
    file's bytes read once into memory of our own or, for gzip, inflated in bounded chunks (see
    `Pieces`); refused as soon as what the Python reader's objects would hold, projected from what the
    text holds so far (PythonCost), would not fit in the budget."""
    text = Pieces(data, path, limit, max_seconds)
    budget = Budget.of(limit, text.size, MEMORY_PER_FILE_BYTE)
    cost = PythonCost()

    def fits() -> None:
        whole = max(min(text.expected, limit), cost.text)
        budget.check(path, cost.need(whole), f"{whole / 2**20:,.0f} MB of JSON text, parsed whole")

    if not text.gzip and not isinstance(data, LocalFile):
        for piece, _ in text:  # the start checked; the buffer whole
            for pos in range(0, len(piece), _STEP):
                cost.add(piece[pos : pos + _STEP])
        fits()
        return memoryview(data).cast("B")
    if not text.gzip:
        assert isinstance(data, LocalFile)
        whole = mmap.mmap(-1, max(len(data), 1))
        try:
            for piece, at in text:
                cost.add(piece)
                fits()
                whole[at - len(piece) : at] = piece
        except BaseException:
            whole.close()
            raise
        return memoryview(whole)[: len(data)]
    out = io.BytesIO()
    for piece, _ in text:
        cost.add(piece)
        fits()
        out.write(piece)
    return out.getbuffer()


class PythonCost:
    """What the Python reader holds for a text (orjson's objects, then its rows of columns), projected
    from the text's structural bytes, counted with `bytes.count` as the text streams in: each `{` an
    object, `[` a list, `:` a member, `,` an item, `"` half a string. The counts can only be too high (a
    brace inside a string counts too), so the projection is a bound, whatever the file's shape: events
    of one key took 34.5 times their text (projected 41), lists of empty lists 31.4 (53), a real trace
    6.0 (9.9), measured with nine other shapes by benchmarks/refusal_benchmark.py --python-costs.
    Strings hold their text again, up to 4 bytes a character where the text is not ASCII."""

    COSTS = ((b"{", 300), (b"[", 90), (b":", 48), (b",", 64), (b'"', 30))

    def __init__(self) -> None:
        self.text = 0
        self.counted = 0.0  # bytes the counted structure costs
        self.ascii = True

    def add(self, piece: Buffer) -> None:
        if not isinstance(piece, (bytes, bytearray)):
            piece = bytes(piece)
        self.text += len(piece)
        self.counted += sum(piece.count(k) * c for k, c in self.COSTS)
        if self.ascii and not piece.isascii():
            self.ascii = False

    def need(self, whole: float) -> float:
        """What the reader would hold for `whole` bytes of text like those counted so far."""
        return whole * (2 if self.ascii else 5) + self.counted * whole / max(self.text, 1)


class ValueBound:
    """Refuses text in which MAX_VALUE bytes in a row hold no quote: a string that long (or a number,
    or a list of numbers), fed in order, piece by piece, at the speed of `bytes.find`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fed = 0  # bytes of text fed so far
        self.since = 0  # where the run without a quote began

    def feed(self, buf: Buffer, start: int = 0, end: int | None = None) -> None:
        end = len(buf) if end is None else end
        searchable = not isinstance(buf, memoryview)
        for pos in range(start, end, _STEP):
            stop = min(end, pos + _STEP)
            if searchable:
                first, last = buf.find(b'"', pos, stop), buf.rfind(b'"', pos, stop)  # type: ignore[union-attr]
            else:
                part = bytes(buf[pos:stop])
                first, last = part.find(b'"'), part.rfind(b'"')
                first, last = (first + pos if first >= 0 else -1), (last + pos if last >= 0 else -1)
            at = self.fed + stop - pos if first < 0 else self.fed + first - pos
            if at - self.since > MAX_VALUE:
                raise ProfileReadError(
                    self.path,
                    f"not a PyTorch trace the advisor reads: a value in it runs over {MAX_VALUE >> 20} MB (from "
                    f"byte {self.since}), where profilers write names of a few kB",
                )
            if last >= 0:
                self.since = self.fed + last - pos + 1
            self.fed += stop - pos


class Pieces:
    """The trace's JSON text in pieces, each with how many of the file's bytes are read so far: a
    buffer's bytes as one piece, a local file's in pieces of CHUNK or, for gzip, inflated in chunks
    of CHUNK. Refused early: text that does not start with '{', a NUL byte (never in JSON text), a
    run of over BLANK_RUN blank bytes (a whitespace bomb), a text over `limit` bytes (said from the
    gzip trailer once the first piece inflated agrees with it, else once the inflated bytes pass
    it), inflating for over `max_seconds` (its own time: not the time the reader spends on the
    pieces it gets, so both readers refuse the same files), a gzip cut short, and a local file that
    changed while it was read.

    `expected`: the whole text's size as it is known so far (a plain file's size; for gzip, the
    trailer's when believed, else what the compressed bytes read so far project), which a reader
    scales what it has counted by to project its cost (`project`)."""

    def __init__(self, data: Data, path: str, limit: int, max_seconds: float = MAX_INFLATE_S) -> None:
        self.data, self.path, self.limit, self.max_seconds = data, path, limit, max_seconds
        self.size = len(data)
        if isinstance(data, LocalFile):
            self.read_at: Callable[[int, int], Buffer] = data.read_at
        else:
            view = memoryview(data).cast("B")
            self.read_at = lambda pos, n: view[pos : pos + n]
        self.gzip = bytes(self.read_at(0, 2)) == GZIP_MAGIC
        self.expected = self.size
        self.text = 0  # bytes of text given so far
        self.trailer: int | None = None  # the gzip trailer's size, once believed
        self.values = ValueBound(path)  # every piece of text is fed to it before it is given

    def __iter__(self) -> Iterator[tuple[Buffer, int]]:
        return self._gzip() if self.gzip else self._plain()

    def _plain(self) -> Iterator[tuple[Buffer, int]]:
        data = self.data
        if not isinstance(data, LocalFile):
            if not starts(self.read_at(0, BLANK_RUN), self.path):
                raise ProfileReadError(self.path, "not a PyTorch trace: the file is blank")
            self.values.feed(data if isinstance(data, (bytes, bytearray, mmap.mmap)) else self.read_at(0, self.size))
            self.text = self.size
            yield self.read_at(0, self.size), self.size
            return
        started = False
        for piece in data.pieces(CHUNK):
            if not started:
                started = starts(piece, self.path)
                if not started and self.text + len(piece) >= BLANK_RUN:
                    raise ProfileReadError(self.path, "not a PyTorch trace: the file is blank")
            self.values.feed(piece)
            self.text += len(piece)
            yield piece, self.text
        if not started:
            raise ProfileReadError(self.path, "not a PyTorch trace: the file is blank")

    def _believe(self, pos: int) -> None:
        """After the first piece: the text's size projected from the ratio so far, and the trailer's
        (modulo 2^32, the multiple nearest that projection) believed when the two agree; the file
        refused when a believed size is over the limit."""
        projected = self.text * self.size / max(pos, 1)
        self.expected = max(self.text, int(projected))
        if self.size < 18:
            return
        mod = int.from_bytes(bytes(self.read_at(self.size - 4, 4)), "little")
        told = mod + round((projected - mod) / 2**32) * 2**32
        if told > 0 and 1 / TRAILER_AGREES <= told / max(projected, 1) <= TRAILER_AGREES:
            self.trailer = self.expected = max(told, self.text)
            if told > self.limit:
                raise Budget.of(self.limit).over_limit(self.path, f"the trace inflates to {told / 2**20:,.0f} MB,")

    def _gzip(self) -> Iterator[tuple[Buffer, int]]:
        path, size = self.path, self.size
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        t0 = time.monotonic()
        pos = blank = blank_from = 0
        last = b""
        started = False
        while True:
            if d.eof:
                rest = len(d.unused_data)
                if not rest or bytes(d.unused_data[:2]) != GZIP_MAGIC:
                    break
                pos = min(pos, size) - rest  # another gzip member follows (members may be concatenated)
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                most = CHUNK if self.text else FIRST
                if d.unconsumed_tail:
                    piece = d.decompress(d.unconsumed_tail, most)
                elif pos < size:
                    piece = d.decompress(self.read_at(pos, CHUNK), most)
                    pos += CHUNK
                else:
                    raise ProfileReadError(path, TRUNCATED)
            except zlib.error:
                raise ProfileReadError(path, "not a readable gzip file: its compressed data is damaged") from None
            if not piece:
                continue
            at = piece.find(b"\x00")
            if at >= 0:
                raise ProfileReadError(
                    path,
                    f"not a PyTorch trace: its text holds a byte that JSON text never holds (byte {self.text + at} of it)",
                )
            if not started:
                started = starts(piece, path)
            if _NONBLANK.search(piece) is None:
                if not blank:  # where the run began: after the last non-blank byte before it
                    blank_from = self.text - len(last) + len(last.rstrip(BLANK))
                blank += len(piece)
                if blank >= BLANK_RUN:
                    raise ProfileReadError(
                        path,
                        f"not a PyTorch trace: over {BLANK_RUN // 2**20} MB of blank space in a row from byte {blank_from}",
                    )
            else:
                blank = 0
            self.values.feed(piece)
            first = not self.text
            self.text += len(piece)
            if self.text > self.limit:
                raise Budget.of(self.limit).over_limit(path, "the trace inflates to")
            done = min(pos, size) - len(d.unused_data) - len(d.unconsumed_tail)
            if first:
                self._believe(done)
            elif self.trailer is None:
                self.expected = max(self.text, int(self.text * size / max(done, 1)))
            if time.monotonic() - t0 > self.max_seconds:
                raise ProfileReadError(path, f"inflating the trace took over {self.max_seconds:.0f} s; given up")
            away = time.monotonic()
            yield piece, done
            t0 += time.monotonic() - away
            last = piece
        if isinstance(self.data, LocalFile):
            self.data.verify()
        if not started:
            raise ProfileReadError(path, "not a PyTorch trace: the file is blank")

    def project(self, count: int, per_item: float, what: str, budget: Budget) -> None:
        """Refuses the file when `count` things found in the text so far, scaled to the whole text
        (`expected`, up to the limit: a longer one is refused there), at `per_item` bytes each, would
        not fit in `budget`."""
        if not self.text:
            return
        text = max(min(self.expected, self.limit), self.text)
        whole = count * text / self.text
        budget.check(self.path, whole * per_item, f"about {whole:,.0f} {what} in {text / 2**20:,.0f} MB of JSON text")
