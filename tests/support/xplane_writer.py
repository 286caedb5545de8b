"""Build XSpace profile files programmatically (for tests, demos and benchmarks).

Two stat formats, as real captures differ by TensorFlow version:
- `"new"`: `tf_op` ref-valued stats, `kernel_details` with `static_shared`/`dynamic_shared`/`occ_pct`,
  `memcpy_details` with `kind_src`/`kind_dst`.
- `"old"`: string-valued `annotation` (`name:Type#shape=(...)#`), `kernel_details` with `shm`,
  `memcpy_details` as `size:N dest:D async:A`.

Times given to the writer are microseconds (floats) from the start of the profile; they are stored
as integer picoseconds, rounded. As profilers write them, line timestamps are relative to the profile's
start (which the `Task Environment` plane gives as an epoch time), so the trace viewer's zero is the
profile's start.

Real captures link each step's host work to its device work through context stats: the step marker
(`_r=1`) holds a function call that produces (`_pt`, `_p`) what the executor threads consume (`_ct`,
`_c`) in `ExecutorState::Process` events around their kernel launches; kernels pair with launches by
correlation id. `to_bytes` adds those events, so the profile plugin's converter finds the same steps
as the advisor. Older captures also saved the groups as `group_id` stats; current ones do not. With
`group_ids=True` the device events carry them (the converter, which groups events itself, accepts
that, but finds no steps at all when host events carry them too).

    w = ProfileWriter(host="worker0")
    gpu = w.gpu(0, GPU_SPECS["A100"])
    compute = gpu.stream(7, "Compute")
    py = w.thread("python")
    py.step(0, start_us=0, dur_us=1000)
    compute.kernel("volta_h884gemm_64x64_nn", 10, 200, op="dense/MatMul:MatMul",
                   shape="(half[64,64];half[64,64])", launch=py)
    w.write(logdir, run="train", session="2026_11_22_00_00_00")
"""

from __future__ import annotations

import bisect
import dataclasses
import os
from typing import Any, Iterable

from tb_gpu_advisor.formats.xplane import xplane_pb2

BASE_NS = 1_795_300_000_000_000_000  # the profile's start, an epoch time (Task Environment)
LINE_TS_NS = 0  # line timestamps are relative to the profile's start, as profilers write them
PRODUCER_TF_EXECUTOR = 2  # `_pt`/`_ct` context type of a function run by the executor


# Stats TensorFlow writes as int64 whatever their sign (the profile plugin's memory profile reads
# only int64 values of these: unsigned ones count as 0 there).
_SIGNED_STATS = frozenset({"bytes_allocated", "bytes_reserved", "peak_bytes_in_use", "bytes_available"})


def ps(us: float) -> int:
    return int(round(us * 1_000_000))


@dataclasses.dataclass(frozen=True)
class GpuSpec:
    name: str
    cc: tuple[int, int]
    sms: int
    clock_khz: int
    memory_bytes: int
    bandwidth: float  # bytes/s
    vendor: str = "Nvidia"  # the `device_vendor` stat


GPU_SPECS = {
    "V100": GpuSpec("Tesla V100-SXM2-16GB", (7, 0), 80, 1530000, 16 * 2**30, 900e9),
    "T4": GpuSpec("Tesla T4", (7, 5), 40, 1590000, 15 * 2**30, 320e9),
    "A100": GpuSpec("NVIDIA A100-SXM4-40GB", (8, 0), 108, 1410000, 40 * 2**30, 1555e9),
    "H100": GpuSpec("NVIDIA H100 80GB HBM3", (9, 0), 132, 1980000, 80 * 2**30, 3350e9),
    "P100": GpuSpec("Tesla P100-PCIE-16GB", (6, 0), 56, 1328500, 16 * 2**30, 732e9),
    # ROCm reports the gfx generation (gfx90a: 9.0) where CUDA reports the compute capability
    "MI250": GpuSpec("AMD Instinct MI250X / MI250", (9, 0), 104, 1700000, 64 * 2**30, 1638e9, vendor="AMD"),
}


