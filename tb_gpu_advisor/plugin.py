"""The TensorBoard plugin: routes to functions, no analysis logic here.

Routes (under /data/plugin/gpu_advisor/):
  index.js                          the panel (one ES module)
  runs[?analyse=all]                runs, hosts, sizes, modification times, analysis state (all: start
                                      every analysis, for the overview)
  report?run=R[&host=H][&wait=S]    the report (without `host`: every host's summary and the job view)
  report?run=R&cycle=N               all hosts, the job's ranks in profiling cycle N (0 the first, -1 the last)
  timeline?run=R&host=H[&start_ms=A&end_ms=B][&width=PX]
  event?run=R&host=H&track=T&t_ms=A[&tolerance_ms=B]   the event under the panel's cursor
  compare?run=R&host=H&base_run=B&base_host=BH[&all_checks=1]   run R (after a change) against run B
                                      (before); all_checks=1: the unchanged checks listed too
  table?run=R&host=H&table=T[&group=G][&sort=C][&order=asc|desc][&offset=N][&limit=N][&q=TEXT][&name=N...][&wait=S]
                                      a table (kernels, ops, memory, input, idle), sorted and paged here
  checks                            the catalogue
  export?run=R&host=H[&finding=ID[&evidence=I]][&start_ms=A&end_ms=B][&download=1]
                                      Chrome trace JSON with a "GPU Advisor" process
Only GET and HEAD are served (anything else is 405; request bodies are never read). Errors are JSON
`{"error": {"status": N, "message": "..."}}`: 400 bad parameters, 404 unknown run or host, 422
unreadable profile; 202 while an analysis is still running. Messages name files relative to the
logdir, never by server path.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import re
import threading
import time
from typing import TYPE_CHECKING, Callable, Iterable
from urllib.parse import quote

from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from tb_gpu_advisor import __version__, formats, tables
from tb_gpu_advisor.checks import catalogue
from tb_gpu_advisor.common.settings import DEFAULT_MAX_PROFILE_MB
from tb_gpu_advisor.formats import discovery
from tb_gpu_advisor.formats.discovery import HostFile
from tb_gpu_advisor.job import ranks
from tb_gpu_advisor.job.analysis import jobs
from tb_gpu_advisor.model.analysis import HEADLINE_DEFINITIONS
from tb_gpu_advisor.present.export import chrome_trace, evidence_window
from tb_gpu_advisor.present.timeline import MAX_WIDTH
from tb_gpu_advisor.report import UNREADABLE, engine, host_summary, job_row
from tb_gpu_advisor.serve.service import DEFAULT_CACHE_MB, DONE, ERROR, AdvisorService, Entry, UnknownRun

PLUGIN_NAME = "gpu_advisor"
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
ACTIVE_TTL_S = 30.0  # is_active() is asked on every page load; the answer is cached this long
DEFAULT_WAIT_S = 20.0  # how long `report` waits for an analysis before answering 202
log = logging.getLogger(__name__)
JSON = "application/json"
METHODS = ("GET", "HEAD")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # ASCII digits only


class BadRequest(ValueError):
    pass


class Unreadable(Exception):
    pass


class Pending(Exception):
    def __init__(self, state: dict):
        super().__init__("analysis still running")
        self.state = state


def _error(request: Request, status: int, message: str, headers: list | None = None) -> Response:
    return http_util.Respond(
        request, {"error": {"status": status, "message": message}}, JSON, code=status, headers=headers
    )


Request = wrappers.Request
Response = wrappers.Response
Route = Callable[["GpuAdvisorPlugin", Request], Response]
if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    WsgiEnviron = WSGIEnvironment
    WsgiApp = WSGIApplication
WsgiMethod = Callable[["GpuAdvisorPlugin", "WsgiEnviron", "StartResponse"], Iterable[bytes]]


def _handler(fn: Route) -> WsgiMethod:
    """GET and HEAD only; the plugin's exceptions as JSON errors with the right status code; the
    plugin's own handling time in a `Server-Timing: app;dur=<ms>` header (a streamed body, the
    export, is timed to its first byte's readiness, not its end)."""

    def app(self: GpuAdvisorPlugin, environ: WsgiEnviron, start_response: StartResponse) -> Iterable[bytes]:
        t0 = time.perf_counter()
        request = wrappers.Request(environ)
        if request.method not in METHODS:
            response = _error(
                request, 405, f"method {request.method[:10]} not allowed", [("Allow", ", ".join(METHODS))]
            )
        else:
            try:
                response = fn(self, request)
            except BadRequest as e:
                response = _error(request, 400, str(e))
            except UnknownRun as e:
                response = _error(request, 404, str(e))
            except Unreadable as e:
                response = _error(request, 422, str(e))
            except Pending as e:
                response = http_util.Respond(request, {"pending": True, **e.state}, JSON, code=202)
            except Exception:  # noqa: BLE001  a bug: logged here, a short JSON error there, no traceback
                log.exception("gpu_advisor: %s failed", fn.__name__)
                response = _error(request, 500, "internal error in the GPU Advisor plugin; please report it")
        response.headers["Server-Timing"] = f"app;dur={1000 * (time.perf_counter() - t0):.3f}"
        return response(environ, start_response)

    app.__name__ = fn.__name__
    return app


