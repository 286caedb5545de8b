"""How a check declares itself, and the context it runs in.

Each check is a function of the measurements (`measures.Measures`) decorated with `@check(...)`,
which records its id, its two titles (what passing means, and the problem with its number), the guide
section and link, thresholds (defaults, units), how it is measured, and its recommendation and
snippet, per framework where they differ; and what the rest of the house reads of it: the table its
evidence is in (`table`), its measure in each step, which `diff` weighs against the steps' noise
(`noise`), its own time per step, which `diff` judges a change of it by (`time`), whether it reads a
rank's collective time as transfer (`collective_time`), the headline number it judges (`headline`),
and whether a job check names the job's stragglers (`marks_stragglers`). The catalogue
(`tb-gpu-advisor checks`, the panel's checklist, the table in docs/checks.md) is generated from these
declarations; nothing is listed twice.
A check's module is named after its id's prefix (`input.bound` lives in `checks/input.py`).
"""

from __future__ import annotations

import dataclasses
import string
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from tb_gpu_advisor.checks.findings import (
    CRITICAL,
    NOT_APPLICABLE,
    PASS,
    PROBLEMS,
    WARNING,
    Evidence,
    Finding,
    Metric,
    by_cost,
)
from tb_gpu_advisor.measures import (
    JAX,
    MATRIX_CORE_NAMES,
    PYTORCH,
    TENSORFLOW,
    UNKNOWN,
    Arrivals,
    Device,
    GpuMeasures,
    Measures,
    Prediction,
    RankRow,
    Window,
    arrivals,
)

GUIDE = "https://www.tensorflow.org/guide/gpu_performance_analysis"
# Each framework's own documentation: a PyTorch or JAX finding links there, not to TensorFlow's guide.
PYTORCH_GUIDE = "https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html"
JAX_GUIDE = "https://docs.jax.dev/en/latest/gpu_performance_tips.html"
# The PyTorch page of each section (a check's own `links` entry wins).
PYTORCH_SECTION_LINKS = {
    "capture": "https://pytorch.org/docs/stable/profiler.html",
    "input": "https://pytorch.org/docs/stable/data.html#multi-process-data-loading",
    "utilisation": PYTORCH_GUIDE,
    "kernels": PYTORCH_GUIDE,
    "precision": "https://pytorch.org/docs/stable/amp.html",
    "multigpu": "https://pytorch.org/docs/stable/notes/ddp.html",
}
FRAMEWORKS = (TENSORFLOW, JAX, PYTORCH, UNKNOWN)

# Guide sections: (number, title, anchor on the guide page)
SECTIONS = {
    "capture": ("0", "Before the checklist", "#overview"),
    "input": ("1", "Input pipeline (guide 1.1)", "#1._debug_the_input_pipeline"),
    "utilisation": ("2", "One GPU: utilisation (guide 1.2)", "#2._debug_the_performance_of_one_gpu"),
    "kernels": ("3", "One GPU: kernel efficiency (guide 1.2.3)", "#3._more_efficient_kernels_on_gpus"),
    "precision": ("4", "Mixed precision and XLA (guide 1.3)", "#3._enable_mixed_precision_and_xla"),
    "multigpu": (
        "5",
        "Several GPUs on one host (guide 2)",
        "#2._optimize_the_performance_on_the_multi-gpu_single_host",
    ),
    "job": ("6", "The job across ranks (guide 2)", "#2._optimize_the_performance_on_the_multi-gpu_single_host"),
}
HOST, JOB = "host", "job"  # what a check reads: one host file's analysis, or the ranks of a job


@dataclasses.dataclass(frozen=True)
class NoiseMeasure:
    """A check whose measure is a share of the step: what the measure is, and its value in each of the
    reported steps (ps), averaged over the GPUs given (their ids; the host's where none). `diff` calls
    a change of it only beyond the steps' own variation (report/compare.py)."""

    what: str
    per_step: Callable[[Measures, list[int]], np.ndarray]


