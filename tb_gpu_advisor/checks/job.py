"""6. The job across ranks (guide 2, when the GPUs live in different files): a straggler, compute
imbalance, exposed communication, a partial capture. They read the ranks of the picked profiling cycle
(`tb_gpu_advisor/job.py` builds them; each rank's measures per step in ms, durations only: clocks of
different hosts are not comparable) and run once per job, not per file."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks.base import JOB, JobContext, RankRow, Threshold, check, for_framework, paragraphs
from tb_gpu_advisor.checks.findings import INFO, PASS, PROBLEMS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import pct
from tb_gpu_advisor.measures import CAUSE_KEYS, CAUSES, Arrivals, Paired, median

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
it. In a synchronous job every rank's step is as long, so step time does not name it.

A straggler is also found by when it arrives: each collective (NCCL kernel, gloo span) is paired across
the ranks by step and order (job.wait), the rank with the shortest time in it arrived last, and the other
ranks' mean wait in it is charged to that rank. A rank charged at least `min_excess_pct` of the median
step a step, with half the job's charged wait or more, last at half the paired collectives or more,
and late in every paired step, is a straggler whatever its own work: it may start its step late, or its
host may launch its work late.
What made it late is its lateness behind the median rank, split into entering the step late (its
step's first collective, timed from its own step start), its own compute and input wait in the gap
before each collective beyond the median rank's, and the rest, its host.""",
    thresholds={
        "z": Threshold(3.5, "", "robust z-score of a rank's own work per step (three ranks or more)"),
        "min_excess_pct": Threshold(
            10.0, "%", "a straggler's excess own work, or the wait charged to it, share of the median step"
        ),
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
    late = _late_arrival(ctx, med_step)
    if not cand and late is None:
        arr = ctx.arrivals
        charged = [c for c in arr.charged_ms if c is not None]
        return ctx.finding(
            PASS,
            f"No rank's own work per step stands out across {len(good)} ranks while the others wait (median "
            f"{_ms(median(own))}"
            + (f", largest robust z {float(z.max()):.1f}, needs {ctx.t['z']}" if three else "")
            + ")"
            + (
                f", and no rank is charged with most of the waiting in the {_n(arr.per_step)} collectives a step "
                f"paired across them (largest {_ms(max(charged))} a step)"
                if arr.steps and charged
                else ""
            )
            + ".",
            [Metric("robust_z", float(z.max()) if three else None, "", "largest (own - median) / (1.4826 MAD)")],
        )
    if not cand:
        assert late is not None
        return _straggler_by_arrival(ctx, late, own, med_step)
    i, excess, wait = cand[0]
    who = ", ".join(rank_label(good[j]) for j, _, _ in cand)
    work = "compute" if own[i] - compute[i] < excess / 2 else "own work (input wait and compute)"
    metrics = [
        Metric("straggler_own_ms", float(own[i]), "ms", "the straggler's compute and input wait per step"),
        Metric("excess_ms", excess, "ms", "its own work beyond the median other rank's, per step"),
        Metric("robust_z", float(z[i]) if three else None, "", "(own - median) / (1.4826 MAD)"),
        Metric("others_wait_ms", wait, "ms", "the other ranks' extra collective time per step"),
    ]
    details = [
        {"rank": rank_label(good[j]), "host": good[j].host, "own_ms": float(own[j]), "excess_ms": e} for j, e, _ in cand
    ]
    arrives = ""
    if late is not None and late[0] not in [j for j, _, _ in cand]:
        j = late[0]
        details.append({"rank": rank_label(good[j]), "host": good[j].host, "charged_ms": late[1]})
        arrives = f" {rank_label(good[j])} is late too: it {_charged_text(ctx.arrivals, good, j)}."
    elif late is not None:
        arrives = f" By arrival too: it {_charged_text(ctx.arrivals, good, late[0])}."
    return ctx.finding(
        WARNING,
        f"{who}: own work {_ms(float(own[i]))} per step (compute {_ms(float(compute[i]))}, input wait "
        f"{_ms(float(own[i] - compute[i]))}) against {_ms(median(np.delete(own, i)))} on the "
        f"median other rank of {len(good)}"
        + (f" (robust z {z[i]:.1f})" if three else "")
        + f"; the other ranks spend {_ms(wait)} more per step in collectives, waiting for it."
        + arrives,
        metrics,
        title=f"Straggler: {rank_label(good[i])} spends {excess:.1f} ms more per step on {work}",
        saving_ms=excess,
        step_ms=med_step,
        saving_basis="the straggler doing the median rank's work: every rank's step shortens by the excess",
        details=details,
    )


def _n(x: float) -> str:
    """A count per step: `8`, or `2.5` where steps differ."""
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"


CAUSE_WORDS = {"before_ms": "entering the step late", "work_ms": "its own compute", "input_ms": "its input wait"}
CAUSE_WORDS["host_ms"] = "its host"
CAUSE_LABELS = {
    "before_ms": "lateness from entering the step late: at its step's first collective, beyond what it did longer "
    "than the median rank since its own step start",
    "work_ms": "lateness from its own compute in the gaps before collectives, beyond the median rank's",
    "input_ms": "lateness from its input wait in the gaps before collectives, beyond the median rank's",
    "host_ms": "lateness from its host: the rest of the gaps before collectives (launching, Python, syncs)",
}


def _causes_text(causes: dict[str, float] | None) -> str:
    """`entering the step late 3.36 ms, its host 1.41 ms, ...`: the parts of a rank's lateness, largest first."""
    parts = sorted(((v, k) for k, v in (causes or {}).items() if v >= 0.005), reverse=True)
    return ", ".join(f"{CAUSE_WORDS[k]} {_ms(v)}" for v, k in parts) or "nothing it did longer than the median rank"


def _top_cause(causes: dict[str, float] | None) -> str:
    return max(CAUSES, key=lambda k: (causes or {}).get(k, 0.0))


def _late_arrival(ctx: JobContext, med_step: float) -> tuple[int, float] | None:
    """The good row charged with most of the job's wait in collectives, if it is a straggler by arrival:
    charged `min_excess_pct` of the median step a step, half of all the charged wait or more, last at
    half the paired collectives or more, and late in every paired step (a straggler is late every step;
    a rank that a busy machine holds up now and then is not). (row, charged ms per step). Not a robust
    z: every rank that is never last is charged 0, so with four ranks one late rank's z is 3.2 at most."""
    arr = ctx.arrivals
    if not arr.steps:
        return None
    charged = np.array([c or 0.0 for c in arr.charged_ms], float)
    i = int(np.argmax(charged))
    if charged[i] < ctx.t["min_excess_pct"] / 100 * med_step or charged[i] < 0.5 * float(charged.sum()):
        return None
    if (arr.last[i] or 0.0) < 0.5 * arr.per_step or arr.late_steps[i] != arr.steps:
        return None
    return i, float(charged[i])


def _worst(arr: Arrivals, row: int) -> Paired | None:
    """The collective at which `row` arrived last that kept the others waiting longest."""
    mine = [c for c in arr.collectives if c.last == row]
    return max(mine, key=lambda c: c.lag_ms) if mine else None


def _charged_text(arr: Arrivals, good: list[RankRow], row: int) -> str:
    """`reaches 5 of the 8 collectives a step last, at worst 7.62 ms after rank 1; the other ranks wait
    5.08 ms a step for it`."""
    worst = _worst(arr, row)
    first = f", at worst {_ms(worst.lag_ms)} after {rank_label(good[worst.first])}" if worst else ""
    return (
        f"reaches {_n(arr.last[row] or 0.0)} of the {_n(arr.per_step)} collectives a step last{first}; the other "
        f"ranks wait {_ms(arr.charged_ms[row])} a step for it"
    )


WAIT_ADVICE: dict[str, dict[str, str]] = {
    "before_ms": {
        "default": """
That rank enters its steps late, so every rank waits at the step's first collective: look at what it runs
between steps (checkpointing, logging, evaluation or metrics on that worker alone, a host sync at the end
of the step) and at its host (a busier or throttled CPU, other processes on its cores).""",
        "pytorch": """
That rank enters its steps late, so every rank waits at the step's first collective: look at what it runs
between steps, outside the `ProfilerStep` markers (checkpointing, logging, evaluation or metrics on that
rank alone, a host sync such as `.item()` at the end of the step, garbage collection) and at its host (a
busier or throttled CPU, other processes on its cores). With one step captured the late entry can be the
profiler's own start on that rank: profile several steps (`schedule(wait=1, warmup=1, active=3)`) and see
whether it enters every step late.""",
    },
    "host_ms": {
        "default": """
That rank's host reaches its collectives later, with its device idle and no input wait: the host is
slower there. Look at that host's CPU (threads per worker, other processes on its cores or NUMA node,
throttling) and at host work only that worker does (logging, metrics).""",
        "pytorch": """
That rank's host reaches its collectives later, with its GPU idle and no input wait: the host is slower
there, not its GPU or its data. Look at that host's CPU (`torch.set_num_threads`/`OMP_NUM_THREADS` per
rank, other processes on its cores or NUMA node, throttling), at host-device syncs (`.item()`, `.cpu()`,
`.tolist()`) that stall it, and at Python work only that rank does (logging, metrics); CUDA graphs or
`torch.compile` cut the host's launch work.""",
    },
    "work_ms": {
        "default": """
That rank computes longer before its collectives: an uneven input shard or larger inputs on it, a slower
or throttled device, or extra work on that worker.""",
        "pytorch": """
That rank computes longer before its collectives: an uneven data shard or larger inputs on it
(DistributedSampler gives every rank the same count), an uneven model partition (pipeline or tensor
parallel, embedding tables), a slower or throttled GPU, or extra work on that rank.""",
    },
    "input_ms": {
        "default": """
That rank waits longer for its input before its collectives: its input pipeline is slower (parallel
reads and `map`, `prefetch`, a slower disk or shared storage on that host).""",
        "pytorch": """
That rank waits longer for its batch before its collectives: its DataLoader is slower (`num_workers`,
`pin_memory=True`, `prefetch_factor`, `persistent_workers=True`; a slower disk or shared storage on that
host).""",
    },
}


def _wait_advice(ctx: JobContext, cause: str) -> str:
    return paragraphs(for_framework(WAIT_ADVICE[cause], ctx.framework) or "")


def _straggler_by_arrival(ctx: JobContext, late: tuple[int, float], own: np.ndarray, med_step: float) -> Finding:
    good, arr = ctx.good, ctx.arrivals
    i, charged = late
    causes = arr.causes[i]
    total = float(sum(c or 0.0 for c in arr.charged_ms))
    three = len(good) >= 3
    z = robust_z(own) if three else np.zeros(len(good))
    f = ctx.finding(
        WARNING,
        f"{rank_label(good[i])} {_charged_text(arr, good, i)}, {pct(charged, total) or 0:.0f}% of the wait charged "
        f"in the job. Its own work per step, {_ms(float(own[i]))} against {_ms(median(np.delete(own, i)))} on the "
        f"median other rank"
        + (f" (robust z {z[i]:.1f})" if three else "")
        + f", is no slower: it is late. What made it late, behind the median rank's arrivals, a step: "
        f"{_causes_text(causes)}."
        + (
            " One step paired: a capture of several steps tells whether it is late every step."
            if arr.steps == 1
            else ""
        ),
        [
            Metric("charged_ms", charged, "ms", "the other ranks' wait charged to it, per step"),
            Metric("last_arrivals", arr.last[i], "", "collectives per step it reaches last"),
            Metric("alone_ms", arr.alone_ms[i], "ms", "its arrival behind the next-latest rank's, per step"),
            *[Metric(k.removesuffix("_ms") + "_late_ms", (causes or {}).get(k), "ms", CAUSE_LABELS[k]) for k in CAUSES],
        ],
        title=f"Straggler: {rank_label(good[i])} arrives last at {_n(arr.last[i] or 0.0)} of {_n(arr.per_step)} "
        f"collectives a step; the others wait {charged:.1f} ms for it",
        saving_ms=arr.alone_ms[i],
        step_ms=med_step,
        saving_basis="that rank arriving with the next-latest rank at each collective it reaches last: those start "
        "that much sooner (a lower bound: where ranks arrive late together, each next one is then the last)",
        details=[
            {
                "rank": rank_label(good[i]),
                "host": good[i].host,
                "charged_ms": charged,
                **{"late_" + CAUSE_KEYS[k]: (causes or {}).get(k) for k in CAUSES},
            }
        ],
    )
    f.recommendation = _wait_advice(ctx, _top_cause(causes))
    return f


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
    id="job.wait",
    title="Ranks reach their collectives together",
    problem="Waiting in collectives: {wait_pct:.1f}% of the step",
    section="job",
    order=425,
    anchor="#2._optimize_the_performance_on_the_multi-gpu_single_host",
    measures="""The time a rank spends in collectives waiting for the ranks that arrive after it, share of its
step, on the median rank. Each collective (NCCL kernel, gloo span) is paired across the ranks by step
and order; it ends on every rank at one moment, so the rank with the shortest time in it arrived last
and that time is the transfer, and each rank's time beyond it is its wait (no clock is compared across
machines). The ranks that arrive last, the collective they keep the others waiting longest at, and what
made the one charged most late are said; moving the data is job.exposed-comm's.""",
    thresholds={
        "warning": Threshold(10.0, "%", "the median rank's wait in collectives, share of the step"),
        "critical": Threshold(25.0, "%", "the median rank's wait in collectives, share of the step (high)"),
    },
    recommendation={
        "default": """
The waiting is the ranks arriving at different times, not the network: make the late ranks start their
collectives with the others (see what made them late, and job.straggler); bigger or fewer messages would
not help.""",
        "pytorch": """
The waiting is the ranks arriving at different times, not the network: make the late ranks start their
collectives with the others (see what made them late, and job.straggler); DDP buckets, `no_sync` or
FSDP prefetch would not help.""",
    },
    scope=JOB,
)
def wait(ctx: JobContext) -> Finding:
    good, arr = ctx.good, ctx.arrivals
    if not arr.steps:
        f = ctx.finding(
            "not-applicable",
            f"No collectives paired across the ranks: the ranks' steps hold the same collectives in {arr.unpaired} "
            "step(s), but their ends keep different distances from one to the next on different ranks, so they "
            "are not the same collectives (point-to-point with other peers, or several process groups)."
            if arr.unpaired
            else "No collectives paired across the ranks: fewer than two ranks with collectives in a step they all "
            "hold, or ranks whose steps hold different collectives.",
        )
        f.reason = f.summary
        return f
    rows = [(i, r) for i, r in enumerate(good) if arr.wait_ms[i] is not None and r.step_ms]
    waits = np.array([arr.wait_ms[i] or 0.0 for i, _ in rows], float)
    shares = np.array([pct(float(w), r.step_ms or 0.0) or 0.0 for w, (_, r) in zip(waits, rows)], float)
    med, share = median(waits), median(shares)
    transfer = median([arr.transfer_ms[i] or 0.0 for i, _ in rows])
    status = ctx.level(share)
    last = sorted(((arr.last[i] or 0.0, i) for i, _ in rows), reverse=True)
    who = ", ".join(f"{rank_label(good[i])} at {_n(n)}" for n, i in last if n > 0)
    top = max(range(len(good)), key=lambda i: arr.charged_ms[i] or 0.0)
    worst = max(arr.collectives, key=lambda c: c.lag_ms)
    summary = (
        f"The median rank waits {_ms(med)} a step ({share:.1f}%) in collectives for ranks that reach them later; "
        f"moving the data takes {_ms(transfer)} of the {_n(arr.per_step)} collectives a step paired across "
        f"{len(rows)} ranks (each one's shortest time){_paired_note(ctx, arr)}. Last to arrive, per step: {who}. "
        f"The longest wait: {_ms(worst.lag_ms)} at the {_ordinal(worst.index + 1)} collective of step {worst.step} "
        f"({'an' if worst.kind_word[0] in 'aeiou' else 'a'} {worst.kind_word}), {rank_label(good[worst.last])} "
        f"behind {rank_label(good[worst.first])}."
    )
    straggling = ctx.earlier.get("job.straggler")
    waiting_for_straggler = 0.0
    if status != PASS:
        if straggling is not None and straggling.status in PROBLEMS:
            summary += " The straggler causes most of it: see job.straggler."
            waiting_for_straggler = straggling.saving_ms or 0.0
        else:
            summary += (
                f" Charged most: {rank_label(good[top])}, {_ms(arr.charged_ms[top])} a step; what made it late, "
                f"a step: {_causes_text(arr.causes[top])}."
            )
    steps = [r.step_ms for _, r in rows if r.step_ms]
    f = ctx.finding(
        status,
        summary,
        [
            Metric("wait_pct", share, "%", "the median rank's wait in collectives, share of its step"),
            Metric("wait_ms", med, "ms", "the median rank's wait in collectives per step"),
            Metric("transfer_ms", transfer, "ms", "the paired collectives' transfer per step"),
            Metric("collectives_per_step", arr.per_step, "", "collectives a step paired across the ranks"),
            Metric("steps_paired", arr.steps, "", "steps whose collectives every rank holds alike"),
        ],
        saving_ms=max(med - waiting_for_straggler, 0.0) if status != PASS else None,
        step_ms=median(steps) if steps else None,
        saving_basis="the median rank's wait, if every rank reached each collective together (less the "
        "straggler's share, that finding's saving)",
        details=[_collective_detail(good, c) for c in sorted(arr.collectives, key=lambda c: -c.lag_ms)[:8]],
    )
    if status != PASS and not (straggling is not None and straggling.status in PROBLEMS):
        f.recommendation = f.recommendation + "\n\n" + _wait_advice(ctx, _top_cause(arr.causes[top]))
    return f


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _paired_note(ctx: JobContext, arr: Arrivals) -> str:
    world = ctx.world_size
    captured = sum(w is not None for w in arr.wait_ms)
    if world and world > captured:
        return f"; with {captured} of {world} ranks captured, the last among them"
    return ""


