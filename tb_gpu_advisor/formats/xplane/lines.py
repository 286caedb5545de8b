"""One XSpace line (a GPU stream, a host thread) into an `EventTable`: what each event is, decided
once per distinct description (metadata and text stats) and broadcast to the events."""

from __future__ import annotations

from typing import Any, Callable, Union

import numpy as np

from tb_gpu_advisor.formats.base import INT32_MAX, MAX_DUR_PS, OpIndex
from tb_gpu_advisor.formats.xplane import raw as rawmod
from tb_gpu_advisor.formats.xplane.details import parse_kernel_details, parse_memcpy_details, parse_op
from tb_gpu_advisor.formats.xplane.raw import K_DOUBLE, K_INT, K_NONE, K_STR, K_UINT, RawLine, RawPlane, RawSpace
from tb_gpu_advisor.formats.xplane.values import Values, kind_counts, meta_text, meta_value_int
from tb_gpu_advisor.model.arrays import Constant, Sparse, distinct, unique_inverse, unique_rows
from tb_gpu_advisor.model.classify import (
    FUNCTION_NAMES,
    INPUT_OPS,
    classify_device_event,
    classify_host_event,
    copy_direction_named,
    framework_op_type,
    is_16bit_name,
    kernel_flags,
    op_kind,
    shape_precision,
)
from tb_gpu_advisor.model.profile import (
    DEVICE_SPEC,
    HOST_SPEC,
    MEMCPY_KINDS,
    EventTable,
    Flag,
    Kind,
    OpTable,
    StringTable,
)

MAX_ABS_PS = 2**61  # event times beyond this many ps from the profile's start are broken, skipped
_DEVICE_TEXT = rawmod.DESCRIBED_STATS  # in the scanner's description order
_ATTRIBUTION = ("tf_op", "annotation", "hlo_op", "hlo_module", "shape")
_HOST_INTS = (
    "step_num",
    "device_id",
    "correlation_id",
    "group_id",
    "bytes_allocated",
    "peak_bytes_in_use",
    "is_func",
    "bytes_reserved",
    "bytes_available",
)
_HOST_TEXT = ("allocator_name", "eager_op")
_KD_DEFAULT = (0, 0, 0, 0, 0, 0, 0, 0, float("nan"))
_NO_INTS, _NO_TEXTS = (-1,) * len(_HOST_INTS), (-1,) * len(_HOST_TEXT)


def _doubles(line: RawLine, stat: str) -> np.ndarray:
    """A floating-point stat per event, NaN where an event does not carry it (TensorFlow writes an
    integral value, a fragmentation of 0, as an integer)."""
    st = line.stats.get(stat)
    if st is None:
        return Constant(len(line), np.nan, np.float64)  # type: ignore[return-value]
    rows = _few(st.kind)
    kind, val = (st.kind, st.val) if rows is None else (st.kind[rows], st.val[rows])
    ints = (kind == K_INT) | ((kind == K_UINT) & (val >= 0))
    out = np.where(kind == K_DOUBLE, val.view(np.float64), np.where(ints, val, np.nan))
    return out if rows is None else Sparse(len(line), rows, out, np.nan, np.float64)  # type: ignore[return-value]


def _few(kind: np.ndarray) -> np.ndarray | None:
    """The rows of the events that carry a stat, when they are few (under one in eight) of many."""
    if len(kind) < 4096:
        return None
    rows = np.flatnonzero(kind != K_NONE)
    return rows if len(rows) * 8 < len(kind) else None


def present_texts(line: RawLine) -> list[int]:
    """Indices into _DEVICE_TEXT of the text stats some event of the line carries (from the scanner's
    descriptions when it made them: those stats have no columns then)."""
    if line.desc_rows is not None:
        return [j for j in range(len(_DEVICE_TEXT)) if line.desc_rows[:, 1 + 2 * j].any()]
    return [j for j, k in enumerate(_DEVICE_TEXT) if k in line.stats]


