"""`HostDigest`: what one analysed file says of its rank, compact and picklable, so worker processes
and Dask workers return it with the file's report (`report["rank_measures"]`, `to_dict()`) and the job
layer reads it back (`from_dict`) without the analysis.

Per rank, in its own steps and as durations only (clocks of different hosts are not comparable):
step time, own compute (device busy outside collectives, or host op time outside collectives on a
CPU-only job), time in collectives (NCCL kernels; gloo/c10d/nccl host spans on CPU), the part of it
not overlapped with compute, and input wait, each per step in milliseconds.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from tb_gpu_advisor.formats.discovery import PYTORCH_TRACE, HostFile
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.analysis import Analysis
from tb_gpu_advisor.model.profile import PROFILE_START, Kind, Profile
from tb_gpu_advisor.model.steps import SOURCE_HOST, Steps

# Host spans of collective communication: gloo's and NCCL's own annotations, c10d's ops, and
# record_param_comms (what PyTorch wraps every collective in); TensorFlow's collective ops as the
# host runs them (`name:Type`: MultiWorkerMirroredStrategy's `sgd/CollectiveReduceV2:CollectiveReduceV2`).
COLLECTIVE_HOST = re.compile(
    r"^(gloo:|nccl:|c10d::|record_param_comms$)"
    r"|:(Collective(Reduce|Gather|Bcast\w*|AllToAll|ReduceScatter|Assign\w*)(V\d)?|NcclAllReduce)$"
)
# One span per collective call: the backend's annotation (`gloo:all_reduce`, `nccl:all_to_all`), which
# c10d's op (`c10d::allreduce_`, on the calling thread) and record_param_comms wrap; TensorFlow's ops.
CALL_HOST = re.compile(
    r"^(gloo|nccl):|:(Collective(Reduce|Gather|Bcast\w*|AllToAll|ReduceScatter)(V\d)?|NcclAllReduce)$"
)
CALL_C10D = re.compile(r"^c10d::")  # the calls, in a file without the backends' annotations
ALLREDUCE = re.compile(r"all_?reduce|CollectiveReduce(?!Scatter)", re.I)
_SPAN = re.compile(r"^(?P<worker>.+)\.(?P<span>\d+)$")
_HOST_PID = re.compile(r"^(?P<machine>.+)_\d+$")  # torch.profiler's default worker name: <hostname>_<pid>


@dataclasses.dataclass(frozen=True)
class HostDigest:
    """One rank in one profiling cycle (one file), per step in ms; None where not measured."""

    job: str
    worker: str
    cycle: str
    rank: int | None
    world_size: int | None
    steps: int  # steps with work in them (0: the schedule's empty tail file)
    step_ms: float | None
    source: str  # "device": measured on the GPUs; "host": on the host's spans (CPU-only job)
    compute_ms: float | None = None
    collective_ms: float | None = None
    exposed_collective_ms: float | None = None
    input_ms: float | None = None
    collective_overlap_pct: float | None = None  # HTA's comm/comp overlap
    collective_calls: float | None = None  # per step: NCCL kernels per GPU, or the host's collective calls
    allreduce_calls: float | None = None  # per step: the all-reduces among the calls (see `_calls`)
    # per step number, the end of the step's last collective on the file's own clock (ns): in a
    # synchronous job every rank's ends together, so their differences are the hosts' clock skew
    collective_ends_ns: tuple[tuple[int, int], ...] = ()
    machine: str = ""  # the machine the rank ran on, as its name tells (`machine_of`): ranks on one share a clock

    def to_dict(self) -> dict[str, Any]:
        """The report's `rank_measures` (its JSON keys, in this order)."""
        d = dataclasses.asdict(self)
        d["collective_ends_ns"] = [list(x) for x in self.collective_ends_ns]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HostDigest:
        """Back from `to_dict()`'s JSON; keys it does not know (a newer report) are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        kept = {k: v for k, v in d.items() if k in names}
        kept["collective_ends_ns"] = tuple((int(s), int(t)) for s, t in d.get("collective_ends_ns") or ())
        return cls(**kept)


def worker_and_cycle(f: HostFile) -> tuple[str, str, str]:
    """(job, worker, cycle) of a file: a PyTorch trace `vm_24996.1795480...` is worker `vm_24996`,
    cycle `1795480...` of run `f.run`; an XSpace host is its own worker, and the session folder of
    `<run>/<session>` is the cycle of job `<run>`."""
    if f.kind == PYTORCH_TRACE:
        m = _SPAN.match(f.host)
        return f.run, (m.group("worker") if m else f.host), (m.group("span") if m else "")
    job, sep, session = f.run.rpartition("/")
    return (job if sep else f.run), f.host, session


def machine_of(f: HostFile, worker: str) -> str:
    """The machine a file's rank ran on: an XSpace host is one; a PyTorch worker named as
    `tensorboard_trace_handler` names it by default, `<hostname>_<pid>`, ran on `<hostname>`; any
    other worker name is taken for a machine of its own."""
    if f.kind == PYTORCH_TRACE:
        m = _HOST_PID.match(worker)
        return m.group("machine") if m else worker
    return worker


def _steps_with_work(a: Analysis) -> int:
    """The steps with work in them: the tail file `torch.profiler`'s schedule leaves (one empty step of
    a few microseconds) has none, and is a partial cycle, not a rank with a fast step."""
    if not len(a.steps):
        return 0
    h = a.host
    worked = bool(((h.step >= 0) & (h.kind != Kind.STEP)).any())
    worked = worked or any(bool((g.events.step >= 0).any()) for g in a.gpus.values())
    return len(a.steps) if worked else 0


def _per_step(total_ps: float, n: int) -> float:
    return float(total_ps) / max(n, 1) / 1e9


def _overlap(collective_ms: float | None, exposed_ms: float | None) -> float | None:
    """HTA's comm/comp overlap: the share of collective time during which compute also runs."""
    if not collective_ms or exposed_ms is None:
        return None
    return 100.0 * (collective_ms - exposed_ms) / collective_ms


