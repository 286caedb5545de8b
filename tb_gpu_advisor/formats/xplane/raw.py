"""The raw columnar form of an XSpace file, produced by a decoder and consumed by the reader.

Two decoders produce it: the native wire-format scanner (`_xdecode`, C) and the pure-Python one
below, which walks protobuf's own objects (the fallback, and the reference the native one is tested
against). Both give, per line, the events' metadata ids, offsets and durations, and for each stat the
reader wants a (kind, value) pair per event; plane metadata comes resolved.

Stat values are kept as int64: integers as they are; unsigned integers as their int64 bit pattern
(kind `K_UINT`, so values beyond int64 are recognisable); doubles as their IEEE bits; strings and bytes
as ids into `RawSpace.strings`; references as the referenced stat metadata id.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import TYPE_CHECKING, Callable, Sequence

from tb_gpu_advisor.formats.base import Buffer

if TYPE_CHECKING:  # NumPy is imported where arrays are made: the native scanner starts without it
    import numpy as np

    from tb_gpu_advisor.formats.xplane import xplane_pb2

K_NONE, K_INT, K_UINT, K_DOUBLE, K_STR, K_REF = 0, 1, 2, 3, 4, 5

# Event stats the reader looks at (by name); every other stat is skipped while decoding.
WANTED_STATS = (
    "correlation_id",
    "kernel_details",
    "memcpy_details",
    "memset_details",
    "tf_op",
    "annotation",
    "shape",
    "hlo_op",
    "hlo_module",
    "is_eager",
    "group_id",
    "step_num",
    "device_id",
    "bytes_allocated",
    "peak_bytes_in_use",
    "allocator_name",
    "eager_op",
    "is_func",
    "step_name",
    "bytes_reserved",
    "bytes_available",
    "fragmentation",
)

# The stats that, with its metadata, say what a device event is (its op, shape, launch, copy): the
# native scanner numbers each event's distinct combination (RawLine.desc), so that the reader decides
# once per combination.
DESCRIBED_STATS = (
    "tf_op",
    "annotation",
    "hlo_op",
    "hlo_module",
    "shape",
    "kernel_details",
    "memcpy_details",
    "memset_details",
)
DESCRIBED = tuple(WANTED_STATS.index(k) for k in DESCRIBED_STATS)


@dataclasses.dataclass
class RawStat:
    kind: np.ndarray  # int8, K_* per event (K_NONE where the event does not carry the stat)
    val: np.ndarray  # int64


@dataclasses.dataclass
class RawLine:
    id: int
    name: str
    display_name: str
    timestamp_ns: int
    mid: np.ndarray  # int64 metadata ids
    off: np.ndarray  # int64 offset_ps
    dur: np.ndarray  # int64 duration_ps
    stats: dict[str, RawStat]
    n_events: int = -1  # known before the columns when they are decoded later
    # from the native scanner: each event's description (int32) and the descriptions, one row each:
    # metadata id, then kind and value of each of DESCRIBED_STATS; None without it
    desc: np.ndarray | None = None
    desc_rows: np.ndarray | None = None

    def __len__(self) -> int:
        return self.n_events if self.n_events >= 0 else len(self.mid)


@dataclasses.dataclass
class RawEventMeta:
    name: str
    display_name: str
    stats: dict[str, object]  # resolved values (int, float, str, bytes)


@dataclasses.dataclass
class RawPlane:
    id: int
    name: str
    stat_names: dict[int, str]
    event_meta: dict[int, RawEventMeta]
    stats: dict[str, object]  # the plane's own stats, resolved
    lines: list[RawLine]


@dataclasses.dataclass
class RawSpace:
    planes: list[RawPlane]
    hostnames: list[str]
    errors: list[str]
    warnings: list[str]
    strings: Sequence[str]  # K_STR ids index here

    def ready(self, line: RawLine) -> RawLine:
        """The line with its columns (a decoder may fill them while the reader builds earlier lines)."""
        return line

    def finish(self) -> None:
        """Waits for the decoding to end; raises its error if it failed on any line."""

    def release(self, line: RawLine) -> None:
        """The line's columns dropped: its table is built and keeps what it needs of them."""
        line.n_events = len(line)
        line.mid = line.off = line.dur = line.mid[:0]
        line.stats = {}
        line.desc = line.desc_rows = None


