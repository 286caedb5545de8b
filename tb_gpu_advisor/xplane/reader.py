"""Decode one `<host>.xplane.pb` into a columnar `Profile`.

Every quirk of the file format is handled here and nowhere else: ref-valued stats, stats on event
metadata, both `kernel_details` and `memcpy_details` forms, `tf_op` vs the older `annotation`,
derived lines (kept out of stream activity), idle GPU planes.
"""
from __future__ import annotations

import re
from array import array
from functools import lru_cache
from typing import Callable

import numpy as np
from google.protobuf.message import DecodeError

from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.profile import (
    CORE_COLUMNS,
    DEVICE_COLUMNS,
    HOST_COLUMNS,
    Device,
    EventTable,
    Flag,
    HostThread,
    Kind,
    OpTable,
    Profile,
    SavedSteps,
    Stream,
    StringTable,
)
from tb_gpu_advisor.xplane import xplane_pb2

HOST_PLANE = "/host:CPU"
GPU_PLANE = re.compile(r"^/device:GPU:(\d+)$")
STREAM_LINE = re.compile(r"^Stream #(\d+)")
# Lines some files carry that the viewer derives from the streams; never stream activity.
DERIVED_LINES = frozenset(
    {
        "Steps",
        "TensorFlow Ops",
        "Framework Ops",
        "TensorFlow Name Scope",
        "Framework Name Scope",
        "XLA Ops",
        "XLA Modules",
        "Launch Stats",
        "Source code",
        "XLA TraceMe",
        "Async XLA Ops",
    }
)

# --- names -> kinds and flags -------------------------------------------------------------------

_MEMCPY_NAME = (
    (re.compile(r"h2d|htod", re.I), Kind.MEMCPY_H2D),
    (re.compile(r"d2h|dtoh", re.I), Kind.MEMCPY_D2H),
    (re.compile(r"d2d|dtod", re.I), Kind.MEMCPY_D2D),
    (re.compile(r"p2p|ptop", re.I), Kind.MEMCPY_P2P),
)
TENSOR_CORE_MARKERS = (
    "h884", "s884", "h1688", "s1688", "hmma", "16816", "c1688", "i8816", "i16832",
    "xmma_gemm", "xmma_implicit_gemm", "xmma_sparse", "sm80_xmma", "sm90_xmma",
    "tensorop", "gmma", "wgmma",
)  # fmt: skip
# "f16" covers cuDNN/cuBLAS/CUTLASS names such as `..._f16f16_f16f32_...` (and bf16).
FP16_NAME_MARKERS = ("half", "f16", "bfloat16")
FP16_SHAPE = re.compile(r"\b(half|bfloat16|bf16|f16)\b", re.I)


def classify_device_event(name: str) -> Kind:
    """Kind of a device event from its name (copies by name, never as compute)."""
    low = name.lower()
    if low.startswith("memcpy"):
        for pattern, kind in _MEMCPY_NAME:
            if pattern.search(name):
                return kind
        return Kind.MEMCPY_D2D  # refined from memcpy_details when present
    if low.startswith("memset"):
        return Kind.MEMSET
    if low.startswith("nccl"):
        return Kind.COLLECTIVE
    return Kind.KERNEL


def uses_tensor_cores(kernel_name: str) -> bool:
    low = kernel_name.lower()
    return any(m in low for m in TENSOR_CORE_MARKERS)


def is_16bit_name(kernel_name: str) -> bool:
    low = kernel_name.lower()
    return any(m in low for m in FP16_NAME_MARKERS)


def is_16bit_shape(shape: str) -> bool:
    return bool(shape) and FP16_SHAPE.search(shape) is not None


_LAUNCH_API = re.compile(
    r"^(cu|cuda)(LaunchKernel|LaunchCooperativeKernel|LaunchKernelEx|GraphLaunch|Memcpy|Memset)"
)
_FRAMEWORK_OP = re.compile(r"^[^\s:]+:[A-Za-z_][\w]*$")