def _text(request: Request, name: str) -> str | None:
    v = request.args.get(name)
    if v is None or v == "":
        return None
    if len(v) > 1000 or "\x00" in v:
        raise BadRequest(f"bad parameter {name!r}")
    return v


def _required(request: Request, name: str) -> str:
    v = _text(request, name)
    if v is None:
        raise BadRequest(f"missing parameter {name!r}")
    return v


def _number(request: Request, name: str, lo: float, hi: float) -> float | None:
    v = request.args.get(name)
    if v is None or v == "":
        return None
    if len(v) > 40 or not _NUMBER.fullmatch(v):
        raise BadRequest(f"parameter {name!r} must be a number")
    x = float(v)
    if not lo <= x <= hi:
        raise BadRequest(f"parameter {name!r} must be between {lo:g} and {hi:g}")
    return x


def _integer(request: Request, name: str, hi: int) -> int | None:
    x = _number(request, name, 0, hi)
    if x is not None and not x.is_integer():
        raise BadRequest(f"parameter {name!r} must be a whole number")
    return None if x is None else int(x)


def _window(request: Request) -> tuple[float | None, float | None]:
    start = _number(request, "start_ms", -1e12, 1e12)
    end = _number(request, "end_ms", -1e12, 1e12)
    if start is not None and end is not None and end <= start:
        raise BadRequest("end_ms must be greater than start_ms")
    return start, end