class Plane:
    """An XPlane under construction with interned event and stat metadata."""

    def __init__(self, plane: "xplane_pb2.XPlane"):
        self.pb = plane
        self.event_ids: dict[str, int] = {}
        self.stat_ids: dict[str, int] = {}

    def stat_id(self, name: str) -> int:
        sid = self.stat_ids.get(name)
        if sid is None:
            sid = len(self.stat_ids) + 1
            self.stat_ids[name] = sid
            self.pb.stat_metadata[sid].id = sid
            self.pb.stat_metadata[sid].name = name
        return sid

    def event_id(self, name: str, metadata_stats: dict | None = None) -> int:
        key = name if not metadata_stats else f"{name}\x00{sorted(metadata_stats.items())}"
        eid = self.event_ids.get(key)
        if eid is None:
            eid = len(self.event_ids) + 1
            self.event_ids[key] = eid
            md = self.pb.event_metadata[eid]
            md.id = eid
            md.name = name
            for k, v in (metadata_stats or {}).items():
                self.set_stat(md.stats.add(), k, v)
        return eid

    def set_stat(self, st: "xplane_pb2.XStat", name: str, value: Any, ref: bool = False) -> None:
        st.metadata_id = self.stat_id(name)
        if ref:
            st.ref_value = self.stat_id(str(value))
        elif isinstance(value, bool):
            st.int64_value = int(value)
        elif isinstance(value, int):
            if value >= 0 and name not in _SIGNED_STATS:
                st.uint64_value = value
            else:
                st.int64_value = value
        elif isinstance(value, float):
            st.double_value = value
        elif isinstance(value, bytes):
            st.bytes_value = value
        else:
            st.str_value = str(value)

    def line(self, line_id: int, name: str) -> "xplane_pb2.XLine":
        line = self.pb.lines.add()
        line.id = line_id
        line.display_id = line_id
        line.name = name
        line.timestamp_ns = LINE_TS_NS
        return line

    def add_event(
        self,
        line: "xplane_pb2.XLine",
        name: str,
        start_us: float,
        dur_us: float,
        stats: dict,
        refs: Iterable[str] = (),
        metadata_stats: dict | None = None,
    ) -> "xplane_pb2.XEvent":
        ev = line.events.add()
        ev.metadata_id = self.event_id(name, metadata_stats)
        ev.offset_ps = ps(start_us)
        ev.duration_ps = ps(dur_us)
        for k, v in stats.items():
            if v is None:
                continue
            self.set_stat(ev.stats.add(), k, v, ref=k in refs)
        return ev


class Thread:
    """A host thread line."""

    def __init__(self, writer: "ProfileWriter", line: "xplane_pb2.XLine"):
        self.writer = writer
        self.line = line
        self.plane = writer.host_plane

    @property
    def name(self) -> str:
        return self.line.name

    def event(self, name: str, start_us: float, dur_us: float, **stats: Any) -> "xplane_pb2.XEvent":
        return self.plane.add_event(self.line, name, start_us, dur_us, stats)

    def step(self, step_num: int, start_us: float, dur_us: float, name: str = "train") -> None:
        """A step marker as `tf.profiler.experimental.Trace(name, step_num=n, _r=1)` writes it."""
        self.event(name, start_us, dur_us, step_num=step_num, _r=1)

    def op(self, op: str, start_us: float, dur_us: float) -> None:
        """A framework op executed on this thread, `op` as `name:Type`."""
        self.event(op, start_us, dur_us)

    def eager(self, op_type: str, start_us: float, dur_us: float) -> None:
        """An op executed eagerly (outside any graph)."""
        self.plane.add_event(
            self.line, "EagerExecute", start_us, dur_us, {"eager_op": op_type, "is_func": 0}, refs=("eager_op",)
        )

    def get_next(self, start_us: float, dur_us: float) -> None:
        """The step waiting for the next input element."""
        self.event("IteratorGetNextOp::DoCompute", start_us, dur_us)

    def launch(
        self, device_id: int, correlation_id: int, start_us: float, dur_us: float, api: str = "cuLaunchKernel"
    ) -> None:
        self.event(api, start_us, dur_us, correlation_id=correlation_id, device_id=device_id)

    def memory(
        self,
        start_us: float,
        bytes_allocated: int,
        peak_bytes: int,
        allocator: str = "GPU_0_bfc",
        free: bool = False,
        reserved: int = 0,
        available: int = 0,
        fragmentation: float = 0.0,
    ) -> None:
        self.event(
            "MemoryDeallocation" if free else "MemoryAllocation",
            start_us,
            0.0,
            allocator_name=allocator,
            bytes_allocated=bytes_allocated,
            peak_bytes_in_use=peak_bytes,
            bytes_reserved=reserved,
            bytes_available=available,
            fragmentation=fragmentation,
        )


