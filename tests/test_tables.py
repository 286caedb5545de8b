"""The tables (tb_gpu_advisor/tables.py) against independent oracles run in the test on the same
files: PyTorch's TensorBoard plugin (torch-tb-profiler 0.4.3) for kernels, the profile plugin's
converter for XSpace kernels, and hand-made traces with the answer worked out in a comment; plus the
route and the command: every table of every demo run answers and validates against schema.json."""

from __future__ import annotations

import io
import json
import os
from collections import defaultdict
from contextlib import redirect_stdout

import pytest
from test_pytorch_plugin_oracle import Trace, plugin, real_files
from test_schema import validate

from tb_gpu_advisor import cli, tables
from tb_gpu_advisor.analysis import analyse
from tb_gpu_advisor.discovery import discover
from tb_gpu_advisor.engine import read_file
from tb_gpu_advisor.pytorch_trace import read_pytorch_trace_bytes
from tb_gpu_advisor.xplane.reader import read_profile_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "demo_logs")


def _analysis(path: str):
    return analyse(read_pytorch_trace_bytes(open(path, "rb").read(), path, "h"))


def rows_of(a, table: str, group: str | None = None) -> list[dict]:
    return tables.answer(tables.build(a, table, group), limit=tables.MAX_LIMIT)["rows"]


# -- kernels -------------------------------------------------------------------------------------


def test_hand_made_kernels_table(tmp_path):
    """Two kernels named `void k<float>()` on the trace's V100 (80 SMs): [10, 50) with 0.5 blocks
    per SM and 40% occupancy, [30, 70) on another stream with 2 blocks per SM and 80%. Calls 2,
    total 80 µs, mean 40, min 40, max 40; SM efficiency (0.5 x 40 + 1 x 40) / 80 = 75%; occupancy
    (40 x 40 + 80 x 40) / 80 = 60%; the longest instance is the first (ties: the earlier)."""
    t = Trace()
    t.step(1, 0, 100)
    t.launch(2, (10, 50), blocks_per_sm=0.5, occupancy=40)
    t.launch(5, (30, 70), blocks_per_sm=2, occupancy=80)
    t.events[-1]["args"]["stream"] = 8
    a = _analysis(t.write(tmp_path))
    (r,) = rows_of(a, "kernels")
    assert r["calls"] == 2 and r["total_us"] == 80 and r["mean_us"] == 40 and r["min_us"] == r["max_us"] == 40
    assert r["sm_efficiency_pct"] == pytest.approx(75) and r["occupancy_pct"] == pytest.approx(60)
    assert r["device_share_pct"] == 100 and r["short_name"] == "k" and r["name"] == "void k<float>()"
    assert r["registers"] == 0 and r["grid"] in ("40,1,1", "160,1,1") and r["block"] == "256,1,1"
    assert r["trace"]["device"] == 0 and r["trace"]["end_ms"] - r["trace"]["start_ms"] == pytest.approx(0.04)
    # the plugin's kernel table says the same
    k = plugin(t.write(tmp_path), tmp_path).kernel_stat.loc["void k<float>()"]
    assert (k["count"], k["sum"], k["min"], k["max"]) == (2, 80, 40, 40)
    assert k["occupancy"] == pytest.approx(60) and k["blocks_per_sm"] == pytest.approx(1.25)  # uncapped: 75% capped


def _plugin_kernels(d) -> dict[str, dict]:
    """The plugin's per-kernel figures from its own parsed kernel events: SM efficiency as the issue
    defines it (min(blocks per SM, 1) weighted by time, from the `blocks per SM` the trace records)
    and occupancy weighted by time over the instances that record one."""
    from torch_tb_profiler.profiler.trace import EventTypes

    acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0, 0.0])
    for e in d.events:
        if e.type != EventTypes.KERNEL:
            continue
        x = acc[e.name]
        x[0] += e.duration
        if e.blocks_per_sm is not None and e.blocks_per_sm > 0:
            x[1] += min(e.blocks_per_sm, 1.0) * e.duration
            x[2] += e.duration
        if e.occupancy is not None and e.occupancy >= 0:
            x[3] += e.occupancy * e.duration
            x[4] += e.duration
    return {
        n: {"sm": 100 * x[1] / x[2] if x[2] else None, "occ": x[3] / x[4] if x[4] else None} for n, x in acc.items()
    }


