"""Decode one `<host>.xplane.pb` into a columnar `Profile`.

Every quirk of the file format is handled here and nowhere else: ref-valued stats, stats on event
metadata, both `kernel_details` and `memcpy_details` forms, `tf_op` vs the older `annotation`,
derived lines (kept out of stream activity), idle GPU planes, the time base, and values out of range
(skipped or clamped, and said in `Profile.warnings`).

A decoder (`raw.py`: native when built, else protobuf's objects) turns the bytes into raw columns;
everything below works on those columns, deciding each name, op attribution and details string once
per distinct value and broadcasting the result to the events.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Callable

import numpy as np

from tb_gpu_advisor import extent
from tb_gpu_advisor.arrays import distinct, unique_inverse, unique_rows
from tb_gpu_advisor.classify import (
    FUNCTION_NAMES,
    INPUT_OPS,
    classify_device_event,
    classify_host_event,
    copy_direction_named,
    framework_op_type,
    is_16bit_name,
    is_16bit_shape,
    op_kind,
    uses_tensor_cores,
)
from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.formats.base import INT32_MAX, MAX_DUR_PS, Buffer
from tb_gpu_advisor.formats.xplane import raw as rawmod
from tb_gpu_advisor.formats.xplane.raw import K_DOUBLE, K_INT, K_NONE, K_REF, K_STR, K_UINT, RawLine, RawPlane, RawSpace
from tb_gpu_advisor.formats.xplane.scan import Scan, native_wanted
from tb_gpu_advisor.profile import (
    AMD,
    DEVICE_SPEC,
    FIRST_EVENT,
    HOST_SPEC,
    JAX,
    MEMCPY_KINDS,
    PROFILE_START,
    TENSORFLOW,
    UNKNOWN,
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
    amd_gfx,
    vendor_of,
)

HOST_PLANE = "/host:CPU"
METADATA_PLANE = "/host:metadata"
TASK_ENV_PLANE = "Task Environment"
GPU_PLANE = re.compile(r"^/device:GPU:(\d+)$")
TPU_PLANE = re.compile(r"^/device:TPU:(\d+)$")
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

log = logging.getLogger(__name__)

MAX_ABS_PS = 2**61  # event times beyond this many ps from the profile's start are broken, skipped
NORMALISED_NS = 10**15  # timestamps below this (11.6 days) are relative to the profile start, as profilers write them

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


def _int(v: str, hi: int = INT32_MAX) -> int:
    x = int(v)
    return max(0, min(x, hi))


def _ints(v: str, n: int) -> tuple[int, ...]:
    out = []
    for p in v.split(",")[:n]:
        try:
            out.append(_int(p))
        except ValueError:
            out.append(0)
    return tuple(out) + (0,) * (n - len(out))


@lru_cache(maxsize=65536)
def parse_kernel_details(text: str) -> tuple[float, ...]:
    """Both known forms -> (grid x,y,z, block x,y,z, regs, shared bytes, occupancy %).

    Older: `regs:38 shm:0 grid:160,1,1 block:1024,1,1`; newer: `regs:N static_shared:N
    dynamic_shared:N grid:x,y,z block:x,y,z occ_pct:F`. Unknown keys and bad values are ignored;
    values are clamped to 32 bits.
    """
    grid: tuple[int, ...] = (0, 0, 0)
    block: tuple[int, ...] = (0, 0, 0)
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
                regs = _int(val)
            elif key in ("shm", "static_shared", "dynamic_shared"):
                shm = min(shm + _int(val), INT32_MAX)
            elif key == "occ_pct":
                x = float(val)
                occ = x if 0.0 <= x <= 100.0 else occ
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
                size = _int(val, 2**62)
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


# --- decoding -------------------------------------------------------------------------------------


def decode(data: Buffer, scan: Scan | None = None) -> RawSpace:
    """The native decoder when it is built (and not turned off by TB_GPU_ADVISOR_PURE_PYTHON=1), else
    protobuf's objects. `scan`: the native scan already started on these bytes (scan.prefetch)."""
    if native_wanted():
        from tb_gpu_advisor.formats.xplane import native

        return native.decode(data, scan)
    return rawmod.decode_python(data)


def read_profile_bytes(
    data: Buffer,
    path: str,
    host: str,
    progress: Callable[[int, int], None] | None = None,
    scan: Scan | None = None,
) -> Profile:
    """Decode XSpace bytes into a `Profile`. Raises `ProfileReadError` naming `path`."""
    if not data:
        raise ProfileReadError(path, "the file is empty")
    try:
        space = decode(data, scan)
    except Exception as e:  # noqa: BLE001  (each decoder and protobuf version raises its own types)
        raise _bytes_error(path, e) from None
    if not space.planes:
        raise ProfileReadError(path, "not an XSpace profile: it has no planes")
    try:
        profile = _Builder(space, path, host).build(progress)
        space.finish()  # the lines the build did not read may be broken too
        return profile
    except Exception as build_error:
        # an error in the file's bytes comes first, as when every line is decoded before the build
        decode_error = _decode_error(space)
        err = _bytes_error(path, decode_error) if decode_error else _build_error(path, build_error)
        if err is None:  # a bug, not a broken file
            raise
        raise err from None


