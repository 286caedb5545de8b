"""The TensorBoard plugin: routes to functions, no analysis logic here."""
from __future__ import annotations

import os
import time

from werkzeug import wrappers

from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin

from tb_gpu_advisor import discovery

PLUGIN_NAME = "gpu_advisor"
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
ACTIVE_TTL_S = 30.0  # is_active() is asked on every page load; the answer is cached this long


class GpuAdvisorPlugin(base_plugin.TBPlugin):
    plugin_name = PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext):
        self.logdir = context.logdir or ""
        self._active: tuple[float, bool] | None = None

    def is_active(self) -> bool:
        now = time.monotonic()
        if self._active is None or now - self._active[0] > ACTIVE_TTL_S:
            self._active = (now, bool(self.logdir) and discovery.has_profiles(self.logdir))
        return self._active[1]

    def frontend_metadata(self):
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name="GPU Advisor")

    def get_plugin_apps(self):
        return {"/index.js": self._serve_index, "/runs": self._serve_runs}

    @wrappers.Request.application
    def _serve_index(self, request):
        with open(os.path.join(STATIC, "index.js"), "rb") as f:
            return http_util.Respond(request, f.read(), "text/javascript")

    @wrappers.Request.application
    def _serve_runs(self, request):
        files, _ = discovery.discover(self.logdir)
        return http_util.Respond(request, {"runs": [f.to_json() | {"path": None} for f in files]}, "application/json")
