"""`tb-gpu-advisor mcp LOGDIR`: the advisor for coding agents, a Model Context Protocol server (the
official `mcp` SDK, `pip install 'tb_gpu_advisor[mcp]'`) over stdio, or streamable HTTP on 127.0.0.1.

Each tool answers one of the questions of `serve/questions.py` with the JSON the command prints for it
(`--format json`), and an error with the command's message (`error: ...`) as a tool error, after
which the session goes on. Read-only and confined to LOGDIR: runs and hosts are looked up among the
files discovered under it, a name that is a path leading out of it is refused, files that a symbolic
link places outside it are not read, and nothing is ever written. Every answer is bounded
(`--max-answer-kb`): a larger one is refused with what to narrow.

The server keeps the reports it made (by file, size and modification time: a changed file is analysed
again) and the full analyses of the last few hosts (their tables and evidence), so an agent's second
question about a run costs no analysis. Tools run one at a time, on a worker thread.
"""

import collections
import inspect
import json
import logging
import os
import posixpath
import threading
from typing import TYPE_CHECKING, Annotated, Any, Callable

from tb_gpu_advisor import __version__
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.common.parallel import processes_setting
from tb_gpu_advisor.common.settings import confine_to
from tb_gpu_advisor.formats.base import identity
from tb_gpu_advisor.formats.discovery import HostFile, local_path
from tb_gpu_advisor.graph.changes import CHANGES
from tb_gpu_advisor.serve import questions
from tb_gpu_advisor.serve.selection import UsageError, listing, select

if TYPE_CHECKING:
    from tb_gpu_advisor.measures import Measures

log = logging.getLogger(__name__)

INSTALL_HINT = "the MCP server needs the mcp package: pip install 'tb_gpu_advisor[mcp]'"
REPORTS_KEPT = 4096  # reports of files (tens of kB each)
ANALYSES_KEPT = 2  # full analyses (a profile's tables: up to a few times the file's size)
# Sessions open at once over --http (one per agent; another is answered 503 until one ends), and how long
# an idle one is kept: each holds its streams and tasks, and the SDK's defaults were 10,000 and 30 min.
HTTP_SESSIONS = 16
HTTP_SESSION_IDLE_S = 600.0

INSTRUCTIONS = """\
GPU Advisor: measured, ranked findings about GPU training profiles (TensorFlow/JAX XSpace, PyTorch
traces) under one logdir, each tied to evidence in the trace. Use the tools in this order:
list_runs (what is there, worst first) -> analyze(run) (the findings, worst first: what to change, the
estimated saving per step with its range) -> evidence(run, host, finding) (where in the trace, the events
and the source frames that ran them) -> change one thing in the code -> capture a new profile -> diff(before,
after) (the change, decided against the steps' noise). table gives the kernels/ops/memory/input/idle
rows behind a finding; job compares the ranks of a distributed run; whatif re-times the step with a
fix (or several joined by +) before the code is changed. A saving is a prediction with a
range, not a promise; findings of the capture.* checks are about how the profile was taken, not about
the program."""


