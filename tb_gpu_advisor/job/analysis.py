"""A run as a training job: its ranks, their profiling cycles, and the checks across ranks.

A job's **ranks** are its processes: PyTorch's `distributedInfo.rank`, else the worker (the file's name
without its span), or an XSpace host. A rank's files at different times are its **profiling cycles**
(`torch.profiler`'s `schedule(repeat=N)` spans, XSpace sessions of one run folder): one is picked (the
latest in which every captured rank has a complete step), never compared with the others as peers.

`analyse_jobs` reads the reports of a run (each carries its file's `HostDigest` as `rank_measures`, so
workers return nothing else) and gives one `JobAnalysis` per job; `jobs` is its JSON, what the CLI and
the plugin's all-hosts view answer.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from tb_gpu_advisor.checks import Options, run_job_checks, stragglers
from tb_gpu_advisor.checks.findings import NOT_APPLICABLE, Finding
from tb_gpu_advisor.checks.job import rank_label, robust_z
from tb_gpu_advisor.measures import CAUSE_KEYS, CAUSES, Arrivals, arrivals, median
from tb_gpu_advisor.measures.rank import HostDigest, RankRow
from tb_gpu_advisor.report import worst_finding

# a rank's measure is marked an outlier (in the tab and the CLI) at a robust z of OUTLIER_Z, 3+ ranks,
# when it is also this share of the median step away from the median: no flags for microseconds
OUTLIER_Z = 3.5
OUTLIER_MIN_SHARE = 0.05
OUTLIER_MEASURES = ("step_ms", "compute_ms", "collective_ms", "exposed_collective_ms", "input_ms")


@dataclasses.dataclass(frozen=True)  # no slots: to_dict calls super()
class JobRank(RankRow):
    """A rank of a job in the picked cycle: its digest, the file it comes from (RankRow, what the job
    checks read) and what the job says."""

    straggler: bool = False
    # of its collective time per step, what it spends waiting for the straggler: the excess over the
    # straggler's own collective time (None without a straggler, and on the straggler)
    straggler_wait_ms: float | None = None
    device_busy_pct: float | None = None
    worst: str | None = None  # the rank's own worst finding, `id (status)`
    outliers: tuple[str, ...] = ()  # the measures it stands out in (OUTLIER_MEASURES)
    # its collectives paired with the other ranks' (measures/arrival.py), per step; None where not paired
    wait_ms: float | None = None  # its time in them waiting for ranks that arrive later
    transfer_ms: float | None = None  # their transfer: each one's shortest time on any rank
    charged_ms: float | None = None  # the other ranks' wait in the collectives it reached last
    last_arrivals: float | None = None  # the collectives it reached last

    @property
    def label(self) -> str:
        return rank_label(self)

    def to_dict(self) -> dict[str, Any]:
        d = {**super().to_dict(), "outliers": list(self.outliers), "label": self.label}
        del d["collective_arrivals"]  # the job's `arrivals` says what they give, compactly
        return d


@dataclasses.dataclass(frozen=True)
class JobAnalysis:
    """One job: its ranks in the picked cycle, its cycles, and the job checks' findings."""

    run: str
    world_size: int | None
    ranks_captured: int
    cycles: int
    cycle: int  # the picked cycle's index
    complete_cycles: list[int]  # the cycles in which every rank has a step with work
    cycle_ranks: list[tuple[int, int]]  # per cycle: ranks with a file in it, ranks with a step with work
    ranks: list[JobRank]
    findings: list[Finding]
    paired: Arrivals | None = None  # the ranks' collectives paired (measures/arrival.py)

    @property
    def stragglers(self) -> list[str]:
        return [x.host for x in self.ranks if x.straggler]

    def to_dict(self) -> dict[str, Any]:
        timed = [x for x in self.ranks if x.step_ms is not None]
        slowest = max(timed, key=lambda x: x.step_ms or 0.0).host if timed else None
        return {
            "run": self.run,
            "world_size": self.world_size,
            "ranks_captured": self.ranks_captured,
            "cycles": self.cycles,
            "cycle": self.cycle,
            "complete_cycles": list(self.complete_cycles),
            # per cycle, the ranks with a file in it and those with a step with work: the tab's picker
            "cycle_ranks": [{"files": f, "with_steps": s} for f, s in self.cycle_ranks],
            "ranks": [x.to_dict() for x in self.ranks],
            "checks": [f.to_json() for f in self.findings if f.status != NOT_APPLICABLE],
            # the earlier across-hosts form, kept for tools that read the JSON
            "hosts": [
                {"host": x.host, "step_mean_ms": x.step_ms, "device_busy_pct": x.device_busy_pct, "worst": x.worst}
                for x in timed
            ],
            # the straggler where there is one (in a synchronous job every rank's step is as long)
            "slowest_host": next(iter(self.stragglers), None) or slowest,
            "stragglers": self.stragglers,
            "arrivals": self._arrivals(),
        }

    def _arrivals(self) -> dict[str, Any] | None:
        """The collectives paired across ranks: how many, and those that kept the others waiting longest,
        with who arrived last and by how much (ARRIVALS_SHOWN of them)."""
        a = self.paired
        if a is None or not a.steps:
            return None
        label = [x.label for x in self.ranks]
        top = sorted(a.collectives, key=lambda c: -c.lag_ms)[:ARRIVALS_SHOWN]
        return {
            "steps": a.steps,
            "per_step": a.per_step,
            "longest": [
                {
                    "step": c.step,
                    "collective": c.index + 1,
                    "kind": c.kind_word,
                    "last": label[c.last],
                    "first": label[c.first],
                    "lag_ms": c.lag_ms,
                    "alone_ms": c.alone_ms,
                    "transfer_ms": c.transfer_ms,
                    "charged_ms": c.charged_ms,
                    "late": {CAUSE_KEYS[k]: getattr(c, k) for k in CAUSES},
                }
                for c in top
            ],
        }


