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
from tb_gpu_advisor.checks import Options, run_job_checks
from tb_gpu_advisor.checks.job import rank_label, robust_z
from tb_gpu_advisor.discovery import PYTORCH_TRACE, HostFile
from tb_gpu_advisor.profile import Kind
from tb_gpu_advisor.report import NOT_APPLICABLE, worst_finding

# Host spans of collective communication: gloo's and NCCL's own annotations, c10d's ops, and
# record_param_comms (what PyTorch wraps every collective in).
COLLECTIVE_HOST = re.compile(r"^(gloo:|nccl:|c10d::|record_param_comms$)")
_SPAN = re.compile(r"^(?P<worker>.+)\.(?P<span>\d+)$")
# a rank's measure is marked an outlier (in the tab and the CLI) at a robust z of OUTLIER_Z, 3+ ranks,
# when it is also this share of the median step away from the median: no flags for microseconds
OUTLIER_Z = 3.5
OUTLIER_MIN_SHARE = 0.05
OUTLIER_MEASURES = ("step_ms", "compute_ms", "collective_ms", "exposed_collective_ms", "input_ms")


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


def mark_outliers(rows: list[dict]) -> None:
    """Each row's `outliers`: the measures in which it stands out from the other ranks (robust z at
    least OUTLIER_Z either way, and OUTLIER_MIN_SHARE of the median step from the median)."""
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
        z = robust_z(v)
        far = np.abs(v - float(np.median(v))) >= floor
        for r, zi, f in zip(have, z.tolist(), far.tolist()):
            if abs(zi) >= OUTLIER_Z and f:
                r["outliers"].append(key)


def jobs(reports: list[dict], cycle: int | None = None, options: Options | None = None) -> list[dict]:
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
        findings = run_job_checks(rows, framework, world, options)
        straggling = {d["host"] for f in findings if f.id == "job.straggler" for d in f.details}
        for x in rows:
            x["straggler"] = x["host"] in straggling
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
                "checks": [f.to_json() for f in findings if f.status != NOT_APPLICABLE],
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
