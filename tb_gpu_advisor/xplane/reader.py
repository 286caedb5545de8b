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
    MEMCPY_KINDS,
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
FP16_NAME_MARKERS = ("half", "fp16", "f16", "bfloat16")
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


# Eager markers that run a whole tf.function (a graph), not a single op.
FUNCTION_NAMES = ("__inference", "__forward", "__backward")

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
    # Eager dispatch: `EagerExecute` (with an `eager_op` stat) and `EagerLocalExecute: <op>` mark
    # one op run eagerly (or a function call, see FUNCTION_NAMES); `EagerKernelExecute` is the
    # runtime's inner wrapper, not a second op.
    if name == "EagerExecute" or name.startswith("EagerLocalExecute"):
        return Kind.EAGER
    if _FRAMEWORK_OP.match(name):
        op_type = name.rsplit(":", 1)[1]
        if op_type.startswith(("Iterator", "AnonymousIterator", "MultiDeviceIterator")):
            return Kind.INPUT_WAIT if op_type.startswith("IteratorGetNext") else Kind.INPUT_STAGE
        if op_type.startswith("_Xla"):  # XLA compile/run launchers: runtime work, not compute ops
            return Kind.HOST_OTHER
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
            if ref not in self.stat_names:
                self.missing_ref(ref)
            return self.stat_names[ref]
        if which is None:
            return None
        return getattr(st, which)

    def missing_ref(self, ref: int):
        raise ProfileReadError(
            self.path, f"plane {self.plane.name!r}: stat refers to stat metadata {ref}, which is missing"
        )

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


def _as_int(v) -> int:
    if type(v) is int:
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        return -1


class _Index:
    """Interns hashable keys to consecutive indices, keeping the rows derived from each key."""

    __slots__ = ("index", "rows", "make")

    def __init__(self, make):
        self.index: dict = {}
        self.rows: list = []
        self.make = make

    def __call__(self, key) -> int:
        i = self.index.get(key)
        if i is None:
            i = len(self.rows)
            self.index[key] = i
            self.rows.append(self.make(key))
        return i

    def column(self, j: int, ids: np.ndarray, dtype, missing) -> np.ndarray:
        """Column j of the rows selected by ids (-1 selects `missing`)."""
        table = np.array([r[j] for r in self.rows] + [missing], dtype=dtype)
        return table[ids]


_KD_DEFAULT = (0, 0, 0, 0, 0, 0, 0, 0, float("nan"))
_MD_DEFAULT = (0, None, False)


