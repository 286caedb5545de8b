"""`HostDigest`: what one analysed file says of its rank, compact and picklable, so worker processes
and Dask workers return it with the file's report (`report["rank_measures"]`, `to_dict()`) and the job
layer reads it back (`from_dict`) without the analysis. `Measures.rank_digest` computes it; the engine
names it after its file (`named`: the job, worker, cycle and machine the file's name tells).

Per rank, in its own steps and as durations only (clocks of different hosts are not comparable):
step time, own compute (device busy outside collectives, or host op time outside collectives on a
CPU-only job), time in collectives (NCCL kernels; gloo/c10d/nccl host spans on CPU), the part of it
not overlapped with compute, and input wait, each per step in milliseconds.

A new per-rank number is a field here (its `doc` is its description in schema.json, which
scripts/write_schema.py writes) and a line of `rank_digest`; the job checks read it from their rows
(`RankRow`), the report and the job's JSON carry it with no other change.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from tb_gpu_advisor.measures import arrival
from tb_gpu_advisor.measures.names import NameClasses
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.profile import PROFILE_START, EventTable, Kind, Profile
from tb_gpu_advisor.model.steps import SOURCE_HOST, Steps


def _doc(text: str, **schema: Any) -> Any:
    """A field's description in schema.json (and any other JSON Schema keyword for it)."""
    return {"doc": text, **schema}