class Stream:
    """A GPU stream line."""

    def __init__(self, gpu: "Gpu", line: "xplane_pb2.XLine"):
        self.gpu = gpu
        self.line = line
        self.writer = gpu.writer

    def _attribution(self, op: str | None, shape: str | None) -> tuple[dict, tuple]:
        if not op:
            return {}, ()
        if self.writer.fmt == "old":
            text = f"{op}#shape={shape}#" if shape else op
            return {"annotation": text}, ()
        stats = {"tf_op": op}
        if shape:
            stats["shape"] = shape
        return stats, ("tf_op",)

    def _launch(self, launch: Thread | None, start_us: float, api: str, launch_us: float, lead_us: float) -> int:
        corr = self.writer.next_correlation_id()
        if launch is not None:
            launch.launch(self.gpu.device_id, corr, start_us - lead_us - launch_us, launch_us, api=api)
        return corr

    def kernel(
        self,
        name: str,
        start_us: float,
        dur_us: float,
        op: str | None = None,
        shape: str | None = None,
        grid: tuple[int, int, int] = (1, 1, 1),
        block: tuple[int, int, int] = (256, 1, 1),
        regs: int = 32,
        shared: int = 0,
        occupancy: float = 50.0,
        launch: Thread | None = None,
        launch_us: float = 5.0,
        lead_us: float = 2.0,
        is_eager: bool = False,
        group_id: int | None = None,
        hlo_module: str | None = None,
        hlo_op: str | None = None,
    ) -> int:
        """A kernel; with `launch`, also its launch API call on that host thread, `launch_us` long
        and ending `lead_us` before the kernel starts (negative `lead_us`: the kernel waited).
        Returns the correlation id."""
        corr = self._launch(launch, start_us, "cuLaunchKernel", launch_us, lead_us)
        attr, refs = self._attribution(op, shape)
        g, b = ",".join(map(str, grid)), ",".join(map(str, block))
        if self.writer.fmt == "old":
            details = f"regs:{regs} shm:{shared} grid:{g} block:{b}"
        else:
            details = f"regs:{regs} static_shared:{shared} dynamic_shared:0 grid:{g} block:{b} occ_pct:{occupancy}"
        stats = {"correlation_id": corr, "context_id": 1, "kernel_details": details, **attr}
        if is_eager:
            stats["is_eager"] = 1
        if group_id is not None:
            stats["group_id"] = group_id
        if hlo_module:  # XLA-compiled kernels carry their module and HLO instruction
            stats["hlo_module"] = hlo_module
            stats["hlo_op"] = hlo_op or name
        refs = refs + (("kernel_details",) if self.writer.fmt == "new" else ())
        self.gpu.plane.add_event(self.line, name, start_us, dur_us, stats, refs=refs)
        return corr

    def memcpy(
        self,
        direction: str,
        start_us: float,
        dur_us: float,
        nbytes: int,
        op: str | None = None,
        launch: Thread | None = None,
        launch_us: float = 5.0,
        lead_us: float = 2.0,
        is_async: bool = True,
        name: str | None = None,
    ) -> int:
        """A copy, `direction` one of H2D, D2H, D2D, P2P (named `Memcpy<direction>`)."""
        api = {"H2D": "cuMemcpyHtoDAsync_v2", "D2H": "cuMemcpyDtoHAsync_v2"}.get(direction, "cuMemcpyAsync")
        corr = self._launch(launch, start_us, api, launch_us, lead_us)
        attr, refs = self._attribution(op, None)
        a = int(is_async)
        dest = self.gpu.device_id
        if self.writer.fmt == "old":
            details = f"size:{nbytes} dest:{dest} async:{a}"
        else:
            src_kind, dst_kind = {
                "H2D": ("pinned", "device"),
                "D2H": ("device", "pinned"),
                "D2D": ("device", "device"),
                "P2P": ("device", "peer"),
            }[direction]
            details = f"kind_src:{src_kind} kind_dst:{dst_kind} size:{nbytes} dest:{dest} async:{a}"
        stats = {"correlation_id": corr, "context_id": 1, "memcpy_details": details, **attr}
        self.gpu.plane.add_event(self.line, name or f"Memcpy{direction}", start_us, dur_us, stats, refs=refs)
        return corr

    def memset(self, start_us: float, dur_us: float, nbytes: int, op: str | None = None) -> int:
        corr = self.writer.next_correlation_id()
        attr, refs = self._attribution(op, None)
        stats = {"correlation_id": corr, "memset_details": f"size:{nbytes} dest:{self.gpu.device_id} async:1", **attr}
        self.gpu.plane.add_event(self.line, "Memset", start_us, dur_us, stats, refs=refs)
        return corr

    def nccl(
        self,
        start_us: float,
        dur_us: float,
        name: str = "ncclKernel_AllReduce_RING_LL_Sum_float",
        op: str = "NcclAllReduce:NcclAllReduce",
        launch: Thread | None = None,
        shape: str | None = None,
    ) -> int:
        """An NCCL collective kernel; `shape` is its op's tensor, e.g. "(float[25557032])"."""
        return self.kernel(name, start_us, dur_us, op=op, shape=shape, grid=(1, 1, 1), block=(256, 1, 1), launch=launch)