class GpuAdvisorLoader(base_plugin.TBLoader):
    """Registers the plugin's flags and builds it."""

    def define_flags(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("gpu_advisor")
        group.add_argument("--gpu_advisor_cache_mb", type=float, default=DEFAULT_CACHE_MB,
                           help="memory the GPU Advisor's cached analyses may hold, MB (default: %(default)s)")  # fmt: skip
        group.add_argument("--gpu_advisor_max_profile_mb", type=float, default=None,
                           help="profiles larger than this (a gzipped trace: what it inflates to) are not analysed, "
                                "nor those whose analysis would hold over 3 times it, MB (default: "
                                f"TB_GPU_ADVISOR_MAX_PROFILE_MB, else {DEFAULT_MAX_PROFILE_MB:g})")  # fmt: skip
        group.add_argument("--gpu_advisor_dask", metavar="ADDRESS",
                           help="make the hosts' reports on this Dask cluster (tcp://host:8786), whose workers read "
                                "the files themselves; default: worker processes here (TB_GPU_ADVISOR_PROCESSES)")  # fmt: skip

    def fix_flags(self, flags: argparse.Namespace) -> None:
        address = getattr(flags, "gpu_advisor_dask", None)
        if address:
            try:
                ranks.dask_client(address).close()
            except ranks.ClusterError as e:
                raise base_plugin.FlagsError(f"--gpu_advisor_dask: {e}") from None

    def load(self, context: base_plugin.TBContext) -> GpuAdvisorPlugin:
        return GpuAdvisorPlugin(context)


def _logdir_file(logdir: str) -> str | None:
    """The file's name where the logdir is itself a profile file (`tensorboard --logdir
    w.pt.trace.json`, which TensorBoard accepts and then finds no run in): the panel says to pass its
    folder. None otherwise."""
    if not logdir or "://" in logdir or not os.path.isfile(logdir):
        return None
    name = os.path.basename(logdir)
    return name if formats.for_file(name) is not None else None


class GpuAdvisorPlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext):
        self.logdir = context.logdir or ""
        flags = context.flags
        self.service = AdvisorService(
            self.logdir,
            cache_mb=getattr(flags, "gpu_advisor_cache_mb", None) or DEFAULT_CACHE_MB,
            max_profile_mb=getattr(flags, "gpu_advisor_max_profile_mb", None),
            dask=getattr(flags, "gpu_advisor_dask", None),
        )
        self._active: tuple[float, bool] | None = None
        # per run, its job's overview row and what it was made from (the hosts' files and states)
        self._job_rows: dict[str, tuple[tuple, dict | None]] = {}
        self._job_rows_lock = threading.Lock()

    def is_active(self) -> bool:
        now = time.monotonic()
        if self._active is None or now - self._active[0] > ACTIVE_TTL_S:
            found = bool(self.logdir) and (discovery.has_profiles(self.logdir) or bool(_logdir_file(self.logdir)))
            self._active = (now, found)
        return self._active[1]

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name="GPU Advisor")

    def get_plugin_apps(self) -> dict[str, WsgiApp]:
        routes = {
            "/index.js": GpuAdvisorPlugin._serve_index,
            "/runs": GpuAdvisorPlugin._serve_runs,
            "/report": GpuAdvisorPlugin._serve_report,
            "/timeline": GpuAdvisorPlugin._serve_timeline,
            "/checks": GpuAdvisorPlugin._serve_checks,
            "/export": GpuAdvisorPlugin._serve_export,
            "/event": GpuAdvisorPlugin._serve_event,
            "/compare": GpuAdvisorPlugin._serve_compare,
            "/table": GpuAdvisorPlugin._serve_table,
        }
        return {path: _bind(self, fn) for path, fn in routes.items()}

    # -- helpers -------------------------------------------------------------------------------

    def _entry(self, request: Request, wait_s: float, run: str = "run", host: str = "host") -> Entry:
        """The full analysis of the run and host the request names (in the parameters `run` and
        `host`, or others): the user opened this host; 422 when the file cannot be read, 202 while
        it is analysed."""
        (f,) = self.service.find(_required(request, run), _required(request, host))
        e = self.service.get(f, wait_s, full=True)
        if e.state == ERROR:
            raise Unreadable(e.error)
        if e.state != DONE or e.measures is None:
            raise Pending({"run": f.run, "host": f.host, **e.to_json()})
        return e

    # -- routes --------------------------------------------------------------------------------

    @_handler
    def _serve_index(self, request: Request) -> Response:
        with open(os.path.join(STATIC, "index.js"), "rb") as f:
            return http_util.Respond(request, f.read(), "text/javascript")

    @_handler
    def _serve_runs(self, request: Request) -> Response:
        files, legacy = self.service.files()
        analyse = _text(request, "analyse")
        if analyse not in (None, "all"):
            raise BadRequest("analyse must be 'all'")
        if analyse:  # the overview: every host file analysed (smallest first), in the background
            for f in files:
                self.service.entry(f)
        runs: dict[str, list] = {}
        by_run: dict[str, list[HostFile]] = {}
        for f in files:
            runs.setdefault(f.run, []).append(
                {"host": f.host, "size": f.size, "mtime": f.mtime, "analysis": self.service.state(f)}
            )
            by_run.setdefault(f.run, []).append(f)
        listed = []
        for r, hs in runs.items():
            job = self._job_row(by_run[r]) if len(hs) > 1 else None
            listed.append({"run": r, "hosts": hs, **({"job": job} if job else {})})
        body = {
            "advisor_version": __version__,
            "runs": listed,
            "legacy": [
                {"run": r.run, "message": "old capture format (no .xplane.pb); capture again to analyse it"}
                for r in legacy
            ],
        }
        if not files and (name := _logdir_file(self.logdir)):
            body["logdir_file"] = name
        return _json(request, body)

    def _job_row(self, files: list[HostFile]) -> dict | None:
        """The overview's row for a run's job (report.job_row: its own findings, above its ranks), once
        every host of the run is analysed; kept until one of them changes."""
        entries = [self.service.peek(f) for f in files]
        if any(e is None or e.state not in (DONE, ERROR) for e in entries):
            return None
        key = tuple((e.file.host, e.file.size, e.file.mtime, e.source, e.state) for e in entries if e is not None)
        with self._job_rows_lock:
            if files[0].run in self._job_rows and self._job_rows[files[0].run][0] == key:
                return self._job_rows[files[0].run][1]
        reports = [e.summary for e in entries if e is not None and e.state == DONE and e.summary]
        try:
            found = jobs(reports)
        except ValueError:
            found = []
        row = job_row(found[0]) if found else None
        with self._job_rows_lock:
            self._job_rows[files[0].run] = (key, row)
        return row

    @_handler
    def _serve_report(self, request: Request) -> Response:
        wait = _number(request, "wait", 0, 60)
        wait_s = DEFAULT_WAIT_S if wait is None else wait
        if _text(request, "host") is not None:
            body, gz = self._entry(request, wait_s).report_bytes
            if "gzip" in request.headers.get("Accept-Encoding", ""):
                return http_util.Respond(request, gz, JSON, content_encoding="gzip")
            return http_util.Respond(request, body, JSON)
        run = _required(request, "run")
        cycle = _number(request, "cycle", -1e6, 1e6)
        if cycle is not None and not cycle.is_integer():
            raise BadRequest("parameter 'cycle' must be a whole number: 0 the first profiling cycle, -1 the last")
        entries = [self.service.entry(f) for f in self.service.find(run)]  # start them all before waiting on any
        deadline = time.monotonic() + wait_s
        for e in entries:
            e.done.wait(max(0.0, deadline - time.monotonic()))
        if any(e.state not in (DONE, ERROR) for e in entries):
            finished = [e.state in (DONE, ERROR) for e in entries]
            progress = {  # the job's progress in ranks and bytes (as ranks.Progress.to_json)
                "ranks_done": sum(finished),
                "ranks": len(entries),
                "bytes_done": int(sum(e.file.size * (1.0 if d else e.progress) for e, d in zip(entries, finished))),
                "bytes": sum(e.file.size for e in entries),
            }
            hosts = [{"host": e.file.host, **e.to_json()} for e in entries]
            raise Pending({"run": run, "job": progress, "hosts": hosts})
        # each host's summary (report.host_summary: the whole report is the route with `host`); a host
        # whose file cannot be read is reported in place, with its error and no checks
        reports = [
            e.summary
            if e.state == DONE and e.summary
            else host_summary(engine.unreadable_report(e.file, e.error or "", e.failure or UNREADABLE))
            for e in entries
        ]
        try:
            across = jobs(reports, None if cycle is None else int(cycle))
        except ValueError as e:  # a cycle the job does not have: its message says how many it has
            raise BadRequest(str(e)) from None
        if cycle is not None and not across and int(cycle) not in (0, -1):
            raise BadRequest(f"run {run} has 1 profiling cycle; no cycle {int(cycle)}")
        return _json(request, {"reports": reports, "runs": across})

    @_handler
    def _serve_timeline(self, request: Request) -> Response:
        start, end = _window(request)
        width = _number(request, "width", 1, MAX_WIDTH)
        e = self._entry(request, DEFAULT_WAIT_S)
        return _json(request, e.timeline.window(start, end, int(width or 1000)))

    @_handler
    def _serve_compare(self, request: Request) -> Response:
        every = _text(request, "all_checks")
        if every not in (None, "0", "1"):
            raise BadRequest("all_checks must be 0 or 1")
        new = self._entry(request, DEFAULT_WAIT_S)
        base = self._entry(request, DEFAULT_WAIT_S, "base_run", "base_host")
        return http_util.Respond(request, self.service.comparison(base, new, every == "1"), JSON)

    @_handler
    def _serve_event(self, request: Request) -> Response:
        t = _number(request, "t_ms", -1e12, 1e12)
        if t is None:
            raise BadRequest("missing parameter 't_ms'")
        tol = _number(request, "tolerance_ms", 0, 1e6) or 0.0
        track = _required(request, "track")
        e = self._entry(request, DEFAULT_WAIT_S)
        try:
            found = e.timeline.event_at(track, t, tol)
        except KeyError:
            raise BadRequest("unknown track") from None
        return _json(request, {"event": found})

    @_handler
    def _serve_table(self, request: Request) -> Response:
        table, group = _required(request, "table"), _text(request, "group")
        step = _integer(request, "step", 2**62)
        names = request.args.getlist("name")
        if len(names) > 200 or any(len(n) > 1000 or "\x00" in n for n in names):
            raise BadRequest("bad parameter 'name'")
        try:
            tables.build_check(table, group, step)  # a bad parameter is answered before any analysis waits
            offset, limit = _integer(request, "offset", 10**9), _integer(request, "limit", tables.MAX_LIMIT)
            wait = _number(request, "wait", 0, 60)
            e = self._entry(request, DEFAULT_WAIT_S if wait is None else wait)
            body = tables.answer(
                e.table(table, group, step),
                sort=_text(request, "sort"),
                order=_text(request, "order"),
                offset=offset or 0,
                limit=tables.DEFAULT_LIMIT if limit is None else limit,
                q=_text(request, "q"),
                names=[n for n in names if n],
            )
        except tables.TableError as x:
            raise BadRequest(str(x)) from None
        return _json(request, body)

    @_handler
    def _serve_checks(self, request: Request) -> Response:
        return http_util.Respond(request, _catalogue_json(), JSON)

    @_handler
    def _serve_export(self, request: Request) -> Response:
        start, end = _window(request)
        check = _text(request, "finding")
        index = _number(request, "evidence", 0, 10_000)
        e = self._entry(request, DEFAULT_WAIT_S)
        assert e.measures is not None and e.report is not None
        focus = None
        if check is not None:
            focus = evidence_window(e.report, check, int(index or 0))
            if focus is None:
                raise BadRequest(f"no evidence {int(index or 0)} for finding {check!r} in this report")
            if start is None or end is None:
                start, end = focus["start_ms"], max(focus["end_ms"], focus["start_ms"] + 1e-3)
        name = f"{e.file.run}_{e.file.host}".replace("/", "_")
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:150]
        # header values are Latin-1 (WSGI): an ASCII filename, and the name itself as RFC 5987 / 6266 say
        ascii_safe = "".join(c if c.isascii() else "_" for c in safe)
        body = (piece.encode() for piece in chrome_trace(e.measures.analysis, e.report, start, end, focus) if piece)
        response = wrappers.Response(body, mimetype=JSON, direct_passthrough=True)  # streamed as made
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Cache-Control"] = "no-cache, must-revalidate"
        if _text(request, "download") is not None:
            response.headers["Content-Disposition"] = (
                f'attachment; filename="{ascii_safe}.trace.json"; '
                f"filename*=UTF-8''{quote(safe + '.trace.json', safe='')}"
            )
        return response


def _json(request: Request, body: dict) -> Response:
    """JSON bytes made here (what the advisor serves has no NaN to clean, and TensorBoard's cleaning
    walk costs more than the answer); Respond gzips them when the browser accepts it."""
    return http_util.Respond(request, json.dumps(body, separators=(",", ":"), allow_nan=False).encode(), JSON)


@functools.lru_cache(maxsize=1)
def _catalogue_json() -> bytes:
    """The checks, the tables (the panel's tabs) and what each headline number measures."""
    doc = {"checks": catalogue(), "tables": tables.catalogue(), "definitions": HEADLINE_DEFINITIONS}
    return json.dumps(doc, separators=(",", ":")).encode()


def _bind(plugin: GpuAdvisorPlugin, fn: WsgiMethod) -> WsgiApp:
    def app(environ: WsgiEnviron, start_response: StartResponse) -> Iterable[bytes]:
        return fn(plugin, environ, start_response)

    app.__name__ = fn.__name__
    return app