def classify_host_event(name: str) -> Kind:
    """Kind of a host event from its name (step markers are found by their `step_num` stat)."""
    if name.startswith(("IteratorGetNextOp::", "IteratorGetNextAsOptionalOp::")):
        return Kind.INPUT_WAIT
    if name.startswith("Iterator::") or name.endswith(("Produce", "Consume")):
        return Kind.INPUT_STAGE
    if _LAUNCH_API.match(name):
        return Kind.LAUNCH
    if name == "MemoryAllocation":
        return Kind.MEMORY_ALLOC
    if name == "MemoryDeallocation":
        return Kind.MEMORY_FREE
    if name == "EagerExecute" or name.startswith(("EagerLocalExecute", "EagerKernelExecute")):
        return Kind.EAGER
    if _FRAMEWORK_OP.match(name):
        op_type = name.rsplit(":", 1)[1]
        if op_type.startswith(("Iterator", "AnonymousIterator", "MultiDeviceIterator")):
            return Kind.INPUT_WAIT if op_type.startswith("IteratorGetNext") else Kind.INPUT_STAGE
        return Kind.FRAMEWORK_OP
    return Kind.HOST_OTHER


_SHAPE_ANNOTATION = re.compile(r"shape=(\([^)]*\)|[^#,]*)")


@lru_cache(maxsize=65536)
def parse_op(text: str) -> tuple[str, str, str]:
    """`name:Type` (tf_op) or `name:Type#shape=(...)#` (annotation) -> (name, type, shape)."""
    shape = ""
    if "#" in text:
        text, _, rest = text.partition("#")
        m = _SHAPE_ANNOTATION.search(rest)
        if m:
            shape = m.group(1).strip()
    if "::" in text:  # nested annotations: the innermost names the op
        text = text.rsplit("::", 1)[1]
    name, sep, op_type = text.rpartition(":")
    if not sep:
        name, op_type = text, text.rsplit("/", 1)[-1]
    return name, op_type, shape


def _ints(v: str, n: int) -> tuple[int, ...]:
    out = []
    for p in v.split(",")[:n]:
        try:
            out.append(int(p))
        except ValueError:
            out.append(0)
    return tuple(out) + (0,) * (n - len(out))


@lru_cache(maxsize=65536)
def parse_kernel_details(text: str) -> tuple[int, int, int, int, int, int, int, int, float]:
    """Both known forms -> (grid x,y,z, block x,y,z, regs, shared bytes, occupancy %).

    Older: `regs:38 shm:0 grid:160,1,1 block:1024,1,1`; newer: `regs:N static_shared:N
    dynamic_shared:N grid:x,y,z block:x,y,z occ_pct:F`. Unknown keys and bad values are ignored.
    """
    grid = block = (0, 0, 0)
    regs = shm = 0
    occ = float("nan")
    for token in text.split():
        key, _, val = token.partition(":")
        try:
            if key == "grid":
                grid = _ints(val, 3)
            elif key == "block":
                block = _ints(val, 3)
            elif key in ("regs", "registers_per_thread"):
                regs = int(val)
            elif key in ("shm", "static_shared", "dynamic_shared"):
                shm += int(val)
            elif key == "occ_pct":
                occ = float(val)
        except ValueError:
            continue
    return (*grid, *block, regs, shm, occ)


@lru_cache(maxsize=4096)
def parse_memcpy_details(text: str) -> tuple[int, Kind | None, bool]:
    """Both known forms -> (bytes, kind from kind_src/kind_dst or None, async)."""
    size, src, dst, is_async = 0, None, None, False
    for token in text.split():
        key, _, val = token.partition(":")
        if key == "size":
            try:
                size = int(val)
            except ValueError:
                pass
        elif key == "kind_src":
            src = val.lower()
        elif key == "kind_dst":
            dst = val.lower()
        elif key == "async":
            is_async = val.strip() not in ("0", "false", "")
    kind = None
    if src is not None and dst is not None:
        if "peer" in (src, dst):
            kind = Kind.MEMCPY_P2P
        else:
            kind = {
                (False, True): Kind.MEMCPY_H2D,
                (True, False): Kind.MEMCPY_D2H,
                (True, True): Kind.MEMCPY_D2D,
            }.get((src == "device", dst == "device"))
    return size, kind, is_async


# --- stat plumbing ------------------------------------------------------------------------------