class Gpu:
    def __init__(self, writer: "ProfileWriter", device_id: int, spec: GpuSpec | None):
        self.writer = writer
        self.device_id = device_id
        self.pb = writer.space.planes.add()
        self.pb.id = device_id + 1
        self.pb.name = f"/device:GPU:{device_id}"
        self.plane = Plane(self.pb)
        if spec is not None:
            stats: dict[str, object] = {
                "clock_rate": spec.clock_khz,
                "core_count": spec.sms,
                "memory_bandwidth": int(spec.bandwidth),
                "memory_size": spec.memory_bytes,
                "compute_cap_major": spec.cc[0],
                "compute_cap_minor": spec.cc[1],
            }
            if writer.fmt == "new":
                stats["device_vendor"] = spec.vendor
                stats["gpu_device_name"] = spec.name
            for k, v in stats.items():
                self.plane.set_stat(self.pb.stats.add(), k, v)

    def stream(self, stream_id: int, *kinds: str) -> Stream:
        name = f"Stream #{stream_id}({','.join(kinds or ('Compute',))})"
        return Stream(self, self.plane.line(stream_id, name))

    def derived_line(self, name: str, events: Iterable[tuple[str, float, float]]) -> None:
        """A line the viewer derives (`TensorFlow Ops`, `XLA Ops`, `Steps`, ...), as some files carry."""
        line = self.plane.line(10_000 + len(self.pb.lines), name)
        for ev_name, start_us, dur_us in events:
            stats = {"group_id": int(ev_name)} if name == "Steps" and ev_name.isdigit() else {}
            self.plane.add_event(line, ev_name, start_us, dur_us, stats)