ARRIVALS_SHOWN = 16  # the job's JSON lists the collectives with the longest waits, this many


def _cycle_key(cycle: str) -> tuple[int, int | str]:
    return (0, int(cycle)) if cycle.isdigit() else (1, cycle)


def outliers(rows: Sequence[HostDigest]) -> list[tuple[str, ...]]:
    """Per row, the measures in which it stands out from the other ranks (robust z at least OUTLIER_Z
    either way, and OUTLIER_MIN_SHARE of the median step from the median)."""
    out: list[list[str]] = [[] for _ in rows]
    good = [i for i, r in enumerate(rows) if r.steps and r.step_ms is not None]
    if len(good) < 3:
        return [() for _ in rows]
    floor = OUTLIER_MIN_SHARE * median([rows[i].step_ms for i in good])
    for key in OUTLIER_MEASURES:
        have = [i for i in good if getattr(rows[i], key) is not None]
        if len(have) < 3:
            continue
        v = np.array([getattr(rows[i], key) for i in have], float)
        z = robust_z(v)
        far = np.abs(v - median(v)) >= floor
        for i, zi, f in zip(have, z.tolist(), far.tolist()):
            if abs(zi) >= OUTLIER_Z and f:
                out[i].append(key)
    return [tuple(o) for o in out]


def _paired(rows: list[JobRank], a: Arrivals) -> list[JobRank]:
    """Each rank's wait, transfer, charged wait and last arrivals in the collectives paired across ranks."""
    if not a.steps:
        return rows
    return [
        dataclasses.replace(
            x, wait_ms=a.wait_ms[i], transfer_ms=a.transfer_ms[i], charged_ms=a.charged_ms[i], last_arrivals=a.last[i]
        )
        for i, x in enumerate(rows)
    ]


def _waits(rows: list[JobRank], a: Arrivals) -> list[JobRank]:
    """Each other rank's wait for the straggler. Where the collectives are paired across ranks: its wait
    in those the straggler reached last. Else its collectives per step beyond the straggler's own (a
    rank's collective time holds both the transfer and the wait for the last rank to arrive; the
    straggler arrives last, so its own collective time is about the transfer alone)."""
    own = [x.collective_ms or 0.0 for x in rows if x.straggler and x.steps]
    if not own:
        return rows
    if a.steps:
        waited = [0.0 if x.straggler else None for x in rows]
        for j, x in enumerate(rows):
            if x.straggler:
                for i, w in enumerate(a.waited_for(j)):
                    if w is not None and not rows[i].straggler:
                        waited[i] = (waited[i] or 0.0) + w
        return [
            dataclasses.replace(x, straggler_wait_ms=w) if not x.straggler and w is not None else x
            for x, w in zip(rows, waited)
        ]
    base = min(own)
    return [
        dataclasses.replace(x, straggler_wait_ms=max(0.0, x.collective_ms - base))
        if not x.straggler and x.steps and x.collective_ms is not None
        else x
        for x in rows
    ]


