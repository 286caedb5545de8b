"""Named measurements the checks read, each computed once per analysis.

`Measures` wraps an `Analysis`; every measurement is a cached property or method of `Measures` (the
capture, its host, across GPUs) or of `GpuMeasures` (one active GPU, in its own steps), computed by a
function of the module of its subject (timing, kernels, launches, copies, collectives, input, memory,
host) from what it needs, and returned as a frozen dataclass where it is more than an array or a
number. Checks read measurements and their own thresholds and nothing else: they import from this
package only, and never touch the profile's tables. Times are integer picoseconds (floats where
averaged); "per step" means averaged over the GPU's own steps.

How idle time is attributed (one problem is counted once): each GPU's step time is split into the
breakdown's categories (compute, collectives, copies, input wait, launch wait, idle). The idle part
is then split by what the host was doing, in this order: loss-scaling ops, XLA compilation,
host-placed compute ops, Python work on the main thread, busy tf.data threads; the rest is
unexplained. Each check's saving is its own part, so savings never overlap and never exceed a step.
"""

from __future__ import annotations

# What the checks, tables, job and compare read is re-exported (`X as X`), the profile's Device, event
# kinds and framework names and the step sources and categories included: they import nothing below
# this layer.
from tb_gpu_advisor.measures.applied import Applied as Applied
from tb_gpu_advisor.measures.arrival import (
    CAUSE_KEYS as CAUSE_KEYS,
    CAUSES as CAUSES,
    Arrivals as Arrivals,
    Paired as Paired,
    arrivals as arrivals,
)
from tb_gpu_advisor.measures.capture import CaptureMeasures as CaptureMeasures
from tb_gpu_advisor.measures.collectives import AllReduce as AllReduce, Serialization as Serialization
from tb_gpu_advisor.measures.copies import Copies as Copies, CopyDirection as CopyDirection, CopyRow as CopyRow
from tb_gpu_advisor.measures.core import Measures as Measures
from tb_gpu_advisor.measures.gpu import GpuMeasures as GpuMeasures
from tb_gpu_advisor.measures.host import (
    Eager as Eager,
    EagerRow as EagerRow,
    HostOpRow as HostOpRow,
    HostSets as HostSets,
    HostWork as HostWork,
    HostWorkRow as HostWorkRow,
)
from tb_gpu_advisor.measures.kernel_names import short_name as short_kernel_name  # noqa: F401  re-exported
from tb_gpu_advisor.measures.kernels import (
    ElementwiseChains as ElementwiseChains,
    KernelRow as KernelRow,
    MatmulMasks as MatmulMasks,
    OddDimRow as OddDimRow,
    OddDims as OddDims,
    SmallKernelRow as SmallKernelRow,
    SmallKernels as SmallKernels,
)
from tb_gpu_advisor.measures.launches import LaunchCalls as LaunchCalls, LostGpuEvents as LostGpuEvents
from tb_gpu_advisor.measures.memory import (
    MemoryCurve as MemoryCurve,
    MemoryCurves as MemoryCurves,
    MemoryPeak as MemoryPeak,
)
from tb_gpu_advisor.measures.names import (
    MULTI_WORKER_LOADER as MULTI_WORKER_LOADER,
    TENSOR_CORE_ELIGIBLE as TENSOR_CORE_ELIGIBLE,
    tf_data_present as tf_data_present,
)
from tb_gpu_advisor.measures.quality import (
    CutSteps as CutSteps,
    MemoryRecords as MemoryRecords,
    PythonStacks as PythonStacks,
    StepSpread as StepSpread,
)
from tb_gpu_advisor.measures.rank import HostDigest as HostDigest, RankRow as RankRow
from tb_gpu_advisor.measures.timing import (
    GAP_CAUSES as GAP_CAUSES,
    IDLE_CAUSES as IDLE_CAUSES,
    GapCauses as GapCauses,
    IdleCauses as IdleCauses,
)
from tb_gpu_advisor.measures.whatif import (
    HostCause as HostCause,
    HostKept as HostKept,
    KeptCalls as KeptCalls,
    KeptRow as KeptRow,
    Prediction as Prediction,
    StepModel as StepModel,
    SyncRow as SyncRow,
    Syncs as Syncs,
)
from tb_gpu_advisor.measures.window import Window as Window
from tb_gpu_advisor.model.arrays import distinct as distinct, isin as isin, median as median
from tb_gpu_advisor.model.classify import MATRIX_CORE_NAMES as MATRIX_CORE_NAMES
from tb_gpu_advisor.model.profile import (
    JAX as JAX,
    PYTORCH as PYTORCH,
    TENSORFLOW as TENSORFLOW,
    UNKNOWN as UNKNOWN,
    Device as Device,
    EventTable as EventTable,
    Flag as Flag,
    Kind as Kind,
)
from tb_gpu_advisor.model.steps import (
    CATEGORIES as CATEGORIES,
    SOURCE_DEVICE as SOURCE_DEVICE,
    SOURCE_FUNCTIONS as SOURCE_FUNCTIONS,
    SOURCE_GROUPS as SOURCE_GROUPS,
    SOURCE_HOST as SOURCE_HOST,
    TAIL_SHARE as TAIL_SHARE,
)