class LineReader:
    """The names and ops of the profile being read, and its lines read into tables."""

    def __init__(self, space: RawSpace, path: str, host: str):
        self.space = space
        self.path = path
        self.host = host
        self.names = StringTable()
        self.ops = OpTable()
        self.op_index = OpIndex(self.names, self.ops)
        self.has_xla = False
        self.warnings: list[str] = []
        self._host_meta: dict[int, dict[int, list]] = {}  # by id(plane): its host metadata, as decided

    def warn(self, message: str) -> None:
        if message not in self.warnings and len(self.warnings) < 50:
            self.warnings.append(message)

    # -- ops ---------------------------------------------------------------------------------------

    def intern_op(self, text: str, shape: str = "") -> int:
        """Op id of `name:Type` text; an op is its (name, type). Its shape is the first one seen."""
        name, op_type, annotated = parse_op(text)
        return self.op_index.intern(name, op_type, annotated or shape, framework_op_type)

    def attribution(self, tf_op: str, annotation: str, hlo: str, module: str, shape: str) -> tuple[int, int]:
        """-> (op id, precision): 1 when the op's input is 16-bit, 2 when it is an 8-bit (or narrower)
        float, 0 when it is another type, -1 when there is no shape to tell (the kernel's name decides)."""
        op_text = tf_op or annotation
        if hlo or module:
            self.has_xla = True
        if not op_text and hlo:
            op_text = f"{hlo}:{hlo.split('.')[0]}"
        op = self.intern_op(op_text, shape) if op_text else -1
        shape = (parse_op(op_text)[2] if op_text else "") or shape
        if not shape:
            return op, -1
        return op, shape_precision(shape)

    # -- lines -------------------------------------------------------------------------------------

    def _meta_column(
        self, rows: list, j: int, inv: np.ndarray, dtype: type, missing: object, scalar: bool = False
    ) -> Any:
        """Each event's value from its metadata's row; one value for every event is a fill, not a
        gather, or that value itself when `scalar`."""
        values = [r[j] for r in rows]
        if values and values.count(values[0]) == len(values):
            return dtype(values[0]) if scalar else np.full(len(inv), values[0], dtype=dtype)
        return np.array(values + [missing], dtype=dtype)[inv]

    def _text_column(self, values: Values, line: RawLine, stat: str, meta_ids: Any) -> Any:
        """Name ids of a text stat per event: the event's value, else its metadata's (`meta_ids`: a
        column, or one id for all, given back as a `Constant` when no event carries the stat)."""
        st = line.stats.get(stat)
        if st is None:
            return meta_ids if isinstance(meta_ids, np.ndarray) else Constant(len(line), int(meta_ids), np.int32)
        rows = _few(st.kind) if not isinstance(meta_ids, np.ndarray) else None
        if rows is not None:  # a few events carry it: their values, the metadata's for the rest
            ids = values.text_ids(st.kind[rows], st.val[rows], self.names)
            return Sparse(len(line), rows, np.where(ids >= 0, ids, meta_ids), int(meta_ids), np.int32)
        if len(st.kind) and kind_counts(st.kind)[K_STR] == len(st.kind):  # a string on every event
            u, inv = unique_inverse(st.val)
            return np.array([self.names.intern(values.text(K_STR, x)) for x in u.tolist()], np.int32)[inv]
        ids = values.text_ids(st.kind, st.val, self.names)
        return np.where(ids >= 0, ids, meta_ids)

    def _int_column(self, values: Values, line: RawLine, stat: str, meta_vals: Any, constant: bool = False) -> Any:
        """A stat's integer per event, else its metadata's (`meta_vals`: a column, or one value for all;
        with `constant`, that value is given back as a `Constant` when no event carries the stat)."""
        st = line.stats.get(stat)
        if st is None:
            if isinstance(meta_vals, np.ndarray):
                return meta_vals
            return Constant(len(line), int(meta_vals), np.int64) if constant else np.full(len(line), meta_vals)
        rows = _few(st.kind) if constant and not isinstance(meta_vals, np.ndarray) else None
        if rows is not None:  # a few events carry it: their values, the metadata's for the rest
            return Sparse(len(line), rows, values.ints(st.kind[rows], st.val[rows], stat), int(meta_vals), np.int64)
        counts = kind_counts(st.kind)
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

    def read_device_line(self, plane: RawPlane, line: RawLine, base_ps: int, values: Values) -> EventTable:
        u, inv = self._metadata(plane, line)
        rows = []
        for m in u.tolist():
            md = plane.event_meta[m]
            name = md.name or md.display_name
            ev_kind = classify_device_event(name)
            tc = kernel_flags(name) if ev_kind == Kind.KERNEL else 0
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
                    meta_value_int(s.get("correlation_id")) if "correlation_id" in s else -1,
                    meta_value_int(s.get("group_id")) if "group_id" in s else -1,
                    meta_value_int(s.get("is_eager")) if "is_eager" in s else 0,
                    *(self._intern_opt(meta_text(s.get(k))) for k in _DEVICE_TEXT),
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
        present = present_texts(line)
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
            fp8 = kind in (Kind.KERNEL, Kind.COLLECTIVE) and prec == 2  # the op's inputs are FP8
            flags = tensor_core | (Flag.FP16 if fp16 else 0) | (Flag.FP8 if fp8 else 0)
            flags |= Flag.ASYNC if md_async and kind != Kind.KERNEL else 0
            if kind in (Kind.KERNEL, Kind.COLLECTIVE):
                nbytes = 0
            table.append((name_id, kind, int(flags), op, nbytes, *kd_rows.get(t["kernel_details"], _KD_DEFAULT)))

        def per_event(j: int, dtype: type) -> np.ndarray:
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

    def _device_texts(self, descs: list[tuple[int, ...]], rows: list, present: list[str], values: Values) -> list[dict]:
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

    def read_host_line(self, plane: RawPlane, line: RawLine, base_ps: int, values: Values, thread: int) -> EventTable:
        # Ops on tf.data threads are the pipeline's own functions (map, ...): input, not compute.
        input_thread = (line.display_name or line.name).startswith("tf_data")
        u, inv = self._metadata(plane, line)
        known = self._host_meta.setdefault(id(plane), {})
        rows = []
        for m in u.tolist():
            d = known.get(m)
            if d is None:
                d = known[m] = self._host_metadata(plane.event_meta[m], input_thread)
            if d[1] != Kind.FRAMEWORK_OP:
                rows.append(d[0])
            elif input_thread:  # ops on tf.data threads are the pipeline's own functions: input
                rows.append((d[0][0], int(Kind.INPUT_STAGE), -1, *d[0][3:]))
            else:
                if d[2] < 0:  # first seen on a tf.data thread: its op is interned now
                    d[2] = self.intern_op(d[3])
                rows.append((d[0][0], d[0][1], d[2], *d[0][3:]))
        n = len(line)
        name_col = self._meta_column(rows, 0, inv, np.int32, -1)
        kind = self._meta_column(rows, 1, inv, np.int8, 0)
        op = self._meta_column(rows, 2, inv, np.int32, -1)
        # stats no event of the line carries stay one value each (a line of millions of host events
        # would otherwise hold a full column of each, 8 bytes an event, at once)
        ints = {
            k: self._int_column(values, line, k, self._meta_column(rows, 3 + j, inv, np.int64, -1, True), True)
            for j, k in enumerate(_HOST_INTS)
        }
        texts = {
            k: self._text_column(
                values, line, k, self._meta_column(rows, 3 + len(_HOST_INTS) + j, inv, np.int32, -1, True)
            )
            for j, k in enumerate(_HOST_TEXT)
        }
        flags: Any = Constant(n, 0, np.uint16)
        step = ints["step_num"]
        if isinstance(step, Sparse) and step.fill >= 0:
            step = step()
        if isinstance(step, Constant):
            if step.value >= 0:
                kind = np.full(n, np.int8(Kind.STEP), np.int8)
            step_num: Any = Constant(n, max(step.value, -1), np.int64)
        elif isinstance(step, Sparse):  # the step markers among many other calls
            kind = np.array(kind, np.int8)
            kind[step.rows[step.values >= 0]] = np.int8(Kind.STEP)
            step_num = step.map(lambda v: np.where(v >= 0, v, -1))
        else:
            is_step = step >= 0
            kind = np.where(is_step, np.int8(Kind.STEP), kind).astype(np.int8)
            step_num = np.where(is_step, step, -1)
        # eager markers: what they run, decided once per distinct (name, eager_op, is_func)
        eager = kind == Kind.EAGER
        if eager.any():
            erows, einv = unique_rows(
                [
                    name_col[eager],
                    _whole(texts["eager_op"])[eager],
                    (_whole(ints["is_func"])[eager] > 0).astype(np.int64),
                ]
            )
            decided = [self._eager(*row) for row in erows]
            flags = np.zeros(n, np.uint16)
            op = np.array(op)  # a fill may be read only
            kind[eager] = np.array([d[0] for d in decided], np.int8)[einv]
            flags[eager] = np.array([d[1] for d in decided], np.uint16)[einv]
            op[eager] = np.array([d[2] for d in decided], np.int32)[einv]
        nbytes, device = ints["bytes_allocated"], ints["device_id"]
        cols = {
            "start_ps": line.off,
            "dur_ps": line.dur,
            "name": name_col,
            "kind": kind,
            "corr": ints["correlation_id"],
            "op": op,
            "flags": flags,
            "group": ints["group_id"],
            "step_num": step_num,
            "device_id": _apply(device, lambda v: np.clip(v, -1, INT32_MAX), np.int32),
            "bytes": _apply(nbytes, lambda v: np.maximum(v, 0), np.int64),
            "peak_bytes": ints["peak_bytes_in_use"],
            "allocator": texts["allocator_name"],
            "reserved_bytes": ints["bytes_reserved"],
            "available_bytes": ints["bytes_available"],
            "fragmentation": _doubles(line, "fragmentation"),
            "thread": Constant(n, thread, np.int32),
        }
        return self._finish(cols, base_ps, HOST_SPEC, line)

    def _host_metadata(self, md: Any, input_thread: bool) -> list:
        """[row, kind, op, name] of a host event's metadata, decided once per plane (a name is on
        several threads, each its own line): its row of name id, kind, op id (-1 here for an op) and
        stats; its kind by name; its op id once interned (-1 until an event of it is read on a thread
        that is not tf.data's: the ids are then given in the order they were before this cache)."""
        name = md.name or md.display_name
        ev_kind = classify_host_event(name)
        ev_op = self.intern_op(name) if ev_kind == Kind.FRAMEWORK_OP and not input_thread else -1
        s = md.stats
        row = (
            self.names.intern(name),
            int(ev_kind),
            -1,
            *((meta_value_int(s[k]) if k in s else -1 for k in _HOST_INTS) if s else _NO_INTS),
            *((self._intern_opt(meta_text(s.get(k))) for k in _HOST_TEXT) if s else _NO_TEXTS),
        )
        return [row, ev_kind, ev_op, name]

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

    def _finish(self, cols: dict, base_ps: int, spec: dict, line: RawLine) -> EventTable:
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
            cols = {k: select(v, keep) for k, v in cols.items()}
            off, dur = off[keep], dur[keep]
        cols["start_ps"] = off + np.int64(base_ps)
        cols["dur_ps"] = dur
        for k in ("shape", "stack", "blocks_per_sm"):  # PyTorch's: per-call shapes and stacks, blocks per SM
            if k in spec:
                cols.setdefault(k, Constant(len(off), spec[k][1], spec[k][0]))
        cols = {k: _cast(cols[k], dt) for k, (dt, _) in spec.items()}
        start = cols["start_ps"]
        if len(start) > 1 and np.any(start[1:] < start[:-1]):
            order = np.argsort(start, kind="stable")
            cols = {k: select(v, order) for k, v in cols.items()}
        return EventTable({k: _one_value(k, v) for k, v in cols.items()}, len(start))

    # -- the whole space ---------------------------------------------------------------------------


