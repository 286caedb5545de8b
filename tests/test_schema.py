"""Every answer the advisor gives matches tb_gpu_advisor/schema.json, the one definition of its JSON
(the panel's TypeScript types are generated from it: frontend/gen-types.mjs, checked by
test_panel_bundle.py): the command's output on every demo run, and each plugin route on a few runs,
errors and the 202 form included. Unknown fields fail (additionalProperties is false)."""

import io
import json
import os
from contextlib import redirect_stdout

import jsonschema
import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test, wrappers

from tb_gpu_advisor import cli
from tb_gpu_advisor.plugin import GpuAdvisorPlugin

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "demo_logs")
with open(os.path.join(ROOT, "tb_gpu_advisor", "schema.json")) as _f:
    SCHEMA = json.load(_f)


def validate(doc, name: str) -> None:
    jsonschema.validate(doc, {**SCHEMA, "$ref": f"#/$defs/{name}"}, cls=jsonschema.Draft202012Validator)


def test_the_schema_is_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    with pytest.raises(jsonschema.ValidationError):  # and strict: an unknown field fails
        validate({"event": None, "extra": 1}, "EventResponse")


def test_the_declared_parts_are_written_from_the_code():
    """What the tables declare (`@table`: names, rows, their answers' fields) and the rank digest's
    fields (`HostDigest`) are written into the schema by scripts/write_schema.py, never by hand: a new
    table or per-rank number is declared once."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("write_schema", os.path.join(ROOT, "scripts", "write_schema.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.generated(SCHEMA) == SCHEMA, "run `python scripts/write_schema.py`, then `npm run types` in frontend/"


def test_analyze_json_on_every_demo_run():
    out = io.StringIO()
    with redirect_stdout(out):
        cli.main(["analyze", DEMO, "--format", "json"])
    doc = json.loads(out.getvalue())
    assert len(doc["reports"]) == 39  # 23 runs, two of them 8-rank jobs
    validate(doc, "AnalyzeOutput")


@pytest.fixture(scope="module")
def client():
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=DEMO, multiplexer=None))
    return test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)


def get(c, route: str, **params):
    r = c.get(f"/data/plugin/gpu_advisor/{route}", query_string=params)
    return r.status_code, json.loads(r.data)


@pytest.mark.parametrize(
    "run,host",
    [
        ("12_multi_gpu_imbalance/2026_11_22_10_00_00", "gpu-worker-0"),
        ("02_input_bound/2026_11_22_10_00_00", "gpu-worker-0"),
        ("tf_cpu_capture/train/2026_11_22_05_29_27", "vm"),
    ],
)
def test_routes(client, run, host):
    status, body = get(client, "report", run=run, host=host, wait=30)
    assert status == 200
    validate(body, "Report")
    status, body = get(client, "timeline", run=run, host=host, width=300)
    assert status == 200
    validate(body, "TimelineResponse")
    track = body["tracks"][0]
    busy = next(s for t in body["tracks"] for s in t["segments"])
    status, ev = get(client, "event", run=run, host=host, track=track["id"], t_ms=busy[0], tolerance_ms=0.01)
    assert status == 200
    validate(ev, "EventResponse")


def test_other_routes(client):
    status, body = get(client, "runs", analyse="all")
    assert status == 200
    validate(body, "RunsResponse")
    status, body = get(client, "report", run="16_two_hosts/2026_11_22_10_00_00", wait=30)
    assert status == 200
    validate(body, "RunReports")
    status, body = get(client, "checks")
    validate(body, "CatalogueResponse")
    status, body = get(client, "report", run="nope")
    assert status == 404
    validate(body, "ErrorResponse")
