"""6. The job across ranks (guide 2, when the GPUs live in different files): a straggler, compute
imbalance, exposed communication, a partial capture. They read the ranks of the picked profiling cycle
(`tb_gpu_advisor/job.py` builds them; each rank's measures per step in ms, durations only: clocks of
different hosts are not comparable) and run once per job, not per file."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks.base import JOB, JobContext, RankRow, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, PASS, PROBLEMS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import pct
from tb_gpu_advisor.measures import median

PYTORCH_DDP = "https://pytorch.org/docs/stable/notes/ddp.html"


def rank_label(row: RankRow) -> str:
    """`rank 3 (vm_2258)`, or the worker alone when the file names no rank."""
    return f"rank {row.rank} ({row.worker})" if row.rank is not None else str(row.worker)


def _ms(v: float | None) -> str:
    return f"{v:.2f} ms" if v is not None else "?"


def robust_z(values: np.ndarray) -> np.ndarray:
    """(x - median) / (1.4826 * MAD): a z-score that one outlier does not drag (0 where all agree)."""
    med = median(values)
    mad = median(np.abs(values - med)) * 1.4826
    if mad <= 0:
        mad = float(np.mean(np.abs(values - med))) * 1.2533 or 1.0  # more than half the ranks equal
    return (values - med) / mad


@check(
    id="job.partial",
    title="Every rank captured",
    problem="Partial job capture: {ranks_captured} of {world_size} ranks",
    section="job",
    order=400,
    anchor="#2._optimize_the_performance_on_the_multi-gpu_single_host",
    measures="""The ranks with a file in the picked profiling cycle against the job's world size (PyTorch's
`distributedInfo.world_size`), and the ranks whose file in that cycle holds no complete step (the tail
file torch.profiler's schedule leaves). The other job checks compare the ranks that are there.""",
    recommendation={
        "default": """
Profile every worker (or a known subset) in the same session: a worker that is not there cannot be named
as the straggler.""",
        "pytorch": """
Profile every rank (or a known subset) in the same cycle: the same `schedule` on every rank and
`tensorboard_trace_handler` into one folder; a rank that is not there cannot be named as the straggler.""",
    },
    scope=JOB,
)
def partial(ctx: JobContext) -> Finding:
    captured = len(ctx.rows)
    world = ctx.world_size or captured
    incomplete = [rank_label(r) for r in ctx.rows if not r.steps]
    metrics = [
        Metric("ranks_captured", captured, "", "ranks with a file"),
        Metric("world_size", world, "", "ranks in the job"),
        Metric("ranks_without_steps", len(incomplete), "", "ranks with no complete step in the picked cycle"),
    ]
    parts = []
    if world > captured:
        parts.append(f"{captured} of {world} ranks captured")
    if incomplete:
        parts.append(f"no complete step in the picked cycle on {', '.join(incomplete[:8])}")
    if not parts:
        return ctx.finding(PASS, f"All {world} ranks captured, each with a complete step.", metrics)
    return ctx.finding(INFO, "; ".join(parts) + ". The job checks compare the ranks that are there.", metrics)