class Advisor:
    """What the server knows: its logdir, the reports made so far and the last full analyses."""

    def __init__(self, logdir: str, max_answer_bytes: int):
        self.logdir = logdir = local_path(logdir)  # a local file:// URL is a local path, confined as one
        self.max_answer_bytes = max_answer_bytes
        local = "://" not in logdir
        self.root = os.path.realpath(logdir) if local else None
        self.root_is_file = local and os.path.isfile(logdir)
        # every file this process and its workers open is checked where it resolves, once open
        # (formats.base.LocalFile): a link swapped after a check of its path reads nothing outside
        if self.root is not None:
            self.confine = self.root
        else:
            scheme, rest = logdir.split("://", 1)
            self.confine = f"{scheme}://{posixpath.normpath('/' + rest).lstrip('/')}"
        self.lock = threading.Lock()  # one question at a time: analyses are memory- and CPU-heavy
        # by file: (report, what identifies the bytes it was made from), (measures, report, that)
        self._reports: collections.OrderedDict[HostFile, tuple[dict, tuple | None]] = collections.OrderedDict()
        self._analyses: collections.OrderedDict[HostFile, tuple["Measures", dict, tuple | None]] = (
            collections.OrderedDict()
        )

    # -- which files: inside the logdir only ------------------------------------------------------

    def _inside(self, path: str) -> bool:
        if self.root is None or self.root_is_file:
            return True
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)

    def check_name(self, name: str | None, what: str = "run") -> None:
        """A run named as a path that leads out of the logdir is refused (names are only ever compared
        with the discovered ones, never opened)."""
        if name is None:
            return
        if "\x00" in name:
            raise UsageError(f"{what} {name!r}: a name does not hold a NUL character; name a run as list_runs lists it")
        if self.root is None:
            return
        if not self._inside(os.path.join(self.logdir, name)) or (self.root_is_file and os.path.isabs(name)):
            raise UsageError(
                f"{what} {name!r} is outside the logdir {self.logdir}: this server reads only inside it; "
                "name a run as list_runs lists it"
            )

    def files(self, run: str | None = None, host: str | None = None) -> list[HostFile]:
        """The files `select` names, less those a symbolic link places outside the logdir."""
        self.check_name(run)
        found = select(self.logdir, run, host)
        inside = [f for f in found if self._inside(f.path)]
        if not inside:
            which = f"run {run!r}" if run is not None else self.logdir
            raise UsageError(
                f"{which}: its profiles are outside the logdir {self.logdir} (a symbolic link leads out of it); "
                "this server reads only inside it"
            )
        return inside

    def one_file(self, run: str, host: str | None, what: str) -> HostFile:
        files = self.files(run, host)
        if len(files) > 1:
            hosts = sorted({f.host for f in files})
            raise UsageError(f"{what} is of one host: name it with host" + listing("hosts", hosts))
        return files[0]

    # -- reports and analyses, kept ----------------------------------------------------------------

    def reports(self, files: list[HostFile]) -> list[dict]:
        """The files' reports, as `analyze` makes them, each made once while its file stays the same."""
        from tb_gpu_advisor.report.engine import advise

        now = {f: identity(f.path) for f in files}
        have = {f: r for f in files if (r := self._kept(f, now[f])) is not None}
        todo = [f for f in files if f not in have]
        if len(todo) > 1 and processes_setting() != 0:
            from tb_gpu_advisor.job.ranks import advise_all

            made = dict(zip(todo, advise_all(todo)))
        else:
            made = {f: advise(f) for f in todo}
        # each file's report taken before any is kept: keeping one may drop another this call needs
        # (over REPORTS_KEPT files: the second list_runs failed with a KeyError)
        out = [have[f] if f in have else made[f] for f in files]
        for f in todo:
            if identity(f.path) == now[f]:  # the file read is the one stat'ed before: kept as its report
                self._keep_report(f, made[f], now[f])
        return out

    def _kept(self, f: HostFile, now: tuple | None) -> dict | None:
        """The report kept for `f`, while the file on disk is the one it was made from (a file replaced,
        then put back with its old size and time, is another: issue 51)."""
        got = self._reports.get(f)
        if got is not None and got[1] == now:
            self._reports.move_to_end(f)
            return got[0]
        full = self._analyses.get(f)
        if full is not None and full[2] == now:
            return full[1]
        return None

    def _keep_report(self, f: HostFile, r: dict, source: tuple | None) -> None:
        self._reports[f] = (r, source)
        self._reports.move_to_end(f)
        while len(self._reports) > REPORTS_KEPT:
            self._reports.popitem(last=False)

    def analysed(self, f: HostFile) -> tuple["Measures", dict]:
        """A file's measures and report (PyTorch traces read in a process apart, as the plugin does),
        kept while the file on disk is the one it read."""
        from tb_gpu_advisor.report.engine import analyse_file, source_of

        got = self._analyses.get(f)
        if got is None or got[2] != identity(f.path):
            try:
                m, report = analyse_file(f, apart=True)
            except ProfileReadError as e:
                raise UsageError(str(e)) from None
            got = self._analyses[f] = (m, report, source_of(m))
            while len(self._analyses) > ANALYSES_KEPT:
                self._analyses.popitem(last=False)
            self._keep_report(f, report, got[2])
        self._analyses.move_to_end(f)
        return got[0], got[1]

    # -- the tools' answers --------------------------------------------------------------------------

    def list_runs(self) -> dict:
        return {"logdir": self.logdir, **questions.runs_answer(self.reports(self.files()))}

    def analyze(
        self,
        run: str,
        host: str | None,
        rank: int | None,
        cycle: int | None,
        all_checks: bool,
        detail: str = "brief",
        offset: int = 0,
        limit: int | None = None,
    ) -> dict:
        if host is not None and rank is not None:
            raise UsageError("name a host or a rank, not both")
        if detail not in questions.DETAILS:
            raise UsageError(f"detail is {' or '.join(questions.DETAILS)}, not {detail[:40]!r}")
        files = self.files(run, host)
        if detail == "brief":  # the ranked problems and their fixes first (`analyze --brief`)
            doc = questions.analyze_answer(self.reports(files), cycle, rank, None)
            return questions.brief_answer(doc, offset, limit or questions.BRIEF_PROBLEMS, all_checks)
        doc = questions.analyze_answer(self.reports(files), cycle, rank, None, findings_only=not all_checks)
        return questions.page_reports(doc, offset, limit) if offset or limit is not None else doc

    def evidence(self, run: str, host: str | None, finding: str, limit: int) -> dict:
        f = self.one_file(run, host, "a finding's evidence")
        return questions.evidence_answer(*self.analysed(f), finding, limit)

    def table(
        self,
        run: str,
        host: str | None,
        kind: str,
        sort: str | None,
        order: str | None,
        limit: int,
        q: str | None,
        group: str | None,
        step: int | None,
        names: list[str] | None,
    ) -> dict:
        from tb_gpu_advisor import tables

        try:
            tables.build_check(kind, group, step)
        except tables.TableError as e:
            raise UsageError(str(e)) from None
        f = self.one_file(run, host, "a table")
        return questions.table_answer(self.analysed(f)[0], kind, group, step, sort, order, limit, q, names)

    def diff(
        self,
        before: str,
        after: str,
        before_host: str | None,
        after_host: str | None,
        cycle: int | None,
        all_checks: bool = False,
    ) -> dict:
        from tb_gpu_advisor.serve.selection import pick

        self.check_name(before, "before")
        self.check_name(after, "after")
        base = pick(self.logdir, before, before_host, "before")
        new = pick(self.logdir, after, after_host or before_host, "after")
        for side, files in (("before", base), ("after", new)):
            if not all(self._inside(f.path) for f in files):
                raise UsageError(
                    f"{side}: its profiles are outside the logdir {self.logdir}; this server reads only inside it"
                )
        return dict(questions.diff_answer(base, new, self.analysed, cycle, all_checks=all_checks))

    def whatif(self, run: str, host: str | None, change: str) -> dict:
        questions.check_change(change)  # a wrong change before any analysis
        f = self.one_file(run, host, "a what-if")
        return questions.whatif_answer(*self.analysed(f), change)

    def job(self, run: str, cycle: int | None, limit: int) -> dict:
        self.check_name(run)
        files = [f for f in questions.job_files(self.logdir, run) if self._inside(f.path)]
        if not files:
            self.files(run)  # the message for a run outside the logdir
        return questions.job_answer(self.reports(files), run, cycle, limit)