Column = Union[np.ndarray, Callable[[], np.ndarray]]


# Columns of a line table may be functions (computed on first read, see EventTable); these apply a
# lookup, a selection and a cast to either kind.
def _lookup(table: np.ndarray, index: np.ndarray) -> Callable[[], np.ndarray]:
    return lambda: table[index]


def select(col: Column, index: np.ndarray) -> Column:
    if isinstance(col, (Constant, Sparse)):
        return col.select(index)
    if callable(col):
        return lambda: col()[index]
    return np.asarray(col)[index]


def _cast(col: Column, dt: np.dtype) -> Column:
    if isinstance(col, (Constant, Sparse)):
        return col.astype(dt)
    if callable(col):
        return lambda: np.asarray(col()).astype(dt, copy=False)
    return np.asarray(col).astype(dt, copy=False)


def _whole(col: Any) -> np.ndarray:
    return col() if isinstance(col, (Constant, Sparse)) else col


def _apply(col: Any, f: Callable[[np.ndarray], np.ndarray], dtype: type) -> Any:
    """`f` on a column's values, a one-value or sparse column kept so."""
    if isinstance(col, (Constant, Sparse)):
        return col.map(f, dtype)
    return f(col).astype(dtype, copy=False)


def _one_value(key: str, col: Column) -> Column:
    """An integer column of one value as a `Constant` (a thread's index, a stat no event of the line
    carries, -1 shapes): no memory until read, and most such columns never are."""
    if key in ("start_ps", "dur_ps") or callable(col) or col.dtype.kind not in "iu" or not len(col):
        return col
    first = col[0]
    if col[-1] != first or not (col[:: max(1, len(col) // 64)] == first).all() or not (col == first).all():
        return col
    return Constant(len(col), first.item(), col.dtype)