class _Reader:
    """Per event, the loops keep a few integers (start, duration, indices into small tables of
    distinct metadata, attributions and details); columns are expanded with NumPy at the end."""

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

    def _attribution(self, key) -> tuple[int, int]:
        """(tf_op, annotation, hlo_op, hlo_module, shape) -> (op id, 16-bit flag)."""
        tf_op, annotation, hlo, module, shape = key
        op_text = tf_op or annotation
        if hlo or module:
            self.has_xla = True
        if not op_text and hlo:
            op_text = f"{hlo}:{str(hlo).split('.')[0]}"
        shape = str(shape or "")
        op = self.intern_op(str(op_text), shape) if op_text else -1
        fp16 = is_16bit_shape(shape) or (bool(op_text) and is_16bit_shape(parse_op(str(op_text))[2]))
        return op, int(Flag.FP16) if fp16 else 0

    # -- device planes ---------------------------------------------------------------------

    def _device_meta(self, p: _Plane, mid: int) -> tuple:
        md = p.event_metadata(mid)
        name = md.name or md.display_name
        kind = classify_device_event(name)
        flags = Flag.NONE
        if uses_tensor_cores(name):
            flags |= Flag.TENSOR_CORE
        if is_16bit_name(name):
            flags |= Flag.FP16
        # A direction in the name wins over memcpy_details; a bare "Memcpy" takes it from there.
        named = kind not in MEMCPY_KINDS or any(pt.search(name) for pt, _ in _MEMCPY_NAME)
        st = p.stats(md.stats)
        defaults = tuple(st.get(c) for c in _DEVICE_STATS)
        return self.names.intern(name), int(kind), int(flags), named, defaults

    def read_device_line(self, p: _Plane, line, base_ps: int) -> EventTable:
        n = len(line.events)
        starts, durs = array("q"), array("q")
        meta_col, attr_col, kd_col, md_col, corr_col, group_col, eager_col = (
            array("i"), array("i"), array("i"), array("i"), array("q"), array("q"), array("b")
        )  # fmt: skip
        metas = {}
        meta_rows = []
        attrs = _Index(self._attribution)
        kds = _Index(lambda t: parse_kernel_details(str(t)))
        mds = _Index(lambda t: parse_memcpy_details(str(t)))
        codes_get = p.codes.get
        stat_names = p.stat_names
        for ev in line.events:
            mid = ev.metadata_id
            m = metas.get(mid)
            if m is None:
                m = metas[mid] = len(meta_rows)
                meta_rows.append(self._device_meta(p, mid))
            corr, group, tf_op, annot, hlo, module, shape, kd, mdt, eager = meta_rows[m][4]
            # The stat loop is written out here and in read_host_line rather than shared: a function
            # call per stat costs about a second per million events.
            for st in ev.stats:
                code = codes_get(st.metadata_id)
                if code is None:
                    continue
                which = st.WhichOneof("value")
                if which == "ref_value":
                    v = stat_names.get(st.ref_value)
                    if v is None:
                        p.missing_ref(st.ref_value)
                else:
                    v = getattr(st, which) if which else None
                if code == S_CORR:
                    corr = v
                elif code == S_TFOP:
                    tf_op = v
                elif code == S_KDETAILS:
                    kd = v
                elif code == S_MDETAILS:
                    mdt = v
                elif code == S_GROUP:
                    group = v
                elif code == S_ANNOT:
                    annot = v
                elif code == S_SHAPE:
                    shape = v
                elif code == S_HLO_OP:
                    hlo = v
                elif code == S_HLO_MODULE:
                    module = v
                elif code == S_EAGER:
                    eager = v
            starts.append(base_ps + ev.offset_ps)
            durs.append(ev.duration_ps)
            meta_col.append(m)
            corr_col.append(-1 if corr is None else _as_int(corr))
            group_col.append(-1 if group is None else _as_int(group))
            attr_col.append(attrs((tf_op, annot, hlo, module, shape)))
            kd_col.append(kds(kd) if kd else -1)
            md_col.append(mds(mdt) if mdt else -1)
            eager_col.append(1 if eager else 0)

        mi = np.frombuffer(meta_col, np.int32) if n else np.zeros(0, np.int32)
        ai = np.frombuffer(attr_col, np.int32) if n else np.zeros(0, np.int32)
        ki = np.frombuffer(kd_col, np.int32) if n else np.zeros(0, np.int32)
        di = np.frombuffer(md_col, np.int32) if n else np.zeros(0, np.int32)
        meta_name = np.array([r[0] for r in meta_rows], np.int32)
        meta_kind = np.array([r[1] for r in meta_rows], np.int8)
        meta_flags = np.array([r[2] for r in meta_rows], np.uint16)
        meta_named = np.array([r[3] for r in meta_rows], bool)
        kind = meta_kind[mi] if n else np.zeros(0, np.int8)
        # copies without a direction in the name take it from memcpy_details
        md_kind = np.array([int(r[1]) if r[1] is not None else -1 for r in mds.rows] + [-1], np.int8)[di]
        md_async = np.array([r[2] for r in mds.rows] + [False], bool)[di]
        is_copy = np.isin(kind, np.asarray(MEMCPY_KINDS, np.int8))
        refine = is_copy & ~meta_named[mi] & (md_kind >= 0) if n else np.zeros(0, bool)
        kind = np.where(refine, md_kind, kind).astype(np.int8)
        flags = (
            (meta_flags[mi] if n else np.zeros(0, np.uint16))
            | attrs.column(1, ai, np.uint16, 0)
            | np.where(np.frombuffer(eager_col, np.int8) > 0 if n else np.zeros(0, bool), np.uint16(Flag.EAGER), np.uint16(0))
            | np.where(md_async & (kind != Kind.KERNEL), np.uint16(Flag.ASYNC), np.uint16(0))
        ).astype(np.uint16)
        nbytes = mds.column(0, di, np.int64, 0)
        nbytes[(kind == Kind.KERNEL) | (kind == Kind.COLLECTIVE)] = 0
        cols = {
            "start_ps": _np(starts, np.int64),
            "dur_ps": _np(durs, np.int64),
            "name": meta_name[mi] if n else np.zeros(0, np.int32),
            "kind": kind,
            "corr": _np(corr_col, np.int64),
            "op": attrs.column(0, ai, np.int32, -1),
            "flags": flags,
            "group": _np(group_col, np.int64),
            "bytes": nbytes,
        }
        for j, key in enumerate(("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "regs", "shmem")):
            cols[key] = kds.column(j, ki, np.int32, _KD_DEFAULT[j])
        cols["occupancy"] = kds.column(8, ki, np.float32, np.nan)
        return _sorted_table(cols)

    # -- host plane ------------------------------------------------------------------------

    def _host_meta(self, p: _Plane, mid: int, input_thread: bool) -> tuple:
        md = p.event_metadata(mid)
        name = md.name or md.display_name
        kind = classify_host_event(name)
        if kind == Kind.FRAMEWORK_OP and input_thread:
            kind = Kind.INPUT_STAGE
        op = self.intern_op(name) if kind == Kind.FRAMEWORK_OP else -1
        st = p.stats(md.stats)
        return self.names.intern(name), int(kind), op, tuple(st.get(c) for c in _HOST_STATS)

    def read_host_line(self, p: _Plane, line, base_ps: int) -> EventTable:
        # Ops on tf.data threads are the pipeline's own functions (map, ...): input, not compute.
        input_thread = (line.display_name or line.name).startswith("tf_data")
        starts, durs = array("q"), array("q")
        meta_col, row_col = array("i"), array("i")
        metas = {}
        meta_rows = []
        rows = _Index(lambda r: r)  # distinct (kind, op, flags, step, device, corr, group, bytes, peak, alloc)
        codes_get = p.codes.get
        stat_names = p.stat_names
        for ev in line.events:
            mid = ev.metadata_id
            m = metas.get(mid)
            if m is None:
                m = metas[mid] = len(meta_rows)
                meta_rows.append(self._host_meta(p, mid, input_thread))
            name_id, kind, op, defaults = meta_rows[m]
            step, device, corr, group, nbytes, peak, alloc, eager_op, is_func = defaults
            for st in ev.stats:
                code = codes_get(st.metadata_id)
                if code is None:
                    continue
                which = st.WhichOneof("value")
                if which == "ref_value":
                    v = stat_names.get(st.ref_value)
                    if v is None:
                        p.missing_ref(st.ref_value)
                else:
                    v = getattr(st, which) if which else None
                if code == S_CORR:
                    corr = v
                elif code == S_STEP:
                    step = v
                elif code == S_DEVICE:
                    device = v
                elif code == S_GROUP:
                    group = v
                elif code == S_BYTES:
                    nbytes = v
                elif code == S_PEAK:
                    peak = v
                elif code == S_ALLOC:
                    alloc = v
                elif code == S_EAGER_OP:
                    eager_op = v
                elif code == S_IS_FUNC:
                    is_func = v
            flags = 0
            if step is not None and _as_int(step) >= 0:
                kind = int(Kind.STEP)
            elif kind == Kind.EAGER:
                flags = int(Flag.EAGER)
                name = self.names[name_id]
                if not eager_op and name.startswith("EagerLocalExecute:"):
                    eager_op = name.split(":", 1)[1].strip()
                if (is_func and _as_int(is_func) > 0) or (isinstance(eager_op, str) and eager_op.startswith(FUNCTION_NAMES)):
                    flags |= Flag.FUNCTION
                elif eager_op:
                    op = self.intern_op(f"{eager_op}:{eager_op}")
            starts.append(base_ps + ev.offset_ps)
            durs.append(ev.duration_ps)
            meta_col.append(m)
            row_col.append(rows((
                kind, op, flags,
                -1 if step is None else _as_int(step),
                -1 if device is None else _as_int(device),
                -1 if corr is None else _as_int(corr),
                -1 if group is None else _as_int(group),
                max(_as_int(nbytes), 0) if nbytes is not None else 0,
                -1 if peak is None else _as_int(peak),
                self.names.intern(str(alloc)) if alloc else -1,
            )))  # fmt: skip
        mi = _np(meta_col, np.int32)
        ri = _np(row_col, np.int32)
        meta_name = np.array([r[0] for r in meta_rows] + [-1], np.int32)
        cols = {
            "start_ps": _np(starts, np.int64),
            "dur_ps": _np(durs, np.int64),
            "name": meta_name[mi],
        }
        for j, (key, dtype, missing) in enumerate((
            ("kind", np.int8, 0), ("op", np.int32, -1), ("flags", np.uint16, 0), ("step_num", np.int64, -1),
            ("device_id", np.int32, -1), ("corr", np.int64, -1), ("group", np.int64, -1), ("bytes", np.int64, 0),
            ("peak_bytes", np.int64, -1), ("allocator", np.int32, -1),
        )):  # fmt: skip
            cols[key] = rows.column(j, ri, dtype, missing)
        return _sorted_table(cols)


_DEVICE_STATS = (S_CORR, S_GROUP, S_TFOP, S_ANNOT, S_HLO_OP, S_HLO_MODULE, S_SHAPE, S_KDETAILS, S_MDETAILS, S_EAGER)
_HOST_STATS = (S_STEP, S_DEVICE, S_CORR, S_GROUP, S_BYTES, S_PEAK, S_ALLOC, S_EAGER_OP, S_IS_FUNC)


def _np(a: array, dtype) -> np.ndarray:
    return np.frombuffer(a, dtype).copy() if len(a) else np.zeros(0, dtype)


def _sorted_table(cols: dict[str, np.ndarray]) -> EventTable:
    # Untrusted input: a negative duration would become negative time in every sum downstream.
    np.maximum(cols["dur_ps"], 0, out=cols["dur_ps"])
    start = cols["start_ps"]
    if len(start) > 1 and np.any(start[1:] < start[:-1]):
        order = np.argsort(start, kind="stable")
        cols = {k: v[order] for k, v in cols.items()}
    return EventTable(cols)


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

    # Lines are read relative to the first line's timestamp; the tables are then shifted so that
    # time zero is the earliest event of the file (derived lines, which are not read, included).
    origin_ns = next((line.timestamp_ns for p in planes for line in p.plane.lines if line.events), 0)
    skipped_first: list[int] = []
    total = sum(len(line.events) for p in planes for line in p.plane.lines)
    done = 0
    devices, streams, threads, saved = [], [], [], []
    for p in planes:
        m = GPU_PLANE.match(p.plane.name)
        if m:
            dev_id = int(m.group(1))
            devices.append(_device_from_plane(p, dev_id))
        for line in p.plane.lines:
            base_ps = (line.timestamp_ns - origin_ns) * 1000
            name = line.display_name or line.name
            if m:
                if line.name == "Steps":
                    t = _steps_line(p, line, base_ps)
                    saved.append(SavedSteps(dev_id, t[0], t[1]))
                elif line.name in DERIVED_LINES:
                    if line.events:
                        skipped_first.append(base_ps + min(ev.offset_ps for ev in line.events))
                else:
                    sm = STREAM_LINE.match(line.name)
                    sid = int(sm.group(1)) if sm else line.id
                    streams.append(Stream(dev_id, sid, name, r.read_device_line(p, line, base_ps)))
            else:
                threads.append(HostThread(line.id, name, r.read_host_line(p, line, base_ps)))
            done += len(line.events)
            if progress is not None:
                progress(done, total)
    starts = [t.events.start_ps for t in [*streams, *threads] if len(t.events)] + [s.start_ps for s in saved if len(s.start_ps)]
    first_ps = min([int(x[0]) for x in starts] + skipped_first, default=0)  # tables are sorted by start
    for arr in [t.events.start_ps for t in [*streams, *threads]] + [s.start_ps for s in saved]:
        arr -= first_ps

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