@dataclasses.dataclass(frozen=True, slots=True)
class HostDigest:
    """One rank in one profiling cycle (one file), per step in ms; None where not measured."""

    job: str = dataclasses.field(metadata=_doc("the job: the run folder (XSpace sessions are its cycles)"))
    worker: str = dataclasses.field(metadata=_doc("the process: the trace's name without its span, or the XSpace host"))
    cycle: str = dataclasses.field(metadata=_doc("the profiling cycle: the trace's span, or the XSpace session"))
    rank: int | None
    world_size: int | None
    steps: int  # steps with work in them (0: the schedule's empty tail file)
    step_ms: float | None
    # "device": measured on the GPUs; "host": on the host's spans (CPU-only job)
    source: str = dataclasses.field(metadata={"enum": ["device", "host"]})
    compute_ms: float | None = None
    collective_ms: float | None = None
    exposed_collective_ms: float | None = None
    input_ms: float | None = None
    collective_overlap_pct: float | None = None  # HTA's comm/comp overlap
    collective_calls: float | None = dataclasses.field(
        default=None,
        metadata=_doc(
            "collective calls per step: NCCL kernels per GPU on a GPU job, the host's collective calls "
            "(gloo:/nccl: spans, else c10d:: ops; TensorFlow's collective ops) on a CPU-only one"
        ),
    )
    allreduce_calls: float | None = dataclasses.field(
        default=None,
        metadata=_doc(
            "all-reduce calls per step, named by the host's spans where it has them, else by the NCCL "
            "kernels' names (job.allreduce-count)"
        ),
    )
    allreduce_bytes: float | None = dataclasses.field(
        default=None,
        metadata=_doc(
            "bytes all-reduced per step, from the tensors the backend's all-reduce spans record "
            "(`gloo:all_reduce`, `nccl:all_reduce` with `Input Dims`); null when a call does not say "
            "(job.allreduce-count)",
            optional=True,
        ),
    )
    # per step number, the end of the step's last collective on the file's own clock (ns): in a
    # synchronous job every rank's ends together, so their differences are the hosts' clock skew
    collective_ends_ns: tuple[tuple[int, int], ...] = dataclasses.field(
        default=(),
        metadata=_doc(
            "per step number, [step, the end of the step's last collective in ns on the file's own clock]: "
            "in a synchronous job every rank's end together, so their differences measure the hosts' clock "
            "skew (job.clock-skew)",
            optional=True,
        ),
    )
    # the machine the rank ran on, as its name tells (`discovery.machine_of`): ranks on one share a clock
    machine: str = dataclasses.field(
        default="",
        metadata=_doc(
            "the machine the rank ran on, as its name tells: an XSpace host, or the <hostname> of "
            "torch.profiler's default worker name <hostname>_<pid> (else the worker): ranks on one machine "
            "share its clock (job.clock-skew)",
            optional=True,
        ),
    )

    # per step number, the step's collectives in the order they start, for pairing them across ranks
    # (measures/arrival.py): who arrives last, each rank's wait and the transfer
    collective_arrivals: tuple[arrival.Step, ...] = dataclasses.field(
        default=(),
        metadata=_doc(
            "per step number, [step, collectives in it, their kinds (a letter each), and per collective 5 "
            "numbers in ns: its duration, the gap before it (from the end of the rank's previous collective "
            "in the step, or the step's start), the rank's own work and its input wait in that gap, its end "
            "after the end of the step's first collective]: the job "
            "pairs them across ranks by step and order (the last to arrive has the shortest duration, the "
            "transfer; the rest is waiting: job.straggler, job.wait); the first steps, at most "
            f"{arrival.ARRIVALS_MAX} collectives",
            optional=True,
        ),
    )

    def named(self, job: str, worker: str, cycle: str, machine: str) -> HostDigest:
        """This digest with the names its file gives it (`discovery.worker_and_cycle`, `machine_of`)."""
        return dataclasses.replace(self, job=job, worker=worker, cycle=cycle, machine=machine)

    def to_dict(self) -> dict[str, Any]:
        """The report's `rank_measures` (its JSON keys, in this order)."""
        d = dataclasses.asdict(self)
        d["collective_ends_ns"] = [list(x) for x in self.collective_ends_ns]
        d["collective_arrivals"] = [[n, c, k, list(v)] for n, c, k, v in self.collective_arrivals]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HostDigest:
        """Back from `to_dict()`'s JSON; keys it does not know (a newer report) are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        kept = {k: v for k, v in d.items() if k in names}
        kept["collective_ends_ns"] = tuple((int(s), int(t)) for s, t in d.get("collective_ends_ns") or ())
        kept["collective_arrivals"] = tuple(
            (int(n), int(c), str(k), tuple(int(x) for x in v)) for n, c, k, v in d.get("collective_arrivals") or ()
        )
        return cls(**kept)


@dataclasses.dataclass(frozen=True, slots=True)
class RankRow(HostDigest):
    """A rank as the job checks read it: its digest in the picked cycle and the file it comes from
    (`job.JobRank` adds what the job says of it)."""

    run: str = ""
    host: str = ""
    cycles: int = 1  # the rank's profiling cycles (files)


@dataclasses.dataclass(frozen=True, slots=True)
class GpuSide:
    """What the digest reads of one active GPU: its events, its own steps and its breakdown (ms per step)."""

    events: EventTable
    steps: Steps
    breakdown_ms: dict[str, float]


def steps_with_work(steps: Steps, host: EventTable, gpu_events: list[EventTable]) -> int:
    """The steps with work in them: the tail file `torch.profiler`'s schedule leaves (one empty step of
    a few microseconds) has none, and is a partial cycle, not a rank with a fast step."""
    if not len(steps):
        return 0
    h = host
    worked = bool(((h.step >= 0) & (h.kind != Kind.STEP)).any())
    worked = worked or any(bool((ev.step >= 0).any()) for ev in gpu_events)
    return len(steps) if worked else 0


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


def _calls(
    gpus: list[GpuSide], names: NameClasses, host_calls: tuple[float, float, float | None] | None
) -> tuple[float | None, float | None]:
    """(collective calls, all-reduce calls) per step. Calls are NCCL kernels per GPU on a GPU job (what
    HTA's kernel breakdown counts), the host's spans on a CPU-only job (`host_calls`,
    collectives.host_calls). The all-reduces are named by the host's spans (NCCL's kernels may not say:
    `ncclKernel_SendRecv` runs all-reduces too), else by the kernels' names: one rule,
    `names.ALLREDUCE`, for both."""
    if not gpus:
        return host_calls[:2] if host_calls else (0.0, 0.0)
    kernels, reduces = [], []
    for g in gpus:
        k = g.events
        m = (k.kind == Kind.COLLECTIVE) & (k.step >= 0)
        kernels.append(float(m.sum()) / max(len(g.steps), 1))
        reduces.append(float((m & names.by_name(k.name, names.allreduce_name)).sum()) / max(len(g.steps), 1))
    return float(np.mean(kernels)), host_calls[1] if host_calls else float(np.mean(reduces))


def rank_digest(
    p: Profile,
    host: EventTable,
    steps: Steps,
    n: int,
    host_breakdown_ms: dict[str, float],
    gpus: list[GpuSide],
    names: NameClasses,
    host_calls: tuple[float, float, float | None] | None,
) -> HostDigest:
    """What one file says of its rank (see the module's docstring): `steps` the steps reported, `n`
    those with work (`steps_with_work`), `gpus` the active GPUs, `host_calls` the host's collective
    calls, all-reduces and bytes all-reduced per step. Its names (job, worker, cycle, machine) are left empty."""
    base = HostDigest(
        job="",
        worker="",
        cycle="",
        rank=p.rank,
        world_size=p.world_size,
        steps=n,
        step_ms=steps.mean_ps / 1e9 if n else None,
        source="device" if gpus else "host",
        allreduce_bytes=host_calls[2] if host_calls and n else None,
    )
    if not n:
        return base
    calls, reduces = _calls(gpus, names, host_calls)
    if gpus:
        compute, coll, exposed, inputs = [], [], [], []
        waits = _input_wait(host)
        for g in gpus:
            k = g.events
            m = (k.kind == Kind.COLLECTIVE) & (k.step >= 0)
            within = iv.intersect(iv.union(k.start_ps[m], k.end_ps[m]), iv.union(g.steps.start_ps, g.steps.end_ps))
            bd = g.breakdown_ms
            compute.append(bd["device_compute"])
            exposed.append(bd["device_collectives"])  # the breakdown counts compute first: the rest is exposed
            coll.append(_per_step(iv.total(within), len(g.steps)))
            inputs.append(bd["host_input_wait"] + _input_before(g, waits) / 1e9 / max(len(g.steps), 1))
        c_ms, e_ms = float(np.mean(coll)), float(np.mean(exposed))
        seqs = []
        for g in gpus:
            k = g.events
            m = k.kind == Kind.COLLECTIVE
            work = iv.union(k.start_ps[~m], k.end_ps[~m])
            seqs.append(
                arrival.sequence(
                    g.steps.number,
                    own_starts(g.steps),
                    k.step[m],
                    k.start_ps[m],
                    k.end_ps[m],
                    _kinds(p, k.name[m]),
                    work,
                    waits,
                )
            )
        ends: dict[int, int] = {}
        for g in gpus:
            k = g.events
            m = (k.kind == Kind.COLLECTIVE) & (k.step >= 0)
            for s, t in _last_ends(clock_origin_ns(p, g.steps), g.steps.number, k.step[m], k.end_ps[m]).items():
                ends[s] = max(ends.get(s, 0), t)
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
            collective_arrivals=arrival.last_arriving(seqs),
        )
    h = host
    coll_m = names.by_name(h.name, names.collective_host_name) if len(h) else np.zeros(0, bool)
    in_steps = iv.union(steps.start_ps, steps.end_ps)
    comm = iv.intersect(iv.union(h.start_ps[coll_m], h.end_ps[coll_m]), in_steps)
    op_m = (h.kind == Kind.FRAMEWORK_OP) & ~coll_m
    ops = iv.intersect(iv.union(h.start_ps[op_m], h.end_ps[op_m]), in_steps)
    c_ms, e_ms = _per_step(iv.total(comm), n), _per_step(iv.total(iv.subtract(comm, ops)), n)
    in_step = coll_m & (h.step >= 0) if len(h) else coll_m
    ends = _last_ends(clock_origin_ns(p, steps), steps.number, h.step[in_step], h.end_ps[in_step])
    call = _calls_mask(h, names)
    return dataclasses.replace(
        base,
        compute_ms=_per_step(iv.total(iv.subtract(ops, comm)), n),
        collective_ms=c_ms,
        exposed_collective_ms=e_ms,
        input_ms=host_breakdown_ms["host_input_wait"],
        collective_overlap_pct=_overlap(c_ms, e_ms),
        collective_calls=calls,
        allreduce_calls=reduces,
        collective_ends_ns=tuple(sorted(ends.items())),
        collective_arrivals=arrival.sequence(
            steps.number,
            steps.start_ps,
            h.step[call] if len(h) else np.zeros(0, np.int64),
            h.start_ps[call],
            h.end_ps[call],
            _kinds(p, h.name[call]),
            iv.subtract(ops, comm),
            _input_wait(h),
        ),
    )


def own_starts(steps: Steps) -> np.ndarray:
    """Each step's start as its rank lived it: the first step from its marker where torch-tb-profiler's
    rule starts it later (device work from before the step still running; `steps.kineto_steps`)."""
    start = steps.start_ps.copy()
    if steps.marker_start_ps is not None and len(start):
        start[0] = min(int(start[0]), int(steps.marker_start_ps[0]))
    return start


def _input_before(g: GpuSide, waits: iv.Intervals) -> float:
    """A GPU's input wait (while it is idle) between its first step's marker and that step's start (ps):
    the rank's own DataLoader fetch, which the step's window can leave out. On rank 1 of an 8-rank DLRM
    job, 64 kernels with no launch in the trace push its step's start 1.3 ms past its marker, past its
    1.1 ms fetch, and the job read it as the one rank that never waits for input."""
    lo, hi = own_starts(g.steps)[:1], g.steps.start_ps[:1]
    if not len(lo) or lo[0] >= hi[0]:
        return 0.0
    busy = iv.union(g.events.start_ps, g.events.end_ps)
    return float(iv.measure_in(iv.subtract(waits, busy), lo, hi)[0])


def _kinds(p: Profile, name_ids: np.ndarray) -> list[str]:
    """Each collective's kind (arrival.KINDS), by its name."""
    ids, inv = np.unique(name_ids, return_inverse=True)
    letters = [arrival.kind_of(p.names[int(i)]) if i >= 0 else "x" for i in ids.tolist()]
    return [letters[j] for j in inv.tolist()]


def _input_wait(host: EventTable) -> iv.Intervals:
    w = host.kind == Kind.INPUT_WAIT
    return iv.union(host.start_ps[w], host.end_ps[w])


def _calls_mask(h: EventTable, names: NameClasses) -> np.ndarray:
    """The host's collective calls, one span each (the backends' spans, else c10d's ops), as the
    arrivals pair them: a synchronous backend's span (gloo's) starts when the rank arrives and ends with
    every rank's."""
    if not len(h):
        return np.zeros(0, bool)
    for mask in (names.collective_call_name, names.c10d_call_name):
        m = names.by_name(h.name, mask)
        if m.any():
            return m
    return np.zeros(len(h), bool)
