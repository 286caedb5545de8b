"""PyTorch profiler traces (`torch.profiler` with `tensorboard_trace_handler`: one
`<worker>.<span>.pt.trace.json[.gz]` per profiling span) into the same columnar `Profile` as XSpace.

What becomes what (both the 2021 Kineto names and the current ones):
- `Kernel`/`kernel`, `Memcpy`/`gpu_memcpy`, `Memset`/`gpu_memset` events: device events on their GPU
  and stream, with correlation id, grid, block, registers, shared memory, occupancy and bytes; NCCL
  kernels are collectives; copies take their direction from their name (`Memcpy HtoD (...)`).
- `Runtime`/`cuda_runtime`/`cuda_driver` events: host events; the CUDA calls that launch work
  (`cudaLaunchKernel`, `cudaMemcpyAsync`, ...) are launches, paired with their device work by
  correlation id.
- `Operator`/`cpu_op` events: framework ops (an op is its ATen name); a kernel belongs to the op whose
  external id it carries. The op's recorded input types make its kernels 16-bit when the first input
  is `c10::Half` or `c10::BFloat16` (the profile plugin's rule for TensorFlow ops); without them the
  kernel's name decides. Input shapes become the op's shape annotation (`half[64,3,224,224];...`).
- `ProfilerStep#N` marks step N; the DataLoader's `__next__` is the step waiting for input.
- `deviceProperties` describe the GPUs (AMD ones by ROCm's fields, their name or the HIP calls, see
  `_Builder._devices`); `distributedInfo` gives the rank; the profiler's own span
  (`PyTorch Profiler (0)`, category `Trace`) is time zero, else the first event.

Broken input raises ProfileReadError like an XSpace file does.
"""

from __future__ import annotations

import io
import json as _json
import logging
import math
import re
import time
import types
import zlib
from typing import Any, Callable, Iterator

import numpy as np

from tb_gpu_advisor import extent
from tb_gpu_advisor.classify import (
    FP16_DTYPES,
    classify_copy,
    classify_device_event,
    is_16bit_name,
    is_launch,
    uses_tensor_cores,
)
from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.formats.base import INT32_MAX, MAX_DUR_PS, Buffer
from tb_gpu_advisor.profile import (
    AMD,
    DEVICE_SPEC,
    FIRST_EVENT,
    HOST_SPEC,
    NVIDIA,
    PROFILE_START,
    PYTORCH,
    Device,
    EventTable,
    Flag,
    HostThread,
    Kind,
    MemoryEvents,
    OpTable,
    Profile,
    Stream,
    StringTable,
    amd_gfx,
    vendor_of,
)

_fast_json: types.ModuleType | None
try:  # the fastest JSON parser here (benchmarks/pytorch_benchmark.py measured it); the standard one otherwise
    import orjson as _fast_json
except ImportError:  # pragma: no cover - orjson is a dependency
    _fast_json = None

log = logging.getLogger(__name__)

MAX_INFLATED = 2**31  # a gzip that inflates beyond this is refused (a zip bomb, or not a trace)
MAX_INFLATE_S = 60.0  # and one that takes longer than this to inflate
CHUNK = 4 << 20  # bytes inflated at a time
BLANK_RUN = 16 << 20  # this much blank space in a row is no trace (a whitespace bomb)
GZIP_MAGIC = b"\x1f\x8b"
_NONBLANK = re.compile(rb"[^ \t\r\n]")
BLANK = b" \t\r\n"  # JSON's whitespace

DEVICE_CATS = {
    "kernel": "kernel",
    "memcpy": "memcpy",
    "gpu_memcpy": "memcpy",
    "memset": "memset",
    "gpu_memset": "memset",
}
RUNTIME_CATS = frozenset({"runtime", "cuda_runtime", "cuda_driver"})
OP_CATS = frozenset({"operator", "cpu_op"})
ANNOTATION_CATS = frozenset({"user_annotation"})
SKIPPED_CATS = frozenset({"gpu_user_annotation", "ac2g", "async", "overhead", "trace"})
STEP = re.compile(r"^ProfilerStep\s*#\s*(\d{1,18})$")  # a longer number is not a step of this trace
# torch.utils.data: the step asks the DataLoader for the next batch
DATALOADER_NEXT = re.compile(r"DataLoader.*__next__|_DataLoaderIter\.__next__")
# ROCm: HIP runtime calls, Tensile's GEMM kernels, ROCclr's copy and fill kernels
HIP_NAME = re.compile(r"^(hip[A-Z]|Cijk_|__amd_rocclr_)")
DTYPE = {"c10::half": "half", "c10::bfloat16": "bfloat16", "half": "half", "bfloat16": "bfloat16"}