# -- the MCP side ---------------------------------------------------------------------------------


HINTS = {
    "list_runs": "start the server on one run folder, or a smaller part of the logdir",
    "analyze": "leave detail brief (the problems a page at a time), or with detail=full name a host or a rank "
    "(the job tool compares the ranks), page the reports (offset, limit) and leave all_checks false",
    "evidence": "ask fewer events per window (limit)",
    "table": "ask fewer rows (limit) or filter them (q)",
    "diff": "name a host on each side (before_host, after_host)",
    "job": "ask fewer ranks (limit)",
    "whatif": "start the server with a larger --max-answer-kb (a what-if is a few kB)",
}


def answer_text(doc: dict) -> str:
    """The JSON as the command writes it to a pipe (`write_json`: compact, one line)."""
    return json.dumps(doc)


def _error(text: str) -> Any:
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _argument_errors(tool: str, error: Any) -> str:
    """A rejected argument in the caller's words (no validator's internals)."""
    parts = []
    for e in error.errors():
        field = ".".join(str(x) for x in e["loc"]) or "arguments"
        if e["type"] == "missing":
            parts.append(f"{field} is required")
        else:
            parts.append(f"{field}: {e['msg']}")
    return f"error: {tool}: " + "; ".join(parts)


def build_server(advisor: Advisor) -> Any:
    """The MCP server with the advisor's tools."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field, ValidationError

    params: dict[str, set[str]] = {}

    class AdvisorServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            if name not in params:
                return _error(f"error: unknown tool {name[:40]!r}; the tools are {', '.join(params)}")
            unknown = sorted(set(arguments) - params[name])
            if unknown:
                known = ", ".join(sorted(params[name])) or "none"
                return _error(f"error: {name}: unknown argument {unknown[0]!r}; its arguments: {known}")
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as e:
                if isinstance(e.__cause__, ValidationError):
                    return _error(_argument_errors(name, e.__cause__))
                raise

    server = AdvisorServer("tb-gpu-advisor", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    def tool(fn: Callable[..., dict]) -> None:
        name = fn.__name__
        params[name] = set(inspect.signature(fn).parameters)

        def run(**kwargs: Any) -> Any:
            with advisor.lock:
                try:
                    doc = fn(**kwargs)
                except (UsageError, ProfileReadError) as e:
                    return _error(f"error: {e}")
                except Exception as e:  # noqa: BLE001  a bug: one line, as the command says it; the session goes on
                    from tb_gpu_advisor.report.engine import failure_message

                    log.warning("%s failed", name, exc_info=True)
                    return _error(f"error: {failure_message(e)}")
            text = answer_text(doc)
            size = len(text.encode())
            if size > advisor.max_answer_bytes:
                return _error(
                    f"error: the answer is {size / 1000:.0f} kB, over the {advisor.max_answer_bytes / 1000:.0f} kB "
                    f"an answer may be (tb-gpu-advisor mcp --max-answer-kb); {HINTS[name]}"
                )
            return CallToolResult(content=[TextContent(type="text", text=text)])

        run.__signature__ = inspect.signature(fn).replace(return_annotation=CallToolResult)  # type: ignore[attr-defined]
        run.__annotations__ = {**fn.__annotations__, "return": CallToolResult}
        server.add_tool(run, name=name, description=inspect.getdoc(fn), annotations=read_only)

    Run = Annotated[str, Field(description="a run as list_runs names it (e.g. `02_input_bound/2026_11_22_10_00_00`)")]
    Host = Annotated[
        str | None, Field(description="a host of the run as list_runs names it; needed when the run has several")
    ]
    Cycle = Annotated[
        int | None,
        Field(description="a job's profiling cycle (0 the first, -1 the last); default: the latest complete one"),
    ]

    @tool
    def list_runs() -> dict:
        """The runs under the logdir, worst first, each with its frameworks, its hosts (and their ranks),
        its worst finding and where it is, the mean step time, the GPU busy share, the largest estimated
        saving per step, and for a job of several ranks its straggler and the job checks that fired. Call
        it first; it analyses every profile once (later calls are answered from what it kept). Equals
        `tb-gpu-advisor runs LOGDIR --analyse --json`."""
        return advisor.list_runs()

    @tool
    def analyze(
        run: Run,
        host: Host = None,
        rank: Annotated[
            int | None, Field(description="only this rank's report (a job); the job is still compared")
        ] = None,
        cycle: Cycle = None,
        all_checks: Annotated[
            bool, Field(description="also the checks that pass or do not apply (brief: their ids; full: each)")
        ] = False,
        detail: Annotated[
            str,
            Field(
                description="brief (default): the problems ranked, each with its saving and fix, a page at a "
                "time; full: every finding's measured numbers, thresholds, basis, evidence windows and tables, "
                "with the steps and breakdown"
            ),
        ] = "brief",
        offset: Annotated[
            int, Field(description="brief: the first problem of the page (next_offset); full: the first report")
        ] = 0,
        limit: Annotated[
            int | None,
            Field(
                description=f"brief: problems on the page, 1 to {questions.MAX_BRIEF_PROBLEMS} "
                f"(default {questions.BRIEF_PROBLEMS}); full: reports (default: all)"
            ),
        ] = None,
    ) -> dict:
        """A run's problems, ranked worst first (critical and warning by estimated saving, then info), each
        with its status, title, the estimated saving per step with its range, what to change (`fix`, the
        recommendation's first paragraph) with an example (`snippet`), the what-if's change and the other
        fixes' savings (`alternatives`), and where it fired; with a line per host (step time without the
        profiler, what sets it, busy share) and the job's straggler. A page of `limit` problems from
        `offset`; `next_offset` and `more` say how to get the rest. Use it to decide what to change; then
        `evidence` to find where, `table` for the rows. detail=full gives the whole reports (measured
        numbers, thresholds, basis, evidence windows, tables). Equals `tb-gpu-advisor analyze LOGDIR --run
        RUN [--host H | --rank N] [--cycle N] --brief --findings-only [--offset N --limit M]` (all_checks:
        without --findings-only); detail=full equals `... --findings-only --format json [--offset N --limit
        M]`."""
        return advisor.analyze(run, host, rank, cycle, all_checks, detail, offset, limit)

    @tool
    def evidence(
        run: Run,
        finding: Annotated[str, Field(description="the finding's check id, as analyze gives it (e.g. `input.bound`)")],
        host: Host = None,
        limit: Annotated[
            int, Field(description=f"events listed per window, 1 to {questions.MAX_EVENTS}")
        ] = questions.DEFAULT_EVENTS,
    ) -> dict:
        """Where a finding is in the trace: each of its evidence windows (GPU stream or host thread,
        start and end in ms from the profile's start), the events in it (name, kind, track, op, start,
        duration; the ones the finding names first, then the longest) with the names taking the most
        time, and the source frames that ran each event (`stacks`, innermost first; PyTorch traces
        captured with `with_stack=True`), plus the table rows the finding links to. Use it to find the
        code to change. Equals `tb-gpu-advisor evidence LOGDIR --run RUN --host H --finding ID --format json`."""
        return advisor.evidence(run, host, finding, limit)

    @tool
    def table(
        run: Run,
        kind: Annotated[str, Field(description="kernels, ops, memory, input or idle")],
        host: Host = None,
        sort: Annotated[
            str | None, Field(description="a column key to sort by (default: the table's main time)")
        ] = None,
        order: Annotated[str | None, Field(description="asc or desc (default: desc for numbers)")] = None,
        limit: Annotated[int, Field(description="rows, 0 to 1000")] = 50,
        q: Annotated[str | None, Field(description="only rows whose name contains this text")] = None,
        group: Annotated[str | None, Field(description="a grouping of the table (e.g. ops by `op_shape`)")] = None,
        step: Annotated[
            int | None, Field(description="kernels: only the step numbered N, as the report numbers steps")
        ] = None,
        names: Annotated[
            list[str] | None, Field(description="only the rows named exactly so (a finding's `table.name`)")
        ] = None,
    ) -> dict:
        """One host's table, sorted, filtered and cut: kernels (calls, time, share, launch shape,
        estimated SM efficiency and occupancy, Tensor Cores), ops (calls, device and host time, input
        shapes, call stack), memory (per device: peak, headroom), input (the tf.data stages), idle (idle
        time per stream by cause). Use it for the rows behind a finding or to rank what takes the time.
        Equals `tb-gpu-advisor table KIND LOGDIR --run RUN --host H [--name N ...] ... --format json`."""
        return advisor.table(run, host, kind, sort, order, limit, q, group, step, names)

    @tool
    def diff(
        before: Annotated[str, Field(description="the run before the change, as list_runs names it")],
        after: Annotated[str, Field(description="the run after the change")],
        before_host: Annotated[str | None, Field(description="the host before, when the run has several")] = None,
        after_host: Annotated[str | None, Field(description="the host after (default: before_host)")] = None,
        cycle: Cycle = None,
        all_checks: Annotated[
            bool, Field(description="also list the checks that did not change (they are counted otherwise; larger)")
        ] = False,
    ) -> dict:
        """A run after a change against the run before it: the step's verdict (faster, slower, unchanged
        within noise, or uncertain where the profiler's cost hides the change) with its basis (the captured
        steps, or the steps without the profiler with the model's measured error) and interval; each
        check that changed judged by its own time per step (fixed, new, worse, better, or exposed: firing
        only because another fix shortened the step), the unchanged ones counted; the saving the run before
        predicted for the findings now gone against what the step did (`realised`: inside the stated range
        or not, `inside` null where the model's error cannot tell); and the kernels and ops that moved
        most; two jobs are compared rank by rank. Use it after capturing again, to know whether the change
        worked. Equals `tb-gpu-advisor diff LOGDIR LOGDIR --run BEFORE --new-run AFTER [--host H
        --new-host H2] --format json` (with all_checks, `--all`)."""
        return advisor.diff(before, after, before_host, after_host, cycle, all_checks)

    @tool
    def job(
        run: Annotated[str, Field(description="a run of several ranks or profiling cycles, as list_runs names it")],
        cycle: Cycle = None,
        limit: Annotated[
            int, Field(description="ranks listed, the stragglers and the ranks standing out first")
        ] = questions.DEFAULT_JOB_RANKS,
    ) -> dict:
        """A distributed run as a job: its ranks side by side in one profiling cycle (step, compute,
        collectives, exposed communication, input wait, the measures each stands out in), the straggler
        and how long the others wait for it, and the job checks (straggler, imbalance, exposed
        communication, all-reduce count, ...). Use it before the ranks' own findings on a multi-rank
        run. Equals `tb-gpu-advisor job LOGDIR --run RUN [--cycle N] --format json`."""
        return advisor.job(run, cycle, limit)

    @tool
    def whatif(
        run: Run,
        change: Annotated[
            str,
            Field(
                description=f"the fix: {', '.join(CHANGES)}, or several joined by + (e.g. `bf16+compile`); "
                "a finding's `whatif.change` names its own"
            ),
        ],
        host: Host = None,
    ) -> dict:
        """The step re-timed with a change applied, on the run's step graph: the step without the
        profiler as it is (step_ms) and with the change (new_step_ms), the saving, what sets the step
        before and after (bound, new_bound: GPU, host or input), the model in a sentence (basis), and the
        report's step model (the step as captured, the profiler's share, every finding's fix together).
        Use it to weigh a fix no finding names, or several fixes together, before changing the code; it
        is a prediction, and only diff on a new capture says what a change did. Equals `tb-gpu-advisor
        whatif LOGDIR --run RUN --host H --change C --format json`."""
        return advisor.whatif(run, host, change)

    return server


def main(logdir: str, http_port: int | None = None, max_answer_kb: float = questions.DEFAULT_ANSWER_KB) -> int:
    """Serve until the client goes (stdio) or the process is stopped (HTTP). Exit status 2 for a
    usage error, as the command's."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    if max_answer_kb <= 0:
        raise UsageError("--max-answer-kb must be a positive number of kB")
    if http_port is not None and not 0 < http_port < 65536:
        raise UsageError("--http must be a port number, 1 to 65535")
    advisor = Advisor(logdir, int(max_answer_kb * 1000))
    confine_to(advisor.confine)  # before any file is read or worker process started
    select(advisor.logdir, None, None)  # an empty or missing logdir is said now, not at the first call
    server = build_server(advisor)
    if http_port is None:
        server.run("stdio")
    else:
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=http_port,
            max_sessions=HTTP_SESSIONS,
            session_idle_timeout=HTTP_SESSION_IDLE_S,
        )
    return 0
