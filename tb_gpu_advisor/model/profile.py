"""The columnar profile model every analysis reads.

One `Profile` per host file. Events live in NumPy columns (`EventTable`), one table per GPU stream and
per host thread; names are interned once in `Profile.names` and referenced by integer id. Times are
integer picoseconds from the profile's start: the Profile tab's trace viewer's zero (`time_base`)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable, Iterable, Mapping, Union

import numpy as np

from tb_gpu_advisor.model.arrays import Constant, Merged, Sparse, Unkept, constant_key as _key


class Kind(enum.IntEnum):
    """What an event is. Device kinds are < 10, host kinds >= 10."""

    OTHER = 0
    KERNEL = 1
    COLLECTIVE = 2  # NCCL kernels
    MEMCPY_H2D = 3
    MEMCPY_D2H = 4
    MEMCPY_D2D = 5
    MEMCPY_P2P = 6
    MEMSET = 7

    STEP = 10  # host step marker (carries step_num)
    FRAMEWORK_OP = 11  # `name:Type` op executed by the runtime
    EAGER = 12  # eager execution of a single op (outside a graph)
    INPUT_WAIT = 13  # the step waiting on the iterator (IteratorGetNext...::DoCompute, DataLoader __next__)
    INPUT_STAGE = 14  # tf.data pipeline stages (Iterator::..., *Produce, *Consume)
    LAUNCH = 15  # CUDA API call that launches device work, with a correlation id
    MEMORY_ALLOC = 16
    MEMORY_FREE = 17
    HOST_OTHER = 18


MEMCPY_KINDS = (Kind.MEMCPY_H2D, Kind.MEMCPY_D2H, Kind.MEMCPY_D2D, Kind.MEMCPY_P2P)
DEVICE_KINDS = (Kind.KERNEL, Kind.COLLECTIVE, *MEMCPY_KINDS, Kind.MEMSET)


class Flag(enum.IntFlag):
    """Bit flags on events (`EventTable.flags`, 16 bits)."""

    NONE = 0
    FP16 = 1  # 16-bit kernel by the profile plugin's rule (see `Profile` docs and the reader)
    TENSOR_CORE = 2  # kernel name says it runs on Tensor Cores
    EAGER = 4  # executed eagerly (`is_eager` on a device event; eager host markers)
    ASYNC = 8  # asynchronous copy
    FUNCTION = 16  # an eager marker that runs a whole function (graph), not one op
    PYTHON = 32  # a Python call (PyTorch's `python_function` events, with_stack=True on 1.10 and later)
    FP8 = 64  # a kernel in 8-bit floats or narrower (FP8, FP6, FP4, MX formats): by name or its op's inputs
    UNIT_UNKNOWN = 128  # the kernel naming table (model/kernel_naming.py) does not identify the kernel
    MATRIX_WORK = 256  # a GEMM, convolution or attention kernel by its library's naming
    PROFILER_RANGE = 512  # a host record of CUPTI's range profiler (`cuda_profiler_range`): a kernel's counters


ColumnSpec = dict[str, tuple[np.dtype, int | float]]

# Columns every table has, with their dtypes and "missing" values.
CORE_COLUMNS: ColumnSpec = {
    "start_ps": (np.dtype(np.int64), 0),
    "dur_ps": (np.dtype(np.int64), 0),
    "name": (np.dtype(np.int32), -1),
    "kind": (np.dtype(np.int8), 0),
    "corr": (np.dtype(np.int64), -1),  # correlation id pairing a launch with its device event
    "op": (np.dtype(np.int32), -1),  # index into Profile.ops
    "flags": (np.dtype(np.uint16), 0),
    "group": (np.dtype(np.int64), -1),  # profiler's group_id (step grouping), if present
}

# Columns only device tables have.
DEVICE_COLUMNS: ColumnSpec = {
    "grid_x": (np.dtype(np.int32), 0),
    "grid_y": (np.dtype(np.int32), 0),
    "grid_z": (np.dtype(np.int32), 0),
    "block_x": (np.dtype(np.int32), 0),
    "block_y": (np.dtype(np.int32), 0),
    "block_z": (np.dtype(np.int32), 0),
    "regs": (np.dtype(np.int32), 0),
    "shmem": (np.dtype(np.int32), 0),  # static + dynamic shared memory, bytes
    "occupancy": (np.dtype(np.float32), np.nan),  # percent, when the file says
    "blocks_per_sm": (np.dtype(np.float32), np.nan),  # the grid's blocks over the GPU's SMs, when the file says
    "bytes": (np.dtype(np.int64), 0),  # copies and memsets
    "stream": (np.dtype(np.int32), -1),  # index into Profile.streams (set when tables are merged)
    "shape": (np.dtype(np.int32), -1),  # name id: the input shapes of the op call that launched it
}
# Columns only host tables have.
HOST_COLUMNS: ColumnSpec = {
    "step_num": (np.dtype(np.int64), -1),
    "device_id": (np.dtype(np.int32), -1),  # launch API events: the GPU they target
    "bytes": (np.dtype(np.int64), 0),  # memory events: bytes_allocated
    "peak_bytes": (np.dtype(np.int64), -1),  # memory events: peak_bytes_in_use
    "allocator": (np.dtype(np.int32), -1),  # memory events: allocator name id
    "reserved_bytes": (np.dtype(np.int64), -1),  # XSpace memory events: bytes_reserved (TF's stack-reserved)
    "available_bytes": (np.dtype(np.int64), -1),  # XSpace memory events: bytes_available (allocator's free)
    "fragmentation": (np.dtype(np.float32), np.nan),  # XSpace memory events: fraction, 0 to 1
    "thread": (np.dtype(np.int32), -1),  # index into Profile.threads
    "shape": (np.dtype(np.int32), -1),  # name id: this op call's input shapes (PyTorch record_shapes)
    "stack": (np.dtype(np.int32), -1),  # name id: this op call's `Call stack` (PyTorch before 1.10)
}
DEVICE_SPEC: ColumnSpec = {**CORE_COLUMNS, **DEVICE_COLUMNS}
HOST_SPEC: ColumnSpec = {**CORE_COLUMNS, **HOST_COLUMNS}


Column = Union[np.ndarray, Callable[[], np.ndarray]]


class EventTable:
    """Events of one stream or thread as parallel NumPy columns, sorted by start.

    A column may be given as a function that computes it: it runs on first use and its result is
    kept. `take` and `concat` are lazy in the same way, so a column no check reads is never gathered
    (most tables carry twenty columns and most checks read four). Columns are not changed after a
    table is built."""

    __slots__ = ("_cols", "_lazy", "_n", "_end")

    def __init__(self, columns: Mapping[str, Column], n: int | None = None):
        self._cols: dict[str, np.ndarray] = {}
        self._lazy: dict[str, Callable[[], np.ndarray]] = {}
        for key, col in columns.items():
            if callable(col):
                self._lazy[key] = col
            else:
                self._cols[key] = col
        if n is None:
            if "start_ps" not in self._cols:
                raise ValueError("a table needs its start_ps column, or its length")
            n = len(self._cols["start_ps"])
        for key, arr in self._cols.items():
            if len(arr) != n:
                raise ValueError(f"column {key} has {len(arr)} rows, expected {n}")
        self._n = n
        self._end: np.ndarray | None = None

    @classmethod
    def empty(cls, spec: ColumnSpec = CORE_COLUMNS) -> EventTable:
        return cls({k: np.zeros(0, dtype=dt) for k, (dt, _) in spec.items()})

    def __len__(self) -> int:
        return self._n

    def __contains__(self, key: str) -> bool:
        return key in self._cols or key in self._lazy

    def keys(self) -> list[str]:
        return [*self._cols, *self._lazy]

    def column(self, key: str) -> np.ndarray:
        col = self._cols.get(key)
        if col is None:
            # safe from several threads: at worst two compute the same column, and one result is kept
            make = self._lazy.get(key)
            if make is None:
                col = self._cols.get(key)  # another thread has just computed it
                if col is None:
                    raise KeyError(key)
                return col
            col = make()
            if len(col) != self._n:
                raise ValueError(f"column {key} has {len(col)} rows, expected {self._n}")
            if getattr(make, "kept", True):  # an `arrays.Unkept` column is made each time it is read
                self._cols[key] = col
                self._lazy.pop(key, None)
        return col

    def source(self, key: str) -> Column:
        """A column as it is held: its values, or the function that computes them."""
        col = self._cols.get(key)
        return col if col is not None else self._lazy[key]

    def peek(self, key: str) -> np.ndarray:  # a column, computed if it is not yet but not kept
        col = self._cols.get(key)
        return col if col is not None else self._lazy[key]()

    def peek_at(self, key: str, rows: np.ndarray) -> np.ndarray:
        """A column at `rows` (indices); one not computed yet is not made whole when it need not be."""
        col = self._cols.get(key)
        if col is not None:
            return col[rows]
        make = self._lazy[key]
        return make.at(rows) if isinstance(make, (Merged, Constant, Unkept, Sparse)) else make()[rows]

    def constant(self, key: str) -> Constant | None:
        """The column as a `Constant` when it is one not yet read, else None."""
        c = self._lazy.get(key)
        return c if isinstance(c, Constant) else None

    def __getattr__(self, key: str) -> np.ndarray:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self.column(key)
        except KeyError:
            raise AttributeError(key) from None

    @property
    def columns(self) -> dict[str, np.ndarray]:
        """Every column, computed."""
        for key in list(self._lazy):
            self.column(key)
        return self._cols

    def nbytes_bound(self) -> int:
        """Bytes the table holds once every column is computed, at most (a column not computed yet: 8
        per value, or its type's size where the function computing it says its `dtype`)."""
        lazy = sum(np.dtype(getattr(c, "dtype", np.int64)).itemsize for c in self._lazy.values())
        return sum(c.nbytes for c in self._cols.values()) + self._n * lazy

    def nbytes_kept(self) -> int:
        """Bytes of the columns (and end_ps) computed and kept so far."""
        return sum(c.nbytes for c in self._cols.values()) + (self._end.nbytes if self._end is not None else 0)

    @property
    def end_ps(self) -> np.ndarray:
        """start + duration, computed once."""
        if self._end is None:
            self._end = self.start_ps + self.dur_ps
        return self._end

    def take(self, index: np.ndarray, columns: Iterable[str] | None = None) -> EventTable:
        """The rows selected by `index` (a mask or indices), with every column or only `columns`;
        start_ps is taken now, the other columns when first read."""
        if index.dtype == bool:
            index = np.flatnonzero(index)
        keys = list(columns) if columns is not None else self.keys()
        cols: dict[str, Column] = {}
        for k in keys:
            if k in self._cols:
                cols[k] = self._cols[k][index] if k == "start_ps" else _gather(self._cols[k], index)
            elif k in self._lazy:
                c = self._lazy[k]  # a one-value column stays one value; a sparse one is gathered at its rows
                cols[k] = c.select(index) if isinstance(c, Constant) else _gather_lazy(self, k, index)
            else:
                raise KeyError(k)
        return EventTable(cols, len(index))

    def of_kind(self, *kinds: int) -> EventTable:
        return self.take(np.isin(self.kind, np.asarray(kinds, dtype=np.int8)))

    def with_column(self, key: str, values: Column) -> EventTable:
        return EventTable({**self._cols, **self._lazy, key: values}, self._n)

    @staticmethod
    def concat(tables: Iterable[EventTable], spec: ColumnSpec) -> EventTable:
        """The tables merged and sorted by start, with exactly the columns of `spec` (an empty list
        gives an empty table with every column)."""
        tables = [t for t in tables if len(t)]
        if not tables:
            return EventTable.empty(spec)
        if len(tables) == 1:
            t = tables[0]
            only: dict[str, Column] = {
                k: (_lazy_column(t, k, dt) if k in t else Constant(len(t), missing, dt))
                for k, (dt, missing) in spec.items()
            }
            only["start_ps"] = t.start_ps.astype(spec["start_ps"][0], copy=False)
            return EventTable(only, len(t))
        start = np.concatenate([t.start_ps for t in tables])
        order = np.argsort(start, kind="stable")  # timsort: linear on runs that are sorted already
        cols: dict[str, Column] = {"start_ps": start[order]}
        order = order.astype(np.int32) if len(order) < 2**31 else order  # kept by the columns not read yet
        for k, (dt, missing) in spec.items():
            if k != "start_ps":
                cols[k] = _merged(tables, k, dt, missing, order)
        return EventTable(cols, len(order))


def _gather(col: np.ndarray, index: np.ndarray) -> Callable[[], np.ndarray]:
    return lambda: col[index]


def _gather_lazy(table: EventTable, key: str, index: np.ndarray) -> Callable[[], np.ndarray]:
    c = table._lazy.get(key)
    return (lambda: c.at(index)) if isinstance(c, Sparse) else (lambda: table.column(key)[index])


def _lazy_column(table: EventTable, key: str, dt: np.dtype) -> Callable[[], np.ndarray]:
    c = table._lazy.get(key)
    if isinstance(c, (Constant, Sparse)):  # stays one value, or a few
        return c.astype(dt)
    return lambda: table.column(key).astype(dt, copy=False)


def _merged(
    tables: list[EventTable], key: str, dt: np.dtype, missing: Any, order: np.ndarray
) -> Callable[[], np.ndarray]:
    values = {_key(c.value) if (c := t.constant(key)) is not None else None for t in tables if key in t}
    if all(key in t for t in tables) and len(values) == 1 and None not in values:
        c = tables[0].constant(key)
        assert c is not None
        return Constant(len(order), c.value, dt)
    if not any(key in t for t in tables):
        return Constant(len(order), missing, dt)

    # the parts' columns, not their tables: a part replaced by a view of the merged table is freed
    parts = [t.source(key) if key in t else Constant(len(t), missing, dt) for t in tables]
    return Merged(parts, np.cumsum([0] + [len(t) for t in tables]), order, dt)


class StringTable:
    """Interned strings: each distinct name stored once, referenced by index."""

    __slots__ = ("strings", "_index")

    def __init__(self) -> None:
        self.strings: list[str] = []
        self._index: dict[str, int] = {}

    def intern(self, s: str) -> int:
        i = self._index.get(s)
        if i is None:
            i = len(self.strings)
            self._index[s] = i
            self.strings.append(s)
        return i

    def get(self, s: str) -> int:
        """Id of `s`, or -1 if it was never interned."""
        return self._index.get(s, -1)

    def __getitem__(self, i: int) -> str:
        return self.strings[i] if 0 <= i < len(self.strings) else ""

    def __len__(self) -> int:
        return len(self.strings)


@dataclasses.dataclass
class OpTable:
    """Framework ops that device or host events are attributed to (`EventTable.op`)."""

    name: list[int] = dataclasses.field(default_factory=list)  # name ids, e.g. "dense/MatMul"
    type: list[int] = dataclasses.field(default_factory=list)  # name ids, e.g. "MatMul" (as the user wrote it)
    executed: list[int] = dataclasses.field(default_factory=list)  # name ids, e.g. "_MklMatMul" (as it ran)
    shape: list[str] = dataclasses.field(default_factory=list)  # raw shape annotation, "" if none
    on_device: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __len__(self) -> int:
        return len(self.name)


NVIDIA, AMD = "NVIDIA", "AMD"
# NVIDIA architectures by compute capability ((major, -1): every minor of that major)
NVIDIA_FAMILIES = {
    (3, -1): "Kepler",
    (5, -1): "Maxwell",
    (6, -1): "Pascal",
    (7, 0): "Volta",
    (7, 2): "Volta",
    (7, 5): "Turing",
    (8, 0): "Ampere",
    (8, 6): "Ampere",
    (8, 7): "Ampere",
    (8, 9): "Ada Lovelace",
    (9, 0): "Hopper",
    (10, -1): "Blackwell",
    (12, -1): "Blackwell",
}
# AMD families by gfx target prefix (the first that matches); CDNA ones have matrix cores (MFMA)
AMD_FAMILIES = (
    ("gfx908", "CDNA"),
    ("gfx90a", "CDNA2"),
    ("gfx94", "CDNA3"),
    ("gfx95", "CDNA4"),
    ("gfx103", "RDNA2"),
    ("gfx11", "RDNA3"),
    ("gfx12", "RDNA4"),
    ("gfx9", "GCN5"),
)
CDNA_GFX = ("gfx908", "gfx90a", "gfx94", "gfx95")
# the gfx target of AMD's Instinct GPUs by name, for files that name the GPU but not its target
AMD_GFX_BY_NAME = (
    ("MI100", "gfx908"),
    ("MI210", "gfx90a"),
    ("MI250", "gfx90a"),
    ("MI300", "gfx942"),
    ("MI325", "gfx942"),
    ("MI350", "gfx950"),
    ("MI355", "gfx950"),
)


def vendor_of(*texts: str | None) -> str | None:
    """NVIDIA or AMD from a vendor string or a device name ("Nvidia", "AMD Instinct MI250X"), else None."""
    for t in texts:
        low = (t or "").lower()
        if not low:
            continue
        if (
            "amd" in low.split()
            or low.startswith("amd")
            or "instinct" in low
            or "radeon" in low
            or "advanced micro" in low
        ):
            return AMD
        if any(w in low for w in ("nvidia", "tesla", "geforce", "quadro", "titan")):
            return NVIDIA
    return None


def amd_gfx(name: str, gfx: str | None = None) -> str | None:
    """An AMD GPU's gfx target: the file's (`gcnArchName`, "gfx90a:sramecc+:xnack-" -> "gfx90a"), or
    the target of the Instinct GPU its name gives."""
    if gfx:
        head = gfx.split(":")[0].strip().lower()
        if head.startswith("gfx") and head[3:].isalnum():
            return head[:16]
    upper = name.upper()
    return next((g for key, g in AMD_GFX_BY_NAME if key in upper), None)


@dataclasses.dataclass
class Device:
    """One GPU as its plane describes it."""

    id: int
    name: str
    plane_name: str
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    clock_khz: int | None = None
    memory_bytes: int | None = None
    memory_bandwidth: float | None = None  # bytes per second
    vendor: str | None = None  # NVIDIA or AMD (`vendor_of`), None when the file does not tell
    gfx: str | None = None  # an AMD GPU's target (`gcnArchName`, e.g. gfx90a), when the file or the name says

    @property
    def is_amd(self) -> bool:
        return self.vendor == AMD

    @property
    def has_tensor_cores(self) -> bool:
        """NVIDIA Tensor Cores: compute capability 7.0 (Volta) or newer. An AMD GPU has none (its
        matrix cores are `matrix_cores`); the reader gives AMD GPUs no compute capability."""
        cc = self.compute_capability
        return not self.is_amd and cc is not None and cc >= (7, 0)

    @property
    def bf16_tensor_cores(self) -> bool:
        """bfloat16 and TF32 on Tensor Cores: compute capability 8.0 (Ampere) or newer."""
        cc = self.compute_capability
        return self.has_tensor_cores and cc is not None and cc >= (8, 0)

    @property
    def matrix_cores(self) -> bool:
        """An AMD GPU with matrix cores (MFMA instructions, fp16 and bf16): the CDNA Instinct GPUs."""
        return self.is_amd and (self.gfx or "").startswith(CDNA_GFX)

    @property
    def architecture(self) -> str | None:
        """The architecture as its maker names it ("NVIDIA Volta", "AMD CDNA2 (gfx90a)"), None when
        the file does not say."""
        if self.is_amd:
            gfx = self.gfx or ""
            family = next((f for prefix, f in AMD_FAMILIES if gfx.startswith(prefix)), None)
            if family:
                return f"AMD {family} ({gfx})"
            return f"AMD ({gfx})" if gfx else "AMD"
        cc = self.compute_capability
        if cc is None:
            return None
        family = NVIDIA_FAMILIES.get(cc) or NVIDIA_FAMILIES.get((cc[0], -1))
        return f"NVIDIA {family}" if family else None

    def describe(self) -> str:
        """The GPU as the advice reads it: "Tesla V100-SXM2-16GB (NVIDIA Volta, compute capability 7.0)"."""
        parts = [a for a in (self.architecture,) if a]
        cc = self.compute_capability
        if cc is not None and not self.is_amd:
            parts.append(f"compute capability {cc[0]}.{cc[1]}")
        return f"{self.name} ({', '.join(parts)})" if parts else self.name

    def to_json(self) -> dict:
        cc = self.compute_capability
        return {
            "id": self.id,
            "name": self.name,
            "vendor": self.vendor,
            "architecture": self.architecture,
            "compute_capability": f"{cc[0]}.{cc[1]}" if cc else None,
            "sm_count": self.sm_count,
            "clock_mhz": round(self.clock_khz / 1000, 1) if self.clock_khz else None,
            "memory_gib": round(self.memory_bytes / 2**30, 2) if self.memory_bytes else None,
            "memory_bandwidth_gbps": round(self.memory_bandwidth / 1e9, 1) if self.memory_bandwidth else None,
        }


@dataclasses.dataclass
class Stream:
    device_id: int
    stream_id: int
    name: str
    events: EventTable


@dataclasses.dataclass
class HostThread:
    thread_id: int
    name: str
    events: EventTable


@dataclasses.dataclass
class SavedSteps:
    """A device `Steps` line some files carry: that GPU's own steps."""

    device_id: int
    start_ps: np.ndarray
    dur_ps: np.ndarray
    group: np.ndarray  # group_id of each step, -1 where the file gives none


@dataclasses.dataclass
class MemoryEvents:
    """The allocator's records (PyTorch `[memory]` events with `profile_memory=True`), sorted by time:
    each allocation (`bytes` > 0) or free (< 0) on a device (-1: the CPU), with the allocator's totals
    after it where the trace records them (-1 where it does not: PyTorch before 1.10)."""

    start_ps: np.ndarray  # int64, from time zero
    device: np.ndarray  # int32, the GPU's id; -1 for host memory
    bytes: np.ndarray  # int64, signed
    allocated: np.ndarray  # int64, `Total Allocated` after this record, -1 if not recorded
    reserved: np.ndarray  # int64, `Total Reserved` after this record, -1 if not recorded

    def __len__(self) -> int:
        return len(self.start_ps)

    @staticmethod
    def empty() -> MemoryEvents:
        z = np.zeros(0, np.int64)
        return MemoryEvents(z, np.zeros(0, np.int32), z, z, z)


# Frameworks a capture can come from; decided by the reader from what the file holds.
TENSORFLOW, JAX, PYTORCH, UNKNOWN = "tensorflow", "jax", "pytorch", "unknown"
# Where `Profile` times start: the profile's start (the trace viewer's zero), or, in files whose
# timestamps are not relative to it and carry no start time, the first event.
PROFILE_START, FIRST_EVENT = "profile-start", "first-event"


@dataclasses.dataclass
class Profile:
    """Everything the advisor knows about one host's capture."""

    host: str
    path: str
    names: StringTable
    ops: OpTable
    devices: list[Device]
    streams: list[Stream]
    threads: list[HostThread]
    saved_steps: list[SavedSteps]
    origin_ns: int  # raw timestamp (ns, the file's clock) of time zero
    end_ps: int  # end of the last event
    has_xla: bool = False  # XLA modules or HLO ops seen
    framework: str = UNKNOWN
    time_base: str = PROFILE_START
    tpu_planes: int = 0  # TPU device planes (a TPU capture: not a GPU advisor's subject)
    gpu_signs: bool = False  # the host shows GPU work (GPU threads, allocators, CUDA calls) even without a GPU plane
    start_ns: int | None = None  # profile start, epoch ns, when the file says
    warnings: list[str] = dataclasses.field(default_factory=list)  # what the reader skipped or clamped
    capture_errors: list[str] = dataclasses.field(default_factory=list)  # the profiler's own errors and warnings
    rank: int | None = None  # the process's rank in its job, where the file says (PyTorch distributedInfo)
    world_size: int | None = None  # the job's number of ranks, where the file says
    memory: MemoryEvents = dataclasses.field(default_factory=MemoryEvents.empty)  # allocator records, if any
    # what identifies the bytes read (formats.base.LocalFile.identity: device, inode, size, modification
    # and change times), for a cache to check against the file on disk; None for bytes not from a local file
    source: tuple[int, ...] | None = None

    def device_streams(self, device_id: int) -> list[Stream]:
        return [s for s in self.streams if s.device_id == device_id]

    def device_events(self, device_id: int) -> EventTable:
        """All events of one GPU, every stream merged and sorted by start; `stream` indexes `streams`."""
        return EventTable.concat(
            (
                s.events.with_column("stream", Constant(len(s.events), i, np.int32))
                for i, s in enumerate(self.streams)
                if s.device_id == device_id
            ),
            DEVICE_SPEC,
        )

    def host_events(self) -> EventTable:
        """All host events merged and sorted by start; `thread` indexes `threads`."""
        return EventTable.concat((t.events for t in self.threads), HOST_SPEC)

    @property
    def event_count(self) -> int:
        return sum(len(s.events) for s in self.streams) + sum(len(t.events) for t in self.threads)

    def op_name(self, op: int) -> str:
        return self.names[self.ops.name[op]] if 0 <= op < len(self.ops) else ""

    def op_type(self, op: int) -> str:
        return self.names[self.ops.type[op]] if 0 <= op < len(self.ops) else ""

    def op_executed(self, op: int) -> str:
        """The op type the runtime ran (oneDNN's `_MklMatMul` for `MatMul`); `op_type` where it is the same."""
        return self.names[self.ops.executed[op]] if 0 <= op < len(self.ops) else ""