def _loads(data: Buffer) -> Any:
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


def _inflate(data: Buffer, path: str, limit: int, max_seconds: float = MAX_INFLATE_S) -> Buffer:
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


def _us(x: float) -> str:
    """A trace timestamp as the file writes it: µs, up to three decimals."""
    return f"{x:.3f}".rstrip("0").rstrip(".")


def _number(v: Any) -> float | None:
    """A JSON number as float64 when it is one and finite, else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        x = float(v)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


_UNNAMING = (list, dict)  # JSON values that cannot name a process or thread (nor be a dict key)


def _shown(v: Any) -> str:
    """A value from the file, short, for a message."""
    text = _json.dumps(v, default=str) if not isinstance(v, str) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _obj(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def _list(x: Any) -> list:
    return x if isinstance(x, list) else []


def _int(v: Any, default: int = -1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, str) and len(v) < 40 and v.strip().lstrip("-").isdigit():
            v = int(v)
        else:
            return default
    try:
        x = int(v)
    except (OverflowError, ValueError):
        return default
    return x if -(2**63) <= x < 2**63 else default


def _shape(args: dict) -> str:
    """The op's inputs as a shape annotation, `half[64,3,224,224];float[]`, from its recorded input
    types and dims (empty when the trace has neither)."""
    types = args.get("Input type") or []
    dims = args.get("Input Dims") or args.get("Input dims") or []
    if not isinstance(types, list) or not isinstance(dims, list):
        return ""
    parts = []
    for k in range(max(len(types), len(dims))):
        t = types[k] if k < len(types) and isinstance(types[k], str) else ""
        d = dims[k] if k < len(dims) and isinstance(dims[k], list) else []
        if not t and not d:
            continue
        name = DTYPE.get(t.lower(), t.lower().removeprefix("c10::") or "unknown")
        parts.append(f"{name}[{','.join(str(_int(x, 0)) for x in d if not isinstance(x, list))}]")
    return ";".join(parts)


def _first_dtype_16bit(args: dict) -> int:
    """1 when the op's first typed input is half or bfloat16, 0 when it is another type, -1 when
    the trace recorded no types."""
    types = args.get("Input type")
    if not isinstance(types, list):
        return -1
    for t in types:
        if isinstance(t, str) and t:
            return 1 if DTYPE.get(t.lower(), t.lower()) in FP16_DTYPES else 0
    return -1


class _Columns:
    """Rows of one table, appended as plain Python values and turned into columns once."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.rows: dict[str, list] = {k: [] for k in spec}
        self.columns = list(self.rows.items())
        self.missing = {k: missing for k, (_, missing) in spec.items()}
        self.dropped = 0  # rows starting outside the capture (set by `table`)
        self.first_dropped: tuple[int, int, float] | None = None  # (name id, step, ts µs) of the first
        self.cut = 0  # rows running past the capture's end, cut there

    def add(self, **values: Any) -> None:
        for k, column in self.columns:
            column.append(values.get(k, self.missing[k]))

    def starts_ps(self) -> np.ndarray:
        """Start times in ps (float64, the trace's own clock)."""
        return np.asarray(self.rows["start_ps"], np.float64) * 1e6

    def table(self, origin_us: float, lo_ps: float, hi_ps: float) -> EventTable:
        """Start times were added in µs as the trace has them (epoch µs do not fit in int64 ps):
        made ps from time zero here. Rows starting outside the capture (`lo_ps`..`hi_ps`, the
        trace's clock) are dropped and counted, durations cut at its end (see `extent`)."""
        start_us = np.asarray(self.rows.pop("start_ps"), np.float64)
        cols = {k: np.asarray(v, dtype=self.spec[k][0]) for k, v in self.rows.items()}
        out = extent.outside(start_us * 1e6, lo_ps, hi_ps)
        if out.any():
            self.dropped = int(out.sum())
            at = int(np.argmax(out))
            step = int(cols["step_num"][at]) if "step_num" in cols else -1
            self.first_dropped = (int(cols["name"][at]), step, float(start_us[at]))
            keep = ~out
            start_us = start_us[keep]
            cols = {k: v[keep] for k, v in cols.items()}
        # bounded: every kept start is within the capture, so this cast cannot wrap
        cols["start_ps"] = np.round((start_us - origin_us) * 1e6).astype(np.int64)
        order = np.argsort(cols["start_ps"], kind="stable")
        if len(order) > 1 and np.any(order[1:] < order[:-1]):
            cols = {k: v[order] for k, v in cols.items()}
        table, self.cut = extent.clip(EventTable(cols), hi_ps - origin_us * 1e6)
        return table


