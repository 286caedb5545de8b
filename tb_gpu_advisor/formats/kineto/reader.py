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
  `Tables._devices` in tables.py); `distributedInfo` gives the rank; the profiler's own span
  (`PyTorch Profiler (0)`, category `Trace`) is time zero, else the first event.

Broken input raises ProfileReadError like an XSpace file does.
"""

import logging
import re
from typing import Any, Callable

import numpy as np

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.base import INT32_MAX, MAX_DUR_PS, Data, Progress, check_lines, max_profile_bytes
from tb_gpu_advisor.formats.kineto.rules import (
    ANNOTATION_CATS,
    DATALOADER_NEXT,
    DEVICE_CATS,
    OP_CATS,
    PROFILER_RANGE_CAT,
    PYTHON_CAT,
    RUNTIME_CATS,
    SKIPPED_CATS,
    STEP,
    UNNAMING,
    as_int,
    as_list,
    blocks_per_sm,
    first_dtype_16bit,
    number,
    obj,
    shape_of,
    shown,
)
from tb_gpu_advisor.formats.kineto.tables import MAX_BYTES, Columns, Tables
from tb_gpu_advisor.formats.kineto.text import MAX_INFLATE_S, MAX_VALUE, inflate, loads
from tb_gpu_advisor.model.classify import (
    classify_copy,
    classify_device_event,
    is_16bit_name,
    is_launch,
    kernel_flags,
)
from tb_gpu_advisor.model.profile import (
    DEVICE_SPEC,
    HOST_SPEC,
    Flag,
    Kind,
    Profile,
)

log = logging.getLogger(__name__)


def read_python(
    data: Data,
    path: str,
    host: str,
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
    max_seconds: float = MAX_INFLATE_S,
) -> Profile:
    """The Python reader: a PyTorch trace's bytes (JSON, or gzip of it) into a `Profile`, parsed whole.
    Raises `ProfileReadError`; refuses garbage and bombs early (see `inflate`). The entry point is
    `native.read_pytorch_trace_bytes`, which reads natively and falls back to this."""
    if not data:
        raise ProfileReadError(path, "the file is empty")
    text = inflate(data, path, max_profile_bytes(limit), max_seconds)
    try:
        doc = loads(text)
    except (ValueError, TypeError) as e:
        raise ProfileReadError(path, f"not a readable PyTorch trace (JSON: {str(e)[:200]})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ProfileReadError(path, "not a PyTorch trace: no traceEvents list")
    try:
        return PythonReader(doc, path, host).build(progress)
    except ProfileReadError:
        raise
    except (ValueError, TypeError, KeyError, OverflowError, IndexError, AttributeError):
        # a value of a kind no check above foresaw: said in the user's terms, the detail logged
        log.debug("unreadable PyTorch trace %s", path, exc_info=True)
        raise ProfileReadError(
            path, "malformed PyTorch trace: a value in it is of the wrong kind or out of range"
        ) from None


class PythonReader(Tables):
    """The Python reader's loop over the parsed events (the native reader's reference)."""

    def build(self, progress: Progress | None) -> Profile:
        events = self.doc["traceEvents"]
        threads: dict[tuple, Columns] = {}
        thread_names: dict[tuple, str] = {}
        process_names: dict[Any, str] = {}
        streams: dict[tuple[int, int], Columns] = {}
        kernel_external: dict[tuple[int, int], list[int]] = {}  # (device, stream) -> external ids, row order
        op_by_external: dict[int, tuple[int, int, int]] = {}  # external id -> (op, 16-bit, shape id)
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
                reject(n, e, f"{shown(e)} is not an event object")
                continue
            ph = e.get("ph")
            if isinstance(e.get("pid"), UNNAMING) or isinstance(e.get("tid"), UNNAMING):
                reject(n, e, "'pid' and 'tid' should be numbers or names, not lists or objects")
                continue
            if ph == "M":
                args = obj(e.get("args"))
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
            ts, dur = number(e.get("ts")), number(e.get("dur", 0))
            if ts is None or abs(ts) > 2**52:
                reject(n, e, f"'ts' is {shown(e.get('ts'))}, expected a time in µs")
                continue
            if dur is None:
                reject(n, e, f"'dur' is {shown(e.get('dur'))}, expected a duration in µs")
                continue
            cat = str(e.get("cat") or "").lower()
            name = e.get("name")
            if not isinstance(name, str):
                name = str(name)
            if len(name) > MAX_VALUE:  # escaped quotes hid its length while streamed (text.ValueBound)
                raise ProfileReadError(
                    self.path,
                    f"not a PyTorch trace the advisor reads: event {n}'s name is over {MAX_VALUE >> 20} MB long",
                )
            args = obj(e.get("args"))
            start_us = ts  # ps once time zero is known (Columns.table)
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
                device = as_int(args.get("device", e.get("pid")), -1)
                stream = as_int(args.get("stream", -1), -1)
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
                grid, block = as_list(args.get("grid")), as_list(args.get("block"))
                occ = args.get("est. achieved occupancy %")
                cols = streams.get((device, stream))
                if cols is None:
                    check_lines(self.path, len(streams) + len(threads) + 1)
                    cols = streams[(device, stream)] = Columns(DEVICE_SPEC)
                ext = as_int(args.get("External id", args.get("external id", -1)))
                kernel_external.setdefault((device, stream), []).append(ext)
                name_flags = kernel_flags(name) if kind == Kind.KERNEL else 0
                cols.add(
                    start_ps=start_us,
                    dur_ps=dur_ps,
                    name=self.names.intern(name),
                    kind=int(kind),
                    corr=max(as_int(args.get("correlation", -1)), -1),
                    flags=name_flags,
                    bytes=max(as_int(args.get("bytes", 0), 0), 0),
                    grid_x=min(max(as_int(grid[0] if len(grid) > 0 else 0, 0), 0), INT32_MAX),
                    grid_y=min(max(as_int(grid[1] if len(grid) > 1 else 0, 0), 0), INT32_MAX),
                    grid_z=min(max(as_int(grid[2] if len(grid) > 2 else 0, 0), 0), INT32_MAX),
                    block_x=min(max(as_int(block[0] if len(block) > 0 else 0, 0), 0), INT32_MAX),
                    block_y=min(max(as_int(block[1] if len(block) > 1 else 0, 0), 0), INT32_MAX),
                    block_z=min(max(as_int(block[2] if len(block) > 2 else 0, 0), 0), INT32_MAX),
                    regs=min(max(as_int(args.get("registers per thread", 0), 0), 0), INT32_MAX),
                    shmem=min(max(as_int(args.get("shared memory", 0), 0), 0), INT32_MAX),
                    occupancy=float(occ) if isinstance(occ, (int, float)) and 0 <= occ <= 100 else np.nan,
                    blocks_per_sm=blocks_per_sm(args.get("blocks per SM")),
                )
                continue
            key = (e.get("pid"), e.get("tid"))
            cols = threads.get(key)
            if cols is None:
                check_lines(self.path, len(streams) + len(threads) + 1)
                cols = threads[key] = Columns(HOST_SPEC)
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
                    corr=max(as_int(args.get("correlation", -1)), -1),
                )
            elif cat in OP_CATS:
                shape = shape_of(args, name)
                shape_id = self.names.intern(shape) if shape else -1
                known = self.op_index.find(name, name)
                # an op's shape is the first one recorded (each call keeps its own in `shape`)
                op = known if known is not None and self.ops.shape[known] else self.intern_op(name, shape)
                ext = as_int(args.get("External id", args.get("external id", -1)))
                if ext >= 0:
                    op_by_external[ext] = (op, first_dtype_16bit(args), shape_id)
                stack = args.get("Call stack")
                stack_id = self.names.intern(stack) if isinstance(stack, str) and stack else -1
                row.update(kind=int(Kind.FRAMEWORK_OP), op=op, shape=shape_id, stack=stack_id)
            else:
                flags = Flag.PYTHON if cat == PYTHON_CAT else Flag.PROFILER_RANGE if cat == PROFILER_RANGE_CAT else 0
                row.update(kind=int(Kind.HOST_OTHER), flags=int(flags))
                # a collective's own span (`gloo:all_reduce`, `nccl:all_reduce`) records its tensor:
                # the bytes it moves (measures/collectives.py)
                shape = shape_of(args) if args else ""
                if shape:
                    row["shape"] = self.names.intern(shape)
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
        streams: dict[tuple[int, int], Columns],
        kernel_external: dict[tuple[int, int], list[int]],
        op_by_external: dict[int, tuple[int, int, int]],
    ) -> np.ndarray:
        """Kernels: the op that launched them (by external id) and the 16-bit rule; which ops ran on a GPU."""
        on_device = np.zeros(len(self.ops.name), bool)
        for key, cols in streams.items():
            externals = kernel_external[key]
            ops, flag_rows, shapes = cols.rows["op"], cols.rows["flags"], cols.rows["shape"]
            for i, ext in enumerate(externals):
                found = op_by_external.get(ext)
                kind = cols.rows["kind"][i]
                compute = kind in (Kind.KERNEL, Kind.COLLECTIVE)
                if found is not None:
                    ops[i] = found[0]
                    shapes[i] = found[2]
                    on_device[found[0]] = True
                sixteen = found[1] if found is not None else -1
                if compute and (sixteen == 1 or (sixteen < 0 and is_16bit_name(self.names[cols.rows["name"][i]]))):
                    flag_rows[i] |= int(Flag.FP16)
                if compute and sixteen == 2:  # the op's inputs are FP8
                    flag_rows[i] |= int(Flag.FP8)
        return on_device

    def memory_record(self, n: int, e: dict, into: list[tuple[float, int, int, int, int]]) -> None:
        """One `[memory]` record: an allocation or free, and the allocator's totals after it."""
        ts = number(e.get("ts"))
        if ts is None or abs(ts) > 2**52:
            self.reject(n, e, f"'ts' is {shown(e.get('ts'))}, expected a time in µs")
            return
        args = obj(e.get("args"))
        device = as_int(args.get("Device Id"), -1) if as_int(args.get("Device Type"), 0) != 0 else -1
        if device > INT32_MAX or device < -1:
            self.reject(n, e, f"'Device Id' is {shown(args.get('Device Id'))}, expected a device number")
            return
        into.append(
            (
                ts,
                device,
                max(min(as_int(args.get("Bytes"), 0), MAX_BYTES), -MAX_BYTES),
                min(max(as_int(args.get("Total Allocated"), -1), -1), MAX_BYTES),
                min(max(as_int(args.get("Total Reserved"), -1), -1), MAX_BYTES),
            )
        )