@dataclasses.dataclass(frozen=True)
class OwnTime:
    """A check's own time per step (ms), which `diff` judges a change of the check by
    (report/compare.py): not its share of the step, which grows when the rest of the step shrinks, nor
    its saving, a prediction that grows when another bottleneck goes.

    `metric`: the finding's metric that holds it; None: the device time per step of the ops or kernels
    its finding names in its table (each run's, measured in both). `wait`: a time spent waiting (the GPU
    for the host, the host for input or for the GPU), which grows by as much as the work beside it
    shrinks, or as the profiler slows the host, without its cause growing: `diff` counts its growth only
    as far as the step grew."""

    metric: str | None
    wait: bool = False


TABLE_ROWS = OwnTime(None)  # the device time of the rows the finding names in its table


@dataclasses.dataclass(frozen=True)
class Threshold:
    default: float
    unit: str
    description: str


Text = str | dict[str, str]  # one text, or one per framework ("default" for the others)

# Matmul/convolution time in kernels the naming table does not identify (model/kernel_naming.py), above
# which the Tensor Core checks withhold their verdict (Context.unidentified_matmul): a name nothing
# explains says nothing of the unit that ran it
UNKNOWN_MATMUL = Threshold(25.0, "%", "matmul/conv kernel time nothing identifies, above which no verdict is given")


def paragraphs(text: str) -> str:
    """Source-wrapped text as paragraphs: lines joined, paragraphs separated by a blank line."""
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip())


def for_framework(text: Text | None, framework: str) -> str | None:
    if text is None or isinstance(text, str):
        return text
    return text.get(framework, text.get("default"))


@dataclasses.dataclass(frozen=True)
class Check:
    id: str
    title: Text  # what passing means: "Input pipeline keeps up"
    problem: Text  # the problem with its number, formatted with the finding's metrics (per framework)
    section: str  # key of SECTIONS
    anchor: str  # the guide heading this check comes from
    measures: str  # how it is measured, in a sentence or two
    thresholds: dict[str, Threshold]
    recommendation: Text
    snippet: Text | None
    fn: Callable[..., Finding]  # (Context) for HOST checks, (JobContext) for JOB checks
    needs_gpu: bool = False  # not-applicable, without running, on a profile with no active GPU
    frameworks: tuple[str, ...] = FRAMEWORKS  # the frameworks the check applies to
    variants: tuple[str, ...] = ()  # the problem titles, for a check whose `problem` is only "{what}"
    links: dict[str, str] | None = None  # a framework's own page for this check, where not its section's
    scope: str = HOST  # HOST: run on each file's analysis (Context); JOB: on a job's ranks (JobContext)
    order: int = 0  # its place in the guide's order within its section (the catalogue's, the report's)
    table: str | None = None  # the table its evidence is in (tables/): the finding links to its rows there
    noise: NoiseMeasure | None = None  # its measure per step, for `diff` to weigh against the steps' noise
    time: OwnTime | None = None  # its own time per step, which `diff` judges it by; None: by its status
    # it reads a rank's collective time as transfer: in a job with a straggler, most of that time on the
    # other ranks is waiting for it, which the report and the panel say beside it
    collective_time: bool = False
    headline: str | None = None  # the headline number it judges: left unjudged where it does not apply
    marks_stragglers: bool = False  # a job check whose details' hosts are the job's stragglers (marked in its ranks)

    def evaluate(self, ctx: Context) -> Finding:
        m = ctx.m
        if m.framework not in self.frameworks:
            return ctx.not_applicable(
                f"A check for {_names(self.frameworks)} programs; this is a {m.framework} capture."
            )
        if self.needs_gpu and not m.gpu_ids:
            return ctx.not_applicable(NO_GPU)
        return self.fn(ctx)

    @property
    def link(self) -> str:
        return GUIDE + self.anchor

    def link_for(self, framework: str) -> str:
        """The documentation a finding links to: the framework's own (PyTorch's, JAX's), TensorFlow's
        guide for TensorFlow and unknown captures."""
        if self.links and framework in self.links:
            return self.links[framework]
        if framework == PYTORCH:
            return PYTORCH_SECTION_LINKS.get(self.section, PYTORCH_GUIDE)
        if framework == JAX:
            return JAX_GUIDE
        return self.link

    @property
    def section_title(self) -> str:
        return SECTIONS[self.section][1]

    @property
    def source(self) -> str:
        return "tb_gpu_advisor/" + self.fn.__module__.split("tb_gpu_advisor.", 1)[-1].replace(".", "/") + ".py"

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": for_framework(self.title, TENSORFLOW),
            "problem": " / ".join(self.variants) if self.variants else for_framework(self.problem, TENSORFLOW),
            "section": self.section_title,
            "section_order": int(SECTIONS[self.section][0]),
            "link": self.link,
            "measures": self.measures,
            "source": self.source,
            "frameworks": list(self.frameworks),
            "scope": self.scope,
            "thresholds": [
                {"name": k, "default": t.default, "unit": t.unit, "description": t.description}
                for k, t in self.thresholds.items()
            ],
            "recommendation": for_framework(self.recommendation, TENSORFLOW),
            "snippet": for_framework(self.snippet, TENSORFLOW),
            "table": self.table,
            "noise": self.noise.what if self.noise else None,
            "collective_time": self.collective_time,
            "headline": self.headline,
        }


