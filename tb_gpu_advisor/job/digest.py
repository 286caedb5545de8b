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

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.discovery import PYTORCH_TRACE, HostFile
from tb_gpu_advisor.profile import Kind

# Host spans of collective communication: gloo's and NCCL's own annotations, c10d's ops, and
# record_param_comms (what PyTorch wraps every collective in); TensorFlow's collective ops as the
# host runs them (`name:Type`: MultiWorkerMirroredStrategy's `sgd/CollectiveReduceV2:CollectiveReduceV2`).
COLLECTIVE_HOST = re.compile(
    r"^(gloo:|nccl:|c10d::|record_param_comms$)"
    r"|:(Collective(Reduce|Gather|Bcast\w*|AllToAll|ReduceScatter|Assign\w*)(V\d)?|NcclAllReduce)$"
)
_SPAN = re.compile(r"^(?P<worker>.+)\.(?P<span>\d+)$")


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
    # per step number, the end of the step's last collective on the file's own clock (ns): in a
    # synchronous job every rank's ends together, so their differences are the hosts' clock skew
    collective_ends_ns: tuple[tuple[int, int], ...] = ()

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


def _last_ends(origin_ns: int, numbers: np.ndarray, index: np.ndarray, end_ps: np.ndarray) -> dict[int, int]:
    """Per step number, the latest end (ns on the file's clock) of the events in step `index`; none
    when the file has no clock to compare (origin 0: XSpace times measured from each profile's own
    start, which hosts and even processes on one host do not share)."""
    out: dict[int, int] = {}
    if origin_ns == 0:
        return out
    for k, e in zip(index.tolist(), end_ps.tolist()):
        n = int(numbers[k])
        out[n] = max(out.get(n, 0), origin_ns + int(e) // 1000)
    return out


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
        rank=p.rank,
        world_size=p.world_size,
        steps=n,
        step_ms=steps.mean_ps / 1e9 if n else None,
        source="device" if a.gpus else "host",
    )
    if not n:
        return base
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
            for n, t in _last_ends(p.origin_ns, g.steps.number, k.step[m], k.end_ps[m]).items():
                ends[n] = max(ends.get(n, 0), t)
        return dataclasses.replace(
            base,
            compute_ms=float(np.mean(compute)),
            collective_ms=c_ms,
            exposed_collective_ms=e_ms,
            input_ms=float(np.mean(inputs)),
            collective_overlap_pct=_overlap(c_ms, e_ms),
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
    ends = _last_ends(p.origin_ns, steps.number, h.step[in_step], h.end_ps[in_step])
    return dataclasses.replace(
        base,
        compute_ms=_per_step(iv.total(iv.subtract(ops, comm)), n),
        collective_ms=c_ms,
        exposed_collective_ms=e_ms,
        input_ms=a.breakdown_ms()["host_input_wait"],
        collective_overlap_pct=_overlap(c_ms, e_ms),
        collective_ends_ns=tuple(sorted(ends.items())),
    )
