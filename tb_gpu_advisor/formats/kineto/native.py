"""The native reader of PyTorch (Kineto) traces: `_kineto.c` tokenises the JSON text as it is inflated
into a few columns per event (no Python object per event), and this module does the reader's per-event
rules on those columns with NumPy, once per distinct name, category or args text where a rule reads
text. It fills the same tables as reader.py's `PythonReader` loop and hands them to the same
`Tables.assemble` (tables.py); the tests compare both readers table by table.

Whatever it does not mirror exactly (see `_kineto.c`: invalid JSON, a field of an unexpected type, a
key given twice, ...; here: an unreadable event, a number given as a string) makes `read` return None,
and the caller reads the file with the Python reader instead: never a different answer.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.base import INT32_MAX, MAX_DUR_PS, Data, check_lines, max_profile_bytes
from tb_gpu_advisor.formats.kineto import reader, rules, tables, text
from tb_gpu_advisor.formats.kineto.tokens import (
    PH_I,
    PH_M,
    PH_X,
    T_ABSENT,
    T_FALSE,
    T_FLOAT,
    T_INT,
    T_NULL,
    T_RAW,
    T_STR,
    T_TRUE,
    Args,
    Fallback,
    available,
    dense,
    first_seen,
    group_codes,
    tagged_int,
    tokenise,
)
from tb_gpu_advisor.model.arrays import Constant, distinct
from tb_gpu_advisor.model.classify import (
    classify_copy,
    classify_device_event,
    is_16bit_name,
    is_launch,
    kernel_flags,
)
from tb_gpu_advisor.model.profile import DEVICE_SPEC, HOST_SPEC, Flag, Kind, Profile

# classes of (name, category) pairs
C_TRACE, C_SKIP, C_DEVICE, C_STEP, C_INPUT, C_RUNTIME, C_OP, C_OTHER = range(8)


def read(
    data: Data,
    path: str,
    host: str,
    progress: Callable[[int, int], None] | None,
    limit: int,
    max_seconds: float,
) -> Profile | None:
    """The trace as a Profile, or None when the Python reader must read it."""
    cols = tokenise(data, path, limit, max_seconds, progress)
    if cols is None:
        return None
    try:
        built = _Native(cols, path, host)
        del cols  # dropped as soon as the build has what it needs from them
        return built.build()
    except Fallback:
        return None
    except (ValueError, TypeError, KeyError, OverflowError, IndexError, AttributeError, RecursionError):
        return None  # a value no rule here foresaw: the Python reader says what it makes of it


class _Native:
    def __init__(self, cols: dict, path: str, host: str) -> None:
        self.cols = cols
        self.texts: list[bytes] = cols["texts"]
        self.values: dict[int, Any] = {}
        members = cols["members"]
        doc = {k: text.loads(v) for k, v in members.items()}
        self.b = tables.Tables(doc, path, host)
        self.args = Args(cols)
        for k in ("a_row", "a_key", "a_tag", "a_val"):  # Args has its own copies
            del cols[k]

    def value(self, i: int) -> Any:
        """Interned JSON text `i` as Python has it."""
        v = self.values.get(i)
        if v is None and i not in self.values:
            v = self.values[i] = text.loads(self.texts[i])
        return v

    def tagged(self, tag: int, val: int) -> Any:
        """One tagged value as the Python reader's object."""
        if tag == T_INT:
            return int(val)
        if tag == T_FLOAT:
            return float(np.int64(val).view(np.float64))
        if tag in (T_STR, T_RAW):
            return self.value(int(val))
        return {T_TRUE: True, T_FALSE: False, T_NULL: None}.get(tag)

    def text_of(self, ids: np.ndarray, absent: str) -> list[str]:
        """Strings of interned ids (-1, -2: none given, read as `absent`)."""
        return [self.value(int(i)) if i >= 0 else absent for i in ids]

    def build(self) -> Profile:
        parts = self.rows()
        # the tokenizer's columns and the args are not needed to assemble the tables: gone before it
        self.cols.clear()
        self.args.by_key.clear()
        return self.b.assemble(*parts)

    def rows(self) -> tuple:
        """The streams' and threads' rows and what else `Tables.assemble` takes."""
        c, b, args = self.cols, self.b, self.args
        ph = np.frombuffer(c["ph"], np.uint8)
        name_id = np.frombuffer(c["name"], np.int32)
        cat_id = np.frombuffer(c["cat"], np.int32)
        pid_tag = np.frombuffer(c["pid_tag"], np.uint8)
        pid = np.frombuffer(c["pid"], np.int64)
        tid_tag = np.frombuffer(c["tid_tag"], np.uint8)
        tid = np.frombuffer(c["tid"], np.int64)
        ts = np.frombuffer(c["ts"], np.float64)
        dur = np.frombuffer(c["dur"], np.float64)

        def key_of(tag: int, val: int) -> Any:
            return None if tag == T_ABSENT else self.tagged(tag, val)

        # process and thread names: later ones win, as in the Python reader's dicts
        thread_names: dict[Any, str] = {}
        process_names: dict[Any, str] = {}
        meta = np.flatnonzero(ph == PH_M)
        if len(meta):
            ntag, nval = args.get("name", meta)
            for r, t, v in zip(meta.tolist(), ntag.tolist(), nval.tolist()):
                if t != T_STR:
                    continue
                arg = self.value(v)
                p = key_of(pid_tag[r], pid[r])
                if self.value(int(name_id[r])) == "process_name":
                    process_names[p] = arg
                else:
                    thread_names[(p, key_of(tid_tag[r], tid[r]))] = arg

        memory = self.memory(np.flatnonzero(ph == PH_I), ts)

        x = np.flatnonzero(ph == PH_X)
        d = dur[x]
        over = d * 1_000_000 > MAX_DUR_PS
        if over.any():
            b.warn(f"durations over {MAX_DUR_PS // 10**12} s were clamped")
            d = np.where(over, MAX_DUR_PS / 1_000_000, d)
        dur_ps = np.where(d > 0, np.round(d * 1_000_000), 0).astype(np.int64)
        t_x = ts[x]

        # one class per distinct (name, category)
        n_texts = len(self.texts)
        name_code, n_names = dense(name_id[x] + 1, n_texts + 1)
        cat_code, n_cats = dense(cat_id[x] + 2, n_texts + 2)
        pair_of, n_pairs = dense(name_code * n_cats + cat_code, max(n_names * n_cats, 1))
        first = np.full(n_pairs, len(x), np.int64)
        np.minimum.at(first, pair_of, np.arange(len(x)))  # a pair's first event
        pair_name = name_id[x][first].astype(np.int64)
        pair_cat = cat_id[x][first].astype(np.int64)
        pairs = first
        names = self.text_of(pair_name, "None")
        cats = [str(v or "").lower() for v in self.text_of(pair_cat, "")]
        pclass = np.empty(len(pairs), np.int8)
        pkind = np.zeros(len(pairs), np.int8)
        pstep = np.full(len(pairs), -1, np.int64)
        pflags = np.zeros(len(pairs), np.uint16)
        ppython = np.zeros(len(pairs), bool)
        pranges = np.zeros(len(pairs), bool)
        for j, (name, cat) in enumerate(zip(names, cats)):
            if cat == "trace":
                pclass[j] = C_TRACE
            elif cat in rules.SKIPPED_CATS:
                pclass[j] = C_SKIP
            elif cat in rules.DEVICE_CATS:
                pclass[j] = C_DEVICE
                if rules.DEVICE_CATS[cat] == "memset":
                    kind = Kind.MEMSET
                elif rules.DEVICE_CATS[cat] == "memcpy":
                    kind = classify_copy(name)
                else:
                    kind = classify_device_event(name)
                pkind[j] = int(kind)
                pflags[j] = kernel_flags(name) if kind == Kind.KERNEL else 0
            else:
                step = rules.STEP.match(name)
                if step and (cat in rules.OP_CATS or cat in rules.ANNOTATION_CATS or not cat):
                    pclass[j], pkind[j], pstep[j] = C_STEP, int(Kind.STEP), int(step.group(1))
                elif rules.DATALOADER_NEXT.search(name):
                    pclass[j], pkind[j] = C_INPUT, int(Kind.INPUT_WAIT)
                elif cat in rules.RUNTIME_CATS:
                    pclass[j] = C_RUNTIME
                    pkind[j] = int(Kind.LAUNCH if is_launch(name) else Kind.HOST_OTHER)
                elif cat in rules.OP_CATS:
                    pclass[j], pkind[j] = C_OP, int(Kind.FRAMEWORK_OP)
                else:
                    pclass[j], pkind[j] = C_OTHER, int(Kind.HOST_OTHER)
                    ppython[j] = cat == rules.PYTHON_CAT
                    pranges[j] = cat == rules.PROFILER_RANGE_CAT
        cls = pclass[pair_of]

        trace = cls == C_TRACE
        trace_start = trace_end = None
        if trace.any():
            trace_start = float(t_x[trace].min())
            trace_end = float((t_x[trace] + dur_ps[trace] / 1e6).max())

        # name ids in the profile's table, for the pairs whose events are kept
        name_of_pair = np.full(len(pairs), -1, np.int32)

        def intern_pairs(sel: np.ndarray) -> None:
            for j in distinct(pair_of[sel]).tolist():
                if name_of_pair[j] < 0:
                    name_of_pair[j] = b.names.intern(names[j])

        # device events
        dev = np.flatnonzero(cls == C_DEVICE)
        dev_rows = x[dev]
        dtag, dval = args.get("device", dev_rows)
        absent = dtag == T_ABSENT
        if absent.any():  # the event's pid is its device
            ptag = pid_tag[dev_rows[absent]]
            if np.any(ptag == T_STR):
                raise Fallback
            dtag = dtag.copy()
            dval = dval.copy()
            dtag[absent] = np.where(ptag == T_INT, T_INT, T_NULL)
            dval[absent] = pid[dev_rows[absent]]
        device = tagged_int(dtag, dval, -1)
        stream = tagged_int(*args.get("stream", dev_rows), -1)
        neg = np.flatnonzero(stream < 0)
        if len(neg):  # the stream's number from the tid, as the Python reader's regex finds it
            trows = dev_rows[neg]
            found = {}
            for k, (tt, tv) in enumerate(zip(tid_tag[trows].tolist(), tid[trows].tolist())):
                key = (tt, tv)
                if key not in found:
                    m = re.search(r"(\d+)", str(key_of(tt, tv)))
                    found[key] = min(int(m.group(1)), 2**40) if m else 0
                stream[neg[k]] = found[key]
        bad = (device < 0) | (device > INT32_MAX) | (stream > INT32_MAX)
        skipped = int(bad.sum())
        dev, dev_rows, device, stream = dev[~bad], dev_rows[~bad], device[~bad], stream[~bad]
        intern_pairs(dev)
        ext_tag, ext_val = args.get("External id", dev_rows)
        ext2 = tagged_int(*args.get("external id", dev_rows), -1)
        kernel_ext = np.where(ext_tag == T_ABSENT, ext2, tagged_int(ext_tag, ext_val, -1))

        # host events
        host = np.flatnonzero((cls != C_TRACE) & (cls != C_SKIP) & (cls != C_DEVICE))
        host_rows = x[host]
        intern_pairs(host)
        hcls = cls[host]
        h_name = name_of_pair[pair_of[host]]
        h_kind = pkind[pair_of[host]]
        h_step = pstep[pair_of[host]]
        stepped = hcls == C_STEP
        if stepped.any():
            h_name = np.where(stepped, b.names.intern("ProfilerStep"), h_name)
        h_corr = np.full(len(host), -1, np.int64)
        run = np.flatnonzero(hcls == C_RUNTIME)
        h_corr[run] = np.maximum(tagged_int(*args.get("correlation", host_rows[run]), -1), -1)
        h_op = np.full(len(host), -1, np.int32)
        h_shape = np.full(len(host), -1, np.int32)
        h_stack = np.full(len(host), -1, np.int32)
        op_by_external = self.ops(host, host_rows, hcls, h_op, h_shape, pair_of, names)
        self.stacks(host_rows, hcls, h_stack)
        self.span_shapes(host_rows, hcls, h_shape)

        # kernels: their op by external id (the last op that gave it), and the 16-bit rule
        d_kind = pkind[pair_of[dev]]
        d_name = name_of_pair[pair_of[dev]]
        d_op = np.full(len(dev), -1, np.int32)
        d_shape = np.full(len(dev), -1, np.int32)
        sixteen = np.full(len(dev), -1, np.int64)
        on_device = np.zeros(len(b.ops.name), bool)
        if op_by_external is not None and len(dev):
            exts, ops, six, ext_shape = op_by_external
            at = np.minimum(np.searchsorted(exts, kernel_ext), len(exts) - 1)
            hit = exts[at] == kernel_ext
            d_op[hit] = ops[at[hit]]
            d_shape[hit] = ext_shape[at[hit]]
            sixteen[hit] = six[at[hit]]
            on_device[distinct(ops[at[hit]])] = True
        flags = pflags[pair_of[dev]]
        compute = (d_kind == int(Kind.KERNEL)) | (d_kind == int(Kind.COLLECTIVE))
        name16 = np.zeros(len(dev), bool)
        maybe = np.flatnonzero(compute & (sixteen < 0))
        if len(maybe):
            ids, inv = np.unique(d_name[maybe], return_inverse=True)
            name16[maybe] = np.array([is_16bit_name(b.names[int(i)]) for i in ids], bool)[inv]
        flags[compute & ((sixteen == 1) | ((sixteen < 0) & name16))] |= int(Flag.FP16)
        flags[compute & (sixteen == 2)] |= int(Flag.FP8)  # the op's inputs are FP8

        grid = self.triples("grid", dev_rows)
        block = self.triples("block", dev_rows)
        occ_tag, occ_val = args.get("est. achieved occupancy %", dev_rows)
        occ = np.full(len(dev), np.nan)
        ints, floats = occ_tag == T_INT, occ_tag == T_FLOAT
        occ[ints] = occ_val[ints]
        occ[floats] = occ_val[floats].view(np.float64)
        occ[occ_tag == T_TRUE] = 1.0
        occ[occ_tag == T_FALSE] = 0.0
        occ[~((occ >= 0) & (occ <= 100))] = np.nan
        bps_tag, bps_val = args.get("blocks per SM", dev_rows)
        bps = np.full(len(dev), np.nan)
        ints, floats = bps_tag == T_INT, bps_tag == T_FLOAT
        bps[ints] = bps_val[ints]
        bps[floats] = bps_val[floats].view(np.float64)
        bps[~((bps > 0) & (bps < rules.MAX_BLOCKS_PER_SM))] = np.nan  # rules.blocks_per_sm
        device_cols = {
            "start_ps": t_x[dev],
            "dur_ps": dur_ps[dev],
            "name": d_name,
            "kind": d_kind,
            "corr": np.maximum(tagged_int(*args.get("correlation", dev_rows), -1), -1),
            "op": d_op,
            "shape": d_shape,
            "flags": flags,
            "bytes": np.maximum(tagged_int(*args.get("bytes", dev_rows), 0), 0),
            "grid_x": grid[0],
            "grid_y": grid[1],
            "grid_z": grid[2],
            "block_x": block[0],
            "block_y": block[1],
            "block_z": block[2],
            "regs": np.clip(tagged_int(*args.get("registers per thread", dev_rows), 0), 0, INT32_MAX),
            "shmem": np.clip(tagged_int(*args.get("shared memory", dev_rows), 0), 0, INT32_MAX),
            "occupancy": occ,
            "blocks_per_sm": bps,
        }
        streams: dict[tuple[int, int], tables.Columns] = {}
        stream_groups = self.groups([device, stream], lambda v: (int(v[0]), int(v[1])))
        check_lines(self.b.path, len(stream_groups))
        for key, sel in stream_groups:
            streams[key] = self.columns(DEVICE_SPEC, device_cols, sel)

        host_cols = {
            "start_ps": t_x[host],
            "dur_ps": dur_ps[host],
            "name": h_name,
            "kind": h_kind,
            "corr": h_corr,
            "op": h_op,
            "shape": h_shape,
            "stack": h_stack,
            "step_num": h_step,
            "flags": (
                np.where(ppython[pair_of[host]], int(Flag.PYTHON), 0)
                | np.where(pranges[pair_of[host]], int(Flag.PROFILER_RANGE), 0)
            ).astype(np.uint16),
        }
        threads: dict[Any, tables.Columns] = {}
        step_threads: set = set()
        thread_groups = self.groups(
            [pid_tag[host_rows], pid[host_rows], tid_tag[host_rows], tid[host_rows]],
            lambda v: (key_of(v[0], v[1]), key_of(v[2], v[3])),
        )
        check_lines(self.b.path, len(streams) + len(thread_groups))
        for key, sel in thread_groups:
            if key in threads:  # two spellings of one name
                merged = np.sort(np.concatenate([threads.pop(key).sel, sel]))
                threads[key] = self.columns(HOST_SPEC, host_cols, merged)
            else:
                threads[key] = self.columns(HOST_SPEC, host_cols, sel)
            if stepped[sel].any():
                step_threads.add(key)
        if any(len(t.sel) for t in threads.values()):
            threads = dict(sorted(threads.items(), key=lambda kv: int(kv[1].sel[0])))
        return (
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

    def groups(self, keys: list[np.ndarray], make: Callable[[list], Any]) -> list[tuple[Any, np.ndarray]]:
        """Rows grouped by equal keys, each group's rows ascending, groups in order of their first row."""
        codes, firsts = group_codes(keys)
        if not len(firsts):
            return []
        order = np.argsort(codes.astype(np.uint16) if len(firsts) < 2**16 else codes, kind="stable")
        parts = np.split(order, np.cumsum(np.bincount(codes, minlength=len(firsts)))[:-1])
        return [(make([k[int(f)] for k in keys]), part) for f, part in zip(firsts.tolist(), parts)]

    @staticmethod
    def columns(spec: dict, cols: dict[str, np.ndarray], sel: np.ndarray) -> tables.Columns:
        out = tables.Columns(spec)
        n = len(sel)
        for k, (dtype, missing) in spec.items():
            out.rows[k] = cols[k][sel] if k in cols else Constant(n, missing, dtype)  # type: ignore[assignment]
        out.sel = sel
        return out

    def triples(self, key: str, rows: np.ndarray) -> list[np.ndarray]:
        """grid or block: three int32 columns, each value as the Python reader reads its list."""
        tags, vals = self.args.get(key, rows)
        out = [np.zeros(len(rows), np.int32) for _ in range(3)]
        raw = np.flatnonzero(tags == T_RAW)
        if len(raw):
            ids, inv = np.unique(vals[raw], return_inverse=True)
            table = np.zeros((len(ids), 3), np.int64)
            for j, i in enumerate(ids.tolist()):
                g = rules.as_list(self.value(i))
                table[j] = [min(max(rules.as_int(g[k] if len(g) > k else 0, 0), 0), INT32_MAX) for k in range(3)]
            for k in range(3):
                out[k][raw] = table[inv, k]
        return out

    def ops(
        self,
        host: np.ndarray,
        host_rows: np.ndarray,
        hcls: np.ndarray,
        h_op: np.ndarray,
        h_shape: np.ndarray,
        pair_of: np.ndarray,
        names: list[str],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """Framework ops in order of first appearance, each with its first recorded shape; `h_op` and
        `h_shape` (each call's own shapes) filled; (external ids ascending, their op, their 16-bit
        answer, their call's shape id) for the kernels."""
        b = self.b
        sel = np.flatnonzero(hcls == C_OP)
        if not len(sel):
            return None
        rows = host_rows[sel]
        parts = [self.args.get(k, rows) for k in ("Input type", "Input Dims", "Input dims")]
        combo_of, combos = self.combos(parts)
        shapes: dict[int, str] = {}  # worked out only for the rows that may give an op its shape

        def shape(j: int) -> str:
            if j not in shapes:
                shapes[j] = rules.shape_of(combos[j])
            return shapes[j]

        six = np.array([rules.first_dtype_16bit(a) for a in combos], np.int64)
        op_pair = pair_of[host[sel]]
        # each name's rows (a name may come with several categories), in file order
        pair_rows = self.groups([op_pair], lambda v: int(v[0]))
        by_name: dict[str, list[np.ndarray]] = {}
        for pj, part in pair_rows:
            by_name.setdefault(names[pj], []).append(part)
        first: dict[str, int] = {}
        first_shaped: dict[str, str] = {}
        for name, parts_ in by_name.items():
            part = np.sort(np.concatenate(parts_)) if len(parts_) > 1 else parts_[0]
            first[name] = int(part[0])
            # the first non-empty shape of its rows, as the Python reader keeps it
            first_shaped[name] = ""
            head = combo_of[part[:64]].tolist()  # most often the first row has it
            for j in head if any(shape(j) for j in set(head)) else first_seen(combo_of[part]):
                if shape(j):
                    first_shaped[name] = shapes[j]
                    break
            if first_shaped[name] and name in rules.ATTENTION_CAUSAL:  # its first shaped call's causality
                r = int(part[next(i for i, c in enumerate(combo_of[part].tolist()) if shape(c))])
                tags, vals = self.args.get("Concrete Inputs", rows[r : r + 1])
                if tags[0] != T_ABSENT:
                    first_shaped[name] += rules.causal_of(
                        name, {"Concrete Inputs": self.tagged(int(tags[0]), int(vals[0]))}
                    )
        op_of_name = {}
        for name in sorted(first, key=first.__getitem__):
            op_of_name[name] = b.intern_op(name, first_shaped[name])
        op_of_pair = np.full(len(names), -1, np.int32)
        for pj in distinct(op_pair).tolist():
            op_of_pair[pj] = op_of_name[names[pj]]
        h_op[sel] = op_of_pair[op_pair]
        shape_ids = np.array([b.names.intern(shape(j)) if shape(j) else -1 for j in range(len(combos))], np.int32)
        row_shape = shape_ids[combo_of] if len(shape_ids) else np.full(len(sel), -1, np.int32)
        # an attention op's causal argument after its shapes, as the Python reader's shape_of has it
        attention = [pj for pj in distinct(op_pair).tolist() if names[pj] in rules.ATTENTION_CAUSAL]
        if attention:
            at = np.flatnonzero(np.isin(op_pair, attention))
            tags, vals = self.args.get("Concrete Inputs", rows[at])
            for i, tag, val in zip(at.tolist(), tags.tolist(), vals.tolist()):
                if tag == T_ABSENT or not shape(int(combo_of[i])):
                    continue
                suffix = rules.causal_of(names[int(op_pair[i])], {"Concrete Inputs": self.tagged(tag, val)})
                if suffix:
                    row_shape[i] = b.names.intern(shape(int(combo_of[i])) + suffix)
        h_shape[sel] = row_shape
        ext_tag, ext_val = self.args.get("External id", rows)
        ext2 = tagged_int(*self.args.get("external id", rows), -1)
        ext = np.where(ext_tag == T_ABSENT, ext2, tagged_int(ext_tag, ext_val, -1))
        keep = ext >= 0
        ext, op, sixteen = ext[keep], op_of_pair[op_pair][keep], six[combo_of][keep] if len(six) else six
        call_shape = row_shape[keep]
        # the last op row with an external id wins, as in the Python reader's dict
        rev = slice(None, None, -1)
        exts, at = np.unique(ext[rev], return_index=True)
        return exts, op[rev][at], sixteen[rev][at], call_shape[rev][at]

    def stacks(self, host_rows: np.ndarray, hcls: np.ndarray, h_stack: np.ndarray) -> None:
        """`h_stack` filled: each framework op's `Call stack` text, as the Python reader keeps it."""
        sel = np.flatnonzero(hcls == C_OP)
        tags, vals = self.args.get("Call stack", host_rows[sel])
        texts = np.flatnonzero((tags == T_STR) | (tags == T_RAW))
        if not len(texts):
            return
        # one key per (tag, text id), in the order of the pairs (a text id is below len(texts)); a
        # 1-D unique, as np.unique(axis=1) on the pairs took a tenth of the read
        n = len(self.texts)
        keys, inv = np.unique(tags[texts].astype(np.int64) * n + vals[texts], return_inverse=True)
        ids = []
        for key in keys.tolist():
            v = self.tagged(key // n, key % n)
            ids.append(self.b.names.intern(v) if isinstance(v, str) and v else -1)
        h_stack[sel[texts]] = np.array(ids, np.int32)[inv.reshape(-1)]

    def span_shapes(self, host_rows: np.ndarray, hcls: np.ndarray, h_shape: np.ndarray) -> None:
        """`h_shape` filled for the other host spans that record their inputs (a collective's own span,
        `gloo:all_reduce` with `Input Dims`), as the Python reader keeps them."""
        sel = np.flatnonzero(hcls == C_OTHER)
        if not len(sel):
            return
        parts = [self.args.get(k, host_rows[sel]) for k in ("Input type", "Input Dims", "Input dims")]
        has = np.zeros(len(sel), bool)
        for tags, _ in parts:
            has |= tags != T_ABSENT
        if not has.any():
            return
        sel = sel[has]
        combo_of, combos = self.combos([(tags[has], vals[has]) for tags, vals in parts])
        ids = np.array([self.b.names.intern(s) if (s := rules.shape_of(c)) else -1 for c in combos], np.int32)
        h_shape[sel] = ids[combo_of]

    def combos(self, parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, list[dict]]:
        """The op rows' distinct (Input type, Input Dims, Input dims) values: a number per row, and each
        one's args as the Python reader sees them."""
        n = len(parts[0][0])
        size = len(self.texts) + 8
        codes = []
        for tags, vals in parts:
            if np.any((tags == T_INT) | (tags == T_FLOAT)):
                raise Fallback  # a number where a list belongs: rare, the Python reader's business
            texts = (tags == T_STR) | (tags == T_RAW)
            codes.append(np.where(texts, vals + 8, tags.astype(np.int64)))  # other tags: one value each
        numbered = [dense(c, size) for c in codes]
        key = np.zeros(n, np.int64)
        for c, m in numbered:
            key = key * m + c
        total = float(np.prod([float(m) for _, m in numbered]))
        if total < 2**26:
            combo_of, n_combos = dense(key, max(int(total), 1))
        else:
            distinct, combo_of = np.unique(key, return_inverse=True)
            n_combos = len(distinct)
        combo_of = combo_of.reshape(-1)
        first = np.full(n_combos, n, np.int64)
        np.minimum.at(first, combo_of, np.arange(n))
        out = []
        for f in first.tolist():
            a: dict[str, Any] = {}
            for k, (tags, vals) in zip(("Input type", "Input Dims", "Input dims"), parts):
                if tags[f] != T_ABSENT:
                    a[k] = self.tagged(int(tags[f]), int(vals[f]))
            out.append(a)
        return combo_of, out

    def memory(self, rows: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, ...] | list:
        """The `[memory]` records, as the Python reader's memory_record reads them."""
        if not len(rows):
            return []
        get = self.args.get
        dtype_ = tagged_int(*get("Device Type", rows), 0)
        device = np.where(dtype_ != 0, tagged_int(*get("Device Id", rows), -1), -1)
        if np.any((device > INT32_MAX) | (device < -1)):
            raise Fallback  # an unreadable event: the Python reader says which
        return (
            ts[rows],
            device,
            np.clip(tagged_int(*get("Bytes", rows), 0), -tables.MAX_BYTES, tables.MAX_BYTES),
            np.clip(tagged_int(*get("Total Allocated", rows), -1), -1, tables.MAX_BYTES),
            np.clip(tagged_int(*get("Total Reserved", rows), -1), -1, tables.MAX_BYTES),
        )


def read_pytorch_trace_bytes(
    data: Data,
    path: str,
    host: str,
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
    max_seconds: float = text.MAX_INFLATE_S,
) -> Profile:
    """A PyTorch trace's bytes (JSON, or gzip of it; a local file is read in pieces) into a `Profile`:
    natively when the extension is built and not turned off, else (or for a file the native reader
    does not mirror exactly) by the Python reader. Raises `ProfileReadError`; refuses garbage and
    bombs early. `limit`: the size limit (what a gzip inflates to), by default the setting."""
    if not data:
        raise ProfileReadError(path, "the file is empty")
    limit = max_profile_bytes(limit)
    if available():
        profile = read(data, path, host, progress, limit, max_seconds)
        if profile is not None:
            return profile
    return reader.read_python(data, path, host, progress, limit, max_seconds)