@check(
    id="job.straggler",
    marks_stragglers=True,
    title="No straggler rank",
    problem="Straggler: {rank} spends {excess_ms:.1f} ms more per step on {work}",
    section="job",
    order=410,
    anchor="#2._optimize_the_performance_on_the_multi-gpu_single_host",
    measures="""Each rank's own work per step (compute, plus input wait) in its own steps. A straggler's own
work is an outlier: a robust z-score on the median absolute deviation at least `z` with three ranks or
more (with two, the excess alone decides), at least `min_excess_pct` of the median step above the median
other rank, while the other ranks spend at least half that excess longer in collectives, waiting for
it. In a synchronous job every rank's step is as long, so step time does not name it.""",
    thresholds={
        "z": Threshold(3.5, "", "robust z-score of a rank's own work per step (three ranks or more)"),
        "min_excess_pct": Threshold(10.0, "%", "a straggler's excess own work, share of the median step"),
    },
    recommendation={
        "default": """
Find why that host does more work: an uneven input shard, a slower input pipeline or a shared host, or
extra work (logging, checkpointing, evaluation) on one worker.""",
        "pytorch": """
Find why that rank does more work: an uneven data shard (DistributedSampler pads or drops so every rank
gets the same count), larger inputs on that rank, a slow DataLoader on that host, a slower GPU or a
throttled or shared host, or extra work on one rank (logging, checkpointing, evaluation on rank 0): move
it off the step or spread it.""",
    },
    scope=JOB,
)
def straggler(ctx: JobContext) -> Finding:
    good = ctx.good
    if len(good) < 2:
        return _too_few(ctx)
    compute = np.array([r.compute_ms for r in good], float)
    own = compute + np.array([r.input_ms or 0.0 for r in good], float)  # a rank's own work
    coll = np.array([r.collective_ms or 0.0 for r in good], float)
    med_step = median([r.step_ms for r in good])
    three = len(good) >= 3
    z = robust_z(own) if three else np.zeros(len(good))
    cand = []
    for i in np.argsort(-own, kind="stable").tolist():
        excess = own[i] - median(np.delete(own, i))
        wait = median(np.delete(coll, i)) - coll[i]
        outlier = z[i] >= ctx.t["z"] if three else True  # two ranks: the excess alone decides
        if outlier and excess >= ctx.t["min_excess_pct"] / 100 * med_step and wait >= 0.5 * excess:
            cand.append((i, excess, wait))
    if not cand:
        return ctx.finding(
            PASS,
            f"No rank's own work per step stands out across {len(good)} ranks while the others wait (median "
            f"{_ms(median(own))}"
            + (f", largest robust z {float(z.max()):.1f}, needs {ctx.t['z']}" if three else "")
            + ").",
            [Metric("robust_z", float(z.max()) if three else None, "", "largest (own - median) / (1.4826 MAD)")],
        )
    i, excess, wait = cand[0]
    who = ", ".join(rank_label(good[j]) for j, _, _ in cand)
    work = "compute" if own[i] - compute[i] < excess / 2 else "own work (input wait and compute)"
    metrics = [
        Metric("straggler_own_ms", float(own[i]), "ms", "the straggler's compute and input wait per step"),
        Metric("excess_ms", excess, "ms", "its own work beyond the median other rank's, per step"),
        Metric("robust_z", float(z[i]) if three else None, "", "(own - median) / (1.4826 MAD)"),
        Metric("others_wait_ms", wait, "ms", "the other ranks' extra collective time per step"),
    ]
    return ctx.finding(
        WARNING,
        f"{who}: own work {_ms(float(own[i]))} per step (compute {_ms(float(compute[i]))}, input wait "
        f"{_ms(float(own[i] - compute[i]))}) against {_ms(median(np.delete(own, i)))} on the "
        f"median other rank of {len(good)}"
        + (f" (robust z {z[i]:.1f})" if three else "")
        + f"; the other ranks spend {_ms(wait)} more per step in collectives, waiting for it.",
        metrics,
        title=f"Straggler: {rank_label(good[i])} spends {excess:.1f} ms more per step on {work}",
        saving_ms=excess,
        step_ms=med_step,
        saving_basis="the straggler doing the median rank's work: every rank's step shortens by the excess",
        details=[
            {"rank": rank_label(good[j]), "host": good[j].host, "own_ms": float(own[j]), "excess_ms": e}
            for j, e, _ in cand
        ],
    )


@check(
    id="job.imbalance",
    title="Ranks do equal compute",
    problem="Compute imbalance across ranks: {compute_spread_pct:.1f}% spread",
    section="job",
    order=420,
    anchor="#2._optimize_the_performance_on_the_multi-gpu_single_host",
    measures="""The spread of compute per step across the ranks with a complete step, (max - min) / max.""",
    thresholds={"warning": Threshold(10.0, "%", "spread of compute per step across ranks")},
    recommendation="""
Give every rank the same work: equal shards and batch sizes, the same model partition size (pipeline or
tensor parallel), no extra work on one rank.""",
    scope=JOB,
)
def imbalance(ctx: JobContext) -> Finding:
    good = ctx.good
    if len(good) < 2:
        return _too_few(ctx)
    compute = np.array([r.compute_ms for r in good], float)
    spread = pct(float(compute.max() - compute.min()), float(compute.max())) or 0.0
    return ctx.finding(
        ctx.level(spread, critical=None),
        f"Compute per step ranges from {_ms(float(compute.min()))} to {_ms(float(compute.max()))} across "
        f"{len(good)} ranks ({spread:.1f}% of the largest).",
        [Metric("compute_spread_pct", spread, "%", "(max - min) / max of compute per step across ranks")],
    )