# The stats the reader looks at, as small integer codes.
S_CORR, S_KDETAILS, S_MDETAILS, S_TFOP, S_ANNOT, S_SHAPE, S_HLO_OP, S_HLO_MODULE = range(8)
S_EAGER, S_GROUP, S_STEP, S_DEVICE, S_BYTES, S_PEAK, S_ALLOC, S_EAGER_OP, S_IS_FUNC = range(8, 17)
_STAT_CODES = {
    "correlation_id": S_CORR,
    "kernel_details": S_KDETAILS,
    "memcpy_details": S_MDETAILS,
    "memset_details": S_MDETAILS,
    "tf_op": S_TFOP,
    "annotation": S_ANNOT,
    "shape": S_SHAPE,
    "hlo_op": S_HLO_OP,
    "hlo_module": S_HLO_MODULE,
    "is_eager": S_EAGER,
    "group_id": S_GROUP,
    "step_num": S_STEP,
    "device_id": S_DEVICE,
    "bytes_allocated": S_BYTES,
    "peak_bytes_in_use": S_PEAK,
    "allocator_name": S_ALLOC,
    "eager_op": S_EAGER_OP,
    "is_func": S_IS_FUNC,
}


class _Plane:
    """Resolved metadata of one plane."""

    def __init__(self, plane, path: str):
        self.plane = plane
        self.path = path
        self.stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        self.codes = {k: _STAT_CODES[n] for k, n in self.stat_names.items() if n in _STAT_CODES}

    def value(self, st):
        which = st.WhichOneof("value")
        if which == "ref_value":
            ref = st.ref_value
            try:
                return self.stat_names[ref]
            except KeyError:
                raise ProfileReadError(
                    self.path,
                    f"plane {self.plane.name!r}: stat refers to stat metadata {ref}, which is missing",
                ) from None
        if which is None:
            return None
        return getattr(st, which)

    def stats(self, stats) -> dict[int, object]:
        """Coded stats of a stat list (unknown stats skipped)."""
        out = {}
        codes = self.codes
        for st in stats:
            code = codes.get(st.metadata_id)
            if code is not None:
                out[code] = self.value(st)
        return out

    def named_stats(self, stats) -> dict[str, object]:
        return {self.stat_names.get(st.metadata_id, ""): self.value(st) for st in stats}

    def event_metadata(self, mid: int):
        # `in` first: indexing a protobuf message map inserts missing keys instead of raising.
        if mid not in self.plane.event_metadata:
            raise ProfileReadError(
                self.path, f"plane {self.plane.name!r}: event refers to metadata {mid}, which is missing"
            )
        return self.plane.event_metadata[mid]


def _int(v, default: int = -1) -> int:
    if v is None:
        return default
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


class _Builder:
    """Accumulates one table's columns in typed arrays, then hands out NumPy columns."""

    _CODES = {np.dtype(np.int64): "q", np.dtype(np.int32): "i", np.dtype(np.int8): "b",
              np.dtype(np.uint16): "H", np.dtype(np.float32): "f"}  # fmt: skip

    def __init__(self, extra: dict):
        self.spec = dict(CORE_COLUMNS)
        self.spec.update(extra)
        self.cols = {k: array(self._CODES[dt]) for k, (dt, _) in self.spec.items()}

    def table(self) -> EventTable:
        cols = {}
        for k, (dt, _) in self.spec.items():
            cols[k] = np.frombuffer(self.cols[k], dtype=dt).copy() if len(self.cols[k]) else np.zeros(0, dt)
        order = np.argsort(cols["start_ps"], kind="stable")
        if len(order) and np.any(order != np.arange(len(order))):
            cols = {k: v[order] for k, v in cols.items()}
        return EventTable(cols)