def _rank_key(kv: tuple[str, list[tuple[HostDigest, dict]]]) -> tuple[bool, int, str]:
    d = kv[1][0][0]
    return (d.rank is None, d.rank or 0, kv[0])


def analyse_jobs(reports: list[dict], cycle: int | None = None, options: Options | None = None) -> list[JobAnalysis]:
    """Per job with two or more ranks (or one rank with several cycles, or ranks missing): the ranks of
    the picked cycle side by side and the job checks. `cycle`: the index to pick (0 the first, -1 the
    last); by default the latest in which every rank has a complete step. Raises ValueError for a
    cycle the job does not have (the message says how many it has)."""
    by_job: dict[str, list[tuple[HostDigest, dict]]] = {}
    for r in reports:
        m = r.get("rank_measures")
        if m:
            d = HostDigest.from_dict(m)
            by_job.setdefault(d.job, []).append((d, r))
    out = []
    for job, rs in by_job.items():
        ranks: dict[str, list[tuple[HostDigest, dict]]] = {}
        for d, r in rs:
            ranks.setdefault(f"rank {d.rank}" if d.rank is not None else d.worker, []).append((d, r))
        for cycles in ranks.values():
            cycles.sort(key=lambda dr: _cycle_key(dr[0].cycle))
        world = max((d.world_size or 0 for d, _ in rs), default=0) or None
        n_cycles = max(len(c) for c in ranks.values())
        if len(ranks) < 2 and n_cycles < 2 and not (world and world > len(ranks)):
            continue
        complete = [k for k in range(n_cycles) if all(k < len(c) and c[k][0].steps for c in ranks.values())]
        if cycle is not None:
            pick = cycle if cycle >= 0 else n_cycles + cycle
            if not 0 <= pick < n_cycles:
                raise ValueError(
                    f"job {job} has {n_cycles} profiling cycle{'s' if n_cycles != 1 else ''}; no cycle {cycle}"
                )
        else:
            pick = complete[-1] if complete else n_cycles - 1
        rows = []
        for _ident, c in sorted(ranks.items(), key=_rank_key):
            d, r = c[min(pick, len(c) - 1)]
            worst = worst_finding(r.get("checks", []))
            rows.append(
                JobRank(
                    **dataclasses.asdict(d),
                    run=r["run"],
                    host=r["host"],
                    cycles=len(c),
                    device_busy_pct=(r.get("headline") or {}).get("device_busy_pct"),
                    worst=f"{worst['id']} ({worst['status']})" if worst else None,
                )
            )
        framework = str(next((r.get("framework") for _, r in rs if r.get("framework")), "unknown"))
        findings = run_job_checks(rows, framework, world, options)
        straggling = stragglers(findings)
        marked = outliers(rows)
        rows = [dataclasses.replace(x, straggler=x.host in straggling, outliers=o) for x, o in zip(rows, marked)]
        paired = arrivals(rows)
        rows = _waits(_paired(rows, paired), paired)
        cycle_ranks = [
            (
                sum(1 for c in ranks.values() if k < len(c)),
                sum(1 for c in ranks.values() if k < len(c) and c[k][0].steps),
            )
            for k in range(n_cycles)
        ]
        out.append(JobAnalysis(job, world, len(ranks), n_cycles, pick, complete, cycle_ranks, rows, findings, paired))
    return out


def jobs(reports: list[dict], cycle: int | None = None, options: Options | None = None) -> list[dict]:
    """`analyse_jobs` as JSON: the entry point of the CLI's `analyze` and the plugin's all-hosts view."""
    return [j.to_dict() for j in analyse_jobs(reports, cycle, options)]
