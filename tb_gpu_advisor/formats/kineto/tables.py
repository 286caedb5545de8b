"""The tables both Kineto readers fill, and the Profile made of them: `Tables` holds the names, ops
and warnings while a reader adds rows, and `assemble` turns the rows into the Profile (time zero, the
capture's extent, streams, threads, devices, memory)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.base import INT32_MAX, OpIndex
from tb_gpu_advisor.formats.kineto.rules import HIP_NAME, as_int, obj, shown, us
from tb_gpu_advisor.model import extent
from tb_gpu_advisor.model.arrays import Constant
from tb_gpu_advisor.model.profile import (
    AMD,
    FIRST_EVENT,
    NVIDIA,
    PROFILE_START,
    PYTORCH,
    Device,
    EventTable,
    HostThread,
    MemoryEvents,
    OpTable,
    Profile,
    Stream,
    StringTable,
    amd_gfx,
    vendor_of,
)


class Columns:
    """Rows of one table, appended as plain Python values and turned into columns once."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.rows: dict[str, list] = {k: [] for k in spec}
        self.columns = list(self.rows.items())
        self.missing = {k: missing for k, (_, missing) in spec.items()}
        self.dropped = 0  # rows starting outside the capture (set by `table`)
        self.first_dropped: tuple[int, int, float] | None = None  # (name id, step, ts µs) of the first
        self.cut = 0  # rows running past the capture's end, cut there
        self.sel = np.zeros(0, np.int64)  # the native reader's: which of its events the rows are

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
        cols: dict[str, Any] = {
            k: v if isinstance(v, Constant) else np.asarray(v, dtype=self.spec[k][0]) for k, v in self.rows.items()
        }
        self.rows.clear()  # the columns are the table's now
        out = extent.outside(start_us * 1e6, lo_ps, hi_ps)
        if out.any():
            self.dropped = int(out.sum())
            at = int(np.argmax(out))
            step = int(_value(cols["step_num"], at)) if "step_num" in cols else -1
            self.first_dropped = (int(_value(cols["name"], at)), step, float(start_us[at]))
            keep = np.flatnonzero(~out)
            start_us = start_us[keep]
            cols = {k: _rows(v, keep) for k, v in cols.items()}
        # bounded: every kept start is within the capture, so this cast cannot wrap
        cols["start_ps"] = np.round((start_us - origin_us) * 1e6).astype(np.int64)
        order = np.argsort(cols["start_ps"], kind="stable")
        if len(order) > 1 and np.any(order[1:] < order[:-1]):
            cols = {k: _rows(v, order) for k, v in cols.items()}
        table, self.cut = extent.clip(EventTable(cols, len(start_us)), hi_ps - origin_us * 1e6)
        return table


def _rows(col: Any, index: np.ndarray) -> Any:
    """A column at `index`; a one-value column stays one value."""
    return col.select(index) if isinstance(col, Constant) else col[index]


def _value(col: Any, i: int) -> Any:
    return col.value if isinstance(col, Constant) else col[i]


MAX_BYTES = 2**62  # a byte count beyond this is clamped (no allocator holds 4 EiB)