class _Reader:
    def __init__(self, path: str, host: str):
        self.path = path
        self.host = host
        self.names = StringTable()
        self.op_index: dict[tuple[str, str], int] = {}
        self.ops = OpTable()
        self.has_xla = False

    def intern_op(self, text: str, shape: str = "") -> int:
        """Op id of `name:Type` text; an op is its (name, type). Its shape is the first one seen,
        from an annotation's `#shape=` or a `shape` stat."""
        name, op_type, annotated = parse_op(text)
        key = (name, op_type)
        shape = annotated or shape
        op = self.op_index.get(key)
        if op is None:
            op = len(self.ops.name)
            self.op_index[key] = op
            self.ops.name.append(self.names.intern(name))
            self.ops.type.append(self.names.intern(op_type))
            self.ops.shape.append(shape)
        elif shape and not self.ops.shape[op]:
            self.ops.shape[op] = shape
        return op

    # -- device planes ---------------------------------------------------------------------

    def read_device_line(self, p: _Plane, line, base_ps: int) -> EventTable:
        b = _Builder(DEVICE_COLUMNS)
        c = b.cols
        starts, durs, names, kinds, corrs, ops, flags, groups = (
            c["start_ps"], c["dur_ps"], c["name"], c["kind"], c["corr"], c["op"], c["flags"], c["group"]
        )  # fmt: skip
        gx, gy, gz, bx, by, bz = c["grid_x"], c["grid_y"], c["grid_z"], c["block_x"], c["block_y"], c["block_z"]
        regs, shm, occ, nbytes = c["regs"], c["shmem"], c["occupancy"], c["bytes"]
        meta_cache: dict[int, tuple] = {}
        attr_cache: dict[tuple, tuple[int, int]] = {}
        codes = p.codes
        value = p.value
        for ev in line.events:
            mid = ev.metadata_id
            meta = meta_cache.get(mid)
            if meta is None:
                md = p.event_metadata(mid)
                name = md.name or md.display_name
                kind = classify_device_event(name)
                nflags = Flag.NONE
                if uses_tensor_cores(name):
                    nflags |= Flag.TENSOR_CORE
                if is_16bit_name(name):
                    nflags |= Flag.FP16
                # A direction in the name wins over memcpy_details; a bare "Memcpy" takes it from there.
                named = kind == Kind.KERNEL or any(pt.search(name) for pt, _ in _MEMCPY_NAME)
                meta = (self.names.intern(name), int(kind), int(nflags), p.stats(md.stats), named)
                meta_cache[mid] = meta
            name_id, kind, nflags, st, named = meta
            if ev.stats:
                st = dict(st)
                for s in ev.stats:
                    code = codes.get(s.metadata_id)
                    if code is not None:
                        st[code] = value(s)
            starts.append(base_ps + ev.offset_ps)
            durs.append(ev.duration_ps)
            names.append(name_id)
            corrs.append(_int(st.get(S_CORR)))
            groups.append(_int(st.get(S_GROUP)))
            # op attribution: tf_op (newer), annotation (older), else the HLO op (XLA/JAX)
            op_text = st.get(S_TFOP) or st.get(S_ANNOT)
            hlo = st.get(S_HLO_OP)
            if hlo or st.get(S_HLO_MODULE):
                self.has_xla = True
            if not op_text and hlo:
                op_text = f"{hlo}:{str(hlo).split('.')[0]}"
            shape = st.get(S_SHAPE) or ""
            key = (op_text, shape)
            attr = attr_cache.get(key)
            if attr is None:
                op = self.intern_op(str(op_text), str(shape)) if op_text else -1
                f = 0
                if is_16bit_shape(str(shape)) or (op_text and is_16bit_shape(parse_op(str(op_text))[2])):
                    f |= Flag.FP16
                attr = (op, int(f))
                attr_cache[key] = attr
            op, f = attr
            f |= nflags
            if st.get(S_EAGER):
                f |= Flag.EAGER
            ops.append(op)
            kd = st.get(S_KDETAILS)
            if kd:
                k = parse_kernel_details(str(kd))
                gx.append(k[0]); gy.append(k[1]); gz.append(k[2])  # noqa: E702
                bx.append(k[3]); by.append(k[4]); bz.append(k[5])  # noqa: E702
                regs.append(k[6]); shm.append(k[7]); occ.append(k[8])  # noqa: E702
            else:
                gx.append(0); gy.append(0); gz.append(0)  # noqa: E702
                bx.append(0); by.append(0); bz.append(0)  # noqa: E702
                regs.append(0); shm.append(0); occ.append(float("nan"))  # noqa: E702
            md_text = st.get(S_MDETAILS)
            if md_text and kind != Kind.KERNEL and kind != Kind.COLLECTIVE:
                size, dkind, is_async = parse_memcpy_details(str(md_text))
                nbytes.append(size)
                if dkind is not None and kind != Kind.MEMSET and not named:
                    kind = int(dkind)
                if is_async:
                    f |= Flag.ASYNC
            else:
                nbytes.append(0)
            kinds.append(kind)
            flags.append(f)
        return b.table()

    # -- host plane ------------------------------------------------------------------------

    def read_host_line(self, p: _Plane, line, base_ps: int) -> EventTable:
        # Ops on tf.data threads are the pipeline's own functions (map, ...): input, not compute.
        input_thread = (line.display_name or line.name).startswith("tf_data")
        b = _Builder(HOST_COLUMNS)
        c = b.cols
        starts, durs, names, kinds, corrs, ops, flags, groups = (
            c["start_ps"], c["dur_ps"], c["name"], c["kind"], c["corr"], c["op"], c["flags"], c["group"]
        )  # fmt: skip
        step_nums, device_ids, nbytes, peaks, allocs = (
            c["step_num"], c["device_id"], c["bytes"], c["peak_bytes"], c["allocator"]
        )  # fmt: skip
        meta_cache: dict[int, tuple] = {}
        codes = p.codes
        value = p.value
        for ev in line.events:
            mid = ev.metadata_id
            meta = meta_cache.get(mid)
            if meta is None:
                md = p.event_metadata(mid)
                name = md.name or md.display_name
                kind = classify_host_event(name)
                if kind == Kind.FRAMEWORK_OP and input_thread:
                    kind = Kind.INPUT_STAGE
                op = self.intern_op(name) if kind == Kind.FRAMEWORK_OP else -1
                meta = (self.names.intern(name), int(kind), op, p.stats(md.stats))
                meta_cache[mid] = meta
            name_id, kind, op, st = meta
            if ev.stats:
                st = dict(st)
                for s in ev.stats:
                    code = codes.get(s.metadata_id)
                    if code is not None:
                        st[code] = value(s)
            f = 0
            step = _int(st.get(S_STEP))
            if step >= 0 and S_STEP in st:
                kind = int(Kind.STEP)
            elif kind == Kind.EAGER:
                f = int(Flag.EAGER)
                eager_op = st.get(S_EAGER_OP)
                if _int(st.get(S_IS_FUNC), 0) or (isinstance(eager_op, str) and eager_op.startswith("__inference")):
                    f |= Flag.FUNCTION
                elif eager_op:
                    op = self.intern_op(f"{eager_op}:{eager_op}")
            starts.append(base_ps + ev.offset_ps)
            durs.append(ev.duration_ps)
            names.append(name_id)
            kinds.append(kind)
            corrs.append(_int(st.get(S_CORR)))
            groups.append(_int(st.get(S_GROUP)))
            ops.append(op)
            flags.append(f)
            step_nums.append(step)
            device_ids.append(_int(st.get(S_DEVICE)))
            nbytes.append(max(_int(st.get(S_BYTES), 0), 0))
            peaks.append(_int(st.get(S_PEAK)))
            alloc = st.get(S_ALLOC)
            allocs.append(self.names.intern(str(alloc)) if alloc else -1)
        return b.table()


