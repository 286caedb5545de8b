"""The measurements of one active GPU, in its own steps."""

from __future__ import annotations

import weakref

import numpy as np

from tb_gpu_advisor.common.parallel import cached
from tb_gpu_advisor.graph.facts import LAYOUT, by_name
from tb_gpu_advisor.measures import collectives, copies, host, input as inputs, kernels, launches, timing
from tb_gpu_advisor.measures.capture import CaptureMeasures
from tb_gpu_advisor.measures.collectives import Ranked
from tb_gpu_advisor.measures.copies import Copies
from tb_gpu_advisor.measures.host import HostWork
from tb_gpu_advisor.measures.kernels import ElementwiseChains, KernelRow, MatmulMasks, SmallKernels
from tb_gpu_advisor.measures.timing import GapCauses, IdleCauses
from tb_gpu_advisor.measures.window import Window, gpu_window
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.analysis import GpuAnalysis, blocks_per_sm
from tb_gpu_advisor.model.arrays import unique_inverse
from tb_gpu_advisor.model.profile import Device, EventTable, Flag, Kind
from tb_gpu_advisor.model.steps import CATEGORIES, Steps


class GpuMeasures:
    """Measurements of one active GPU, in its own steps."""

    def __init__(self, m: CaptureMeasures, g: GpuAnalysis) -> None:
        # a proxy, not a reference: Measures holds its GpuMeasures, and a cycle would keep a whole
        # analysis in memory until the garbage collector's next full pass
        self.m: CaptureMeasures = weakref.proxy(m)
        self._g = g
        self.id: int = g.id
        self.device: Device = g.device
        self.steps: Steps = g.steps

    # -- events, steps and the breakdown ---------------------------------------------------------

    @property
    def events(self) -> EventTable:
        """Every event of the GPU, streams merged and sorted, with a `step` column (-1 outside the steps)."""
        return self._g.events

    @property
    def n(self) -> int:
        """Number of steps (at least 1 for per-step averages)."""
        return max(len(self.steps), 1)

    @property
    def step_ps(self) -> float:
        """Mean step time."""
        return self.steps.mean_ps

    def blocks_per_sm(self, sel: np.ndarray) -> np.ndarray:
        """Blocks per SM of the events `sel` picks (a mask or indices): the trace's own, else the grid's
        blocks over the GPU's SMs; NaN where neither is known (the SM efficiency's input)."""
        return blocks_per_sm(self.events, sel, self.device.sm_count)

    @cached
    def breakdown_ps(self) -> np.ndarray:
        """(steps, categories) as in `steps.breakdown`."""
        return self._g.breakdown_ps

    def category_per_step(self, category: str) -> np.ndarray:
        return self.breakdown_ps[:, CATEGORIES.index(category)].astype(np.float64)

    def category_mean(self, category: str) -> float:
        return float(self.category_per_step(category).sum()) / self.n

    def exclusive(self, category: str) -> iv.Intervals:
        """The time of one of the breakdown's categories, the categories before it removed."""
        return self._g.exclusive[category]

    @cached
    def busy_ps(self) -> int:
        return self._g.busy_ps

    @property
    def busy(self) -> iv.Intervals:
        """When anything runs on any of the GPU's streams."""
        return self._g.activity.busy

    @property
    def compute_set(self) -> iv.Intervals:
        """When kernels or memsets run (collectives excluded)."""
        return self._g.activity.by_category["device_compute"]

    @property
    def collective_set(self) -> iv.Intervals:
        """When collectives run."""
        return self._g.activity.by_category["device_collectives"]

    @cached
    def step_windows(self) -> iv.Intervals:
        return iv.union(self.steps.start_ps, self.steps.end_ps)

    @property
    def compute_busy(self) -> tuple[iv.Intervals, ...]:
        """When compute or collectives run: the two sets, whose union would be one more copy of the
        GPU's busy time kept for the copies to be taken from (`iv.subtract_each`)."""
        return (self.compute_set, self.collective_set)

    @cached
    def compute_per_step(self) -> np.ndarray:
        """Kernel and memset busy time (collectives excluded) in each step."""
        return iv.measure_in(self.compute_set, self.steps.start_ps, self.steps.end_ps).astype(float)

    @cached
    def compute_ps(self) -> float:
        """Kernel and memset time of the events that start in the steps."""
        ev = self.events
        return float(ev.dur_ps[((ev.kind == Kind.KERNEL) | (ev.kind == Kind.MEMSET)) & (ev.step >= 0)].sum())

    # -- time and steps (timing.py) --------------------------------------------------------------

    @cached
    def work_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per step, the first start and last end of the GPU's work starting in it; -1 where none."""
        return timing.work_bounds(self.events, len(self.steps))

    @cached
    def device_span_per_step(self) -> np.ndarray:
        """Last end minus first start of each step's device work (what the profile plugin calls a GPU
        step); 0 for steps without device work."""
        first, last = self.work_bounds
        return np.where(first >= 0, last - first, 0).astype(float)

    @cached
    def gaps(self) -> list[tuple[int, int, int]]:
        """(index of the earlier step, start, end) of the idle windows between steps' device work."""
        return timing.gaps(*self.work_bounds)

    @cached
    def gap_ps(self) -> np.ndarray:
        """The length of each of `gaps`, int64 ps."""
        _, start, end = timing.gap_arrays(*self.work_bounds)
        return end - start

    @cached
    def idle(self) -> iv.Intervals:
        """The breakdown's idle/other time: in a step, nothing on the GPU, no input wait, no launch."""
        return timing.idle(self.steps, self._g.exclusive)

    @cached
    def idle_causes(self) -> IdleCauses:
        """The idle time split by what the host was doing (IDLE_CAUSES, in that order)."""
        return timing.idle_causes(self.idle, self.m.host_sets)

    def idle_cause_per_step(self, cause: str) -> np.ndarray:
        """One idle cause's time in each step."""
        return iv.measure_in(self.idle_causes.of(cause), self.steps.start_ps, self.steps.end_ps).astype(float)

    def idle_cause_mean(self, cause: str) -> float:
        return float(self.idle_cause_per_step(cause).sum()) / self.n

    def exposed_per_step(self, host_set: iv.Intervals) -> np.ndarray:
        """Per step, the part of a host activity during which this GPU runs nothing."""
        return timing.exposed_per_step(host_set, self.busy, self.steps)

    @cached
    def gap_causes(self) -> GapCauses:
        """Each gap's time split by cause (GAP_CAUSES), in the order of `gaps`."""
        return timing.gap_causes(self.gaps, self._g.exclusive, self.idle_causes)

    @cached
    def first_work_delay(self) -> tuple[np.ndarray, np.ndarray]:
        """(step start, first device work) of each step with device work."""
        first, _ = self.work_bounds
        has = first >= 0
        return self.steps.start_ps[has], first[has]

    # -- host work (host.py) ---------------------------------------------------------------------

    @cached
    def host_work(self) -> HostWork:
        """Python work on the main thread while this GPU runs nothing: per step, its events, its worst steps."""
        work = self.m.host_sets.host_work
        exposed = self.exposed_per_step(work)
        return host.host_work(
            self.m.p, work, exposed, self.busy, self.step_windows, self.steps, self.m.host_work_events
        )

    @cached
    def tf_data_before_first_launch(self) -> np.ndarray:
        """Per step with device work: time from the step's start to its first device work with
        tf.data's threads busy (the guide's measure; input waits excluded)."""
        lo, hi = self.first_work_delay
        return iv.measure_in(self.m.host_sets.tf_data, lo, hi).astype(float)

    @cached
    def tf_data_before_first_work(self) -> np.ndarray:
        """Per step with device work: time from the step's start to its first device work during which
        the GPU idles while tf.data threads are busy (and nothing before them in `IDLE_CAUSES` claims it)."""
        lo, hi = self.first_work_delay
        return iv.measure_in(self.idle_causes.tf_data, lo, hi).astype(float)

    # -- input (input.py) ------------------------------------------------------------------------

    @cached
    def input_copies(self) -> np.ndarray:
        """Mask over `events` of the host-to-device copies of the model's input."""
        return inputs.input_copies(self.events, self.m.names)

    @cached
    def input_wait_per_step(self) -> np.ndarray:
        """The host waiting for input while the GPU has nothing else to do, per step."""
        return self.category_per_step("host_input_wait")

    @cached
    def input_copy_per_step(self) -> np.ndarray:
        """Input copies the step waits on (not under compute), per step."""
        return inputs.input_copy_per_step(self.events, self.input_copies, self.compute_busy, self.steps)

    @property
    def input_per_step(self) -> np.ndarray:
        """input.bound's measure: the input wait and the input copies waited on, per step."""
        return self.input_wait_per_step + self.input_copy_per_step

    # -- launches (launches.py) ------------------------------------------------------------------

    @cached
    def launches_paired(self) -> int:
        """Device events paired with a host launch call by correlation id."""
        return launches.launches_paired(self.events, self.m.launch_corr)

    @cached
    def launch_waits(self) -> iv.Intervals:
        """The breakdown's launch wait: the GPU idle while a launch call is in flight."""
        return self._g.exclusive["kernel_launch_wait"]

    @cached
    def launch_wait_in_alloc_ps(self) -> float:
        """Of the launch wait, per step, the part while the host allocates memory (m.alloc_calls)."""
        alloc = self.m.alloc_calls
        return iv.total(iv.intersect(self.launch_waits, alloc.spans)) / self.n if alloc.count else 0.0

    @cached
    def launch_wait_in_startup(self) -> np.ndarray:
        """Of the launch wait, per step, the part while the host does start-up work (m.startup_spans):
        a kernel's first launch loading its module, the context created."""
        held = iv.intersect(self.launch_waits, self.m.startup_spans)
        st = self.steps
        return iv.measure_in(held, st.start_ps, st.end_ps).astype(np.float64)

    @cached
    def launch_waits_past_startup(self) -> iv.Intervals:
        """The launch wait outside the host's start-up work (launch_wait_in_startup)."""
        return iv.subtract(self.launch_waits, self.m.startup_spans)

    # -- copies (copies.py) ----------------------------------------------------------------------

    @cached
    def copies(self) -> Copies:
        """Copies beyond the model's input: per direction, blocking time, mid-step D2H copies, rows, windows."""
        last = self.work_bounds[1]
        return copies.copies(self.m.p, self.id, self.events, self.input_copies, self.compute_busy, self.steps, last)

    # -- kernels (kernels.py) --------------------------------------------------------------------

    @cached
    def kernels(self) -> EventTable:
        """The kernels that start in the steps (collectives excluded)."""
        return kernels.kernels(self.events)

    @cached
    def has_16bit(self) -> bool:
        return bool(((self.kernels.flags & Flag.FP16) != 0).any())

    def small_kernels(self, max_ps: float) -> SmallKernels:
        """Kernel groups (by op type) whose mean kernel is at most `max_ps`."""
        return kernels.small_kernels(self.m.p, self.id, self.kernels, self.steps, max_ps, self.m.names.untyped_op)

    @cached
    def matmul(self) -> MatmulMasks:
        """Masks over `kernels`: Tensor-Core-eligible, 16-bit, on Tensor Cores."""
        return kernels.matmul_masks(self.kernels, self.m.names)

    def matmul_mask(self, fp16: bool | None = None, tc: bool | None = None) -> np.ndarray:
        """Eligible kernels, optionally only 16-bit or narrower (FP8) or not, and only on Tensor Cores or
        only those whose naming says they run without them (a kernel nothing identifies is neither)."""
        mm = self.matmul
        sel = mm.eligible.copy()
        if fp16 is not None:
            sel &= (mm.fp16 | mm.fp8) == fp16
        if tc is not None:
            sel &= mm.tc if tc else ~mm.tc & ~mm.unknown
        return sel

    @cached
    def matmul_time(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """Time of matmul/convolution kernels by [16-bit or narrower][without Tensor Cores, on them,
        unknown], summed once (the checks ask for many combinations)."""
        return kernels.matmul_time(self.kernels, self.matmul)

    def matmul_ps(self, fp16: bool | None = None, tc: bool | None = None) -> float:
        """Time of matmul/convolution kernels, optionally only 16-bit or narrower (or not), and only on
        Tensor Cores (True) or only those identified as running without them (False); None: all,
        unknown ones included."""
        time = self.matmul_time
        fs = (0, 1) if fp16 is None else (int(fp16),)
        ts = (0, 1, 2) if tc is None else (int(tc),)
        return float(sum(time[f][t] for f in fs for t in ts))

    def matmul_unknown_ps(self) -> float:
        """Time of matmul/convolution kernels that the kernel naming table does not identify."""
        return float(self.matmul_time[0][2] + self.matmul_time[1][2])

    def matmul_fp8_ps(self) -> float:
        """Time of matmul/convolution kernels in FP8 (or narrower)."""
        mm = self.matmul
        return float(self.kernels.dur_ps[mm.eligible & mm.fp8].sum())

    def kernel_rows(self, mask: np.ndarray, limit: int = 8) -> tuple[KernelRow, ...]:
        """Top kernels of `mask` by time: kernel, op, precision, ms per step, count."""
        return kernels.kernel_rows(self.m.p, self.kernels, mask, self.n, limit)

    def longest_kernel(self, mask: np.ndarray, label: str) -> Window | None:
        """The longest kernel of `mask`, as a window."""
        return kernels.longest_kernel(self.m.p, self.id, self.kernels, mask, label)

    def matmul_ops(self, fp16: bool = True) -> dict[int, tuple[float, bool]]:
        """Per op of the matmul/convolution kernels (16-bit or not): (time, whether all its kernels use
        Tensor Cores)."""
        return kernels.matmul_ops(self.kernels, self.matmul_mask(fp16), self.matmul.tc)

    @cached
    def softmax16(self) -> dict[int, float]:
        """16-bit softmax kernels outside the loss: time per op."""
        return kernels.softmax16(self.kernels, self.m.names)

    @cached
    def layout_changes(self) -> np.ndarray:
        """Mask over `kernels`: cuDNN's NCHW <-> NHWC layout changes around convolutions (what
        channels_last removes: graph/fixes/channels_last.py)."""
        k = self.kernels
        return by_name(k.name, self.m.name_strings, LAYOUT.search)

    def elementwise_chains(self, max_ps: float, min_chain: int) -> ElementwiseChains:
        """Runs of at least `min_chain` consecutive small element-wise kernels on one stream."""
        return kernels.elementwise_chains(self.m.p, self.id, self.kernels, self.m.names, max_ps, min_chain)

    # -- collectives (collectives.py) ------------------------------------------------------------

    @cached
    def allreduces(self) -> EventTable:
        """The GPU's all-reduce calls."""
        return collectives.allreduces(self.events, self.m.names.allreduce_name)

    @cached
    def allreduce_ranked(self) -> Ranked:
        """(step, rank within the step, duration) of each all-reduce in the steps."""
        return collectives.allreduce_ranked(self.allreduces)

    # -- where findings point --------------------------------------------------------------------

    def window(
        self, start: int, end: int, label: str, events: list[str] | None = None, stream: int | None = None
    ) -> Window:
        """A window on this GPU (on the stream of index `stream`, or all of them)."""
        return gpu_window(self.m.p, self.id, start, end, label, events, stream)

    def busiest_stream(self, start: int, end: int) -> int | None:
        """The stream index with the most device time in [start, end)."""
        ev = self.events
        sel = (ev.end_ps > start) & (ev.start_ps < end)
        if not sel.any():
            return None
        d = np.minimum(ev.end_ps[sel], end) - np.maximum(ev.start_ps[sel], start)
        u, inv = unique_inverse(ev.stream[sel])
        return int(u[np.argmax(np.bincount(inv, weights=d.astype(float)))])

    def names_in(self, start: int, end: int, limit: int = 5) -> list[str]:
        """The names of the events most often in [start, end) on this GPU."""
        ev = self.events
        sel = (ev.end_ps > start) & (ev.start_ps < end)
        u, counts = np.unique(ev.name[sel], return_counts=True)
        return [self.m.p.names[int(i)] for i in u[np.argsort(-counts, kind="stable")][:limit].tolist()]