def _names(frameworks: tuple[str, ...]) -> str:
    labels = {TENSORFLOW: "TensorFlow", JAX: "JAX", PYTORCH: "PyTorch", UNKNOWN: "other"}
    return " and ".join(labels[f] for f in frameworks if f != UNKNOWN)


REGISTRY: list[Check] = []
NO_GPU = "No GPU activity in the profile."


def check(
    *,
    id: str,
    title: Text,
    problem: Text,
    section: str,
    anchor: str,
    measures: str,
    recommendation: Text,
    snippet: Text | None = None,
    thresholds: dict[str, Threshold] | None = None,
    needs_gpu: bool = False,
    frameworks: tuple[str, ...] = FRAMEWORKS,
    variants: tuple[str, ...] = (),
    links: dict[str, str] | None = None,
    scope: str = HOST,
    order: int,
    table: str | None = None,
    noise: NoiseMeasure | None = None,
    time: OwnTime | None = None,
    collective_time: bool = False,
    headline: str | None = None,
    marks_stragglers: bool = False,
) -> Callable[[Callable[..., Finding]], Callable[..., Finding]]:
    def clean(t: Text | None) -> Text | None:
        if t is None:
            return None
        if isinstance(t, str):
            return paragraphs(t)
        return {k: paragraphs(v) for k, v in t.items()}

    def register(fn: Callable[..., Finding]) -> Callable[..., Finding]:
        if any(c.id == id for c in REGISTRY):
            raise ValueError(f"duplicate check id {id}")
        snip = (
            snippet.strip()
            if isinstance(snippet, str)
            else ({k: v.strip() for k, v in snippet.items()} if snippet else None)
        )
        rec = clean(recommendation)
        assert rec is not None
        REGISTRY.append(
            Check(
                id,
                title,
                problem,
                section,
                anchor,
                paragraphs(measures),
                thresholds or {},
                rec,
                snip,
                fn,
                needs_gpu,
                frameworks,
                variants,
                links,
                scope,
                order,
                table,
                noise,
                time,
                collective_time,
                headline,
                marks_stragglers,
            )
        )
        return fn

    return register


