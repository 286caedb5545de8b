"""A run as a training job: its ranks, their profiling cycles, and the checks across ranks.

A job's **ranks** are its processes: PyTorch's `distributedInfo.rank`, else the worker (the file's name
without its span), or an XSpace host. A rank's files at different times are its **profiling cycles**
(`torch.profiler`'s `schedule(repeat=N)` spans, XSpace sessions of one run folder): one is picked (the
latest in which every captured rank has a complete step), never compared with the others as peers.

Per rank, in its own steps and as durations only (clocks of different hosts are not comparable):
step time, own compute (device busy outside collectives, or host op time outside collectives on a
CPU-only job), time in collectives (NCCL kernels; gloo/c10d/nccl host spans on CPU), the part of it
not overlapped with compute, and input wait. `rank_measures` takes them from one analysed file (they
travel in its report, so workers return them with it); `jobs` puts the reports of a run side by side.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.discovery import PYTORCH_TRACE, HostFile
from tb_gpu_advisor.profile import Kind
from tb_gpu_advisor.report import CRITICAL, INFO, PASS, WARNING, Finding, Metric, worst_finding
from tb_gpu_advisor.units import pct

# Host spans of collective communication: gloo's and NCCL's own annotations, c10d's ops, and
# record_param_comms (what PyTorch wraps every collective in).
COLLECTIVE_HOST = re.compile(r"^(gloo:|nccl:|c10d::|record_param_comms$)")
_SPAN = re.compile(r"^(?P<worker>.+)\.(?P<span>\d+)$")

# Job checks' thresholds (the guide's section 2, across ranks).
STRAGGLER_Z = 3.5  # robust z-score (median absolute deviation) of a rank's own work per step (3+ ranks)
STRAGGLER_MIN_EXCESS = 0.10  # ... at least this share of the median step more than the median other rank,
# while the other ranks wait at least half that excess longer in collectives
IMBALANCE_WARNING_PCT = 10.0  # spread of compute per step across ranks, (max - min) / max
EXPOSED_WARNING_PCT = 10.0  # collective time not hidden behind compute, share of the step
EXPOSED_CRITICAL_PCT = 25.0
# a rank's measure is marked an outlier (in the tab and the CLI) at a robust z of STRAGGLER_Z, 3+ ranks,
# when it is also this share of the median step away from the median: no flags for microseconds
OUTLIER_MIN_SHARE = 0.05
OUTLIER_MEASURES = ("step_ms", "compute_ms", "collective_ms", "exposed_collective_ms", "input_ms")
GUIDE_MULTI = (
    "https://www.tensorflow.org/guide/gpu_performance_analysis#2._optimize_the_performance_on_the_multi-gpu_single_host"
)
PYTORCH_DDP = "https://pytorch.org/docs/stable/notes/ddp.html"
SECTION = "The job across ranks (guide 2)"


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
    worked = h.step[(h.step >= 0) & (h.kind != Kind.STEP)]
    for g in a.gpus.values():
        worked = np.concatenate([worked, g.events.step[g.events.step >= 0]])
    return len(a.steps) if len(np.unique(worked)) else 0


def _per_step(total_ps: float, n: int) -> float:
    return float(total_ps) / max(n, 1) / 1e9


def rank_measures(a: Analysis, f: HostFile) -> dict[str, Any]:
    """What one file says of its rank, per step in milliseconds (see the module's docstring)."""
    p = a.profile
    job, worker, cycle = worker_and_cycle(f)
    steps = a.steps
    n = _steps_with_work(a)
    out: dict[str, Any] = {
        "job": job,
        "worker": worker,
        "cycle": cycle,
        "rank": p.rank,
        "world_size": p.world_size,
        "steps": n,
        "step_ms": steps.mean_ps / 1e9 if n else None,
        "source": "device" if a.gpus else "host",
        "compute_ms": None,
        "collective_ms": None,
        "exposed_collective_ms": None,
        "input_ms": None,
        "collective_overlap_pct": None,
    }
    if not n:
        return out
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
        out.update(
            compute_ms=float(np.mean(compute)),
            collective_ms=float(np.mean(coll)),
            exposed_collective_ms=float(np.mean(exposed)),
            input_ms=float(np.mean(inputs)),
        )
        return _with_overlap(out)
    h = a.host
    names = p.names
    is_coll = np.array([bool(COLLECTIVE_HOST.match(s)) for s in names.strings] + [False], bool)
    coll_m = is_coll[h.name] if len(h) else np.zeros(0, bool)
    in_steps = iv.union(steps.start_ps, steps.end_ps)
    comm = iv.intersect(iv.union(h.start_ps[coll_m], h.end_ps[coll_m]), in_steps)
    op_m = (h.kind == Kind.FRAMEWORK_OP) & ~coll_m
    ops = iv.intersect(iv.union(h.start_ps[op_m], h.end_ps[op_m]), in_steps)
    out.update(
        compute_ms=_per_step(iv.total(iv.subtract(ops, comm)), n),
        collective_ms=_per_step(iv.total(comm), n),
        exposed_collective_ms=_per_step(iv.total(iv.subtract(comm, ops)), n),
        input_ms=a.breakdown_ms()["host_input_wait"],
    )
    return _with_overlap(out)


def _with_overlap(m: dict[str, Any]) -> dict[str, Any]:
    """HTA's comm/comp overlap: the share of collective time during which compute also runs."""
    if m["collective_ms"]:
        m["collective_overlap_pct"] = 100.0 * (m["collective_ms"] - m["exposed_collective_ms"]) / m["collective_ms"]
    return m


def _cycle_key(cycle: str) -> tuple[int, int | str]:
    return (0, int(cycle)) if cycle.isdigit() else (1, cycle)


def rank_label(row: dict) -> str:
    """`rank 3 (vm_2258)`, or the worker alone when the file names no rank."""
    return f"rank {row['rank']} ({row['worker']})" if row.get("rank") is not None else str(row["worker"])


def _robust_z(values: np.ndarray) -> np.ndarray:
    """(x - median) / (1.4826 * MAD): a z-score that one outlier does not drag (0 where all agree)."""
    med = float(np.median(values))
    mad = float(np.median(np.abs(values - med))) * 1.4826
    if mad <= 0:
        mad = float(np.mean(np.abs(values - med))) * 1.2533 or 1.0  # more than half the ranks equal
    return (values - med) / mad


def _finding(fid: str, title: str, status: str, summary: str, metrics: list[Metric], **kw: Any) -> Finding:
    return Finding(
        id=fid,
        title=title,
        check_title=kw.pop("check_title", title),
        section=SECTION,
        status=status,
        summary=summary,
        link=kw.pop("link", GUIDE_MULTI),
        recommendation=kw.pop("recommendation", ""),
        metrics=metrics,
        source="tb_gpu_advisor/job.py",
        **kw,
    )


def _ms(v: float | None) -> str:
    return f"{v:.2f} ms" if v is not None else "?"


def job_findings(rows: list[dict], framework: str, world_size: int | None) -> list[Finding]:
    """The job checks on the picked cycle's ranks (one row each)."""
    out: list[Finding] = []
    captured = len(rows)
    pytorch = framework == "pytorch"
    # job.partial: ranks the capture lacks, and ranks whose cycle holds no complete step
    incomplete = [rank_label(r) for r in rows if not r["steps"]]
    missing = (world_size or captured) - captured
    if missing > 0 or incomplete:
        parts = []
        if missing > 0:
            parts.append(f"{captured} of {world_size} ranks captured")
        if incomplete:
            parts.append(f"no complete step in the picked cycle on {', '.join(incomplete[:8])}")
        out.append(
            _finding(
                "job.partial",
                f"Partial job capture: {captured} of {world_size or captured} ranks",
                INFO,
                "; ".join(parts) + ". The job checks compare the ranks that are there.",
                [
                    Metric("ranks_captured", captured, "", "ranks with a file"),
                    Metric("world_size", world_size, "", "ranks in the job"),
                ],
                check_title="Every rank captured",
                recommendation=(
                    "Profile every rank (or a known subset) in the same cycle: with torch.profiler, the same "
                    "schedule on every rank and tensorboard_trace_handler into one folder; a rank that is "
                    "not there cannot be named as the straggler."
                ),
            )
        )
    good = [r for r in rows if r["steps"] and r["compute_ms"] is not None]
    if len(good) < 2:
        return out
    compute = np.array([r["compute_ms"] for r in good], float)
    own = compute + np.array([r["input_ms"] or 0.0 for r in good], float)  # a rank's own work: compute, input
    coll = np.array([r["collective_ms"] or 0.0 for r in good], float)
    step = np.array([r["step_ms"] for r in good], float)
    med_step = float(np.median(step))
    # job.straggler: one rank's own work an outlier while the others wait for it in collectives
    z = _robust_z(own) if len(good) >= 3 else np.zeros(len(good))
    cand = []
    for i in np.argsort(-own, kind="stable").tolist():
        others = np.delete(own, i)
        excess = own[i] - float(np.median(others))
        wait = float(np.median(np.delete(coll, i))) - coll[i]
        outlier = z[i] >= STRAGGLER_Z if len(good) >= 3 else True  # two ranks: the excess alone decides
        if outlier and excess >= STRAGGLER_MIN_EXCESS * med_step and wait >= 0.5 * excess:
            cand.append((i, excess, wait))
    for i, _, _ in cand:
        good[i]["straggler"] = True
    if cand:
        i, excess, wait = cand[0]
        who = ", ".join(rank_label(good[j]) for j, _, _ in cand)
        what = "compute" if own[i] - compute[i] < excess / 2 else "own work (input wait and compute)"
        out.append(
            _finding(
                "job.straggler",
                f"Straggler: {rank_label(good[i])} spends {excess:.1f} ms more per step on {what}",
                WARNING,
                f"{who}: own work {_ms(float(own[i]))} per step (compute {_ms(float(compute[i]))}, input wait "
                f"{_ms(float(own[i] - compute[i]))}) against {_ms(float(np.median(np.delete(own, i))))} on the "
                f"median other rank of {len(good)}"
                + (f" (robust z {z[i]:.1f})" if len(good) >= 3 else "")
                + f"; the other ranks spend {_ms(wait)} more per step in collectives, waiting for it.",
                [
                    Metric("straggler_own_ms", float(own[i]), "ms", "the straggler's compute and input wait per step"),
                    Metric("excess_ms", excess, "ms", "its own work beyond the median other rank's, per step"),
                    Metric("robust_z", float(z[i]) if len(good) >= 3 else None, "", "(own - median) / (1.4826 MAD)"),
                    Metric("others_wait_ms", wait, "ms", "the other ranks' extra collective time per step"),
                ],
                check_title="No straggler rank",
                saving_ms=min(excess, med_step),
                saving_pct=pct(min(excess, med_step), med_step),
                saving_basis="the straggler doing the median rank's work: every rank's step shortens by the excess",
                recommendation=(
                    "Find why that rank does more work: an uneven data shard (DistributedSampler pads or drops so "
                    "every rank gets the same count), larger inputs on that rank, a slow DataLoader on that host, "
                    "a slower GPU or a throttled or shared host, or extra work on one rank (logging, "
                    "checkpointing, evaluation on rank 0): move it off the step or spread it."
                    if pytorch
                    else "Find why that host does more work: an uneven input shard, a slower input pipeline or "
                    "a shared host, or extra work (logging, checkpointing, evaluation) on one worker."
                ),
                details=[{"rank": rank_label(good[j]), "own_ms": float(own[j]), "excess_ms": e} for j, e, _ in cand],
            )
        )
    else:
        out.append(
            _finding(
                "job.straggler",
                "No straggler rank",
                PASS,
                f"No rank's own work per step stands out across {len(good)} ranks while the others wait (median "
                f"{_ms(float(np.median(own)))}"
                + (f", largest robust z {float(z.max()):.1f}, needs {STRAGGLER_Z}" if len(good) >= 3 else "")
                + ").",
                [
                    Metric(
                        "robust_z",
                        float(z.max()) if len(good) >= 3 else None,
                        "",
                        "largest (own - median) / (1.4826 MAD)",
                    )
                ],
            )
        )
    # job.imbalance: spread of compute across ranks
    spread = pct(float(compute.max() - compute.min()), float(compute.max())) or 0.0
    out.append(
        _finding(
            "job.imbalance",
            f"Compute imbalance across ranks: {spread:.1f}% spread"
            if spread >= IMBALANCE_WARNING_PCT
            else "Ranks do equal compute",
            WARNING if spread >= IMBALANCE_WARNING_PCT else PASS,
            f"Compute per step ranges from {_ms(float(compute.min()))} to {_ms(float(compute.max()))} across {len(good)} ranks "
            f"({spread:.1f}% of the largest).",
            [Metric("compute_spread_pct", spread, "%", "(max - min) / max of compute per step across ranks")],
            check_title="Ranks do equal compute",
            thresholds={"warning": IMBALANCE_WARNING_PCT},
            threshold_units={"warning": "%"},
            recommendation=(
                "Give every rank the same work: equal shards and batch sizes, the same model partition size "
                "(pipeline or tensor parallel), no extra work on one rank."
            ),
        )
    )
    # job.exposed-comm: collective time not hidden behind compute
    exposed = np.array([r["exposed_collective_ms"] or 0.0 for r in good], float)
    share = np.array([pct(e, s) or 0.0 for e, s in zip(exposed, step)], float)
    i = int(np.argmax(share))
    status = CRITICAL if share[i] >= EXPOSED_CRITICAL_PCT else WARNING if share[i] >= EXPOSED_WARNING_PCT else PASS
    straggling = any(r.get("straggler") for r in good)
    summary = (
        f"Up to {share[i]:.1f}% of the step ({_ms(float(exposed[i]))} on {rank_label(good[i])}) is collective "
        f"communication not overlapped with compute; median {float(np.median(share)):.1f}% across {len(good)} ranks."
    )
    if straggling and status != PASS:
        summary += " Most of it is waiting for the straggler: fix that first."
    out.append(
        _finding(
            "job.exposed-comm",
            f"Exposed communication: {share[i]:.1f}% of the step"
            if status != PASS
            else "Communication is hidden behind compute",
            status,
            summary,
            [
                Metric("exposed_pct", float(share[i]), "%", "collective time outside compute, share of the step"),
                Metric("exposed_ms", float(exposed[i]), "ms", "collective time outside compute per step"),
                Metric("collective_ms", float(coll[i]), "ms", "collective time per step"),
            ],
            check_title="Communication is hidden behind compute",
            thresholds={"warning": EXPOSED_WARNING_PCT, "critical": EXPOSED_CRITICAL_PCT},
            threshold_units={"warning": "%", "critical": "%"},
            link=PYTORCH_DDP if pytorch else GUIDE_MULTI,
            recommendation=(
                "Overlap the all-reduce with the backward pass: DDP buckets gradients (`bucket_cap_mb`, 25 MB by "
                "default; larger buckets mean fewer calls, smaller ones start sooner), so check that no unused "
                "parameters force `find_unused_parameters=True`. Communicate less often: gradient accumulation "
                "with `model.no_sync()` on all but the last micro-batch. With FSDP, prefetch the next "
                "all-gather (`forward_prefetch=True`, `backward_prefetch=BackwardPrefetch.BACKWARD_PRE`)."
                if pytorch
                else "Overlap the all-reduce with the backward pass and send fewer, larger messages: "
                "tf.distribute's CommunicationOptions (bytes_per_pack) packs gradients; accumulate gradients "
                "over several batches to all-reduce less often."
            ),
        )
    )
    return out


def mark_outliers(rows: list[dict]) -> None:
    """Each row's `outliers`: the measures in which it stands out from the other ranks (robust z at
    least STRAGGLER_Z either way, and OUTLIER_MIN_SHARE of the median step from the median)."""
    for r in rows:
        r["outliers"] = []
    good = [r for r in rows if r["steps"] and r["step_ms"] is not None]
    if len(good) < 3:
        return
    floor = OUTLIER_MIN_SHARE * float(np.median([r["step_ms"] for r in good]))
    for key in OUTLIER_MEASURES:
        have = [r for r in good if r[key] is not None]
        if len(have) < 3:
            continue
        v = np.array([r[key] for r in have], float)
        z = _robust_z(v)
        far = np.abs(v - float(np.median(v))) >= floor
        for r, zi, f in zip(have, z.tolist(), far.tolist()):
            if abs(zi) >= STRAGGLER_Z and f:
                r["outliers"].append(key)


def jobs(reports: list[dict], cycle: int | None = None) -> list[dict]:
    """Per job with two or more ranks (or one rank with several cycles, or ranks missing): the ranks of
    the picked cycle side by side and the job checks. `cycle`: the index to pick (0 the first, -1 the
    last); by default the latest in which every rank has a complete step."""
    by_job: dict[str, list[dict]] = {}
    for r in reports:
        m = r.get("rank_measures")
        if m:
            by_job.setdefault(m["job"], []).append(r)
    out = []
    for job, rs in by_job.items():
        ranks: dict[str, list[dict]] = {}
        for r in rs:
            m = r["rank_measures"]
            ident = f"rank {m['rank']}" if m["rank"] is not None else m["worker"]
            ranks.setdefault(ident, []).append(r)
        for cycles in ranks.values():
            cycles.sort(key=lambda r: _cycle_key(r["rank_measures"]["cycle"]))
        world = max((r["rank_measures"]["world_size"] or 0 for r in rs), default=0) or None
        n_cycles = max(len(c) for c in ranks.values())
        if len(ranks) < 2 and n_cycles < 2 and not (world and world > len(ranks)):
            continue
        complete = [
            k for k in range(n_cycles) if all(k < len(c) and c[k]["rank_measures"]["steps"] for c in ranks.values())
        ]
        if cycle is not None:
            pick = cycle if cycle >= 0 else n_cycles + cycle
            if not 0 <= pick < n_cycles:
                raise ValueError(
                    f"job {job} has {n_cycles} profiling cycle{'s' if n_cycles != 1 else ''}; no cycle {cycle}"
                )
        else:
            pick = complete[-1] if complete else n_cycles - 1
        rows = []
        for _ident, c in sorted(
            ranks.items(),
            key=lambda kv: (kv[1][0]["rank_measures"]["rank"] is None, kv[1][0]["rank_measures"]["rank"] or 0, kv[0]),
        ):
            r = c[min(pick, len(c) - 1)]
            m = r["rank_measures"]
            worst = worst_finding(r.get("checks", []))
            rows.append(
                {
                    **m,
                    "run": r["run"],
                    "host": r["host"],
                    "cycles": len(c),
                    "straggler": False,
                    "device_busy_pct": (r.get("headline") or {}).get("device_busy_pct"),
                    "worst": f"{worst['id']} ({worst['status']})" if worst else None,
                }
            )
        framework = str(next((r.get("framework") for r in rs if r.get("framework")), "unknown"))
        findings = job_findings(rows, framework, world)
        mark_outliers(rows)
        timed = [x for x in rows if x["step_ms"] is not None]
        out.append(
            {
                "run": job,
                "world_size": world,
                "ranks_captured": len(ranks),
                "cycles": n_cycles,
                "cycle": pick,
                "complete_cycles": complete,
                # per cycle, the ranks with a file in it and those with a step with work: the tab's picker
                "cycle_ranks": [
                    {
                        "files": sum(1 for c in ranks.values() if k < len(c)),
                        "with_steps": sum(1 for c in ranks.values() if k < len(c) and c[k]["rank_measures"]["steps"]),
                    }
                    for k in range(n_cycles)
                ],
                "ranks": [{**x, "label": rank_label(x)} for x in rows],
                "checks": [f.to_json() for f in findings],
                # the earlier across-hosts form, kept for tools that read the JSON
                "hosts": [
                    {
                        "host": x["host"],
                        "step_mean_ms": x["step_ms"],
                        "device_busy_pct": x["device_busy_pct"],
                        "worst": x["worst"],
                    }
                    for x in timed
                ],
                # the straggler where there is one (in a synchronous job every rank's step is as long)
                "slowest_host": next((x["host"] for x in rows if x["straggler"]), None)
                or (max(timed, key=lambda x: x["step_ms"])["host"] if timed else None),
                "stragglers": [x["host"] for x in rows if x["straggler"]],
            }
        )
    return out