def read_python(
    data: Buffer,
    path: str,
    host: str,
    progress: Callable[[int, int], None] | None = None,
    limit: int = MAX_INFLATED,
    max_seconds: float = MAX_INFLATE_S,
) -> Profile:
    """The Python reader: a PyTorch trace's bytes (JSON, or gzip of it) into a `Profile`, parsed whole.
    Raises `ProfileReadError`; refuses garbage and bombs early (see `_inflate`). The entry point is
    `kineto_native.read_pytorch_trace_bytes`, which reads natively and falls back to this."""
    if not data:
        raise ProfileReadError(path, "the file is empty")
    text = _inflate(data, path, limit, max_seconds)
    try:
        doc = _loads(text)
    except (ValueError, TypeError) as e:
        raise ProfileReadError(path, f"not a readable PyTorch trace (JSON: {str(e)[:200]})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ProfileReadError(path, "not a PyTorch trace: no traceEvents list")
    try:
        return _Builder(doc, path, host).build(progress)
    except ProfileReadError:
        raise
    except (ValueError, TypeError, KeyError, OverflowError, IndexError, AttributeError):
        # a value of a kind no check above foresaw: said in the user's terms, the detail logged
        log.debug("unreadable PyTorch trace %s", path, exc_info=True)
        raise ProfileReadError(
            path, "malformed PyTorch trace: a value in it is of the wrong kind or out of range"
        ) from None


MAX_BYTES = 2**62  # a byte count beyond this is clamped (no allocator holds 4 EiB)


def _memory_events(
    records: list[tuple[float, int, int, int, int]] | tuple[np.ndarray, ...],
    origin_us: float,
    lo_ps: float,
    hi_ps: float,
) -> MemoryEvents:
    """The `[memory]` records within the capture, times from time zero, sorted by time."""
    if not len(records):
        return MemoryEvents.empty()
    columns = records if isinstance(records, tuple) else zip(*records)  # the native reader's are columns
    ts, device, nbytes, allocated, reserved = (np.asarray(c) for c in columns)
    ts = ts.astype(np.float64)
    keep = ~extent.outside(ts * 1e6, lo_ps, hi_ps)
    start = np.round((ts[keep] - origin_us) * 1e6).astype(np.int64)
    order = np.argsort(start, kind="stable")
    return MemoryEvents(
        start[order],
        device[keep][order].astype(np.int32),
        nbytes[keep][order].astype(np.int64),
        allocated[keep][order].astype(np.int64),
        reserved[keep][order].astype(np.int64),
    )


class _Builder:
    def __init__(self, doc: dict, path: str, host: str) -> None:
        self.doc = doc
        self.path = path
        self.host = host
        self.names = StringTable()
        self.ops = OpTable()
        self.op_index: dict[str, int] = {}
        self.warnings: list[str] = []
        self.bad = 0  # events skipped as unreadable
        self.first_bad = ""  # what was wrong with the first of them

    def reject(self, n: int, e: Any, what: str) -> None:
        """Count event `n` (`e`) as unreadable; the first one's reason is said in the warnings."""
        self.bad += 1
        if not self.first_bad:
            name = e.get("name") if isinstance(e, dict) else None
            label = f"traceEvents[{n}]" + (f" ({_shown(name)})" if isinstance(name, str) else "")
            self.first_bad = f"{label}: {what}"

    def warn(self, message: str) -> None:
        if message not in self.warnings and len(self.warnings) < 50:
            self.warnings.append(message)

    def intern_op(self, name: str, shape: str) -> int:
        op = self.op_index.get(name)
        if op is None:
            op = len(self.ops.name)
            self.op_index[name] = op
            self.ops.name.append(self.names.intern(name))
            self.ops.type.append(self.names.intern(name))
            self.ops.executed.append(self.ops.type[-1])
            self.ops.shape.append(shape)
        elif shape and not self.ops.shape[op]:
            self.ops.shape[op] = shape
        return op

    def build(self, progress) -> Profile:
        events = self.doc["traceEvents"]
        threads: dict[tuple, _Columns] = {}
        thread_names: dict[tuple, str] = {}
        process_names: dict[Any, str] = {}
        streams: dict[tuple[int, int], _Columns] = {}
        kernel_external: dict[tuple[int, int], list[int]] = {}  # (device, stream) -> external ids, row order
        op_by_external: dict[int, tuple[int, int]] = {}  # external id -> (op, 16-bit)
        step_threads: set[tuple] = set()
        memory: list[tuple[float, int, int, int, int]] = []  # [memory] records: ts µs, device, bytes, totals
        trace_start: float | None = None
        trace_end: float | None = None
        skipped = 0
        reject = self.reject
        total = len(events)
        for n, e in enumerate(events):
            if progress is not None and n % 100_000 == 0:
                progress(n, total)
            if not isinstance(e, dict):
                reject(n, e, f"{_shown(e)} is not an event object")
                continue
            ph = e.get("ph")
            if isinstance(e.get("pid"), _UNNAMING) or isinstance(e.get("tid"), _UNNAMING):
                reject(n, e, "'pid' and 'tid' should be numbers or names, not lists or objects")
                continue
            if ph == "M":
                args = _obj(e.get("args"))
                if e.get("name") == "process_name" and isinstance(args.get("name"), str):
                    process_names[e.get("pid")] = args["name"]
                elif e.get("name") == "thread_name" and isinstance(args.get("name"), str):
                    thread_names[(e.get("pid"), e.get("tid"))] = args["name"]
                continue
            if ph == "i" or ph == "I":
                if e.get("name") == "[memory]":
                    self.memory_record(n, e, memory)
                continue
            if ph != "X":
                continue
            ts, dur = _number(e.get("ts")), _number(e.get("dur", 0))
            if ts is None or abs(ts) > 2**52:
                reject(n, e, f"'ts' is {_shown(e.get('ts'))}, expected a time in µs")
                continue
            if dur is None:
                reject(n, e, f"'dur' is {_shown(e.get('dur'))}, expected a duration in µs")
                continue
            cat = str(e.get("cat") or "").lower()
            name = e.get("name")
            if not isinstance(name, str):
                name = str(name)
            args = _obj(e.get("args"))
            start_us = ts  # ps once time zero is known (_Columns.table)
            if dur * 1_000_000 > MAX_DUR_PS:  # float64: cannot wrap
                self.warn(f"durations over {MAX_DUR_PS // 10**12} s were clamped")
                dur = MAX_DUR_PS / 1_000_000
            dur_ps = int(round(dur * 1_000_000)) if dur > 0 else 0
            if cat == "trace":
                trace_start = ts if trace_start is None else min(trace_start, ts)
                end = ts + dur_ps / 1e6
                trace_end = end if trace_end is None else max(trace_end, end)
                continue
            if cat in SKIPPED_CATS:
                continue
            if cat in DEVICE_CATS:
                device = _int(args.get("device", e.get("pid")), -1)
                stream = _int(args.get("stream", -1), -1)
                if stream < 0:
                    m = re.search(r"(\d+)", str(e.get("tid")))
                    stream = int(m.group(1)) if m else 0
                if device < 0 or device > INT32_MAX or stream > INT32_MAX:
                    skipped += 1
                    continue
                if DEVICE_CATS[cat] == "memset":
                    kind = Kind.MEMSET
                elif DEVICE_CATS[cat] == "memcpy":
                    kind = classify_copy(name)
                else:
                    kind = classify_device_event(name)
                grid, block = _list(args.get("grid")), _list(args.get("block"))
                occ = args.get("est. achieved occupancy %")
                cols = streams.get((device, stream)) or streams.setdefault((device, stream), _Columns(DEVICE_SPEC))
                ext = _int(args.get("External id", args.get("external id", -1)))
                kernel_external.setdefault((device, stream), []).append(ext)
                tensor_core = Flag.TENSOR_CORE if kind == Kind.KERNEL and uses_tensor_cores(name) else Flag.NONE
                cols.add(
                    start_ps=start_us,
                    dur_ps=dur_ps,
                    name=self.names.intern(name),
                    kind=int(kind),
                    corr=max(_int(args.get("correlation", -1)), -1),
                    flags=int(tensor_core),
                    bytes=max(_int(args.get("bytes", 0), 0), 0),
                    grid_x=min(max(_int(grid[0] if len(grid) > 0 else 0, 0), 0), INT32_MAX),
                    grid_y=min(max(_int(grid[1] if len(grid) > 1 else 0, 0), 0), INT32_MAX),
                    grid_z=min(max(_int(grid[2] if len(grid) > 2 else 0, 0), 0), INT32_MAX),
                    block_x=min(max(_int(block[0] if len(block) > 0 else 0, 0), 0), INT32_MAX),
                    block_y=min(max(_int(block[1] if len(block) > 1 else 0, 0), 0), INT32_MAX),
                    block_z=min(max(_int(block[2] if len(block) > 2 else 0, 0), 0), INT32_MAX),
                    regs=min(max(_int(args.get("registers per thread", 0), 0), 0), INT32_MAX),
                    shmem=min(max(_int(args.get("shared memory", 0), 0), 0), INT32_MAX),
                    occupancy=float(occ) if isinstance(occ, (int, float)) and 0 <= occ <= 100 else np.nan,
                )
                continue
            key = (e.get("pid"), e.get("tid"))
            cols = threads.get(key) or threads.setdefault(key, _Columns(HOST_SPEC))
            row: dict[str, Any] = {"start_ps": start_us, "dur_ps": dur_ps, "name": self.names.intern(name)}
            step = STEP.match(name)
            if step and (cat in OP_CATS or cat in ANNOTATION_CATS or not cat):
                # one marker name for every step (its number is step_num), as TensorFlow's "train"
                row.update(kind=int(Kind.STEP), step_num=int(step.group(1)), name=self.names.intern("ProfilerStep"))
                step_threads.add(key)
            elif DATALOADER_NEXT.search(name):
                row.update(kind=int(Kind.INPUT_WAIT))
            elif cat in RUNTIME_CATS:
                row.update(
                    kind=int(Kind.LAUNCH if is_launch(name) else Kind.HOST_OTHER),
                    corr=max(_int(args.get("correlation", -1)), -1),
                )
            elif cat in OP_CATS:
                known = self.op_index.get(name)
                # an op's shape is the first one recorded: built only while it has none
                op = known if known is not None and self.ops.shape[known] else self.intern_op(name, _shape(args))
                ext = _int(args.get("External id", args.get("external id", -1)))
                if ext >= 0:
                    op_by_external[ext] = (op, _first_dtype_16bit(args))
                row.update(kind=int(Kind.FRAMEWORK_OP), op=op)
            else:
                row.update(kind=int(Kind.HOST_OTHER))
            cols.add(**row)
        on_device = self._attach_ops(streams, kernel_external, op_by_external)
        return self.assemble(
            streams,
            threads,
            thread_names,
            process_names,
            step_threads,
            memory,
            trace_start,
            trace_end,
            skipped,
            on_device,
        )

    def _attach_ops(
        self,
        streams: dict[tuple[int, int], _Columns],
        kernel_external: dict[tuple[int, int], list[int]],
        op_by_external: dict[int, tuple[int, int]],
    ) -> np.ndarray:
        """Kernels: the op that launched them (by external id) and the 16-bit rule; which ops ran on a GPU."""
        on_device = np.zeros(len(self.ops.name), bool)
        for key, cols in streams.items():
            externals = kernel_external[key]
            ops, flag_rows = cols.rows["op"], cols.rows["flags"]
            for i, ext in enumerate(externals):
                found = op_by_external.get(ext)
                kind = cols.rows["kind"][i]
                compute = kind in (Kind.KERNEL, Kind.COLLECTIVE)
                if found is not None:
                    ops[i] = found[0]
                    on_device[found[0]] = True
                sixteen = found[1] if found is not None else -1
                if compute and (sixteen == 1 or (sixteen < 0 and is_16bit_name(self.names[cols.rows["name"][i]]))):
                    flag_rows[i] |= int(Flag.FP16)
        return on_device

    def assemble(
        self,
        streams: dict[tuple[int, int], _Columns],
        threads: dict[Any, _Columns],
        thread_names: dict[Any, str],
        process_names: dict[Any, str],
        step_threads: set,
        memory: list[tuple[float, int, int, int, int]] | tuple[np.ndarray, ...],
        trace_start: float | None,
        trace_end: float | None,
        skipped: int,
        on_device: np.ndarray,
    ) -> Profile:
        """The Profile from the events' rows (both readers fill the same tables; dicts in the order
        their keys first appear in the file)."""
        if self.bad:
            self.warn(f"{self.bad} unreadable event(s) were skipped; the first: {self.first_bad}")
        if skipped:
            self.warn(f"{skipped} device event(s) with an impossible device or stream were skipped")
        if not threads and not streams:
            raise ProfileReadError(self.path, "no host or GPU events in the trace")
        # the capture: the profiler's own span when it holds the events, else found from them
        columns = list(streams.values()) + list(threads.values())
        starts = np.concatenate([c.starts_ps() for c in columns])
        stated = (trace_start * 1e6, (trace_end or trace_start) * 1e6) if trace_start is not None else None
        lo_ps, hi_ps, used = extent.find(starts, stated)
        if used and trace_start is not None:
            origin_us, time_base = trace_start, PROFILE_START
        else:
            kept = starts[~extent.outside(starts, lo_ps, hi_ps)]
            origin_us, time_base = (float(kept.min()) / 1e6 if len(kept) else 0.0), FIRST_EVENT
            trace_start = None

        stream_list: list[Stream] = []
        for (device, stream), cols in sorted(streams.items()):
            cols.rows["stream"] = [len(stream_list)] * len(cols.rows["kind"])
            stream_list.append(Stream(device, stream, f"Stream #{stream}", cols.table(origin_us, lo_ps, hi_ps)))
        self.ops.on_device = on_device

        main = sorted(step_threads, key=str)[0] if step_threads else None
        thread_list: list[HostThread] = []
        for k, (key, cols) in enumerate(sorted(threads.items(), key=lambda kv: str(kv[0]))):
            cols.rows["thread"] = [k] * len(cols.rows["start_ps"])
            name = thread_names.get(key) or f"{process_names.get(key[0], 'process')} {key[1]}"
            if key == main:
                name = "python"  # the thread that marks the steps: the training loop's
            tid = _int(key[1], k)
            thread_list.append(HostThread(tid, name, cols.table(origin_us, lo_ps, hi_ps)))
        capture_errors = self._outside(columns, lo_ps, hi_ps)

        devices = self._devices({d for d, _ in streams}, self._vendor_signs())
        memory_events = _memory_events(memory, origin_us, lo_ps, hi_ps)
        tables = [s.events for s in stream_list] + [t.events for t in thread_list]
        ends = [int(t.end_ps.max()) for t in tables if len(t)]
        info = _obj(self.doc.get("distributedInfo"))
        rank, world_size = _int(info.get("rank")), _int(info.get("world_size"))
        if world_size > 1:
            self.warn(f"rank {info.get('rank')} of {info.get('world_size')}: this file is one rank's view")
        return Profile(
            host=self.host,
            path=self.path,
            names=self.names,
            ops=self.ops,
            devices=devices,
            streams=stream_list,
            threads=thread_list,
            saved_steps=[],
            origin_ns=int(origin_us * 1000),
            end_ps=max(ends, default=0),
            framework=PYTORCH,
            time_base=time_base,
            start_ns=int(origin_us * 1000) if trace_start is not None else None,
            warnings=self.warnings,
            capture_errors=capture_errors,
            has_xla=any(n.startswith("triton_") for n in self.names.strings),
            rank=rank if 0 <= rank <= INT32_MAX else None,
            world_size=world_size if 0 < world_size <= INT32_MAX else None,
            memory=memory_events,
        )

    def memory_record(self, n: int, e: dict, into: list[tuple[float, int, int, int, int]]) -> None:
        """One `[memory]` record: an allocation or free, and the allocator's totals after it."""
        ts = _number(e.get("ts"))
        if ts is None or abs(ts) > 2**52:
            self.reject(n, e, f"'ts' is {_shown(e.get('ts'))}, expected a time in µs")
            return
        args = _obj(e.get("args"))
        device = _int(args.get("Device Id"), -1) if _int(args.get("Device Type"), 0) != 0 else -1
        if device > INT32_MAX or device < -1:
            self.reject(n, e, f"'Device Id' is {_shown(args.get('Device Id'))}, expected a device number")
            return
        into.append(
            (
                ts,
                device,
                max(min(_int(args.get("Bytes"), 0), MAX_BYTES), -MAX_BYTES),
                min(max(_int(args.get("Total Allocated"), -1), -1), MAX_BYTES),
                min(max(_int(args.get("Total Reserved"), -1), -1), MAX_BYTES),
            )
        )

    def _outside(self, tables: list[_Columns], lo_ps: float, hi_ps: float) -> list[str]:
        """The capture error for events dropped outside the capture (and the note for those cut)."""
        cut = sum(c.cut for c in tables)
        if cut:
            self.warn(extent.cut_message(cut))
        dropped = sum(c.dropped for c in tables)
        first = next((c.first_dropped for c in tables if c.first_dropped is not None), None)
        if not dropped or first is None:
            return []
        name_id, step, ts = first
        name = self.names[name_id] + (f"#{step}" if step >= 0 else "")
        return [
            extent.dropped_message(
                dropped, f"{name!r} at ts {_us(ts)} µs", f"{_us(lo_ps / 1e6)}", f"{_us(hi_ps / 1e6)} µs"
            )
        ]

    def _vendor_signs(self) -> str | None:
        """AMD when the trace's runtime calls or kernels are ROCm's (HIP calls, Tensile `Cijk_` GEMMs,
        ROCclr copy kernels), NVIDIA when they are CUDA's; None when it shows neither."""
        amd = nvidia = False
        for n in self.names.strings:
            if HIP_NAME.match(n):
                amd = True
                break
            nvidia = nvidia or n.startswith(("cudaLaunchKernel", "cudaMemcpy", "cuLaunchKernel"))
        return AMD if amd else NVIDIA if nvidia else None

    def _devices(self, seen: set[int], signs: str | None) -> list[Device]:
        """The GPUs the trace describes (deviceProperties), and any GPU with events it does not.
        The vendor: ROCm's properties (`gcnArchName`, `maxSharedMemoryPerMultiProcessor`, 64-thread
        wavefronts), the name, or the runtime calls; an AMD GPU's `computeMajor` is its gfx generation,
        not a CUDA compute capability, and is not kept as one."""
        out: dict[int, Device] = {}
        props = self.doc.get("deviceProperties")
        for p in props if isinstance(props, list) else []:
            if not isinstance(p, dict):
                continue
            i = _int(p.get("id"), -1)
            if i < 0 or i > INT32_MAX:
                continue
            major, minor = _int(p.get("computeMajor"), -1), _int(p.get("computeMinor"), -1)
            mem = _int(p.get("totalGlobalMem"), -1)
            sms = _int(p.get("numSms"), -1)
            name = str(p.get("name") or f"GPU {i}")[:200]
            arch = p.get("gcnArchName") if isinstance(p.get("gcnArchName"), str) else None
            rocm = arch is not None or "maxSharedMemoryPerMultiProcessor" in p or _int(p.get("warpSize")) == 64
            cuda = "regsPerMultiprocessor" in p or "sharedMemPerMultiprocessor" in p
            vendor = AMD if rocm else vendor_of(name) or (NVIDIA if cuda else signs)
            out[i] = Device(
                id=i,
                name=name,
                plane_name=f"/device:GPU:{i}",
                compute_capability=(major, minor) if major >= 0 and minor >= 0 and vendor != AMD else None,
                sm_count=sms if sms > 0 else None,
                memory_bytes=mem if mem > 0 else None,
                vendor=vendor,
                gfx=amd_gfx(name, arch) if vendor == AMD else None,
            )
        for i in sorted(seen - set(out)):
            out[i] = Device(id=i, name=f"GPU {i}", plane_name=f"/device:GPU:{i}", vendor=signs)
        return [out[i] for i in sorted(out)]