def memory_table(
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


class Tables:
    """Names, ops and warnings of the Profile being read, and its assembly from the rows."""

    def __init__(self, doc: dict, path: str, host: str) -> None:
        self.doc = doc
        self.path = path
        self.host = host
        self.names = StringTable()
        self.ops = OpTable()
        self.op_index = OpIndex(self.names, self.ops)
        self.warnings: list[str] = []
        self.bad = 0  # events skipped as unreadable
        self.first_bad = ""  # what was wrong with the first of them

    def reject(self, n: int, e: Any, what: str) -> None:
        """Count event `n` (`e`) as unreadable; the first one's reason is said in the warnings."""
        self.bad += 1
        if not self.first_bad:
            name = e.get("name") if isinstance(e, dict) else None
            label = f"traceEvents[{n}]" + (f" ({shown(name)})" if isinstance(name, str) else "")
            self.first_bad = f"{label}: {what}"

    def warn(self, message: str) -> None:
        if message not in self.warnings and len(self.warnings) < 50:
            self.warnings.append(message)

    def intern_op(self, name: str, shape: str) -> int:
        """An ATen op is its name (the type it ran as, too)."""
        return self.op_index.intern(name, name, shape)

    def assemble(
        self,
        streams: dict[tuple[int, int], Columns],
        threads: dict[Any, Columns],
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

        signs = self._vendor_signs()
        streams = self._visible_devices(streams, signs)
        stream_list: list[Stream] = []
        for (device, stream), cols in sorted(streams.items()):
            cols.rows["stream"] = Constant(len(cols.rows["kind"]), len(stream_list), np.int32)  # type: ignore[assignment]
            stream_list.append(Stream(device, stream, f"Stream #{stream}", cols.table(origin_us, lo_ps, hi_ps)))
        self.ops.on_device = on_device

        main = sorted(step_threads, key=str)[0] if step_threads else None
        thread_list: list[HostThread] = []
        for k, (key, cols) in enumerate(sorted(threads.items(), key=lambda kv: str(kv[0]))):
            cols.rows["thread"] = Constant(len(cols.rows["start_ps"]), k, np.int32)  # type: ignore[assignment]
            name = thread_names.get(key) or f"{process_names.get(key[0], 'process')} {key[1]}"
            if key == main:
                name = "python"  # the thread that marks the steps: the training loop's
            tid = as_int(key[1], k)
            thread_list.append(HostThread(tid, name, cols.table(origin_us, lo_ps, hi_ps)))
        capture_errors = self._outside(columns, lo_ps, hi_ps)

        devices = self._devices({d for d, _ in streams}, signs)
        memory_events = memory_table(memory, origin_us, lo_ps, hi_ps)
        tables = [s.events for s in stream_list] + [t.events for t in thread_list]
        ends = [int(t.end_ps.max()) for t in tables if len(t)]
        info = obj(self.doc.get("distributedInfo"))
        rank, world_size = as_int(info.get("rank")), as_int(info.get("world_size"))
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

    def _outside(self, tables: list[Columns], lo_ps: float, hi_ps: float) -> list[str]:
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
                dropped, f"{name!r} at ts {us(ts)} µs", f"{us(lo_ps / 1e6)}", f"{us(hi_ps / 1e6)} µs"
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

    def _described_ids(self) -> set[int]:
        props = self.doc.get("deviceProperties")
        ids = {as_int(p.get("id"), -1) for p in props if isinstance(p, dict)} if isinstance(props, list) else set()
        return {i for i in ids if 0 <= i <= INT32_MAX}

    def _visible_devices(
        self, streams: dict[tuple[int, int], Columns], signs: str | None
    ) -> dict[tuple[int, int], Columns]:
        """ROCm's device ids as `deviceProperties` numbers the GPUs. On ROCm a kernel's `device` is the
        HSA agent's id, which counts the CPU agents first: with two CPU sockets the first GPU is
        device 2, and a process that sees one GPU (HIP_VISIBLE_DEVICES=7) runs its kernels on device 9
        while deviceProperties describes only GPU 0 (AMD-AGI/TraceLens's MI300X traces, docs/corpus.md).
        Where some device with events is not described, every device id moves by the one offset that
        lands them all on described GPUs (the smallest), or, one device and one described GPU, onto it.
        Where every device is described, the ids stay: nothing in the trace tells the offset then."""
        ids = self._described_ids()
        seen = {d for d, _ in streams}
        rocm = signs == AMD or "roctracer_version" in self.doc
        if not rocm or not ids or not seen or seen <= ids:
            return streams
        shift = next((k for k in range(1, max(seen) + 1) if {d - k for d in seen} <= ids), None)
        if shift is not None:
            moved = {d: d - shift for d in seen}
        elif len(seen) == 1 and len(ids) == 1:
            moved = {next(iter(seen)): next(iter(ids))}
        else:
            return streams
        self.warn(
            "ROCm device ids are agent ids: GPU "
            + ", ".join(f"{d} is GPU {moved[d]}" for d in sorted(moved))
            + " of deviceProperties"
        )
        return {(moved[d], s): cols for (d, s), cols in streams.items()}

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
            i = as_int(p.get("id"), -1)
            if i < 0 or i > INT32_MAX:
                continue
            major, minor = as_int(p.get("computeMajor"), -1), as_int(p.get("computeMinor"), -1)
            mem = as_int(p.get("totalGlobalMem"), -1)
            sms = as_int(p.get("numSms"), -1)
            name = str(p.get("name") or f"GPU {i}")[:200]
            arch = p.get("gcnArchName") if isinstance(p.get("gcnArchName"), str) else None
            rocm = arch is not None or "maxSharedMemoryPerMultiProcessor" in p or as_int(p.get("warpSize")) == 64
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
