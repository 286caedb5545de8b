"""The TensorBoard plugin: routes to functions, no analysis logic here.

Routes (under /data/plugin/gpu_advisor/):
  index.js                          the panel (one ES module)
  runs                              runs, hosts, sizes, modification times, analysis state
  report?run=R[&host=H][&wait=S]    the report (all hosts of the run without `host`)
  timeline?run=R&host=H[&start_ms=A&end_ms=B][&width=PX]
  checks                            the catalogue
  export?run=R&host=H               Chrome trace JSON with a "GPU Advisor findings" track
Errors are JSON `{"error": {"status": N, "message": "..."}}`: 400 bad parameters, 404 unknown run or
host, 422 unreadable profile; 202 while an analysis is still running.
"""
from __future__ import annotations

import math
import os
import time

from werkzeug import wrappers

from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin

from tb_gpu_advisor import __version__, discovery, engine, render
from tb_gpu_advisor.checks import catalogue
from tb_gpu_advisor.service import DONE, ERROR, AdvisorService, UnknownRun
from tb_gpu_advisor.timeline import MAX_WIDTH, chrome_trace

PLUGIN_NAME = "gpu_advisor"
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
ACTIVE_TTL_S = 30.0  # is_active() is asked on every page load; the answer is cached this long
DEFAULT_WAIT_S = 20.0  # how long `report` waits for an analysis before answering 202
JSON = "application/json"


class BadRequest(ValueError):
    pass


class Unreadable(Exception):
    pass


class Pending(Exception):
    def __init__(self, state: dict):
        super().__init__("analysis still running")
        self.state = state


def _error(request, status: int, message: str, extra: dict | None = None):
    body = {"error": {"status": status, "message": message}}
    if extra:
        body.update(extra)
    return http_util.Respond(request, body, JSON, code=status)


def _handler(fn):
    """Turn the plugin's exceptions into JSON errors with the right status code."""

    @wrappers.Request.application
    def app(self, request):
        try:
            return fn(self, request)
        except BadRequest as e:
            return _error(request, 400, str(e))
        except UnknownRun as e:
            return _error(request, 404, str(e))
        except Unreadable as e:
            return _error(request, 422, str(e))
        except Pending as e:
            return http_util.Respond(request, {"pending": True, **e.state}, JSON, code=202)

    app.__name__ = fn.__name__
    return app


def _text(request, name: str, required: bool = True) -> str | None:
    v = request.args.get(name)
    if v is None or v == "":
        if required:
            raise BadRequest(f"missing parameter {name!r}")
        return None
    if len(v) > 1000 or "\x00" in v:
        raise BadRequest(f"bad parameter {name!r}")
    return v


def _number(request, name: str, lo: float, hi: float, default: float | None) -> float | None:
    v = request.args.get(name)
    if v is None or v == "":
        return default
    try:
        x = float(v)
    except ValueError:
        raise BadRequest(f"parameter {name!r} must be a number, got {v[:40]!r}") from None
    if not math.isfinite(x) or not lo <= x <= hi:
        raise BadRequest(f"parameter {name!r} must be between {lo:g} and {hi:g}")
    return x


class GpuAdvisorPlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext):
        self.logdir = context.logdir or ""
        self.service = AdvisorService(self.logdir)
        self._active: tuple[float, bool] | None = None

    def is_active(self) -> bool:
        now = time.monotonic()
        if self._active is None or now - self._active[0] > ACTIVE_TTL_S:
            self._active = (now, bool(self.logdir) and discovery.has_profiles(self.logdir))
        return self._active[1]

    def frontend_metadata(self):
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name="GPU Advisor")

    def get_plugin_apps(self):
        return {
            "/index.js": self._serve_index,
            "/runs": self._serve_runs,
            "/report": self._serve_report,
            "/timeline": self._serve_timeline,
            "/checks": self._serve_checks,
            "/export": self._serve_export,
        }

    # -- helpers -------------------------------------------------------------------------------

    def _entry(self, request, wait_s: float):
        run, host = _text(request, "run"), _text(request, "host")
        (f,) = self.service.find(run, host)
        e = self.service.get(f, wait_s)
        if e.state == ERROR:
            raise Unreadable(e.error)
        if e.state != DONE:
            raise Pending({"run": f.run, "host": f.host, **e.to_json()})
        return e

    # -- routes --------------------------------------------------------------------------------

    @_handler
    def _serve_index(self, request):
        with open(os.path.join(STATIC, "index.js"), "rb") as f:
            return http_util.Respond(request, f.read(), "text/javascript")

    @_handler
    def _serve_runs(self, request):
        files, legacy = self.service.files()
        runs: dict[str, list] = {}
        for f in files:
            runs.setdefault(f.run, []).append(
                {"host": f.host, "size": f.size, "mtime": f.mtime, "analysis": self.service.state(f)}
            )
        body = {
            "advisor_version": __version__,
            "runs": [{"run": r, "hosts": hs} for r, hs in runs.items()],
            "legacy": [{"run": r.run, "message": "old capture format (no .xplane.pb); capture again to analyse it"}
                       for r in legacy],  # fmt: skip
        }
        return http_util.Respond(request, body, JSON)

    @_handler
    def _serve_report(self, request):
        wait_s = _number(request, "wait", 0, 60, DEFAULT_WAIT_S)
        if _text(request, "host", required=False) is not None:
            return http_util.Respond(request, self._entry(request, wait_s).report, JSON)
        run = _text(request, "run")
        entries = [self.service.entry(f) for f in self.service.find(run)]  # start them all before waiting on any
        deadline = time.monotonic() + wait_s
        for e in entries:
            e.done.wait(max(0.0, deadline - time.monotonic()))
        if any(e.state not in (DONE, ERROR) for e in entries):
            raise Pending({"run": run, "hosts": [{"host": e.file.host, **e.to_json()} for e in entries]})
        # a host whose file cannot be read is reported in place, with its error and no checks
        reports = [e.report if e.state == DONE else engine.unreadable_report(e.file, e.error) for e in entries]
        return http_util.Respond(request, {"reports": reports, "runs": render.summarise_runs(reports)}, JSON)

    @_handler
    def _serve_timeline(self, request):
        start = _number(request, "start_ms", 0, 1e12, None)
        end = _number(request, "end_ms", 0, 1e12, None)
        width = _number(request, "width", 1, MAX_WIDTH, 1000)
        if start is not None and end is not None and end <= start:
            raise BadRequest("end_ms must be greater than start_ms")
        e = self._entry(request, DEFAULT_WAIT_S)
        return http_util.Respond(request, e.timeline.window(start, end, int(width)), JSON)

    @_handler
    def _serve_checks(self, request):
        return http_util.Respond(request, {"checks": catalogue()}, JSON)

    @_handler
    def _serve_export(self, request):
        e = self._entry(request, DEFAULT_WAIT_S)
        name = f"{e.file.run}_{e.file.host}".replace("/", "_")
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:150]
        response = wrappers.Response(chrome_trace(e.analysis, e.report), mimetype=JSON)
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Content-Disposition"] = f'attachment; filename="{safe}.trace.json"'
        return response