@check(
    id="job.exposed-comm",
    title="Communication is hidden behind compute",
    problem="Exposed communication: {exposed_pct:.1f}% of the step",
    section="job",
    order=430,
    anchor="#2._optimize_the_performance_on_the_multi-gpu_single_host",
    measures="""The largest share of a rank's step spent in collectives not overlapped with compute (100 minus
HTA's comm/comp overlap, in the rank's own steps).""",
    thresholds={
        "warning": Threshold(10.0, "%", "collective time outside compute, share of the step"),
        "critical": Threshold(25.0, "%", "collective time outside compute, share of the step (high)"),
    },
    recommendation={
        "default": """
Overlap the all-reduce with the backward pass and send fewer, larger messages: tf.distribute's
CommunicationOptions (bytes_per_pack) packs gradients; accumulate gradients over several batches to
all-reduce less often.""",
        "pytorch": """
Overlap the all-reduce with the backward pass: DDP buckets gradients (`bucket_cap_mb`, 25 MB by default;
larger buckets mean fewer calls, smaller ones start sooner), so check that no unused parameters force
`find_unused_parameters=True`. Communicate less often: gradient accumulation with `model.no_sync()` on
all but the last micro-batch. With FSDP, prefetch the next all-gather (`forward_prefetch=True`,
`backward_prefetch=BackwardPrefetch.BACKWARD_PRE`).""",
    },
    links={"pytorch": PYTORCH_DDP},
    scope=JOB,
)
def exposed_comm(ctx: JobContext) -> Finding:
    good = ctx.good
    if not good:
        return _too_few(ctx)
    if len(good) == 1 and not good[0].collective_ms:  # one rank: measurable on its own if it communicates
        return _no_collectives(ctx)
    exposed = np.array([r.exposed_collective_ms or 0.0 for r in good], float)
    coll = np.array([r.collective_ms or 0.0 for r in good], float)
    share = np.array([pct(float(e), r.step_ms or 0.0) or 0.0 for e, r in zip(exposed, good)], float)
    i = int(np.argmax(share))
    status = ctx.level(float(share[i]))
    summary = (
        f"Up to {share[i]:.1f}% of the step ({_ms(float(exposed[i]))} on {rank_label(good[i])}) is collective "
        f"communication not overlapped with compute; median {median(share):.1f}% across {len(good)} ranks."
        if len(good) > 1
        else f"{share[i]:.1f}% of the step ({_ms(float(exposed[i]))} of {_ms(float(coll[i]))} in collectives) on "
        f"{rank_label(good[i])}, {_only_rank(ctx)}, is collective communication not overlapped with compute."
    )
    before = ctx.earlier.get("job.straggler")
    waiting = 0.0
    if status != PASS and before is not None and before.status in PROBLEMS:
        summary += " Most of it is waiting for the straggler: fix that first."
        waiting = before.saving_ms or 0.0
    # the ranks step together: hiding the typical rank's exposed collectives saves the job that much a
    # step, less what is waiting for the straggler (its finding's saving)
    steps = [r.step_ms for r in good if r.step_ms]
    return ctx.finding(
        status,
        summary,
        saving_ms=max(median(exposed) - waiting, 0.0) if status != PASS else None,
        step_ms=median(steps) if steps else None,
        saving_basis="the median rank's collective time outside compute, if the all-reduce overlapped the "
        "backward pass (less the wait for a straggler, that finding's saving); an upper bound where the "
        "transfers outlast the compute they could hide behind",
        metrics=[
            Metric("exposed_pct", float(share[i]), "%", "collective time outside compute, share of the step"),
            Metric("exposed_ms", float(exposed[i]), "ms", "collective time outside compute per step"),
            Metric("collective_ms", float(coll[i]), "ms", "collective time per step"),
        ],
    )