@dataclasses.dataclass
class Options:
    """What the user can set: threshold overrides (`check.threshold` -> value), the model's
    parameter count and the interconnect bandwidth (GB/s) for the all-reduce estimate."""

    overrides: dict[str, float] = dataclasses.field(default_factory=dict)
    params: int | None = None
    bandwidth_gbps: float | None = None
    # a finding's saving from its fix simulated on the step graph (docs/whatif.md); False: each
    # check's own local estimate (what the graph falls back to where it cannot tell)
    whatif: bool = True
    # the TensorBoard scalar the run logged its step time in (ms), which the step without the profiler
    # is scaled to meet where the run's folder has it (docs/whatif.md); None: not read
    step_time_tag: str | None = "step_time_ms"

    def validate(self) -> None:
        known = {f"{c.id}.{t}" for c in REGISTRY for t in c.thresholds}
        for key in self.overrides:
            if key not in known:
                raise ValueError(f"unknown threshold {key!r} (see `tb-gpu-advisor checks`)")

    def threshold(self, key: str, default: float) -> float:
        return float(self.overrides.get(key, default))


class _Metrics(dict):
    """Metric values for a problem title; a missing one shows as '?'."""

    def __missing__(self, key: str) -> str:
        return "?"


def problem_title(template: str, metrics: list[Metric]) -> str:
    values = _Metrics({m.name: m.value for m in metrics})
    try:
        return string.Formatter().vformat(template, (), values)
    except (ValueError, TypeError):  # a value is missing or not a number: the bare template
        return template.split(":")[0]