def _device_from_plane(p: _Plane, device_id: int) -> Device:
    s = p.named_stats(p.plane.stats)

    def num(key, cast=int):
        v = s.get(key)
        try:
            return cast(v) if v is not None else None
        except (TypeError, ValueError):
            return None

    major, minor = num("compute_cap_major"), num("compute_cap_minor")
    name = s.get("gpu_device_name") or s.get("device_name") or p.plane.name
    return Device(
        id=device_id,
        name=str(name),
        plane_name=p.plane.name,
        compute_capability=(major, minor or 0) if major is not None else None,
        sm_count=num("core_count"),
        clock_khz=num("clock_rate"),
        memory_bytes=num("memory_size"),
        memory_bandwidth=num("memory_bandwidth", float),
        vendor=str(s["device_vendor"]) if s.get("device_vendor") else None,
    )


def parse_xspace(data: bytes, path: str) -> "xplane_pb2.XSpace":
    if not data:
        raise ProfileReadError(path, "the file is empty")
    space = xplane_pb2.XSpace()
    try:
        space.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as e:
        raise ProfileReadError(path, f"not a readable XSpace profile ({e})") from None
    if not space.planes:
        raise ProfileReadError(path, "not an XSpace profile: it has no planes")
    return space


def read_profile_bytes(
    data: bytes,
    path: str,
    host: str,
    progress: Callable[[int, int], None] | None = None,
) -> Profile:
    """Decode XSpace bytes into a `Profile`. Raises `ProfileReadError` naming `path`."""
    space = parse_xspace(data, path)
    try:
        return _build(space, path, host, progress)
    except ProfileReadError:
        raise
    except (ValueError, TypeError, KeyError, OverflowError, IndexError) as e:
        raise ProfileReadError(path, f"malformed profile: {type(e).__name__}: {e}") from None