@check(
    id="job.allreduce-count",
    title="No extra all-reduces per step",
    problem="Extra all-reduces: {allreduce_per_step:.1f} calls per rank per step",
    section="job",
    order=435,
    anchor="#1._optimize_gradient_allreduce",
    measures="""allreduce.count across files: each rank's all-reduce calls per step (on PyTorch the backend's
`nccl:all_reduce`/`gloo:all_reduce` spans, else c10d's; TensorFlow's collective reduce ops; else NCCL
kernels named all-reduce), the median rank against the calls expected. Where the spans record their
tensors (`Input Dims`, `Input type`: PyTorch's backends do), the bytes all-reduced per step say how many
calls DistributedDataParallel's buckets make by default: a first bucket of `first_bucket_mb`, then one
per `bucket_mb` (`bucket_cap_mb`), 1 + ceil((bytes - first) / bucket); more calls than that are extra.
Without the bytes (c10d's ops alone, TensorFlow, NCCL kernels) one call per step is expected. Every
collective call (NCCL kernels per GPU on a GPU job, what HTA's kernel breakdown counts) is reported
beside it.""",
    thresholds={
        "expected_per_step": Threshold(1.0, "calls", "all-reduce calls per rank per step expected without their bytes"),
        "bucket_mb": Threshold(25.0, "MB", "DDP's gradient bucket (bucket_cap_mb's default)"),
        "first_bucket_mb": Threshold(1.0, "MB", "DDP's first gradient bucket"),
    },
    recommendation={
        "default": """
More all-reduce calls run per step than expected; each one synchronises every rank. Ideally there is one
call per step, for the gradients. Look for metrics or other values reduced across replicas every step
(`strategy.reduce`, a synced metric inside the step) and reduce them less often or locally; let the
optimizer pack gradients into one all-reduce (CommunicationOptions `bytes_per_pack`).""",
        "pytorch": """
More all-reduce calls run per step than expected; each one synchronises every rank.
DistributedDataParallel packs gradients into buckets (`bucket_cap_mb`, 25 MB by default): larger
buckets mean fewer calls. Avoid `all_reduce` of metrics every step, and with gradient accumulation skip
the synchronisation on the accumulation steps with `model.no_sync()`.""",
    },
    snippet={"pytorch": "model = DistributedDataParallel(model, bucket_cap_mb=100)"},
    links={"pytorch": PYTORCH_DDP},
    scope=JOB,
)
def allreduce_count(ctx: JobContext) -> Finding:
    good = [r for r in ctx.good if r.allreduce_calls is not None]
    if not good:
        return _too_few(ctx)
    if len(good) == 1 and not good[0].collective_calls:
        return _no_collectives(ctx)
    calls = np.array([r.allreduce_calls for r in good], float)
    every = np.array([r.collective_calls or 0.0 for r in good], float)
    if not calls.any():
        f = ctx.finding(
            "not-applicable",
            f"No all-reduce among the ranks' collective calls ({median(every):.1f} per step on the median rank).",
        )
        f.reason = f.summary
        return f
    med = median(calls)
    metrics = [
        Metric("allreduce_per_step", med, "calls", "all-reduce calls per step, median rank"),
        Metric("allreduce_min", float(calls.min()), "calls", "all-reduce calls per step, fewest on a rank"),
        Metric("allreduce_max", float(calls.max()), "calls", "all-reduce calls per step, most on a rank"),
        Metric("collective_calls_per_step", median(every), "calls", "every collective call, median rank"),
    ]
    sized = [r.allreduce_bytes for r in good if r.allreduce_bytes]
    expected, why = ctx.t["expected_per_step"], ""
    if len(sized) == len(good):  # every rank says the bytes of its all-reduces
        mb = median(np.array(sized, float)) / MIB
        expected = _ddp_buckets(mb, ctx.t["first_bucket_mb"], ctx.t["bucket_mb"])
        metrics += [
            Metric("allreduce_mb_per_step", mb, "MB", "MB all-reduced per step, median rank"),
            Metric("expected_per_step", float(expected), "calls", "calls DDP's default buckets make for them"),
        ]
        why = (
            f" for {_mb(mb)} all-reduced a step ({_mb(mb / med)} a call) in DDP's default buckets "
            f"({ctx.t['first_bucket_mb']:g} MB, then {ctx.t['bucket_mb']:g} MB)"
        )
    extra = med > expected + 1e-9
    summary = (
        f"{med:.1f} all-reduce call{'s' if med != 1 else ''} per step "
        + (f"on the median of {len(good)} ranks" if len(good) > 1 else f"on {rank_label(good[0])}, {_only_rank(ctx)}")
        + (f", expected {expected:.0f}" + why if extra or why else "")
        + f" (of {median(every):.1f} collective calls per step)"
    )
    if calls.min() != calls.max():
        # every rank makes the same calls (or the job hangs): a difference is a call at a step's edge
        summary += (
            f"; {float(calls.min()):.2f} to {float(calls.max()):.2f} across ranks, a call at the edge of a "
            "step falling outside it on some"
        )
    hidden = ctx.earlier.get("job.exposed-comm")
    if extra and hidden is not None and hidden.status == PASS:
        summary += "; job.exposed-comm passes: they run mostly behind compute, so fewer calls would save little"
    return ctx.finding(WARNING if extra else PASS, summary + ".", metrics)


