"""The measurements of a capture and its host, which no GPU's measurement is needed for."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.common.parallel import cached, cached_once
from tb_gpu_advisor.common.settings import settings
from tb_gpu_advisor.common.units import pct
from tb_gpu_advisor.graph.build import StepGraph, build as build_graph
from tb_gpu_advisor.measures import host, input as inputs, launches, memory, quality, whatif
from tb_gpu_advisor.measures.host import HostOpLabels, HostOpRow, HostSets, HostWorkEvents
from tb_gpu_advisor.measures.kernels import op_shape
from tb_gpu_advisor.measures.launches import LaunchCalls, LostGpuEvents
from tb_gpu_advisor.measures.memory import MemoryCurves, MemoryPeak
from tb_gpu_advisor.measures.names import NameClasses
from tb_gpu_advisor.measures.quality import MemoryRecords, PythonStacks, StepSpread
from tb_gpu_advisor.measures.stacks import PythonFrames
from tb_gpu_advisor.measures.whatif import HostCause, HostKept, Prediction, StepModel, Syncs, WhatIf
from tb_gpu_advisor.measures.window import Window, label_text, thread_name
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.analysis import Analysis
from tb_gpu_advisor.model.profile import PYTORCH, Device, EventTable, Flag, Kind, Profile
from tb_gpu_advisor.model.steps import CATEGORIES, Steps

# the step graph is built over at most this many steps, the last ones: its what-ifs are medians of
# steps, and its cost follows the events in it (the 325 MB Kineto benchmark's 60 steps cost 20% of
# the command at 100; 9% at 30: docs/whatif.md)
GRAPH_STEPS = 30


class CaptureMeasures:
    """What one analysed profile's capture and host measure; `Measures` adds the GPUs."""

    def __init__(self, a: Analysis, logged: tuple[str, list[float]] | None = None) -> None:
        self._a = a
        # the step times the run logged as a TensorBoard scalar (its tag, ms), which the what-ifs scale
        # the profiler's cost to meet
        self._logged = logged
        self.p: Profile = a.profile
        self.names = NameClasses(a.profile)

    @property
    def analysis(self) -> Analysis:
        """The analysis these measure, for what draws or summarises all of it: the report's summary,
        the timeline and the trace export. The checks, tables, job and compare read the measures, never
        this (tests/test_layers.py)."""
        return self._a

    # -- the capture -----------------------------------------------------------------------------

    @property
    def framework(self) -> str:
        return self.p.framework

    @property
    def is_pytorch(self) -> bool:
        return self.p.framework == PYTORCH

    @property
    def devices(self) -> list[Device]:
        return self.p.devices

    def capabilities(self) -> str:
        return (
            ", ".join(
                f"{d.compute_capability[0]}.{d.compute_capability[1]}" if d.compute_capability else "unknown"
                for d in self.p.devices
            )
            or "unknown"
        )

    @property
    def copy_only_gpus(self) -> list[int]:
        return self._a.copy_only

    @property
    def idle_gpus(self) -> list[int]:
        return self._a.idle

    @property
    def has_xla(self) -> bool:
        return self.p.has_xla

    @property
    def tpu_planes(self) -> int:
        """TPU device planes in the capture (a TPU capture is not this tool's subject)."""
        return self.p.tpu_planes

    @property
    def gpu_signs(self) -> bool:
        """The host shows GPU work (GPU threads, allocators, CUDA calls) even where no GPU plane is."""
        return self.p.gpu_signs

    @property
    def world_size(self) -> int | None:
        """The job's number of ranks, where the file says."""
        return self.p.world_size

    @cached
    def ops_with_shapes(self) -> tuple[int, int]:
        """(framework ops, those that carry their input shapes)."""
        shapes = self.p.ops.shape
        return len(shapes), sum(1 for s in shapes if s)

    @property
    def host_steps(self) -> Steps:
        return self._a.host_steps

    # -- the step graph and its what-ifs (graph/, docs/whatif.md) ---------------------------------

    @cached_once
    def step_graph(self) -> StepGraph | None:
        """What decides when each thing of the steps happens; None without steps, or with the what-ifs
        off (TB_GPU_ADVISOR_WHATIF=0)."""
        if not settings().whatif:
            return None
        a = self._a
        rest: list[tuple[EventTable, int | None]] = [
            (s.events, i) for i, s in enumerate(self.p.streams) if s.device_id not in a.gpus
        ]
        tables: list[tuple[EventTable, int | None]] = [(g.events, None) for g in a.gpus.values()] + rest
        return build_graph(self.p, self.graph_steps, self.host, tables)

    @cached_once
    def graph_steps(self) -> Steps:
        """The host steps the step graph holds: the last GRAPH_STEPS (a median step over more moves
        little). Its points' `h_step` index these, not the steps' numbers."""
        steps = self.host_steps
        if len(steps) > GRAPH_STEPS:
            k = slice(len(steps) - GRAPH_STEPS, len(steps))
            steps = Steps(steps.source, steps.start_ps[k], steps.end_ps[k], steps.number[k], steps.marker)
        return steps

    @cached_once
    def what_if(self) -> WhatIf | None:
        g = self.step_graph
        return WhatIf(self.p, g, self.framework, self._logged, self.host) if g is not None else None

    def predict(self, change: str, ranged: bool = True) -> Prediction | None:
        """The step with a fix applied ("input", "syncs", "graph", "fusion", "compile", "bf16", "fp16",
        "tf32", "padding", "host", "overlap", or several joined by "+"), without the profiler; None where
        the change does not apply (`not_applied` says why) or the capture has no steps. `ranged`: the
        saving's range simulated at the ends of the profiler's cost's range too."""
        w = self.what_if
        return w.predict(change, ranged=ranged) if w is not None else None

    def not_applied(self, change: str) -> str:
        """Why `predict(change)` gives none, in the user's terms."""
        w = self.what_if
        if w is not None:
            return w.not_applied(change)
        if not settings().whatif:
            return "the what-ifs are off (TB_GPU_ADVISOR_WHATIF=0)"
        return "the capture has no steps to re-time"

    @cached_once
    def step_model(self) -> StepModel | None:
        """The step as its graph re-times it, without the profiler, and what sets it."""
        w = self.what_if
        return whatif.step_model(w) if w is not None else None

    @cached_once
    def syncs(self) -> Syncs | None:
        """The host-device syncs in the steps, by the op they ran in."""
        w, g = self.what_if, self.step_graph
        return whatif.syncs(self.p, g, w, self.graph_steps.number) if w is not None and g is not None else None

    @cached_once
    def host_cause(self) -> HostCause | None:
        """What the host's own work in the steps is made of: dispatch inside ops, or Python outside."""
        w, g = self.what_if, self.step_graph
        return whatif.host_cause(g, w) if w is not None and g is not None else None

    @cached_once
    def host_kept(self) -> HostKept | None:
        """The host's time inside the steps that is not dispatch, by what it is: the allocator's calls,
        start-up work, CUPTI's range replay (no compiler, graph or fusion removes it)."""
        g = self.step_graph
        return whatif.host_kept(self.p, self.host, g, self.graph_steps.number) if g is not None else None

    def step_share(self, ms_per_step: float) -> float | None:
        """`ms_per_step` as a share of the captured host step (%); None without host steps."""
        steps = self.host_steps
        return pct(ms_per_step, steps.mean_ps / 1e9) if len(steps) else None

    @cached
    def range_records(self) -> int:
        """Records of CUPTI's range profiler in the capture (PyTorch's `cuda_profiler_range`): a capture of
        kernels' counters, each kernel replayed inside its launch call."""
        h = self.host
        return int(((h.flags & Flag.PROFILER_RANGE) > 0).sum()) if len(h) else 0

    @property
    def steps(self) -> Steps:
        """The steps reported first (the host's, or the first active GPU's)."""
        return self._a.steps

    @property
    def shared_steps(self) -> bool:
        return self._a.shared_steps

    def steps_of(self, device_id: int | None) -> Steps:
        return self._a.steps_of(device_id)

    def breakdown_ms(self, device_id: int | None = None) -> dict[str, float]:
        """Per step, ms, each category: of one GPU in its own steps, or the mean over the active GPUs
        (the host's own without one)."""
        return self._a.breakdown_ms(device_id)

    def op_shape(self, op: int) -> str:
        return op_shape(self.p, op)

    def op_name(self, op: int) -> str:
        return self.p.op_name(op)

    def op_type(self, op: int) -> str:
        return self.p.op_type(op)

    def name(self, name_id: int) -> str:
        return self.p.names[name_id]

    # -- names, ops and streams as the tables list them ---------------------------------------------

    @property
    def name_strings(self) -> list[str]:
        """Every name of the profile, by id."""
        return self.p.names.strings

    def name_id(self, name: str) -> int:
        """The id of a name; -1 where the profile has none."""
        return self.p.names.get(name)

    @property
    def op_count(self) -> int:
        """The framework ops (op ids run from 0 to this)."""
        return len(self.p.ops)

    @cached
    def op_name_ids(self) -> np.ndarray:
        """Each op's name id, by op id."""
        return np.asarray(self.p.ops.name, np.int64)

    @property
    def op_shapes(self) -> list[str]:
        """Each op's input shapes, as its annotation reads ("" where none)."""
        return self.p.ops.shape

    def stream_id(self, index: int) -> int:
        """The stream id of the stream of index `index` (the device events' `stream` column)."""
        streams = self.p.streams
        return int(streams[index].stream_id) if 0 <= index < len(streams) else int(index)

    @cached
    def host_op_labels(self) -> HostOpLabels:
        """Each host event's op, with XSpace's runtime ops numbered past the framework ops."""
        return host.host_op_labels(self.p, self.host, self.is_pytorch)

    @cached
    def python_frames(self) -> PythonFrames:
        """The Python frames (PyTorch's `python_function` events) that enclose each host event."""
        return PythonFrames(self.host, self.p.names)

    def ops_at(self, times: np.ndarray) -> list[str]:
        """The innermost framework op running on the host at each time ("" where none)."""
        return host.ops_at(self.p, self.host, times)

    @cached
    def memory_curves(self) -> MemoryCurves:
        """The memory curves of the capture: per device (PyTorch) or allocator (XSpace), with their peaks."""
        return memory.memory_curves(self.p, self.host)

    @cached
    def op_time_ps(self) -> tuple[int, int]:
        """(device op time, host op time) over the capture (see `Analysis.op_time_ps`)."""
        return self._a.op_time_ps()

    @cached
    def lost_gpu_events(self) -> LostGpuEvents:
        """Launch calls whose GPU work is missing from the trace, and what the profiler said of it."""
        return launches.lost_gpu_events(self.p, self.host, self._a.device_tables(), self.names)

    @cached
    def memory_peaks(self) -> tuple[MemoryPeak, ...]:
        """Per GPU with a memory size and allocator records: peak bytes in use against capacity."""
        return memory.memory_peaks(self.p, self.host)

    # -- the host --------------------------------------------------------------------------------

    @property
    def host(self) -> EventTable:
        """Every host event, with `thread` and `step` (host steps) columns."""
        return self._a.host

    def thread_name(self, index: int) -> str:
        return thread_name(self.p, index)

    def label_text(self, label: int) -> str:
        return label_text(self.p, label)

    @cached
    def tf_data_threads(self) -> np.ndarray:
        """Mask over thread indices (a final False for -1): tf.data's own threads."""
        return host.tf_data_threads(self.p)

    @cached
    def main_threads(self) -> np.ndarray:
        """Mask over thread indices: the thread(s) running the Python training loop."""
        return host.main_threads(self.p, self.host)

    @cached
    def host_compute_ops(self) -> np.ndarray:
        """Mask of host events that are compute ops placed on the host. None in PyTorch, whose ops all
        run on the host to launch device work (placement.host-ops does not apply): there the GPU's idle
        time while ops run is the main thread's work, steps.host-work's."""
        if self.is_pytorch:
            return np.zeros(len(self.host), bool)
        return host.host_compute_ops(self.host, self.names, self.tf_data_threads)

    @cached
    def host_sets(self) -> HostSets:
        """What the host is doing, as interval sets: input wait, loss scaling, compilation, Python work, ..."""
        return host.host_sets(self.host, self.names, self.host_compute_ops, self.main_threads, self.tf_data_threads)

    @cached
    def host_work_events(self) -> HostWorkEvents:
        """The main thread's work events and their labels (`label_text` reads one)."""
        return host.host_work_events(self.host, self.names, self.main_threads)

    @cached
    def host_op_rows(self) -> tuple[HostOpRow, ...]:
        """Host-placed compute ops over the capture, most time first: the 8 with the most, and every
        tf.py_function."""
        return host.host_op_rows(self.p, self.host, self.names, self.host_compute_ops)

    @cached
    def longest_host_ops(self) -> tuple[Window, ...]:
        """The three longest host-placed compute ops."""
        return host.longest_host_ops(self.p, self.host, self.host_compute_ops)

    @cached
    def compilations(self) -> tuple[Window, ...]:
        """XLA compilations: nested compile events on one thread count once."""
        return host.compilations(self.p, self.host, self.names)

    def host_window(self, events: EventTable, start: int, end: int, label: str) -> Window | None:
        """The window from the first to the last of `events` (host events) starting in [start, end)."""
        return host.host_window(self.p, events, start, end, label)

    @cached
    def compile_in_steps_ps(self) -> float:
        """Compilation time inside the host's steps, per step."""
        st = self.host_steps
        return float(iv.measure_in(self.host_sets.compilation, st.start_ps, st.end_ps).sum()) / max(len(st), 1)

    @cached
    def loss_scale_ops(self) -> EventTable:
        """The loss-scaling ops on the host."""
        h = self.host
        return h.take((h.kind == Kind.FRAMEWORK_OP) & self.names.by_op(h.op, self.names.loss_scale_op))

    # -- launches --------------------------------------------------------------------------------

    @cached
    def launch_corr(self) -> np.ndarray:
        """Correlation ids of the host's launch calls (sorted)."""
        return launches.launch_corr(self.host)

    @cached
    def alloc_calls(self) -> launches.AllocCalls:
        """The host's memory allocation calls, which hold up launches on other threads while they run."""
        return launches.alloc_calls(self.p, self.host, self.names)

    @cached
    def startup_spans(self) -> iv.Intervals:
        """The host's start-up calls (context, stream and module creation, long calls, a first launch
        loading its module), over the capture: launch waits in them are start-up, not launching."""
        return launches.startup_spans(self.host, self.names)

    @cached
    def launch_calls(self) -> LaunchCalls:
        """The launch calls: how many, their median time, per step, the host's time per launch."""
        return launches.launch_calls(self.host, self.host_steps, self.names)

    # -- input pipeline --------------------------------------------------------------------------

    @cached
    def stage_self_time(self) -> dict[str, float]:
        """Self time (ps) of each tf.data stage over the capture, by stage name."""
        return inputs.stage_self_time(self.p, self.host)

    @cached
    def input_stage_names(self) -> list[str]:
        """The names of the tf.data stages in the capture."""
        return inputs.input_stage_names(self.p, self.host)

    def longest_input_wait(self, start: int, end: int) -> Window | None:
        """The longest wait for input that starts in [start, end)."""
        return inputs.longest_input_wait(self.p, self.host, start, end)

    @cached
    def host_input_wait_per_step(self) -> np.ndarray:
        """Without a GPU: the host waiting for input in each of its steps."""
        return self._a.host_breakdown_ps[:, CATEGORIES.index("host_input_wait")].astype(np.float64)

    @cached
    def input_source(self) -> str:
        """The input wait event that takes the most time, or "" when there is none."""
        return inputs.input_source(self.p, self.host)

    @property
    def gpu_private(self) -> bool:
        """Whether GPU work is launched from private threads (TF_GPU_THREAD_MODE=gpu_private)."""
        return any("gpu_private" in t.name for t in self.p.threads)

    # -- what the capture can show -----------------------------------------------------------------

    @cached
    def memory_records(self) -> MemoryRecords:
        """The allocator's `[memory]` records (PyTorch `profile_memory=True`), on any device and on the GPUs."""
        return quality.memory_records(self.p)

    @cached
    def python_stacks(self) -> PythonStacks:
        """Host events of PyTorch's Python tracer (`with_stack=True`)."""
        return quality.python_stacks(self.p, self.host)

    @cached
    def step_spread(self) -> StepSpread:
        """The host's steps' number and spread: how far a change of the mean step strays by chance."""
        return quality.step_spread(self.host_steps)