class ProfileWriter:
    """Builds one host's XSpace file."""

    def __init__(self, host: str = "localhost", fmt: str = "new", group_ids: bool = False):
        if fmt not in ("new", "old"):
            raise ValueError("fmt must be 'new' or 'old'")
        self.host = host
        self.fmt = fmt
        self.group_ids = group_ids
        self.space = xplane_pb2.XSpace()
        self.space.hostnames.append(host)
        hp = self.space.planes.add()
        hp.id = 0
        hp.name = "/host:CPU"
        self.host_plane = Plane(hp)
        self._threads: dict[str, Thread] = {}
        self._gpus: dict[int, Gpu] = {}
        self._corr = 0
        self._end_us = 0.0

    def next_correlation_id(self) -> int:
        self._corr += 1
        return self._corr

    def gpu(self, device_id: int, spec: GpuSpec | None = GPU_SPECS["A100"]) -> Gpu:
        if device_id not in self._gpus:
            self._gpus[device_id] = Gpu(self, device_id, spec)
        return self._gpus[device_id]

    def thread(self, name: str, tid: int | None = None) -> Thread:
        if name not in self._threads:
            line_id = tid if tid is not None else 1000 + len(self._threads)
            self._threads[name] = Thread(self, self.host_plane.line(line_id, name))
        return self._threads[name]

    def to_bytes(self, grouping: bool = True) -> bytes:
        """The file's bytes: a copy of what was written, with the `Task Environment` plane and, with
        `grouping`, the step grouping events and stats real captures carry (see the module's doc)."""
        space = xplane_pb2.XSpace()
        space.CopyFrom(self.space)
        if grouping:
            _group_steps(space, self.host_plane, self.group_ids)
        env = space.planes.add()
        env.id = 10_000
        env.name = "Task Environment"
        end_ps = max(
            (ev.offset_ps + ev.duration_ps for p in space.planes for line in p.lines for ev in line.events),
            default=0,
        )
        env_plane = Plane(env)
        env_plane.set_stat(env.stats.add(), "profile_start_time", BASE_NS)
        env_plane.set_stat(env.stats.add(), "profile_stop_time", BASE_NS + end_ps // 1000 + 1)
        return space.SerializeToString(deterministic=True)

    def write(self, logdir: str, run: str = "", session: str = "2026_11_22_00_00_00") -> str:
        """Write `<logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb`; returns the path."""
        folder = (
            os.path.join(logdir, run, "plugins", "profile", session)
            if run
            else os.path.join(logdir, "plugins", "profile", session)
        )
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{self.host}.xplane.pb")
        with open(path, "wb") as f:
            f.write(self.to_bytes())
        return path


def _group_steps(space: "xplane_pb2.XSpace", host_plane: Plane, group_ids: bool) -> None:
    """Add what links a step's host and device work in real captures: a `FunctionRun` producing
    (`_pt`, `_p`) inside each step marker, an `ExecutorState::Process` consuming it (`_ct`, `_c`) on
    every other host thread that works in the step (tf.data threads excepted), and with `group_ids`,
    `group_id` = the step's index on the device events launched in it."""
    host = space.planes[0]
    plane = Plane(host)
    plane.event_ids, plane.stat_ids = dict(host_plane.event_ids), dict(host_plane.stat_ids)
    step_stat = plane.stat_ids.get("step_num")
    if step_stat is None:
        return
    corr_stat = plane.stat_ids.get("correlation_id")
    markers = []  # (start, end, line index)
    for li, line in enumerate(host.lines):
        for ev in line.events:
            if any(st.metadata_id == step_stat for st in ev.stats):
                markers.append((ev.offset_ps, ev.offset_ps + ev.duration_ps, li))
    if not markers:
        return
    markers.sort()
    starts = [m[0] for m in markers]

    def step_of(t: int) -> int:
        k = bisect.bisect_right(starts, t) - 1
        return k if k >= 0 and t < markers[k][1] else -1

    spans: dict[tuple[int, int], list[int]] = {}  # (line index, step) -> [first start, last end]
    launched: dict[int, int] = {}  # correlation id -> step
    for li, line in enumerate(host.lines):
        tf_data = line.name.startswith("tf_data")
        for ev in line.events:
            k = step_of(ev.offset_ps)
            if k < 0 or tf_data:
                continue
            span = spans.setdefault((li, k), [ev.offset_ps, ev.offset_ps + ev.duration_ps])
            span[0], span[1] = min(span[0], ev.offset_ps), max(span[1], ev.offset_ps + ev.duration_ps)
            if corr_stat is not None:
                for st in ev.stats:
                    if st.metadata_id == corr_stat:
                        launched[st.uint64_value or st.int64_value] = k
    for k, (start, end, li) in enumerate(markers):
        inset = min(1_000_000, (end - start) // 1000)  # 1 µs, or less in very short steps
        _add(
            plane,
            host.lines[li],
            "FunctionRun",
            start + inset,
            end - start - 2 * inset,
            {"_pt": PRODUCER_TF_EXECUTOR, "_p": 10_000 + k},
        )
    for (li, k), (start, end) in sorted(spans.items()):
        if li == markers[k][2]:
            continue
        _add(
            plane,
            host.lines[li],
            "ExecutorState::Process",
            start - 500_000,
            end - start + 1_000_000,
            {"_ct": PRODUCER_TF_EXECUTOR, "_c": 10_000 + k},
        )
    for line in host.lines:
        _sort_events(line)
    if not group_ids:
        return
    for p in space.planes[1:]:
        gp = Plane(p)
        corr = {n: i for n, i in ((md.name, k) for k, md in p.stat_metadata.items())}.get("correlation_id")
        gp.stat_ids = {md.name: k for k, md in p.stat_metadata.items()}
        for line in p.lines:
            for ev in line.events:
                k = -1
                for st in ev.stats:
                    if st.metadata_id == corr:
                        k = launched.get(st.uint64_value or st.int64_value, -1)
                if k < 0:
                    k = step_of(ev.offset_ps)
                if k >= 0:
                    gp.set_stat(ev.stats.add(), "group_id", k)


def _add(plane: Plane, line: "xplane_pb2.XLine", name: str, start_ps: int, dur_ps: int, stats: dict) -> None:
    ev = line.events.add()
    ev.metadata_id = plane.event_id(name)
    ev.offset_ps = start_ps
    ev.duration_ps = max(dur_ps, 0)
    for k, v in stats.items():
        plane.set_stat(ev.stats.add(), k, v)


def _sort_events(line: "xplane_pb2.XLine") -> None:
    events = sorted(line.events, key=lambda e: (e.offset_ps, -e.duration_ps))
    copies = []
    for e in events:
        c = xplane_pb2.XEvent()
        c.CopyFrom(e)
        copies.append(c)
    del line.events[:]
    line.events.extend(copies)