class DanglingRef(ValueError):
    """A stat refers to stat metadata the plane does not have."""

    def __init__(self, plane: str, ref: int):
        super().__init__(f"plane {plane!r}: stat refers to stat metadata {ref}, which is missing")


class MissingMetadata(ValueError):
    def __init__(self, plane: str, mid: int):
        super().__init__(f"plane {plane!r}: event refers to metadata {mid}, which is missing")


def _double_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _resolve(st: "xplane_pb2.XStat", stat_names: dict[int, str], plane: str) -> object:
    which = st.WhichOneof("value")
    if which == "ref_value":
        if st.ref_value not in stat_names:
            raise DanglingRef(plane, st.ref_value)
        return stat_names[st.ref_value]
    if which == "bytes_value":
        return bytes(st.bytes_value)
    return getattr(st, which) if which else None


def decode_python(data: Buffer, refuse: Callable[[], None] | None = None) -> RawSpace:
    """The fallback decoder: protobuf's own parser, then a loop over the events. `refuse()` may refuse
    the file before it is parsed (from its census, or its size)."""
    import numpy as np

    from tb_gpu_advisor.formats.xplane import xplane_pb2

    if refuse is not None:
        refuse()
    space = xplane_pb2.XSpace()
    space.ParseFromString(bytes(data))
    strings: list[str] = []
    string_ids: dict[str, int] = {}

    def sid(s: str) -> int:
        i = string_ids.get(s)
        if i is None:
            i = string_ids[s] = len(strings)
            strings.append(s)
        return i

    planes = []
    for p in space.planes:
        stat_names = {k: v.name for k, v in p.stat_metadata.items()}
        wanted = {k: n for k, n in stat_names.items() if n in WANTED_STATS}
        meta = {
            k: RawEventMeta(
                v.name,
                v.display_name,
                {stat_names.get(s.metadata_id, ""): _resolve(s, stat_names, p.name) for s in v.stats},
            )
            for k, v in p.event_metadata.items()
        }
        lines = []
        for line in p.lines:
            n = len(line.events)
            mid = np.empty(n, np.int64)
            off = np.empty(n, np.int64)
            dur = np.empty(n, np.int64)
            kinds: dict[str, np.ndarray] = {}
            vals: dict[str, np.ndarray] = {}
            for i, ev in enumerate(line.events):
                mid[i] = ev.metadata_id
                off[i] = ev.offset_ps
                dur[i] = ev.duration_ps
                for st in ev.stats:
                    name = wanted.get(st.metadata_id)
                    if name is None:
                        continue
                    if name not in kinds:
                        kinds[name] = np.zeros(n, np.int8)
                        vals[name] = np.zeros(n, np.int64)
                    which = st.WhichOneof("value")
                    if which == "int64_value":
                        k, v = K_INT, st.int64_value
                    elif which == "uint64_value":
                        k, v = K_UINT, st.uint64_value - (1 << 64 if st.uint64_value >= 1 << 63 else 0)
                    elif which == "double_value":
                        k, v = K_DOUBLE, _double_bits(st.double_value)
                    elif which == "str_value":
                        k, v = K_STR, sid(st.str_value)
                    elif which == "bytes_value":
                        k, v = K_STR, sid(bytes(st.bytes_value).decode("utf-8", "replace"))
                    elif which == "ref_value":
                        if st.ref_value not in stat_names:
                            raise DanglingRef(p.name, st.ref_value)
                        k, v = K_REF, st.ref_value
                    else:
                        continue
                    kinds[name][i] = k
                    vals[name][i] = v
            stats = {name: RawStat(kinds[name], vals[name]) for name in kinds}
            lines.append(RawLine(line.id, line.name, line.display_name, line.timestamp_ns, mid, off, dur, stats))
        plane_stats = {stat_names.get(s.metadata_id, ""): _resolve(s, stat_names, p.name) for s in p.stats}
        planes.append(RawPlane(p.id, p.name, stat_names, meta, plane_stats, lines))
    return RawSpace(planes, list(space.hostnames), list(space.errors), list(space.warnings), strings)