def clock_origin_ns(p: Profile, steps: Steps) -> int:
    """The time zero of the file on its host's clock (epoch ns), where ranks can compare their steps' ends;
    0 where not. A Kineto trace's origin. An XSpace file's times run from its own profile's start (each
    process starts its profiler at its own moment): that start is the file's `profile_start_time`, and
    the steps must carry the user's step numbers (markers' `step_num`), not indices from each capture's
    start, so that one number is one step on every host."""
    if p.origin_ns:
        return p.origin_ns
    if p.time_base == PROFILE_START and p.start_ns and steps.source == SOURCE_HOST:
        return p.start_ns
    return 0


def _last_ends(origin_ns: int, numbers: np.ndarray, index: np.ndarray, end_ps: np.ndarray) -> dict[int, int]:
    """Per step number, the latest end (ns on the host's clock) of the events in step `index`; none
    when the file has no clock to compare (origin 0, see `clock_origin_ns`)."""
    out: dict[int, int] = {}
    if origin_ns == 0:
        return out
    for k, e in zip(index.tolist(), end_ps.tolist()):
        n = int(numbers[k])
        out[n] = max(out.get(n, 0), origin_ns + int(e) // 1000)
    return out


def _host_calls(a: Analysis, n: int) -> tuple[float, float] | None:
    """(collective calls, all-reduce calls) per step on the host: one span per call (`CALL_HOST`, else
    c10d's ops), in the steps; None when the host has no such span."""
    h = a.host
    for pattern in (CALL_HOST, CALL_C10D):
        m = _named(a, pattern)[h.name] & (h.step >= 0) if len(h) else np.zeros(0, bool)
        if m.any():
            return float(m.sum()) / n, float((m & _named(a, ALLREDUCE)[h.name]).sum()) / n
    return None


def _named(a: Analysis, pattern: re.Pattern[str]) -> np.ndarray:
    """A mask over the profile's name ids (and a last entry, False, for -1) of names `pattern` finds."""
    return np.array([bool(pattern.search(s)) for s in a.profile.names.strings] + [False], bool)


def _calls(a: Analysis, n: int) -> tuple[float | None, float | None]:
    """(collective calls, all-reduce calls) per step. Calls are NCCL kernels per GPU on a GPU job (what
    HTA's kernel breakdown counts), the host's spans on a CPU-only job. The all-reduces are named by the
    host's spans (NCCL's kernels may not say: `ncclKernel_SendRecv` runs all-reduces too), else by the
    kernels' names."""
    host = _host_calls(a, n)
    if not a.gpus:
        return host or (0.0, 0.0)
    kernels, reduces = [], []
    named = _named(a, ALLREDUCE)
    for g in a.gpus.values():
        k = g.events
        m = (k.kind == Kind.COLLECTIVE) & (k.step >= 0)
        kernels.append(float(m.sum()) / max(len(g.steps), 1))
        reduces.append(float((m & named[k.name]).sum()) / max(len(g.steps), 1))
    return float(np.mean(kernels)), host[1] if host else float(np.mean(reduces))


def rank_measures(a: Analysis, f: HostFile) -> HostDigest:
    """What one file says of its rank (see the module's docstring)."""
    p = a.profile
    job, worker, cycle = worker_and_cycle(f)
    steps = a.steps
    n = _steps_with_work(a)
    base = HostDigest(
        job=job,
        worker=worker,
        cycle=cycle,
        machine=machine_of(f, worker),
        rank=p.rank,
        world_size=p.world_size,
        steps=n,
        step_ms=steps.mean_ps / 1e9 if n else None,
        source="device" if a.gpus else "host",
    )
    if not n:
        return base
    calls, reduces = _calls(a, n)
    if a.gpus:
        compute, coll, exposed, inputs = [], [], [], []
        for g in a.gpus.values():
            k = g.events
            m = (k.kind == Kind.COLLECTIVE) & (k.step >= 0)
            within = iv.intersect(iv.union(k.start_ps[m], k.end_ps[m]), iv.union(g.steps.start_ps, g.steps.end_ps))
            bd = a.breakdown_ms(g.id)
            compute.append(bd["device_compute"])
            exposed.append(bd["device_collectives"])  # the breakdown counts compute first: the rest is exposed
            coll.append(_per_step(iv.total(within), len(g.steps)))
            inputs.append(bd["host_input_wait"])
        c_ms, e_ms = float(np.mean(coll)), float(np.mean(exposed))
        ends: dict[int, int] = {}
        for g in a.gpus.values():
            k = g.events
            m = (k.kind == Kind.COLLECTIVE) & (k.step >= 0)
            for n, t in _last_ends(clock_origin_ns(p, g.steps), g.steps.number, k.step[m], k.end_ps[m]).items():
                ends[n] = max(ends.get(n, 0), t)
        return dataclasses.replace(
            base,
            compute_ms=float(np.mean(compute)),
            collective_ms=c_ms,
            exposed_collective_ms=e_ms,
            input_ms=float(np.mean(inputs)),
            collective_overlap_pct=_overlap(c_ms, e_ms),
            collective_calls=calls,
            allreduce_calls=reduces,
            collective_ends_ns=tuple(sorted(ends.items())),
        )
    h = a.host
    names = p.names
    is_coll = np.array([bool(COLLECTIVE_HOST.search(s)) for s in names.strings] + [False], bool)
    coll_m = is_coll[h.name] if len(h) else np.zeros(0, bool)
    in_steps = iv.union(steps.start_ps, steps.end_ps)
    comm = iv.intersect(iv.union(h.start_ps[coll_m], h.end_ps[coll_m]), in_steps)
    op_m = (h.kind == Kind.FRAMEWORK_OP) & ~coll_m
    ops = iv.intersect(iv.union(h.start_ps[op_m], h.end_ps[op_m]), in_steps)
    c_ms, e_ms = _per_step(iv.total(comm), n), _per_step(iv.total(iv.subtract(comm, ops)), n)
    in_step = coll_m & (h.step >= 0) if len(h) else coll_m
    ends = _last_ends(clock_origin_ns(p, steps), steps.number, h.step[in_step], h.end_ps[in_step])
    return dataclasses.replace(
        base,
        compute_ms=_per_step(iv.total(iv.subtract(ops, comm)), n),
        collective_ms=c_ms,
        exposed_collective_ms=e_ms,
        input_ms=a.breakdown_ms()["host_input_wait"],
        collective_overlap_pct=_overlap(c_ms, e_ms),
        collective_calls=calls,
        allreduce_calls=reduces,
        collective_ends_ns=tuple(sorted(ends.items())),
    )