MIB = 1024.0 * 1024.0  # DDP's MB: bucket_cap_mb * 1024 * 1024 bytes


def _ddp_buckets(mb: float, first_mb: float, bucket_mb: float) -> int:
    """The all-reduces DistributedDataParallel makes a step for `mb` of gradients: its first bucket
    holds `first_mb`, each next one `bucket_mb` (a bucket closes once it reaches its size)."""
    return 1 + max(0, int(np.ceil((mb - first_mb) / bucket_mb - 1e-9)))


def _mb(mb: float) -> str:
    return f"{mb:.2f} MB" if mb >= 0.1 else f"{mb * 1024:.0f} KB"


@check(
    id="job.cycle-lengths",
    title="Every rank profiles the same steps",
    problem="Profiling cycles of different lengths: {min_steps}-{max_steps} steps per rank",
    section="capture",
    order=380,
    anchor="#overview",
    measures="""Per rank, the steps with work in the picked profiling cycle and the number of cycles (files)
it has. Different counts mean the ranks ran different profiler schedules (or started them at different
steps), so their per-step averages cover different steps; the job checks compare them all the same.
Ranks with no step in the cycle are job.partial's.""",
    recommendation={
        "default": """
Start and stop the profiler at the same steps on every worker: the same `profile_batch=(start, stop)` of
the TensorBoard callback, or `tf.profiler.experimental.start`/`stop` around the same step range.""",
        "pytorch": """
Give every rank the same `torch.profiler.schedule(wait=W, warmup=U, active=A, repeat=R)` and call
`prof.step()` once per training step on every rank (not only on rank 0, not inside a rank-dependent
branch), so each cycle covers the same steps everywhere.""",
    },
    scope=JOB,
)
def cycle_lengths(ctx: JobContext) -> Finding:
    rows = [r for r in ctx.rows if r.steps]
    if len(rows) < 2:
        return _too_few(ctx)
    steps = sorted({r.steps for r in rows})
    cycles = sorted({r.cycles for r in ctx.rows})
    metrics = [
        Metric("min_steps", steps[0], "", "fewest steps with work in the picked cycle on a rank"),
        Metric("max_steps", steps[-1], "", "most steps with work in the picked cycle on a rank"),
        Metric("min_cycles", cycles[0], "", "fewest profiling cycles on a rank"),
        Metric("max_cycles", cycles[-1], "", "most profiling cycles on a rank"),
    ]
    if len(steps) == 1 and len(cycles) == 1:
        return ctx.finding(
            PASS,
            f"All {len(rows)} ranks have {steps[0]} step{'s' if steps[0] != 1 else ''} in the picked cycle and "
            f"{cycles[0]} cycle{'s' if cycles[0] != 1 else ''}.",
            metrics,
        )
    parts = []
    if len(steps) > 1:
        by = {n: [rank_label(r) for r in rows if r.steps == n] for n in steps}
        parts.append("steps in the picked cycle: " + "; ".join(f"{n} on {_few(names)}" for n, names in by.items()))
    if len(cycles) > 1:
        byc = {n: [rank_label(r) for r in ctx.rows if r.cycles == n] for n in cycles}
        parts.append("profiling cycles: " + "; ".join(f"{n} on {_few(names)}" for n, names in byc.items()))
    return ctx.finding(
        WARNING if len(steps) > 1 else INFO,
        "The ranks were profiled differently (" + "; and ".join(parts) + "): the ranks' per-step measures "
        "cover different steps.",
        metrics,
    )


def clock_offsets_ms(rows: list[RankRow]) -> list[list[float]]:
    """Per rank, how far its clock reads ahead of the median rank's in each step number it shares with
    another rank (ms): its last collective's end - the median of the ranks' ends in that step. In a
    synchronous job a step's last collective ends at the same moment on every rank."""
    by_step: dict[int, list[int]] = {}
    for r in rows:
        for s, t in r.collective_ends_ns:
            by_step.setdefault(s, []).append(t)
    med = {s: median(ts) for s, ts in by_step.items() if len(ts) >= 2}
    return [[(t - med[s]) / 1e6 for s, t in r.collective_ends_ns if s in med] for r in rows]