class Context:
    """What a check function sees: the measurements, its resolved thresholds, and finding builders."""

    def __init__(self, spec: Check, measures: Measures, options: Options):
        self.spec = spec
        self.m = measures
        self.options = options
        self.t = {k: options.threshold(f"{spec.id}.{k}", th.default) for k, th in spec.thresholds.items()}

    @property
    def framework(self) -> str:
        return self.m.framework

    def text(self, t: Text | None) -> str | None:
        return for_framework(t, self.framework)

    def finding(
        self,
        status: str,
        summary: str,
        metrics: list[Metric] | None = None,
        *,
        saving_ps: float | None = None,
        step_ps: float | None = None,
        saving_basis: str | None = None,
        evidence: Sequence[Window] | None = None,
        details: list[dict] | None = None,
        recommendation: str | None = None,
        snippet: str | None = None,
        device_id: int | None = None,
        title: str | None = None,
        whatif: Prediction | Callable[[], Prediction | None] | None = None,
        alternatives: Sequence[str] = (),
    ) -> Finding:
        """A finding. `saving_ps` is the estimated saving per step (ps) in steps of mean `step_ps`
        (the host's steps when not given), at most the step itself. `title` replaces the declared
        problem title, for a check that can find two kinds of problem. `whatif`: the step re-timed
        with the finding's fix (`m.predict`): its saving is the finding's, in steps without the
        profiler, and `saving_ps` is only used where the fix cannot be simulated. `alternatives`: the
        other changes its advice offers (`m.predict`'s names), each shown re-timed on its own where
        it applies."""
        metrics = metrics or []
        step = step_ps if step_ps is not None else self.m.host_steps.mean_ps
        shows_whatif = self.options.whatif and status in (*PROBLEMS, "info")
        if callable(whatif):  # simulated only for a finding that shows it: a pass needs no what-if
            whatif = whatif() if shows_whatif else None
        withheld = None
        if whatif is not None and shows_whatif:
            if whatif.withheld is not None:  # the evidence cannot support a saving: none, and why
                saving_ps = None
                withheld = f"no saving stated: {whatif.withheld}"
            else:
                saving_ps, step = whatif.saving_ps, whatif.step_ps
                saving_basis = f"the step re-timed with the fix: {whatif.sentence}; {whatif.basis}"
        else:
            whatif = None
        others = []
        if shows_whatif:
            for change in alternatives:
                pr = self.m.predict(change) if whatif is None or change != whatif.change else None
                if pr is not None:
                    others.append(pr.to_json())
        saving_ms = saving_pct = low_ms = high_ms = None
        if saving_ps is not None:
            # no saving exceeds the step it is part of (work attributed to a step can outlast it)
            saving_ps = min(max(float(saving_ps), 0.0), step) if step > 0 else max(float(saving_ps), 0.0)
            saving_ms = saving_ps / 1e9
            saving_pct = 100.0 * saving_ps / step if step > 0 else None
            low_ms, high_ms, saving_basis = self._saving_range(saving_ps, step, saving_basis, whatif)
        elif whatif is not None:
            saving_basis = withheld
        if whatif is not None:  # a simulated saving, tested against real fixes (docs/whatif.md)
            status = by_cost(status, saving_pct)
        if title is None:
            title = (
                problem_title(self.text(self.spec.problem) or "", metrics)
                if status in (*PROBLEMS, "info")
                else self.text(self.spec.title) or ""
            )
        return Finding(
            id=self.spec.id,
            title=title,
            check_title=self.text(self.spec.title) or "",
            section=self.spec.section_title,
            status=status,
            summary=summary,
            link=self.spec.link_for(self.framework),
            recommendation=paragraphs(recommendation)
            if recommendation
            else (self.text(self.spec.recommendation) or ""),
            snippet=snippet if snippet is not None else self.text(self.spec.snippet),
            metrics=metrics,
            thresholds=dict(self.t),
            threshold_units={k: th.unit for k, th in self.spec.thresholds.items()},
            saving_ms=saving_ms,
            saving_pct=saving_pct,
            saving_basis=saving_basis if saving_ps is not None or whatif is not None else None,
            saving_low_ms=low_ms,
            saving_high_ms=high_ms,
            evidence=[evidence_of(w) for w in evidence or []],
            details=details or [],
            device_id=device_id,
            source=self.spec.source,
            measures=self.spec.measures,
            names=named(evidence or [], details or []),
            whatif=whatif.to_json() if whatif is not None else None,
            alternatives=others,
        )

    def _saving_range(
        self, saving_ps: float, step_ps: float, basis: str | None, whatif: Prediction | None = None
    ) -> tuple[float | None, float | None, str | None]:
        """(low ms, high ms, basis) of a saving: the change two captures of this one's length and step
        spread would measure if the estimate came true (measures.StepSpread), within [0, step]; for a
        simulated saving, around the prediction's own range (the model's error on held-out pairs of its
        kind of fix and the profiler's cost's range: `Prediction.low_ps`, `high_ps`)."""
        spread = self.m.step_spread
        half = spread.half_range_ps
        if half is None and whatif is None:
            return None, None, basis
        lo, hi = (whatif.low_ps, whatif.high_ps) if whatif is not None else (saving_ps, saving_ps)
        low, high = max(min(lo, saving_ps) - (half or 0.0), 0.0), max(hi, saving_ps) + (half or 0.0)
        if step_ps > 0:
            high = min(high, step_ps)
        sd = f"(standard deviation {spread.sd_ps / 1e9:.2f} ms)"
        if whatif is None:
            text = (
                f"the range is what another capture of {spread.steps} steps would measure, at this one's "
                f"step-to-step spread {sd}"
            )
        else:
            text = whatif.range_sentence + (
                f", another capture of {spread.steps} steps at this one's spread {sd}" if half is not None else ""
            )
        return low / 1e9, high / 1e9, f"{basis}; {text}" if basis else text

    def not_applicable(self, reason: str) -> Finding:
        f = self.finding(NOT_APPLICABLE, reason)
        f.reason = reason
        return f

    def level(self, value: float | None, warning: str = "warning", critical: str | None = "critical") -> str:
        """Status of a measured value against this check's `warning`/`critical` thresholds."""
        if value is None:
            return PASS
        if critical is not None and critical in self.t and value >= self.t[critical]:
            return CRITICAL
        if warning in self.t and value >= self.t[warning]:
            return WARNING
        return PASS

    def need_two_gpus(self) -> Finding | None:
        n = len(self.m.gpu_ids)
        world = self.m.world_size or 0
        if n < 2 and world > 1:  # one rank's file: its peers are in other files
            return self.not_applicable(
                f"This file is one rank of a {world}-rank job, with {n} active GPU: the ranks are compared by the "
                "job checks (job.straggler, job.imbalance, job.exposed-comm, job.allreduce-count) when their "
                "files are in the run."
            )
        if n < 2:
            return self.not_applicable(f"Needs two or more active GPUs on the host ({n} found).")
        return None

    def tensor_core_gpus(self) -> tuple[list[GpuMeasures], Finding | None]:
        """(the active GPUs with Tensor Cores, None) when they run matmul/conv kernels, or ([], the
        not-applicable finding saying why not)."""
        m = self.m
        gpus = m.tensor_core_gpus
        if not gpus:
            amd = [g.device for g in m.gpus if g.device.is_amd]
            if amd:
                return [], self.not_applicable(amd_not_judged(amd[0]))
            return [], self.not_applicable(
                f"No GPU with Tensor Cores (compute capability {m.capabilities()}; needs 7.0 or newer)."
            )
        if not any(g.matmul.eligible.any() for g in gpus):
            return [], self.not_applicable("No matmul or convolution kernels in the profile.")
        return gpus, None

    def unidentified_matmul(self, gpus: list[GpuMeasures], check: str) -> Finding | None:
        """The not-applicable finding of a Tensor Core verdict withheld: when the matmul/convolution
        kernels that the naming table does not identify take more than the check's `unknown`
        threshold (texts.UNKNOWN_MATMUL) of the matmul/conv time, their names say nothing of the
        units that ran them; None when the verdict can be given."""
        eligible = sum(g.matmul_ps() / g.n for g in gpus)
        unknown = sum(g.matmul_unknown_ps() / g.n for g in gpus)
        share = 100.0 * unknown / eligible if eligible > 0 else 0.0
        if share <= self.options.threshold(f"{check}.unknown", UNKNOWN_MATMUL.default):
            return None
        g = max(gpus, key=lambda x: x.matmul_unknown_ps())
        mm = g.matmul
        rows = g.kernel_rows(mm.eligible & mm.unknown, limit=1)
        example = f" (e.g. {rows[0].kernel[:80]})" if rows else ""
        return self.not_applicable(
            f"{share:.1f}% of matmul/convolution time is in kernels whose names no entry of the kernel "
            f"naming table identifies{example}: what units ran them is unknown, so no Tensor Core verdict is given."
        )

    def worst(self, per_gpu: dict[int, float]) -> GpuMeasures:
        """The GPU with the largest value (the lowest id at equal values)."""
        d = max(per_gpu, key=lambda k: (per_gpu[k], -k))
        return self.m.gpu(d)