def _collective_detail(good: list[RankRow], c: Paired) -> dict:
    return {
        "step": c.step,
        "collective": c.index + 1,
        "kind": c.kind_word,
        "last": rank_label(good[c.last]),
        "first": rank_label(good[c.first]),
        "lag_ms": c.lag_ms,
        "alone_ms": c.alone_ms,
        "transfer_ms": c.transfer_ms,
        "charged_ms": c.charged_ms,
        **{"late_" + CAUSE_KEYS[k]: getattr(c, k) for k in CAUSES},
    }


@check(
    id="job.exposed-comm",
    title="Communication is hidden behind compute",
    problem="Exposed communication: {exposed_pct:.1f}% of the step",
    section="job",
    order=430,
    anchor="#2._optimize_the_performance_on_the_multi-gpu_single_host",
    measures="""The largest share of a rank's step spent moving data in collectives not overlapped with compute
(100 minus HTA's comm/comp overlap, in the rank's own steps). Where the ranks' collectives are paired
(job.wait), a rank's time in them is its wait for later ranks plus the transfer, and only the transfer
counts here: at most the transfer, at most the exposed time; the wait is job.wait's and job.straggler's.""",
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
    good, arr = ctx.good, ctx.arrivals
    if not good:
        return _too_few(ctx)
    if len(good) == 1 and not good[0].collective_ms:  # one rank: measurable on its own if it communicates
        return _no_collectives(ctx)
    exposed = np.array([r.exposed_collective_ms or 0.0 for r in good], float)
    coll = np.array([r.collective_ms or 0.0 for r in good], float)
    paired = arr.steps > 0 and all(t is not None for t in arr.transfer_ms)
    if paired:  # the wait for later ranks is not transfer: at most the transfer is exposed
        exposed = np.minimum(exposed, np.array([t or 0.0 for t in arr.transfer_ms], float))
    share = np.array([pct(float(e), r.step_ms or 0.0) or 0.0 for e, r in zip(exposed, good)], float)
    i = int(np.argmax(share))
    status = ctx.level(float(share[i]))
    what = "moving data in collectives" if paired else "collective communication"
    summary = (
        f"Up to {share[i]:.1f}% of the step ({_ms(float(exposed[i]))} on {rank_label(good[i])}) is {what} not "
        f"overlapped with compute; median {median(share):.1f}% across {len(good)} ranks."
        if len(good) > 1
        else f"{share[i]:.1f}% of the step ({_ms(float(exposed[i]))} of {_ms(float(coll[i]))} in collectives) on "
        f"{rank_label(good[i])}, {_only_rank(ctx)}, is collective communication not overlapped with compute."
    )
    if paired:
        waits = [w or 0.0 for w in arr.wait_ms]
        summary += (
            f" The rest of the ranks' collective time is waiting for later ranks ({_ms(median(waits))} a step on "
            "the median rank: job.wait), which faster transfers would not shorten."
        )
    before = ctx.earlier.get("job.straggler")
    waiting = 0.0
    if not paired and status != PASS and before is not None and before.status in PROBLEMS:
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
        saving_basis="the median rank's collective transfer outside compute, if it overlapped the backward pass"
        if paired
        else "the median rank's collective time outside compute, if the all-reduce overlapped the "
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
        summary += (
            "; job.exposed-comm passes: their transfer runs mostly behind compute or is short, so fewer calls "
            "would save little"
        )
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