@check(
    id="job.clock-skew",
    title="The hosts' clocks agree",
    problem="Clock skew between hosts: {skew_ms:.1f} ms",
    section="capture",
    order=390,
    anchor="#overview",
    measures="""In a synchronous job a step's last collective (NCCL kernel, or gloo/c10d span on CPU) ends at
the same moment on every rank (an XSpace file's times are read from its `profile_start_time`), so the differences of those ends between ranks, per step number and
the median over steps, are the differences of their clocks (plus a few microseconds of the collective
itself, and however late a busy host records it). A clock skew is there in every step; a late record
in some: the skew counted is the one every step shows, the largest of the ranks' smallest offsets minus
the smallest of their largest (0 when no two ranks keep apart in every step), between ranks on different
machines: ranks on one machine (their worker names `<hostname>_<pid>`, or one XSpace host) share its clock.
The job checks compare durations only, which skew does not touch; the ranks' timelines are not aligned
across hosts.""",
    thresholds={"info": Threshold(5.0, "ms", "largest difference of two ranks' clocks")},
    recommendation="""
Synchronise the hosts' clocks (chrony or ntpd against one server; PTP where the network has it) before
comparing the ranks' timelines side by side; the advisor compares durations only, so its job checks
hold either way.""",
    scope=JOB,
)
def clock_skew(ctx: JobContext) -> Finding:
    rows = [r for r in ctx.rows if r.collective_ends_ns]
    have = [(o, r) for o, r in zip(clock_offsets_ms(rows), rows) if o]
    if len(have) < 2:
        f = ctx.finding("not-applicable", "Fewer than two ranks with a collective in a common step.")
        f.reason = f.summary
        return f
    # ranks on one machine share its clock: what keeps them apart is how late each records, not skew
    ahead: dict[str, tuple[float, RankRow]] = {}  # per machine, the rank whose clock reads latest in its best step
    behind: dict[str, tuple[float, RankRow]] = {}  # and the one that reads earliest in its worst
    for o, r in have:
        m = r.machine or r.worker
        if m not in ahead or min(o) > ahead[m][0]:
            ahead[m] = (min(o), r)
        if m not in behind or max(o) < behind[m][0]:
            behind[m] = (max(o), r)
    if len(ahead) < 2:
        f = ctx.finding(
            "not-applicable",
            f"All {len(have)} ranks ran on one machine ({next(iter(ahead))}, as their worker names say): one "
            "clock, nothing to skew.",
        )
        f.reason = f.summary
        return f
    lows = sorted(behind.items(), key=lambda x: x[1][0])[:2]
    skew, pair = 0.0, None
    for m, (hi, r) in ahead.items():
        _, (lo, q) = lows[0] if lows[0][0] != m else lows[1]
        if hi - lo > skew:
            skew, pair = hi - lo, (r, q)
    metrics = [
        Metric("skew_ms", skew, "ms", "the clock difference of two ranks that every step shows"),
        Metric("ranks_timed", len(have), "", "ranks with a collective in a step another rank has"),
        Metric("machines", len(ahead), "", "machines the timed ranks ran on"),
    ]
    if skew < ctx.t["info"] or pair is None:
        return ctx.finding(
            PASS,
            f"No two of {len(have)} ranks on {len(ahead)} machines keep their clocks more than {skew:.2f} ms apart "
            f"in every step (the end of the step's last collective; {ctx.t['info']:g} ms would be skew): the "
            "clocks agree.",
            metrics,
        )
    return ctx.finding(
        INFO,
        f"Across {len(have)} ranks on {len(ahead)} machines, the clocks of {rank_label(pair[0])} and "
        f"{rank_label(pair[1])} keep {skew:.2f} ms apart in every step (the end of the step's last collective): "
        "the hosts' clocks differ by that much. Only durations are compared across hosts, which "
        "the skew does not touch; the ranks' timelines are not aligned with each other.",
        metrics,
    )


def _few(names: list[str]) -> str:
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _only_rank(ctx: JobContext) -> str:
    world = ctx.world_size
    return f"the one rank of {world} captured" if world and world > 1 else "the one rank captured"


def _no_collectives(ctx: JobContext) -> Finding:
    f = ctx.finding("not-applicable", "One rank with a complete step, and no collective in its steps.")
    f.reason = f.summary
    return f


def _too_few(ctx: JobContext) -> Finding:
    f = ctx.finding("not-applicable", "Fewer than two ranks with a complete step: nothing to compare.")
    f.reason = f.summary
    return f