def read_profile(path: str, host: str | None = None, progress=None) -> Profile:
    """Read a profile through TensorBoard's file-system layer (local, gs://, s3://...)."""
    from tb_gpu_advisor.discovery import gfile, host_name

    try:
        with gfile().GFile(path, "rb") as f:
            data = f.read()
    except Exception as e:  # file systems raise many types; the message is what matters
        raise ProfileReadError(path, f"cannot read the file ({e})") from None
    return read_profile_bytes(data, path, host or host_name(path), progress)


def _build(space, path: str, host: str, progress) -> Profile:
    r = _Reader(path, host)
    planes = []
    for plane in space.planes:
        if plane.name == HOST_PLANE or GPU_PLANE.match(plane.name):
            planes.append(_Plane(plane, path))
    if not planes:
        names = ", ".join(repr(p.name) for p in space.planes[:5])
        raise ProfileReadError(path, f"no host or GPU plane in the profile (planes: {names})")

    # Time zero is the earliest event of the file.
    origin_ns = None
    first_ps = None
    for p in planes:
        for line in p.plane.lines:
            if not line.events:
                continue
            lo = min(ev.offset_ps for ev in line.events)
            if origin_ns is None:
                origin_ns = line.timestamp_ns
            rel = (line.timestamp_ns - origin_ns) * 1000 + lo
            first_ps = rel if first_ps is None else min(first_ps, rel)
    origin_ns = origin_ns or 0
    first_ps = first_ps or 0

    total = sum(len(line.events) for p in planes for line in p.plane.lines)
    done = 0
    devices, streams, threads, saved = [], [], [], []
    for p in planes:
        m = GPU_PLANE.match(p.plane.name)
        if m:
            dev_id = int(m.group(1))
            devices.append(_device_from_plane(p, dev_id))
        for line in p.plane.lines:
            base_ps = (line.timestamp_ns - origin_ns) * 1000 - first_ps
            name = line.display_name or line.name
            if m:
                if line.name == "Steps":
                    t = _steps_line(p, line, base_ps)
                    saved.append(SavedSteps(dev_id, t[0], t[1]))
                elif line.name in DERIVED_LINES:
                    pass
                else:
                    sm = STREAM_LINE.match(line.name)
                    sid = int(sm.group(1)) if sm else line.id
                    streams.append(Stream(dev_id, sid, name, r.read_device_line(p, line, base_ps)))
            else:
                threads.append(HostThread(line.id, name, r.read_host_line(p, line, base_ps)))
            done += len(line.events)
            if progress is not None:
                progress(done, total)

    # An op is placed on the device when device events are attributed to it.
    on_device = np.zeros(len(r.ops), dtype=bool)
    for s in streams:
        ops = s.events.op
        on_device[ops[ops >= 0]] = True
    r.ops.on_device = on_device
    ends = [int(t.events.end_ps.max()) for t in [*streams, *threads] if len(t.events)]
    warnings = [str(w) for w in space.warnings] + [str(e) for e in space.errors]
    return Profile(
        host=host,
        path=path,
        names=r.names,
        ops=r.ops,
        devices=sorted(devices, key=lambda d: d.id),
        streams=streams,
        threads=threads,
        saved_steps=saved,
        origin_ns=origin_ns + first_ps // 1000,
        end_ps=max(ends) if ends else 0,
        has_xla=r.has_xla,
        warnings=warnings,
    )


def _steps_line(p: _Plane, line, base_ps: int) -> tuple[np.ndarray, np.ndarray]:
    starts = np.fromiter((base_ps + ev.offset_ps for ev in line.events), dtype=np.int64, count=len(line.events))
    durs = np.fromiter((ev.duration_ps for ev in line.events), dtype=np.int64, count=len(line.events))
    order = np.argsort(starts, kind="stable")
    return starts[order], durs[order]
