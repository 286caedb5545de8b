"""The plugin's routes in-process, through TensorBoard's own WSGI application: a client over a logdir
and a GET that parses the JSON answer."""

import json
from urllib.parse import quote

from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test, wrappers

from tb_gpu_advisor.plugin import GpuAdvisorPlugin

BASE = "/data/plugin/gpu_advisor"


def client(logdir):
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(logdir)))
    return test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response), plugin


def get(c, path, **params):
    q = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
    r = c.get(f"{BASE}{path}" + (f"?{q}" if q else ""))
    parse = r.mimetype == "application/json" and (path != "/export" or r.status_code != 200)
    return r, (json.loads(r.data) if parse else None)