def _decode_error(space: RawSpace) -> Exception | None:
    try:
        space.finish()
    except Exception as e:  # noqa: BLE001  returned to be reported
        return e
    return None


def _bytes_error(path: str, e: Exception) -> ProfileReadError:
    """The error to report for an exception from decoding a file's bytes."""
    if isinstance(e, ProfileReadError):
        return e
    if isinstance(e, (rawmod.DanglingRef, rawmod.MissingMetadata)):
        return ProfileReadError(path, str(e))
    log.debug("unreadable XSpace bytes in %s", path, exc_info=e)
    m, at = _DECODE_FAILURE.search(str(e)), _AT_BYTE.search(str(e))
    what = _DECODE_REASONS.get(m.group(1) or m.group(2), "") if m else ""
    where = f" (at byte {at.group(1)})" if at else ""
    if what:
        return ProfileReadError(path, f"not a readable XSpace profile: {what}{where}")
    return ProfileReadError(
        path, "not a readable XSpace profile: its bytes are not an XSpace protobuf (damaged, or another kind of file)"
    )


# The decoders' failures (`_xdecode.c`, protobuf), said in the user's terms.
_DECODE_FAILURE = re.compile(r"Wire format was corrupt \(([^)]*)\)|String field had (bad UTF-8)")
_AT_BYTE = re.compile(r"at byte (\d+)")
_CUT = "the file ends in the middle of a record (cut short while copied or written?)"
_NOT_XSPACE = "the bytes are not an XSpace protobuf (damaged, or another kind of file)"
_DECODE_REASONS = {
    "truncated varint": _CUT,
    "length beyond the end": _CUT,
    "truncated fixed64": _CUT,
    "truncated fixed32": _CUT,
    "unterminated group": _CUT,
    "varint over 10 bytes": _NOT_XSPACE,
    "bad field number": _NOT_XSPACE,
    "bad wire type": _NOT_XSPACE,
    "groups nested too deep": _NOT_XSPACE,
    "mismatched end group": _NOT_XSPACE,
    "unexpected end group": _NOT_XSPACE,
    "bad UTF-8": "a name or text in it is not valid UTF-8",
    "line changed while read": "the file changed while it was read",
}


def _build_error(path: str, e: Exception) -> ProfileReadError | None:
    """The error to report for an exception from building the tables; None for one that means a bug."""
    if isinstance(e, (ProfileReadError, rawmod.DanglingRef, rawmod.MissingMetadata)):
        return _bytes_error(path, e)
    if isinstance(e, (ValueError, TypeError, KeyError, OverflowError, IndexError, MemoryError)):
        log.debug("unreadable XSpace profile %s", path, exc_info=e)
        return ProfileReadError(path, "malformed profile: a value in it is of the wrong kind or out of range")
    return None


def read_profile(path: str, host: str | None = None, progress=None) -> Profile:
    """Read a profile through TensorBoard's file-system layer (local, gs://, s3://...)."""
    from tb_gpu_advisor.discovery import host_name, read_bytes

    return read_profile_bytes(read_bytes(path), path, host or host_name(path), progress)


# --- building tables from raw columns -------------------------------------------------------------


class _Values:
    """Per-distinct-value resolution of one raw stat column: the text of a string, reference or
    number, and in-range integers."""

    def __init__(self, space: RawSpace, plane: RawPlane, warn: Callable[[str], None]):
        self.space = space
        self.plane = plane
        self.warn = warn

    def ints(self, kind: np.ndarray, val: np.ndarray, name: str) -> np.ndarray:
        """int64 values, -1 where absent or not a representable integer (counted as a warning)."""
        out = np.full(len(kind), -1, np.int64)
        sel = (kind == K_INT) | ((kind == K_UINT) & (val >= 0))
        out[sel] = val[sel]
        bad = (kind == K_UINT) & (val < 0)
        d = kind == K_DOUBLE
        if d.any():
            f = val[d].view(np.float64)
            fine = np.isfinite(f) & (np.abs(f) < 2**62)
            out[d] = np.where(fine, f, -1).astype(np.int64)
            bad[np.flatnonzero(d)[~fine]] = True
        for k in (K_STR, K_REF):
            sel = kind == k
            if sel.any():
                u, inv = unique_inverse(val[sel])
                out[sel] = np.array([_to_int(self.text(k, int(x))) for x in u.tolist()], np.int64)[inv]
        if bad.any():
            self.warn(f"{int(bad.sum())} value(s) of {name!r} beyond the 64-bit signed range were skipped")
        return out

    def text(self, kind: int, val: int) -> str:
        if kind == K_STR:
            return self.space.strings[val]
        if kind == K_REF:
            name = self.plane.stat_names.get(val)
            if name is None:
                raise rawmod.DanglingRef(self.plane.name, val)
            return name
        if kind == K_INT:
            return str(val)
        if kind == K_UINT:
            return str(val & (2**64 - 1))
        if kind == K_DOUBLE:
            return repr(float(np.int64(val).view(np.float64)))
        return ""

    def text_ids(self, kind: np.ndarray, val: np.ndarray, names: StringTable) -> np.ndarray:
        """Name ids (interned into `names`) of each event's value, -1 where absent."""
        out = np.full(len(kind), -1, np.int32)
        present = kind != K_NONE
        if not present.any():
            return out
        key = val[present] * 8 + kind[present].astype(np.int64)  # STR/REF ids are small, so no overflow
        u, inv = unique_inverse(key)
        ids = np.array([names.intern(self.text(int(k & 7), int(k >> 3))) for k in u.tolist()], np.int32)
        out[present] = ids[inv]
        return out