@pytest.mark.parametrize("f", real_files(), ids=lambda f: f"{f.run}:{f.host}")
def test_real_kernels_agree_with_the_pytorch_plugin(f, tmp_path):
    """Every kernel of every real trace, by name, against the plugin's `kernel_stat`: the same names
    and counts, total/mean/min/max within 1%; estimated SM efficiency and occupancy within 1 point of
    the same formulas on the plugin's parsed events. Its own `occupancy` column counts an instance
    without one as 0% (pandas fillna(0)); where every instance has one the two agree to 1 point.
    The two_ranks_of_128 traces have no deviceProperties: no SM count, so no SM efficiency (n/a), where
    the plugin reads each kernel's recorded `blocks per SM`."""
    d = plugin(f.path, tmp_path)
    theirs = d.kernel_stat
    a = analyse(read_file(f))
    ours = {r["name"]: r for r in rows_of(a, "kernels")}
    assert sorted(ours) == sorted(theirs.index)
    figures = _plugin_kernels(d)
    has_sm = bool(a.profile.devices[0].sm_count)
    for name, r in ours.items():
        k = theirs.loc[name]
        assert r["calls"] == k["count"], name
        for ours_key, their_key in (("total_us", "sum"), ("mean_us", "mean"), ("min_us", "min"), ("max_us", "max")):
            assert r[ours_key] == pytest.approx(k[their_key], rel=0.01), (name, ours_key)
        assert r["tensor_cores"] == bool(k["tc_used"]), name
        fig = figures[name]
        if has_sm and fig["sm"] is not None:
            assert r["sm_efficiency_pct"] == pytest.approx(fig["sm"], abs=1), name
        if not has_sm:
            assert r["sm_efficiency_pct"] is None
        if fig["occ"] is None:
            assert r["occupancy_pct"] is None, name
        else:
            assert r["occupancy_pct"] == pytest.approx(fig["occ"], abs=1), name
            if fig["occ"] and abs(k["occupancy"] - fig["occ"]) < 1e-6:
                assert r["occupancy_pct"] == pytest.approx(k["occupancy"], abs=1), name
    assert sum(r["device_share_pct"] for r in ours.values()) == pytest.approx(100, abs=0.01)  # rounded to 0.001


@pytest.mark.parametrize("f", real_files()[:2], ids=lambda f: f"{f.run}:{f.host}")
def test_real_kernels_by_name_and_op_agree_with_the_pytorch_plugin(f, tmp_path):
    """Grouped by kernel name and launching op: the plugin's `kernel_list_groupby_name_op` (which
    also splits by grid, block, registers and shared memory: summed here per name and op) has the
    same calls and total per pair, and the same op names."""
    d = plugin(f.path, tmp_path)
    theirs: dict[tuple[str, str], list] = defaultdict(lambda: [0, 0])
    for k in d.kernel_list_groupby_name_op:
        x = theirs[(k.name, "" if k.op_name == "N/A" else k.op_name)]
        x[0] += k.calls
        x[1] += k.total_duration
    ours = {(r["name"], r["op"]): r for r in rows_of(analyse(read_file(f)), "kernels", "name_op")}
    assert sorted(ours) == sorted(theirs)
    for key, r in ours.items():
        assert r["calls"] == theirs[key][0], key
        assert r["total_us"] == pytest.approx(theirs[key][1], rel=0.01), key


def _converter_kernels(table: dict) -> dict[str, list]:
    cols = [c["id"] for c in table["cols"]]
    out: dict[str, list] = defaultdict(lambda: [0, 0.0, 0.0, set()])
    for row in table["rows"]:
        r = dict(zip(cols, [c["v"] for c in row["c"]]))
        x = out[r["kernel_name"]]
        x[0] += r["occurrences"]
        x[1] += r["total_duration_us"]
        x[2] = max(x[2], r["max_duration_us"])
        x[3].add(r["is_kernel_using_tensor_core"])
    return out


@pytest.mark.parametrize("run", ["01_healthy", "08_fp32_on_tensor_core_gpu", "12_multi_gpu_imbalance"])
def test_demo_kernels_agree_with_the_profile_plugin(run, converter):
    """XSpace: each kernel's calls, total and longest instance against the profile plugin's
    `kernel_stats` (summed over its rows, which split a kernel by launch shape and op), within 1%.
    Tensor Cores: every kernel the converter says uses them, we say too. The converter's rule
    (`IsKernelUsingTensorCore`, a fixed list of Volta and Turing name prefixes such as `volta_h884`)
    does not know Ampere's kernels: `sm80_xmma_..._tensor16x8x16` and `ampere_fp16_s16816gemm` run
    on Tensor Cores (HMMA 16x8x16 is the Ampere Tensor Core instruction) and the converter says no;
    we are right there."""
    found, _ = discover(os.path.join(DEMO, run))
    (f,) = found
    data = open(f.path, "rb").read()
    theirs = _converter_kernels(converter(data, "kernel_stats"))
    a = analyse(read_profile_bytes(data, f.path, f.host))
    ours: dict[str, list] = defaultdict(lambda: [0, 0.0, 0.0, set()])
    for r in rows_of(a, "kernels"):  # one row per GPU: summed over the GPUs as the converter does
        x = ours[r["name"]]
        x[0] += r["calls"]
        x[1] += r["total_us"]
        x[2] = max(x[2], r["max_us"])
        x[3].add(r["tensor_cores"])
    assert sorted(ours) == sorted(theirs)
    for name, (n, total, longest, tc) in ours.items():
        assert n == theirs[name][0], name
        assert total == pytest.approx(theirs[name][1], rel=0.01), name
        assert longest == pytest.approx(theirs[name][2], rel=0.01), name
        if True in theirs[name][3]:
            assert tc == {True}, name
        elif tc == {True}:
            assert "16816" in name or "16x8x16" in name, name


# -- sorting, filtering, paging ------------------------------------------------------------------