def amd_not_judged(device: Device) -> str:
    """Why a Tensor Core check says nothing on an AMD GPU: what its kernels' names can tell (the one
    rule, classify.AMD_MATRIX, which the kernels table applies too)."""
    return f"An AMD GPU: {device.describe()}. Its {MATRIX_CORE_NAMES}, so this check does not judge them."


def on_rocm(m: Measures, calls: Sequence[str] = ()) -> bool:
    """An AMD GPU's capture: one of its GPUs AMD's, or HIP's runtime among `calls` (where the trace
    lists no GPU)."""
    return any(g.device.is_amd for g in m.gpus) or any(n.startswith("hip") for n in calls)


def good_rows(rows: Sequence[RankRow]) -> list[RankRow]:
    """The ranks with a complete step and their measures: those the job checks compare."""
    return [r for r in rows if r.steps and r.compute_ms is not None]


class JobContext:
    """What a job check sees: the ranks of the picked cycle (`RankRow`s, measures/rank.py: each rank's
    digest, per step in ms, and its file; `job.JobRank`s), those with a complete step and their measures
    (`good`), the job's size and framework, its resolved thresholds, and a finding builder."""

    def __init__(
        self,
        spec: Check,
        rows: Sequence[RankRow],
        framework: str,
        world_size: int | None,
        options: Options,
        earlier: dict[str, Finding] | None = None,
        paired: Arrivals | None = None,
    ):
        self.spec = spec
        self.earlier = earlier or {}  # the findings of the job checks run before this one, by id
        self.rows = rows
        self.framework = framework
        self.world_size = world_size
        self.t = {k: options.threshold(f"{spec.id}.{k}", th.default) for k, th in spec.thresholds.items()}
        self.good = good_rows(rows)
        # the good rows' collectives paired across ranks (measures/arrival.py): who arrives last, waits
        self.arrivals = paired if paired is not None else arrivals(self.good)

    def text(self, t: Text | None) -> str | None:
        return for_framework(t, self.framework)

    def level(self, value: float, warning: str = "warning", critical: str | None = "critical") -> str:
        if critical is not None and critical in self.t and value >= self.t[critical]:
            return CRITICAL
        if warning in self.t and value >= self.t[warning]:
            return WARNING
        return PASS

    def finding(
        self,
        status: str,
        summary: str,
        metrics: list[Metric] | None = None,
        *,
        title: str | None = None,
        saving_ms: float | None = None,
        step_ms: float | None = None,
        saving_basis: str | None = None,
        details: list[dict] | None = None,
    ) -> Finding:
        metrics = metrics or []
        if title is None:
            title = (
                problem_title(self.text(self.spec.problem) or "", metrics)
                if status in (*PROBLEMS, "info")
                else self.text(self.spec.title) or ""
            )
        if saving_ms is not None and step_ms:
            saving_ms = min(max(saving_ms, 0.0), step_ms)
        status = by_cost(status, 100.0 * saving_ms / step_ms if saving_ms is not None and step_ms else None)
        return Finding(
            id=self.spec.id,
            title=title,
            check_title=self.text(self.spec.title) or "",
            section=self.spec.section_title,
            status=status,
            summary=summary,
            link=self.spec.link_for(self.framework),
            recommendation=self.text(self.spec.recommendation) or "",
            snippet=self.text(self.spec.snippet),
            metrics=metrics,
            thresholds=dict(self.t),
            threshold_units={k: th.unit for k, th in self.spec.thresholds.items()},
            saving_ms=saving_ms,
            saving_pct=100.0 * saving_ms / step_ms if saving_ms is not None and step_ms else None,
            saving_basis=saving_basis if saving_ms is not None else None,
            details=details or [],
            source=self.spec.source,
            measures=self.spec.measures,
        )


def named(evidence: Sequence[Window], details: list[dict]) -> list[str]:
    """What a finding's evidence and details name, in order: each window's label and (the first 20 of)
    its events, then every text of the details."""
    out = [n for w in evidence for n in (w.label, *w.events[:20])]

    def texts(x: Any) -> Iterable[str]:
        if isinstance(x, str):
            yield x
        elif isinstance(x, dict):
            for v in x.values():
                yield from texts(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                yield from texts(v)

    return out + list(texts(details))


def table(rows: Iterable[Any]) -> list[dict[str, Any]]:
    """A measure's rows (frozen dataclasses) as a finding's details: their fields, in order."""
    return [dataclasses.asdict(r) for r in rows]


def evidence_of(w: Window) -> Evidence:
    """A measurement's window as report evidence (times in ms from the profile's start)."""
    if w.thread is not None:
        where = f"host · {w.thread}"
    else:
        where = f"GPU {w.device_id} · {w.stream or 'all streams'}"
    return Evidence(
        where,
        w.start_ps / 1e9,
        w.end_ps / 1e9,
        w.label,
        list(w.events),
        device_id=w.device_id,
        thread=w.thread,
        stream_id=w.stream_id,
    )