def _present_texts(line: RawLine) -> list[int]:
    """Indices into _DEVICE_TEXT of the text stats some event of the line carries (from the scanner's
    descriptions when it made them: those stats have no columns then)."""
    if line.desc_rows is not None:
        return [j for j in range(len(_DEVICE_TEXT)) if line.desc_rows[:, 1 + 2 * j].any()]
    return [j for j, k in enumerate(_DEVICE_TEXT) if k in line.stats]


def _kind_counts(kind: np.ndarray) -> list[int]:
    """How many events carry each value kind (K_*) of a stat."""
    return np.bincount(kind.view(np.uint8), minlength=8).tolist()


def _to_int(text: str) -> int:
    try:
        x = int(text)
    except ValueError:
        return -1
    return x if -(2**63) <= x < 2**63 else -1


def _meta_value_int(v) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**63 else -1
    if isinstance(v, float) and np.isfinite(v) and abs(v) < 2**62:
        return int(v)
    if isinstance(v, str):
        return _to_int(v)
    return -1


def _meta_text(v) -> str | None:
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


class _Builder:
    def __init__(self, space: RawSpace, path: str, host: str):
        self.space = space
        self.path = path
        self.host = host
        self.names = StringTable()
        self.op_index: dict[tuple[str, str], int] = {}
        self.ops = OpTable()
        self.has_xla = False
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        if message not in self.warnings and len(self.warnings) < 50:
            self.warnings.append(message)

    # -- ops ---------------------------------------------------------------------------------------

    def intern_op(self, text: str, shape: str = "") -> int:
        """Op id of `name:Type` text; an op is its (name, type). Its shape is the first one seen."""
        name, op_type, annotated = parse_op(text)
        key = (name, op_type)
        shape = annotated or shape
        op = self.op_index.get(key)
        if op is None:
            op = len(self.ops.name)
            self.op_index[key] = op
            self.ops.name.append(self.names.intern(name))
            self.ops.type.append(self.names.intern(framework_op_type(op_type)))
            self.ops.executed.append(self.names.intern(op_type))
            self.ops.shape.append(shape)
        elif shape and not self.ops.shape[op]:
            self.ops.shape[op] = shape
        return op

    def attribution(self, tf_op: str, annotation: str, hlo: str, module: str, shape: str) -> tuple[int, int]:
        """-> (op id, precision): 1 when the op's input is 16-bit, 0 when it is not, -1 when there is no
        shape to tell (the kernel's name decides)."""
        op_text = tf_op or annotation
        if hlo or module:
            self.has_xla = True
        if not op_text and hlo:
            op_text = f"{hlo}:{hlo.split('.')[0]}"
        op = self.intern_op(op_text, shape) if op_text else -1
        shape = (parse_op(op_text)[2] if op_text else "") or shape
        if not shape:
            return op, -1
        return op, 1 if is_16bit_shape(shape) else 0

    # -- lines -------------------------------------------------------------------------------------

    def _meta_column(self, rows: list, j: int, inv: np.ndarray, dtype, missing, scalar: bool = False):
        """Each event's value from its metadata's row; one value for every event is a fill, not a
        gather, or that value itself when `scalar`."""
        values = [r[j] for r in rows]
        if all(v == values[0] for v in values[1:]) and values:
            return dtype(values[0]) if scalar else np.full(len(inv), values[0], dtype=dtype)
        return np.array(values + [missing], dtype=dtype)[inv]

    def _text_column(self, values: _Values, line: RawLine, stat: str, meta_ids: np.ndarray) -> np.ndarray:
        """Name ids of a text stat per event: the event's value, else its metadata's."""
        st = line.stats.get(stat)
        if st is None:
            return meta_ids
        if len(st.kind) and _kind_counts(st.kind)[K_STR] == len(st.kind):  # a string on every event
            u, inv = unique_inverse(st.val)
            return np.array([self.names.intern(values.text(K_STR, x)) for x in u.tolist()], np.int32)[inv]
        ids = values.text_ids(st.kind, st.val, self.names)
        return np.where(ids >= 0, ids, meta_ids)

    def _int_column(self, values: _Values, line: RawLine, stat: str, meta_vals) -> np.ndarray:
        """A stat's integer per event, else its metadata's (`meta_vals`: a column, or one value for all)."""
        st = line.stats.get(stat)
        if st is None:
            return meta_vals if isinstance(meta_vals, np.ndarray) else np.full(len(line), meta_vals)
        counts = _kind_counts(st.kind)
        if counts[K_INT] + counts[K_NONE] == len(st.kind):  # plain integers, the usual case: one pass
            return np.where(st.kind == K_INT, st.val, meta_vals)
        if counts[K_INT] + counts[K_UINT] + counts[K_NONE] == len(st.kind):  # unsigned ones too, in range
            if not ((st.kind == K_UINT) & (st.val < 0)).any():
                return np.where(st.kind != K_NONE, st.val, meta_vals)
        v = values.ints(st.kind, st.val, stat)
        return np.where(st.kind != K_NONE, v, meta_vals)

    def _metadata(self, plane: RawPlane, line: RawLine) -> tuple[np.ndarray, np.ndarray]:
        """Distinct metadata ids of the line and each event's index into them."""
        if line.desc is not None and line.desc_rows is not None:  # from the scanner's descriptions
            u = distinct(line.desc_rows[:, 0])
            inv = np.searchsorted(u, line.desc_rows[:, 0])[line.desc]
        else:
            u, inv = unique_inverse(line.mid)
        for m in u.tolist():
            if m not in plane.event_meta:
                raise rawmod.MissingMetadata(plane.name, m)
        return u, inv

    def read_device_line(self, plane: RawPlane, line: RawLine, base_ps: int, values: _Values) -> EventTable:
        u, inv = self._metadata(plane, line)
        rows = []
        for m in u.tolist():
            md = plane.event_meta[m]
            name = md.name or md.display_name
            ev_kind = classify_device_event(name)
            tc = Flag.TENSOR_CORE if uses_tensor_cores(name) else Flag.NONE
            # A direction in the name wins over memcpy_details; a bare "Memcpy" takes it from there.
            directed = ev_kind not in MEMCPY_KINDS or copy_direction_named(name)
            s = md.stats
            rows.append(
                (
                    self.names.intern(name),
                    int(ev_kind),
                    int(tc),
                    directed,
                    is_16bit_name(name),
                    _meta_value_int(s.get("correlation_id")) if "correlation_id" in s else -1,
                    _meta_value_int(s.get("group_id")) if "group_id" in s else -1,
                    _meta_value_int(s.get("is_eager")) if "is_eager" in s else 0,
                    *(self._intern_opt(_meta_text(s.get(k))) for k in _DEVICE_TEXT),
                )
            )
        n = len(line)
        corr = self._int_column(values, line, "correlation_id", self._meta_column(rows, 5, inv, np.int64, -1, True))
        group = self._int_column(values, line, "group_id", self._meta_column(rows, 6, inv, np.int64, -1, True))
        eager_flag = np.uint16(0)
        if "is_eager" in line.stats or any(r[7] > 0 for r in rows):
            eager = self._int_column(values, line, "is_eager", self._meta_column(rows, 7, inv, np.int64, 0, True))
            eager_flag = np.where(eager > 0, np.uint16(Flag.EAGER), np.uint16(0))

        # What an event is (name, kind, op, precision, launch shape, copy size) follows from its
        # metadata and the raw values of its text stats: decided once per distinct description.
        present = _present_texts(line)
        descs, dinv = self._descriptions(line, present, u, inv)
        texts = self._device_texts(descs, rows, [_DEVICE_TEXT[j] for j in present], values)
        # op attribution and the 16-bit rule, once per distinct (tf_op, annotation, hlo op, module, shape)
        attr_keys = [tuple(t[k] for k in _ATTRIBUTION) for t in texts]
        attrs = {key: self.attribution(*(self.names[x] for x in key)) for key in sorted(set(attr_keys))}
        # kernel and memcpy details, parsed once per distinct string
        kd_rows = {i: parse_kernel_details(self.names[i]) for i in {t["kernel_details"] for t in texts} if i >= 0}
        if any(v >= INT32_MAX for r in kd_rows.values() for v in r[:8]):
            self.warn("kernel_details values (grid, block, registers, shared memory) beyond 32 bits were clamped")
        table = []
        for d, t, key in zip(descs, texts, attr_keys):
            name_id, kind, tensor_core, named, name16 = rows[d[0]][:5]
            op, prec = attrs[key]
            fp16 = kind in (Kind.KERNEL, Kind.COLLECTIVE) and (prec == 1 or (prec < 0 and name16))
            details = t["memcpy_details"] if t["memcpy_details"] >= 0 else t["memset_details"]
            nbytes, md_kind, md_async = parse_memcpy_details(self.names[details]) if details >= 0 else (0, None, False)
            if kind in MEMCPY_KINDS and not named and md_kind is not None and int(md_kind) >= 0:
                kind = int(md_kind)
            flags = tensor_core | (Flag.FP16 if fp16 else 0) | (Flag.ASYNC if md_async and kind != Kind.KERNEL else 0)
            if kind in (Kind.KERNEL, Kind.COLLECTIVE):
                nbytes = 0
            table.append((name_id, kind, int(flags), op, nbytes, *kd_rows.get(t["kernel_details"], _KD_DEFAULT)))

        def per_event(j: int, dtype) -> np.ndarray:
            return np.array([r[j] for r in table], dtype)[dinv]

        cols = {
            "start_ps": line.off,
            "dur_ps": line.dur,
            "name": per_event(0, np.int32),
            "kind": per_event(1, np.int8),
            "corr": corr,
            "op": per_event(3, np.int32),
            "flags": per_event(2, np.uint16) | eager_flag,
            "group": group,
            "bytes": per_event(4, np.int64),
            "stream": np.full(n, -1, np.int32),
        }
        # launch shapes are read by few checks: computed when first read
        for j, k in enumerate(("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "regs", "shmem")):
            cols[k] = _lookup(np.array([r[5 + j] for r in table], np.int64).astype(np.int32), dinv)
        cols["occupancy"] = _lookup(np.array([r[13] for r in table], np.float32), dinv)
        return self._finish(cols, base_ps, DEVICE_SPEC, line)

    def _descriptions(
        self, line: RawLine, present: list[int], u: np.ndarray, inv: np.ndarray
    ) -> tuple[list[tuple[int, ...]], np.ndarray]:
        """The distinct (metadata index, then kind and value of each text stat the line has: `present`,
        indices into _DEVICE_TEXT) of its events, and each event's: numbered by the scanner, else
        grouped here."""
        if line.desc is not None and line.desc_rows is not None:
            rows = line.desc_rows
            midx = np.searchsorted(u, rows[:, 0])
            cols = [midx] + [rows[:, c] for j in present for c in (1 + 2 * j, 2 + 2 * j)]
            return list(zip(*(c.tolist() for c in cols))), line.desc
        raw = [line.stats[_DEVICE_TEXT[j]] for j in present]
        return unique_rows([inv, *(c for st in raw for c in (st.kind, st.val))])

    def _device_texts(
        self, descs: list[tuple[int, ...]], rows: list, present: list[str], values: _Values
    ) -> list[dict]:
        """Name ids of each description's text stats: its own value (for the stats in `present`, in
        the descriptions' order), else its metadata's. Strings are interned stat by stat, each stat's
        values in (value, kind) order, as a per-column decode does."""
        ids: dict[tuple[str, int, int], int] = {}
        for j, k in enumerate(present):
            seen = {(d[1 + 2 * j], d[2 + 2 * j]) for d in descs if d[1 + 2 * j] != K_NONE}
            for kind, val in sorted(seen, key=lambda kv: kv[1] * 8 + kv[0]):
                ids[(k, kind, val)] = self.names.intern(values.text(kind, val))
        out = []
        for d in descs:
            meta = rows[d[0]]
            t = {k: meta[8 + j] for j, k in enumerate(_DEVICE_TEXT)}
            for j, k in enumerate(present):
                if d[1 + 2 * j] != K_NONE:
                    t[k] = ids[(k, d[1 + 2 * j], d[2 + 2 * j])]
            out.append(t)
        return out

    def read_host_line(self, plane: RawPlane, line: RawLine, base_ps: int, values: _Values, thread: int) -> EventTable:
        # Ops on tf.data threads are the pipeline's own functions (map, ...): input, not compute.
        input_thread = (line.display_name or line.name).startswith("tf_data")
        u, inv = self._metadata(plane, line)
        rows = []
        for m in u.tolist():
            md = plane.event_meta[m]
            name = md.name or md.display_name
            ev_kind = classify_host_event(name)
            if ev_kind == Kind.FRAMEWORK_OP and input_thread:
                ev_kind = Kind.INPUT_STAGE
            ev_op = self.intern_op(name) if ev_kind == Kind.FRAMEWORK_OP else -1
            s = md.stats
            rows.append(
                (
                    self.names.intern(name),
                    int(ev_kind),
                    ev_op,
                    *(_meta_value_int(s[k]) if k in s else -1 for k in _HOST_INTS),
                    *(self._intern_opt(_meta_text(s.get(k))) for k in _HOST_TEXT),
                )
            )
        n = len(line)
        name_col = self._meta_column(rows, 0, inv, np.int32, -1)
        kind = self._meta_column(rows, 1, inv, np.int8, 0)
        op = self._meta_column(rows, 2, inv, np.int32, -1)
        ints = {
            k: self._int_column(values, line, k, self._meta_column(rows, 3 + j, inv, np.int64, -1, True))
            for j, k in enumerate(_HOST_INTS)
        }
        texts = {
            k: self._text_column(values, line, k, self._meta_column(rows, 3 + len(_HOST_INTS) + j, inv, np.int32, -1))
            for j, k in enumerate(_HOST_TEXT)
        }
        flags = np.zeros(n, np.uint16)
        step = ints["step_num"]
        is_step = step >= 0
        kind = np.where(is_step, np.int8(Kind.STEP), kind).astype(np.int8)
        # eager markers: what they run, decided once per distinct (name, eager_op, is_func)
        eager = kind == Kind.EAGER
        if eager.any():
            erows, einv = unique_rows(
                [name_col[eager], texts["eager_op"][eager], (ints["is_func"][eager] > 0).astype(np.int64)]
            )
            decided = [self._eager(*row) for row in erows]
            kind[eager] = np.array([d[0] for d in decided], np.int8)[einv]
            flags[eager] = np.array([d[1] for d in decided], np.uint16)[einv]
            op[eager] = np.array([d[2] for d in decided], np.int32)[einv]
        nbytes = ints["bytes_allocated"]
        cols = {
            "start_ps": line.off,
            "dur_ps": line.dur,
            "name": name_col,
            "kind": kind,
            "corr": ints["correlation_id"],
            "op": op,
            "flags": flags,
            "group": ints["group_id"],
            "step_num": np.where(is_step, step, -1),
            "device_id": np.clip(ints["device_id"], -1, INT32_MAX).astype(np.int32),
            "bytes": np.maximum(nbytes, 0),
            "peak_bytes": ints["peak_bytes_in_use"],
            "allocator": texts["allocator_name"],
            "thread": np.full(n, thread, np.int32),
        }
        return self._finish(cols, base_ps, HOST_SPEC, line)

    def _eager(self, name_id: int, eager_op_id: int, is_func: int) -> tuple[int, int, int]:
        """(kind, flags, op) of an eager marker."""
        name = self.names[name_id]
        eager_op = self.names[eager_op_id] if eager_op_id >= 0 else ""
        if not eager_op and name.startswith("EagerLocalExecute:"):
            eager_op = name.split(":", 1)[1].strip()
        if is_func or eager_op.startswith(FUNCTION_NAMES):
            return int(Kind.EAGER), int(Flag.EAGER | Flag.FUNCTION), -1
        if eager_op.startswith(INPUT_OPS):  # next(iterator) from Python: input wait, not eager compute
            return int(op_kind(eager_op)), 0, -1
        op = self.intern_op(f"{eager_op}:{eager_op}") if eager_op else -1
        return int(Kind.EAGER), int(Flag.EAGER), op

    def _intern_opt(self, text: str | None) -> int:
        return self.names.intern(text) if text else -1

    def _finish(self, cols: dict, base_ps: int, spec, line: RawLine) -> EventTable:
        """Times made absolute and safe (durations clamped, absurd offsets skipped), columns cast to
        their declared types, sorted by start."""
        dur = cols["dur_ps"]
        if (dur < 0).any():
            dur = np.maximum(dur, 0)  # untrusted input: a negative duration would be negative time
        if (dur > MAX_DUR_PS).any():
            self.warn(f"durations over {MAX_DUR_PS // 10**12} s were clamped")
            dur = np.minimum(dur, MAX_DUR_PS)
        off = cols["start_ps"]
        keep = np.abs(off) <= MAX_ABS_PS
        if not keep.all():
            self.warn(
                f"{int((~keep).sum())} event(s) with offsets beyond {MAX_ABS_PS // 10**12} s were skipped "
                f"(line {line.name!r})"
            )
            cols = {k: _select(v, keep) for k, v in cols.items()}
            off, dur = off[keep], dur[keep]
        cols["start_ps"] = off + np.int64(base_ps)
        cols["dur_ps"] = dur
        cols = {k: _cast(cols[k], dt) for k, (dt, _) in spec.items()}
        start = cols["start_ps"]
        if len(start) > 1 and np.any(start[1:] < start[:-1]):
            order = np.argsort(start, kind="stable")
            cols = {k: _select(v, order) for k, v in cols.items()}
        return EventTable(cols, len(start))

    # -- the whole space ---------------------------------------------------------------------------

    def build(self, progress) -> Profile:
        space = self.space
        host_planes = [p for p in space.planes if p.name == HOST_PLANE]
        gpu_planes = [p for p in space.planes if GPU_PLANE.match(p.name)]
        tpu = sum(1 for p in space.planes if TPU_PLANE.match(p.name))
        if not host_planes and not gpu_planes and not tpu:
            names = ", ".join(repr(p.name) for p in space.planes[:5])
            raise ProfileReadError(self.path, f"no host or GPU plane in the profile (planes: {names})")
        start_ns = _start_time(space)
        lines = [(p, line) for p in host_planes + gpu_planes for line in p.lines]
        origin_ns, time_base, skipped = self._time_base(lines, start_ns)
        total = sum(len(line) for _, line in lines)
        done = 0
        devices: list[Device] = []
        streams: list[Stream] = []
        threads: list[HostThread] = []
        saved: list[SavedSteps] = []
        for p in host_planes + gpu_planes:
            values = _Values(space, p, self.warn)
            m = GPU_PLANE.match(p.name)
            dev_id = int(m.group(1)) if m else -1
            if m and dev_id in {d.id for d in devices}:
                self.warn(f"two planes named {p.name!r}: their lines are read as one GPU")
            elif m:
                devices.append(_device_from_plane(p, dev_id))
            for line in p.lines:
                space.ready(line)
                base_ps = (line.timestamp_ns - origin_ns) * 1000
                if id(line) in skipped or abs(base_ps) > MAX_ABS_PS:
                    if id(line) not in skipped:
                        self.warn(f"line {line.name[:60]!r} starts too far from the others; skipped")
                    continue
                name = line.display_name or line.name
                if m:
                    if line.name == "Steps":
                        t = (
                            self.read_device_line(p, line, base_ps, values)
                            if len(line)
                            else EventTable.empty(DEVICE_SPEC)
                        )
                        groups = t.group.copy()
                        labels = [self.names[i] for i in t.name.tolist()]
                        digits = np.array([int(x) if x.isdigit() and len(x) < 18 else -1 for x in labels], np.int64)
                        groups = np.where(groups >= 0, groups, digits) if len(groups) else groups
                        saved.append(SavedSteps(dev_id, t.start_ps, t.dur_ps, groups))
                    elif line.name not in DERIVED_LINES:
                        sm = STREAM_LINE.match(line.name)
                        sid = int(sm.group(1)) if sm else line.id
                        streams.append(Stream(dev_id, sid, name, self.read_device_line(p, line, base_ps, values)))
                else:
                    thread_index = len(threads)
                    threads.append(
                        HostThread(line.id, name, self.read_host_line(p, line, base_ps, values, thread_index))
                    )
                done += len(line)
                if progress is not None:
                    progress(done, total)
        capture_errors = self._hold_to_capture(space, start_ns, time_base, streams, threads, saved)
        tables = [s.events for s in streams] + [t.events for t in threads]
        if time_base == FIRST_EVENT:  # no profile start to measure from: the earliest event is zero
            firsts = [int(e.start_ps[0]) for e in tables if len(e)]
            firsts += [int(x.start_ps[0]) for x in saved if len(x.start_ps)]
            first = min(firsts, default=0)
            for arr in [e.start_ps for e in tables] + [x.start_ps for x in saved]:
                arr -= first
            origin_ns += first // 1000
        for i, s in enumerate(streams):
            s.events = s.events.with_column("stream", np.full(len(s.events), i, np.int32))
        # An op is placed on the device when device events are attributed to it.
        on_device = np.zeros(len(self.ops), dtype=bool)
        for s in streams:
            ops = s.events.op
            on_device[ops[ops >= 0]] = True
        self.ops.on_device = on_device
        ends = [int(e.end_ps.max()) for e in tables if len(e)]
        profile = Profile(
            host=self.host,
            path=self.path,
            names=self.names,
            ops=self.ops,
            devices=sorted(devices, key=lambda d: d.id),
            streams=streams,
            threads=threads,
            saved_steps=saved,
            origin_ns=origin_ns,
            end_ps=max(ends) if ends else 0,
            has_xla=self.has_xla,
            time_base=time_base,
            tpu_planes=tpu,
            start_ns=start_ns,
            warnings=self.warnings,
            capture_errors=[str(e) for e in space.errors] + [str(w) for w in space.warnings] + capture_errors,
        )
        profile.framework = _framework(space, profile)
        profile.gpu_signs = _gpu_signs(profile)
        return profile

    def _hold_to_capture(
        self,
        space: RawSpace,
        start_ns: int | None,
        time_base: str,
        streams: list[Stream],
        threads: list[HostThread],
        saved: list[SavedSteps],
    ) -> list[str]:
        """Events starting outside the capture dropped, durations cut at its end (see `extent`);
        the capture error saying what was dropped."""
        stop_ns = _stop_time(space)
        stated = None
        if time_base == PROFILE_START and start_ns is not None and stop_ns is not None and stop_ns > start_ns:
            stated = (0.0, (stop_ns - start_ns) * 1000.0)
        holders: list[Stream | HostThread] = [*streams, *threads]
        starts = [h.events.start_ps for h in holders] + [x.start_ps for x in saved]
        lo, hi, _ = extent.find(np.concatenate(starts) if starts else np.zeros(0), stated)
        dropped = cut = 0
        first = ""
        for h in holders:
            t = h.events
            out = extent.outside(t.start_ps, lo, hi)
            if out.any():
                if not first:
                    at = int(np.argmax(out))
                    first = f"{self.names[int(t.name[at])]!r} on line {h.name[:60]!r} at {_ms(int(t.start_ps[at]))} ms"
                dropped += int(out.sum())
                t = t.take(~out)
            h.events, n = extent.clip(t, hi)
            cut += n
        for x in saved:
            keep = ~extent.outside(x.start_ps, lo, hi)
            x.start_ps, x.group = x.start_ps[keep], x.group[keep]
            x.dur_ps = np.minimum(x.dur_ps[keep], np.maximum(np.int64(min(hi, 2**62)) - x.start_ps, 0))
        if cut:
            self.warn(extent.cut_message(cut))
        if not dropped:
            return []
        return [extent.dropped_message(dropped, first, f"{_ms(lo)}", f"{_ms(hi)} ms from the capture's start")]

    def _time_base(self, lines, start_ns: int | None) -> tuple[int, str, set]:
        """(origin ns, time base, ids of lines skipped). Profilers write line timestamps relative to
        the profile's start; the trace viewer's zero is that start. Files with epoch timestamps are
        measured from their start time (else their first line); a line whose timestamp disagrees with
        the others by more than `NORMALISED_NS` is broken and skipped."""
        with_events = [line for _, line in lines if len(line)]
        stamps = np.array([line.timestamp_ns for line in with_events], np.float64)
        skipped: set = set()
        if not len(stamps):
            return 0, PROFILE_START, skipped
        epoch_like = stamps >= NORMALISED_NS
        if epoch_like.any() and not epoch_like.all():
            # keep the majority; the other lines are broken
            keep_epoch = epoch_like.sum() * 2 > len(stamps)  # a tie keeps the profilers' convention
            for line, e in zip(with_events, epoch_like.tolist()):
                if e != keep_epoch:
                    skipped.add(id(line))
            self.warn(f"{len(skipped)} line(s) with timestamps far from the others were skipped")
            stamps = stamps[epoch_like == keep_epoch]
            epoch_like = epoch_like[epoch_like == keep_epoch]
        if not epoch_like.any():
            return 0, PROFILE_START, skipped
        if start_ns is not None and abs(float(stamps.min()) - start_ns) < NORMALISED_NS:
            return start_ns, PROFILE_START, skipped
        first = min(line.timestamp_ns for line in with_events if id(line) not in skipped)
        return first, FIRST_EVENT, skipped


_DEVICE_TEXT = rawmod.DESCRIBED_STATS  # in the scanner's description order
_ATTRIBUTION = ("tf_op", "annotation", "hlo_op", "hlo_module", "shape")
_HOST_INTS = ("step_num", "device_id", "correlation_id", "group_id", "bytes_allocated", "peak_bytes_in_use", "is_func")
_HOST_TEXT = ("allocator_name", "eager_op")
_KD_DEFAULT = (0, 0, 0, 0, 0, 0, 0, 0, float("nan"))


def _start_time(space: RawSpace, stat: str = "profile_start_time") -> int | None:
    for p in space.planes:
        if p.name == TASK_ENV_PLANE:
            v = p.stats.get(stat)
            x = _meta_value_int(v) if v is not None else -1
            return x if x > 0 else None
    return None


def _stop_time(space: RawSpace) -> int | None:
    return _start_time(space, "profile_stop_time")


def _ms(ps: float) -> str:
    """A time in ps as ms, three decimals."""
    return f"{ps / 1e9:.3f}"


def _framework(space: RawSpace, p: Profile) -> str:
    for plane in space.planes:
        if plane.name == METADATA_PLANE and any(k.startswith("jax") for k in plane.stats):
            return JAX
    tf_names = ("EagerExecute", "ExecutorState::Process", "FunctionRun", "IteratorGetNextOp::DoCompute")
    if any(p.names.get(n) >= 0 for n in tf_names) or any(
        t.name.startswith(("tf_Compute", "tf_data")) for t in p.threads
    ):
        return TENSORFLOW
    return UNKNOWN


def _gpu_signs(p: Profile) -> bool:
    """Signs on the host that the job used a GPU: GPU threads, CUDA API calls, GPU allocators."""
    if any(re.search(r"gpu", t.name, re.I) for t in p.threads):
        return True
    return any(
        bool((t.events.kind == Kind.LAUNCH).any()) or bool((t.events.allocator >= 0).any() and _gpu_allocator(p, t))
        for t in p.threads
    )


def _gpu_allocator(p: Profile, t: HostThread) -> bool:
    ids = distinct(t.events.allocator[t.events.allocator >= 0]).tolist()
    return any("gpu" in p.names[i].lower() for i in ids)


def _device_from_plane(p: RawPlane, device_id: int) -> Device:
    s = p.stats

    def num(key, cast=int):
        v = s.get(key)
        try:
            x = cast(v) if v is not None else None
        except (TypeError, ValueError, OverflowError):
            return None
        if x is not None and (x != x or abs(x) > 2**62):  # NaN or absurd
            return None
        return x

    major, minor = num("compute_cap_major"), num("compute_cap_minor")
    name = s.get("gpu_device_name") or s.get("device_name") or p.name
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    vendor = vendor_of(str(s.get("device_vendor") or ""), str(name))
    if vendor == AMD:
        major = minor = None  # ROCm's major/minor are the gfx generation, not a CUDA compute capability
    return Device(
        id=device_id,
        name=str(name)[:200],
        plane_name=p.name,
        compute_capability=(major, minor or 0) if major is not None and 0 <= major < 100 else None,
        sm_count=num("core_count"),
        clock_khz=num("clock_rate"),
        memory_bytes=num("memory_size"),
        memory_bandwidth=num("memory_bandwidth", float),
        vendor=vendor,
        gfx=amd_gfx(str(name)) if vendor == AMD else None,
    )


# Columns of a line table may be functions (computed on first read, see EventTable); these apply a
# lookup, a selection and a cast to either kind.
def _lookup(table: np.ndarray, index: np.ndarray):
    return lambda: table[index]


def _select(col, index: np.ndarray):
    if callable(col):
        return lambda: col()[index]
    return np.asarray(col)[index]


def _cast(col, dt: np.dtype):
    if callable(col):
        return lambda: np.asarray(col()).astype(dt, copy=False)
    return np.asarray(col).astype(dt, copy=False)