def test_sort_filter_and_page():
    f = real_files()[0]
    t = tables.build(analyse(read_file(f)), "kernels")
    first = tables.answer(t, limit=5)
    assert [r["total_us"] for r in first["rows"]] == sorted((r["total_us"] for r in t.rows), reverse=True)[:5]
    assert first["total"] == first["all"] == len(t.rows) and first["sort"] == "total_us" and first["order"] == "desc"
    page = tables.answer(t, limit=5, offset=5)
    assert page["rows"][0]["total_us"] <= first["rows"][-1]["total_us"]
    by_name = tables.answer(t, sort="short_name", limit=1000)
    assert by_name["order"] == "asc"
    names = [r["short_name"].lower() for r in by_name["rows"]]
    assert names == sorted(names)
    q = tables.answer(t, q="GEMM", limit=1000)
    assert q["total"] == sum("gemm" in (r["name"] + r["op"]).lower() for r in t.rows) > 0
    exact = tables.answer(t, names=[first["rows"][0]["name"]])
    assert exact["total"] == 1 and exact["rows"][0]["name"] == first["rows"][0]["name"]
    for bad in ({"sort": "nope"}, {"order": "up"}, {"limit": 1001}, {"offset": -1}):
        with pytest.raises(tables.TableError):
            tables.answer(t, **bad)
    with pytest.raises(tables.TableError):
        tables.build_check("nope", None)
    with pytest.raises(tables.TableError):
        tables.build_check("kernels", "op_shape")


# -- the route and the command -------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug import test, wrappers

    from tb_gpu_advisor.plugin import GpuAdvisorPlugin

    plugin_ = GpuAdvisorPlugin(base_plugin.TBContext(logdir=DEMO, multiplexer=None))
    return test.Client(application.TensorBoardWSGI([plugin_]), wrappers.Response)


def get(c, **params):
    r = c.get("/data/plugin/gpu_advisor/table", query_string=params)
    return r.status_code, json.loads(r.data)


def test_route_answers_and_refuses(client):
    run, host = "12_multi_gpu_imbalance/2026_11_22_10_00_00", "gpu-worker-0"
    status, body = get(client, run=run, host=host, table="kernels", limit="3", wait="60")
    assert status == 200, body
    validate(body, "TableResponse")
    assert len(body["rows"]) == 3 and {r["device"] for r in body["rows"]} <= {0, 1, 2, 3}
    status, body = get(client, run=run, host=host, table="kernels", group="name_op", sort="calls", order="asc")
    assert status == 200 and body["group"] == "name_op" and body["order"] == "asc"
    calls = [r["calls"] for r in body["rows"]]
    assert calls == sorted(calls)
    name = body["rows"][0]["name"]
    status, body = get(client, run=run, host=host, table="kernels", name=name)
    assert status == 200 and body["total"] >= 1 and all(r["name"] == name for r in body["rows"])
    for bad in (
        {"table": "nope"},
        {"table": "kernels", "group": "op"},
        {"table": "kernels", "sort": "nope"},
        {"table": "kernels", "limit": "5000"},
        {"table": "kernels", "offset": "1.5"},
        {"table": "kernels", "order": "sideways"},
    ):
        status, body = get(client, run=run, host=host, **bad)
        assert status == 400, bad
        validate(body, "ErrorResponse")
        assert ROOT not in body["error"]["message"]
    status, body = get(client, run="nope", host=host, table="kernels")
    assert status == 404


def _demo_runs() -> list[tuple[str, str]]:
    found, _ = discover(DEMO)
    seen: dict[str, str] = {}
    for f in sorted(found, key=lambda f: (f.run, f.host)):
        seen.setdefault(f.run, f.host)
    return sorted(seen.items())


@pytest.mark.parametrize("table", tables.TABLES)
def test_every_table_of_every_demo_run_answers_and_validates(table):
    """`tb-gpu-advisor table T` on one host of every demo run, as JSON, validates; text and csv say
    the same rows."""
    for run, host in _demo_runs():
        out = io.StringIO()
        with redirect_stdout(out):
            code = cli.main(["table", table, DEMO, "--run", run, "--host", host, "--format", "json"])
        assert code == 0, (run, host)
        doc = json.loads(out.getvalue())
        validate(doc, "TableResponse")
        assert doc["table"] == table and doc["total"] == doc["all"] >= len(doc["rows"])
        if table == "kernels":
            assert doc["rows"] or doc["notes"], run


def test_text_and_csv_escape_untrusted_names(tmp_path):
    """A kernel named with a terminal escape and a spreadsheet formula: shown escaped in text, not a
    formula in csv."""
    t = Trace()
    t.step(1, 0, 100)
    t.launch(2, (10, 50))
    t.events[-1]["name"] = "=evil\x1b[2J()"
    path = t.write(tmp_path)
    for fmt in ("text", "csv"):
        out = io.StringIO()
        with redirect_stdout(out):
            assert cli.main(["table", "kernels", path, "--format", fmt]) == 0
        text = out.getvalue()
        assert "\x1b" not in text and "\\x1b" in text
        if fmt == "csv":
            assert "'=evil" in text and "\n=evil" not in text
