"""The tables (tb_gpu_advisor/tables/) against independent oracles run in the test on the same
files: PyTorch's TensorBoard plugin (torch-tb-profiler 0.4.3) for kernels, the profile plugin's
converter for XSpace kernels, and hand-made traces with the answer worked out in a comment; plus the
route and the command: every table of every demo run answers and validates against schema.json."""

from __future__ import annotations

import gzip
import io
import json
import os
from collections import defaultdict
from contextlib import redirect_stdout

import pytest
from test_pytorch_plugin_oracle import KERNEL, Trace, plugin, real_files
from test_schema import validate

from tb_gpu_advisor import cli, tables
from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
from tb_gpu_advisor.formats.kineto.rules import shape_of
from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.model.profile import Kind
from tb_gpu_advisor.report.engine import read_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "demo_logs")


def _analysis(path: str):
    return analyse(read_pytorch_trace_bytes(open(path, "rb").read(), path, "h"))


def rows_of(a, table: str, group: str | None = None) -> list[dict]:
    return tables.answer(tables.build(Measures(a), table, group), limit=tables.MAX_LIMIT)["rows"]


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


def test_sm_efficiency_reads_the_recorded_blocks_per_sm(tmp_path):
    """The trace's own `blocks per SM` decides, as the plugin reads it: kernel [10, 50) launches 40
    blocks on the 80 SMs (0.5 per SM) but records 0.25, so SM efficiency is 25%, over the step
    [0, 100) 10%. Without deviceProperties (no SM count) it is the same; a recorded value that is not
    a positive number falls back to the grid over the SMs (50%), and without the SM count to n/a."""
    t = Trace()
    t.step(1, 0, 100)
    t.launch(2, (10, 50), blocks_per_sm=0.5)
    t.events[-1]["args"]["blocks per SM"] = 0.25
    path = t.write(tmp_path)
    (r,) = rows_of(_analysis(path), "kernels")
    assert r["sm_efficiency_pct"] == pytest.approx(25)
    doc = json.load(open(path))
    del doc["deviceProperties"]
    open(path, "w").write(json.dumps(doc))
    a = _analysis(path)
    (r,) = rows_of(a, "kernels")
    assert r["sm_efficiency_pct"] == pytest.approx(25)
    assert a.headline()["per_gpu"][0]["sm_efficiency_pct"] == pytest.approx(10)
    assert 100 * plugin(path, tmp_path).gpu_metrics_parser.avg_approximated_sm_efficiency_per_device[0] == (
        pytest.approx(10)
    )
    for bad in ("x", -1, True):
        t.events[-1]["args"]["blocks per SM"] = bad
        (r,) = rows_of(_analysis(t.write(tmp_path)), "kernels")
        assert r["sm_efficiency_pct"] == pytest.approx(50)
    doc = json.load(open(path))
    del doc["deviceProperties"]
    open(path, "w").write(json.dumps(doc))
    (r,) = rows_of(_analysis(path), "kernels")
    assert r["sm_efficiency_pct"] is None


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
    The two_ranks_of_128 traces have no deviceProperties (no SM count): SM efficiency comes from each
    kernel's recorded `blocks per SM`, as the plugin reads it."""
    d = plugin(f.path, tmp_path)
    theirs = d.kernel_stat
    a = analyse(read_file(f))
    ours = {r["name"]: r for r in rows_of(a, "kernels")}
    assert sorted(ours) == sorted(theirs.index)
    figures = _plugin_kernels(d)
    for name, r in ours.items():
        k = theirs.loc[name]
        assert r["calls"] == k["count"], name
        for ours_key, their_key in (("total_us", "sum"), ("mean_us", "mean"), ("min_us", "min"), ("max_us", "max")):
            assert r[ours_key] == pytest.approx(k[their_key], rel=0.01), (name, ours_key)
        assert r["tensor_cores"] == bool(k["tc_used"]), name
        fig = figures[name]
        if fig["sm"] is None:
            assert r["sm_efficiency_pct"] is None, name
        else:
            assert r["sm_efficiency_pct"] == pytest.approx(fig["sm"], abs=1), name
        if fig["occ"] is None:
            assert r["occupancy_pct"] is None, name
        else:
            assert r["occupancy_pct"] == pytest.approx(fig["occ"], abs=1), name
            if fig["occ"] and abs(k["occupancy"] - fig["occ"]) < 1e-6:
                assert r["occupancy_pct"] == pytest.approx(k["occupancy"], abs=1), name
    assert sum(r["device_share_pct"] for r in ours.values()) == pytest.approx(100, abs=0.01)  # rounded to 0.001


@pytest.mark.parametrize("f", [f for f in real_files() if "resnet50" in f.run], ids=lambda f: f"{f.run}:{f.host}")
def test_kernels_per_step_agree_with_the_pytorch_plugin(f, tmp_path):
    """The kernels table of one step (`step=N`, N as the plugin names steps: ProfilerStep#N): its
    total time is the plugin's kernel time of that step (a single stream, no kernel crossing a step's
    end: the sum of durations is the union), and the steps' calls add up to the whole capture's.
    (On two_ranks_of_128 the plugin counts an NCCL kernel overlapping compute once, as kernel time: a
    union our per-kernel sums cannot be compared with.)"""
    d = plugin(f.path, tmp_path)
    a = analyse(read_file(f))
    numbers = [int(n) for n in d.steps_names]
    calls = 0
    for n, cost in zip(numbers, d.steps_costs):
        t = tables.build(Measures(a), "kernels", step=n)
        assert t.extra == {"step": n} and t.notes == []
        assert sum(r["total_us"] for r in t.rows) == pytest.approx(cost.costs[KERNEL], rel=1e-6), n
        calls += sum(r["calls"] for r in t.rows)
    assert calls == sum(r["calls"] for r in tables.build(Measures(a), "kernels").rows) > 8000
    missing = tables.build(Measures(a), "kernels", step=max(numbers) + 100)
    assert missing.rows == [] and missing.notes == [
        f"GPU 0 has no step {max(numbers) + 100} (its steps are {min(numbers)} to {max(numbers)})"
    ]
    with pytest.raises(tables.TableError, match="the ops table is over the whole capture"):
        tables.build(Measures(a), "ops", step=numbers[0])


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
    t = tables.build(Measures(analyse(read_file(f))), "kernels")
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


def _reference(t, sort: str, desc: bool, q: str | None, names: set[str]) -> list[dict]:
    """The answer's order as a plain Python sort says it (the table caches its orders in NumPy)."""
    rows = [r for r in t.rows if not names or any(r.get(k) in names for k in t.search)]
    if q:
        rows = [r for r in rows if any(q.lower() in str(r.get(k) or "").lower() for k in t.search)]
    present = [r for r in rows if r.get(sort) is not None]
    key = (lambda r: r[sort].lower()) if all(isinstance(r[sort], str) for r in present) else (lambda r: r[sort])
    return sorted(present, key=key, reverse=desc) + [r for r in rows if r.get(sort) is None]


def test_cached_orders_are_the_plain_sort():
    """Every column of the real kernels and ops tables, both ways, with and without a filter: the cached
    NumPy order gives the rows a stable Python sort gives (ties in row order, missing values last)."""
    a = analyse(read_file(real_files()[0]))
    for table in ("kernels", "ops"):
        t = tables.build(Measures(a), table)
        some = t.rows[0][t.search[0]]
        for c in t.columns:
            for desc in (False, True):
                for q, names in ((None, set()), ("conv", set()), (None, {some})):
                    got = tables.answer(
                        t, sort=c["key"], order="desc" if desc else "asc", q=q, names=names, limit=tables.MAX_LIMIT
                    )
                    want = _reference(t, c["key"], desc, q, names)
                    assert got["total"] == len(want), (table, c["key"], q)
                    assert got["rows"] == want[: tables.MAX_LIMIT], (table, c["key"], desc, q)


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
    # one step's kernels: the steps' calls add up to the capture's, a step that is not there is said
    status, whole = get(client, run=run, host=host, table="kernels", limit="1000")
    per_step = []
    for n in range(6):
        status, body = get(client, run=run, host=host, table="kernels", step=str(n), limit="1000")
        assert status == 200 and body["step"] == n, body
        validate(body, "TableResponse")
        per_step.append(sum(r["calls"] for r in body["rows"]))
    assert sum(per_step) <= sum(r["calls"] for r in whole["rows"]) and min(per_step) > 0
    status, body = get(client, run=run, host=host, table="kernels", step="99")
    assert status == 200 and body["rows"] == [] and "GPU 0 has no step 99 (its steps are 0 to" in body["notes"][0]
    status, body = get(client, run=run, host=host, table="idle", step="1")
    assert status == 400 and "only kernels is per step" in body["error"]["message"]


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


# -- ops -----------------------------------------------------------------------------------------


def _without_runtime_and_annotations(path: str, tmp_path) -> str:
    """A copy of a trace without its runtime calls and its annotations other than the steps."""
    import gzip

    doc = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    doc["traceEvents"] = [
        e
        for e in doc["traceEvents"]
        if e.get("cat") not in ("cuda_runtime", "cuda_driver")
        and not (e.get("cat") == "user_annotation" and not str(e.get("name")).startswith("ProfilerStep#"))
    ]
    out = tmp_path / "copy" / os.path.basename(path).removesuffix(".gz")
    out.parent.mkdir()
    out.write_text(json.dumps(doc))
    return str(out)


@pytest.mark.parametrize("f", real_files(), ids=lambda f: f"{f.run}:{f.host}")
def test_real_ops_agree_with_the_pytorch_plugin(f, tmp_path):
    """Every op of every real trace against the plugin's `op_list_groupby_name`: the same names
    (it leaves `Optimizer.*` ranges out of its op table; we keep them: they are what the user
    wrote), calls equal; host total, host self, device self and device total time within 1% (device
    total: what the op and the ops under it launched, the plugin's `device_duration`; on the V100
    ResNet-50 `aten::cudnn_convolution_backward` launches nothing itself, 273,428 µs under it).

    The two_ranks_of_128 traces were sampled by their publisher: no runtime call's external id is
    an op's, and the plugin 0.4.3 does not know their `cuda_runtime` category either, so it attaches
    no runtime call to any op and keeps their time in the ops' host self time; it also takes only
    a few NCCL and Gloo annotations as an op's children. PyTorch's own definition (the plugin states
    it: "cpu_self_time does not include runtime's time"; the autograd profiler takes every range on
    the thread as a child) takes both out, and so do we, by nesting on the thread: our self time is
    at most the plugin's there, and on a copy of the trace without runtime calls and annotations the
    two agree within 1%. The plugin pairs runtime calls and kernels with ops by external id, so there
    it has no device time at all (self or total); we nest the runtime calls on the thread, as for self
    time, and find what each op launched, itself and under it. Which is right there:
    `aten::fill_` launches its `FillFunctor` kernel itself (its `cudaLaunchKernel` nests in it, 50
    calls, 664 µs), and HTA 0.5.0's call graph, which makes the innermost op around a launch its
    parent, says the same op by op (test_sampled_ops_device_self_time_agrees_with_hta); the plugin's
    0 is its lost pairing, not the op launching nothing."""
    sampled = "two_ranks" in f.run
    d = plugin(f.path, tmp_path)
    theirs = {o.name: o for o in d.op_list_groupby_name}
    ours = {r["name"]: r for r in rows_of(analyse(read_file(f)), "ops")}
    assert {n for n in ours if not n.startswith("Optimizer.")} == set(theirs)
    for name, o in theirs.items():
        r = ours[name]
        assert r["calls"] == o.calls, name
        assert r["host_total_us"] == pytest.approx(o.host_duration, rel=0.01, abs=1), name
        assert r["device_total_us"] >= r["device_us"], name
        if sampled:
            assert r["host_self_us"] <= o.self_host_duration + 1, name
            assert o.device_duration == o.self_device_duration == 0, name
        else:
            assert r["device_us"] == pytest.approx(o.self_device_duration, rel=0.01, abs=1), name
            assert r["host_self_us"] == pytest.approx(o.self_host_duration, rel=0.01, abs=1), name
            assert r["device_total_us"] == pytest.approx(o.device_duration, rel=0.01, abs=1), name
    if "resnet50_num_workers_0" in f.run and f.host.endswith("089861"):
        bwd = ours["aten::cudnn_convolution_backward"]
        assert bwd["device_us"] == 0 and bwd["device_total_us"] == pytest.approx(273_428, abs=1)
    if sampled:
        assert sum(r["device_total_us"] for r in ours.values()) > 1e6  # what nesting finds, the plugin not
        path = _without_runtime_and_annotations(f.path, tmp_path)
        theirs = {o.name: o for o in plugin(path, tmp_path).op_list_groupby_name}
        ours = {r["name"]: r for r in rows_of(_analysis(path), "ops")}
        for name, o in theirs.items():
            assert ours[name]["calls"] == o.calls, name
            assert ours[name]["host_self_us"] == pytest.approx(o.self_host_duration, rel=0.01, abs=1), name
    else:
        assert sum(r["device_us"] for r in ours.values()) > 0


@pytest.mark.parametrize("rank", [0, 1])
def test_sampled_ops_device_self_time_agrees_with_hta(rank, tmp_path, monkeypatch):
    """On two_ranks_of_128, whose kernels carry no op's external id (rewritten to their correlation ids
    by their publisher), an op's device self time is what the runtime calls nested in it launched: HTA
    0.5.0's call graph (a kernel's parent is its launch, a launch's the innermost event around it; up
    to the first op, as an annotation such as `nccl:all_to_all` is no row of the ops table), over both
    profiled steps (`include_last_profiler_step=True`), op by op. Before issue 48 the table said 0 µs
    of device self time for every op (`aten::fill_`: 0 µs self, 664 µs total)."""
    pytest.importorskip("hta.trace_analysis")
    from hta.common.call_stack import CallGraph
    from hta.trace_analysis import TraceAnalysis

    monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")  # this test's only: others read HTA's default
    (f,) = [f for f in real_files() if "two_ranks" in f.run and f.host.startswith(f"rank{rank}.")]
    folder = tmp_path / "trace"
    folder.mkdir()
    os.symlink(f.path, folder / os.path.basename(f.path))
    t = TraceAnalysis(trace_dir=str(folder), include_last_profiler_step=True)
    CallGraph(t.t, ranks=[rank])  # adds each event's parent
    df = t.t.get_trace(rank)
    sym = t.t.symbol_table.get_sym_table()
    device = df[(df["stream"] > 0) & (df["index_correlation"] > 0)]
    parent = df.loc[device["index_correlation"].to_numpy(), "parent"].to_numpy()
    up, cat = df["parent"].to_dict(), df["cat"].map(lambda c: sym[int(c)] if not isinstance(c, str) else c).to_dict()
    theirs: dict[str, float] = defaultdict(float)
    for p, dur in zip(parent.tolist(), device["dur"].tolist()):
        while p >= 0 and cat[p] != "cpu_op":
            p = up.get(p, -1)
        if p >= 0:
            theirs[sym[int(df.loc[p, "name"])]] += dur
    ours = {r["name"]: r for r in rows_of(analyse(read_file(f)), "ops")}
    assert theirs["aten::fill_"] == 664 if rank == 0 else theirs["aten::fill_"] > 0
    assert ours["aten::fill_"]["device_us"] == ours["aten::fill_"]["device_total_us"] == theirs["aten::fill_"]
    for name, us in theirs.items():
        assert ours[name]["device_us"] == pytest.approx(us, rel=0.01, abs=1), name
    assert sum(r["device_us"] for r in ours.values()) == pytest.approx(sum(theirs.values()), rel=0.01)


@pytest.mark.parametrize("run", ["01_healthy", "02_input_bound", "06_eager_execution", "07_host_ops_and_copies"])
def test_demo_ops_agree_with_the_profile_plugin(run, converter):
    """XSpace: each op of the profile plugin's `framework_op_stats` against ours: occurrences equal,
    self time within 1% (its device rows against our device time, its host rows against our host
    self time). It also lists the tf.data stages (`Iterator::...`) as host ops: they are the input
    table's rows here; and an `IDLE` row of its own."""
    found, _ = discover(os.path.join(DEMO, run))
    (f,) = found
    data = open(f.path, "rb").read()
    (table, *_) = converter(data, "framework_op_stats")
    cols = [c["id"] for c in table["cols"]]
    theirs = [dict(zip(cols, [c.get("v") for c in row["c"]])) for row in table["rows"]]
    ours = {r["name"]: r for r in rows_of(analyse(read_profile_bytes(data, f.path, f.host)), "ops")}
    compared = 0
    for t in theirs:
        if t["operation"] == "IDLE" or t["operation"].startswith("Iterator::"):
            continue
        r = ours[t["operation"]]
        key = "device_us" if t["host_or_device"] == "Device" else "host_self_us"
        assert r["calls"] == t["occurrences"], t["operation"]
        assert r[key] == pytest.approx(t["total_self_time"], rel=0.01, abs=0.01), t["operation"]
        compared += 1
    assert compared >= 20


# -- idle time -----------------------------------------------------------------------------------


@pytest.mark.parametrize("f", real_files(), ids=lambda f: f"{f.run}:{f.host}")
def test_real_idle_time_agrees_with_hta(f, tmp_path):
    """Per stream, idle time and its host wait / kernel wait / other parts against Holistic Trace
    Analysis 0.5.0's `get_idle_time_breakdown`, and the launch delay statistics against its
    `get_cuda_kernel_launch_stats`, within 1%. HTA is run with include_last_profiler_step=True: by
    default it drops the device work launched in the last ProfilerStep, and the table is over the
    whole capture (on these traces no device work is launched after the last step's end)."""
    import logging
    import shutil

    hta = pytest.importorskip("hta.trace_analysis")
    d = tmp_path / "trace"
    d.mkdir()
    shutil.copy(f.path, d)
    logging.disable(logging.WARNING)
    try:
        h = hta.TraceAnalysis(trace_dir=str(d), include_last_profiler_step=True)
        (rank,) = list(h.t.traces)
        breakdown, _ = h.get_idle_time_breakdown(ranks=[rank], visualize=False)
        launch = h.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)[rank]["launch_delay"]
    finally:
        logging.disable(logging.NOTSET)
    t = tables.build(Measures(analyse(read_file(f))), "idle")
    ours = {r["stream"]: r for r in t.rows}
    assert sorted(ours) == sorted(int(s) for s in breakdown["stream"].unique())
    for _, x in breakdown.iterrows():
        r = ours[int(x["stream"])]
        assert r[f"{x['idle_category']}_us"] == pytest.approx(x["idle_time"], rel=0.01, abs=1), (x["stream"], x)
    for stream, r in ours.items():
        theirs = breakdown[breakdown["stream"] == stream]["idle_time"].sum()
        assert r["idle_us"] == pytest.approx(theirs, rel=0.01, abs=1), stream
    ld = t.extra["launch_delay"]
    assert ld["count"] == len(launch)
    assert ld["mean_us"] == pytest.approx(launch.mean(), rel=0.01)
    assert ld["p50_us"] == pytest.approx(launch.median(), rel=0.01)
    assert ld["p95_us"] == pytest.approx(launch.quantile(0.95), rel=0.01)
    assert ld["max_us"] == pytest.approx(launch.max(), rel=0.01)


def test_hand_made_idle_causes(tmp_path):
    """One stream: kernel A [10, 20), B launched at 5 runs [25, 35) (gap 5 µs, launched before A
    ended: kernel wait), C launched at 40 runs [45, 55) (its launch came after B ended: host wait
    10 µs), D launched at 41 runs [100, 110) (45 µs, no host wait, over 30 µs: other). Launch delays
    (kernel start less the 2 µs call's end): 10 - 4, 25 - 7, 45 - 42, 100 - 43."""
    t = Trace()
    t.step(1, 0, 200)
    t.launch(2, (10, 20))
    t.launch(5, (25, 35))
    t.launch(40, (45, 55))
    t.launch(41, (100, 110))
    (r,) = rows_of(_analysis(t.write(tmp_path)), "idle")
    assert (r["kernel_wait_us"], r["host_wait_us"], r["other_us"], r["idle_us"]) == (5, 10, 45, 60)
    assert r["idle_pct"] == pytest.approx(60)  # of the stream's span [10, 110)
    ld = tables.build(Measures(_analysis(t.write(tmp_path))), "idle").extra["launch_delay"]
    assert ld["count"] == 4 and ld["max_us"] == 57 and ld["mean_us"] == pytest.approx((6 + 18 + 3 + 57) / 4)


# -- memory --------------------------------------------------------------------------------------


def _raw_running_peaks(path: str) -> dict[int, tuple[int, float]]:
    """Hand count: per device (-1 the CPU), the highest running sum of the `[memory]` records'
    bytes, in time order, and the time (µs) it is reached."""
    import gzip

    doc = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    recs = sorted(
        (e["ts"], int(e["args"].get("Device Id", -1)) if e["args"].get("Device Type") == 1 else -1, e["args"]["Bytes"])
        for e in doc["traceEvents"]
        if e.get("name") == "[memory]"
    )
    running: dict[int, int] = defaultdict(int)
    peaks: dict[int, tuple[int, float]] = {}
    for ts, dev, b in recs:
        running[dev] += b
        if running[dev] > peaks.get(dev, (-(2**62), 0))[0]:
            peaks[dev] = (running[dev], ts)
    return peaks


@pytest.mark.parametrize("f", real_files()[:4], ids=lambda f: f"{f.run}:{f.host}")
def test_real_memory_peaks_by_hand(f):
    """The resnet50 traces (PyTorch 1.8) record each allocation's bytes but no allocator totals: the
    allocated curve is the running sum per device, and its peak is exact against a hand count from
    the raw events. (torch-tb-profiler's `get_peak_memory` reads only totals: empty on these.)"""
    a = analyse(read_file(f))
    doc = tables.answer(tables.build(Measures(a), "memory"))
    peaks = _raw_running_peaks(f.path)
    assert {r["device"] for r in doc["rows"]} == set(peaks)
    origin_us = a.profile.origin_ns / 1000
    for r in doc["rows"]:
        peak, ts = peaks[r["device"]]
        assert r["peak_allocated_bytes"] == peak
        assert r["peak_time_ms"] == pytest.approx((ts - origin_us) / 1000, abs=1e-3)
        assert r["peak_reserved_bytes"] is None
    gpu = next(r for r in doc["rows"] if r["device"] == 0)
    assert gpu["capacity_bytes"] == a.profile.devices[0].memory_bytes
    assert gpu["headroom_bytes"] == gpu["capacity_bytes"] - gpu["peak_allocated_bytes"]
    assert doc["notes"] and all(len(s["points"]) <= tables.MAX_POINTS for s in doc["series"])
    peak_point = max(doc["series"][0]["points"], key=lambda p: p[1])
    assert peak_point[1] == max(peaks[s["device"]][0] for s in doc["series"][:1])
    assert doc["around_peak"] and all(x["bytes"] > 0 for x in doc["around_peak"])
    assert any(x["name"].startswith("aten::") for x in doc["around_peak"])


def test_hand_made_memory_with_totals(tmp_path):
    """GPU 0: +512 (allocated 1536, reserved 2 MiB) at 5, +1024 (2560, 2 MiB) at 7 inside
    aten::empty, -1024 (1536, 4 MiB) at 9: the peak is 2560 at 7 µs, reserved 4 MiB, headroom the
    16 GiB V100 less 4 MiB. torch-tb-profiler's peak says the same."""
    t = Trace()
    t.step(1, 0, 100)
    t.op(6, 2, "aten::empty")
    t.launch(20, (30, 40))
    for ts, b, alloc, res in ((5, 512, 1536, 2 << 20), (7, 1024, 2560, 2 << 20), (9, -1024, 1536, 4 << 20)):
        t.events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
                         "args": {"Device Type": 1, "Device Id": 0, "Bytes": b, "Total Allocated": alloc,
                                  "Total Reserved": res, "Addr": 1000}})  # fmt: skip
    path = t.write(tmp_path)
    doc = tables.answer(tables.build(Measures(_analysis(path)), "memory"))
    (r,) = doc["rows"]
    assert (r["peak_allocated_bytes"], r["peak_reserved_bytes"]) == (2560, 4 << 20)
    assert r["peak_time_ms"] == pytest.approx((7 + 1000) / 1000)  # time zero is the profiler's start, -1000 µs
    assert r["headroom_bytes"] == (16 << 30) - (4 << 20)
    assert doc["series"][0]["points"][1][1:] == [2560, 2 << 20]
    assert doc["around_peak"][-1] == {
        "device": 0,
        "allocator": "",
        "name": "aten::empty",
        "bytes": 1024,
        "t_ms": pytest.approx(1.007),
    }
    from torch_tb_profiler.profiler.memory_parser import DeviceType

    assert plugin(path, tmp_path).memory_snapshot.get_peak_memory()[(DeviceType.CUDA, 0)] == 2560


def test_demo_xspace_memory_against_the_raw_events_and_the_converter(converter):
    """XSpace: each GPU allocator's (`GPU_<id>_bfc`) peak of bytes allocated, counted by hand from the
    raw MemoryAllocation events, and the time of the peak, which the profile plugin's
    `memory_profile` puts at the same instant with the same heap bytes (the demo files' memory stats
    are int64, as TensorFlow writes them: the converter reads unsigned ones as 0)."""
    from tb_gpu_advisor.formats.xplane import xplane_pb2

    found, _ = discover(os.path.join(DEMO, "12_multi_gpu_imbalance"))
    (f,) = found
    data = open(f.path, "rb").read()
    space = xplane_pb2.XSpace()
    space.ParseFromString(data)
    peaks: dict[str, int] = defaultdict(int)
    for plane in space.planes:
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            for ev in line.events:
                stats = {stat_names.get(s.metadata_id): s for s in ev.stats}
                if "allocator_name" in stats and "bytes_allocated" in stats:
                    alloc = (
                        stats["allocator_name"].str_value or plane.stat_metadata[stats["allocator_name"].ref_value].name
                    )
                    v = stats["bytes_allocated"]
                    peaks[alloc] = max(peaks[alloc], v.int64_value or v.uint64_value)
    doc = tables.answer(tables.build(Measures(analyse(read_profile_bytes(data, f.path, f.host))), "memory"))
    theirs = converter(data, "memory_profile")["memoryProfilePerAllocator"]
    assert len(doc["rows"]) == 4 and not doc["notes"]
    for r in doc["rows"]:
        assert r["peak_allocated_bytes"] == peaks[f"GPU_{r['device']}_bfc"] > 0
        summary = theirs[f"GPU_{r['device']}_bfc"]["profileSummary"]
        assert r["peak_time_ms"] == pytest.approx(int(summary["peakStatsTimePs"]) / 1e9, abs=1e-6)
        assert r["peak_allocated_bytes"] == int(summary["peakStats"]["heapAllocatedBytes"])


# -- input pipeline ------------------------------------------------------------------------------


@pytest.mark.parametrize("run", ["02_input_bound", "18_input_prefetched_after_02"])
def test_demo_input_stages_agree_with_the_profile_plugin(run, converter):
    """Each tf.data stage against the profile plugin's `input_pipeline_analyzer` input-op table:
    calls equal, total and self time within 1%; the slowest stage is its largest self time; the
    pipeline prefetches and maps in parallel (its stage names say so), and input.bound's advice,
    which reads the same stages, does not tell the user to add them."""
    from tb_gpu_advisor.report.engine import analyse_file

    found, _ = discover(os.path.join(DEMO, run))
    (f,) = found
    data = open(f.path, "rb").read()
    table = converter(data, "input_pipeline_analyzer")[2]
    cols = [c["id"] for c in table["cols"]]
    theirs = {r["opName"]: r for r in (dict(zip(cols, [c["v"] for c in row["c"]])) for row in table["rows"])}
    doc = tables.answer(tables.build(Measures(analyse(read_profile_bytes(data, f.path, f.host))), "input"))
    ours = {r["stage"]: r for r in doc["rows"]}
    assert sorted(ours) == sorted(theirs)
    for name, r in ours.items():
        assert r["calls"] == theirs[name]["count"], name
        assert r["total_us"] / 1000 == pytest.approx(theirs[name]["timeInMs"], rel=0.01), name
        assert r["self_us"] / 1000 == pytest.approx(theirs[name]["selfTimeInMs"], rel=0.01), name
    (slowest,) = [n for n, r in ours.items() if r["slowest"]]
    assert slowest == max(theirs, key=lambda n: theirs[n]["selfTimeInMs"])
    assert doc["prefetch"] and doc["parallel_map"]
    _, report = analyse_file(f)
    (advice,) = [c["recommendation"] for c in report["checks"] if c["id"] == "input.bound"]
    assert "already has `prefetch`, a parallel `map`" in advice


def test_pytorch_input_rows_are_the_dataloader_waits():
    """PyTorch has no pipeline stages: the rows are the DataLoader's `__next__` waits and the batch's
    copies (tests/tables/test_input_table.py counts them from the raw JSON); with workers
    (`_MultiProcessingDataLoaderIter`) the loader counts as parallel."""
    for f in real_files()[:4]:
        doc = tables.answer(tables.build(Measures(analyse(read_file(f))), "input"))
        validate(doc, "TableResponse")
        (r,) = [r for r in doc["rows"] if r["part"] == "wait"]
        assert "DataLoader" in r["stage"] and r["calls"] == 6 and r["self_us"] == r["total_us"] > 0
        assert doc["parallel_map"] == doc["workers"] == ("num_workers_4" in f.run) and not doc["prefetch"]


# -- findings link to their rows -----------------------------------------------------------------


@pytest.mark.parametrize(
    "run",
    ["05_launch_bound_small_kernels", "08_fp32_on_tensor_core_gpu", "07_host_ops_and_copies", "12_multi_gpu_imbalance"],
)
def test_findings_link_to_rows_that_exist(run):
    """Each finding's `table` link opens rows: every name it carries is a row of that table (the
    route's `name` filter finds it), at most 50; a memory link is at the peak's time. A finding about
    the whole GPU (precision.mixed-off, multigpu.imbalance) links the whole table."""
    from tb_gpu_advisor.report.engine import analyse_file

    found, _ = discover(os.path.join(DEMO, run))
    (f,) = found
    from tb_gpu_advisor.checks import tables_of

    m, report = analyse_file(f)
    validate(report, "Report")
    fired = 0
    for c in report["checks"]:
        link = c["table"]
        if link is None:
            assert tables_of()[c["id"]] is None or c["status"] in ("not-applicable", "error")
            continue
        assert link["table"] == tables_of()[c["id"]]
        t = tables.build(m, link["table"])
        assert len(link["name"]) <= tables.MAX_LINK_NAMES
        for n in link["name"]:
            assert tables.answer(t, names=[n])["total"] >= 1, (c["id"], n)
        if link["table"] == "memory":
            assert link["at_ms"] in [r["peak_time_ms"] for r in t.rows]
        if c["status"] in ("critical", "warning") and link["name"]:
            fired += 1
    assert fired >= 1 or run == "12_multi_gpu_imbalance"  # its findings are about GPUs, not named kernels


# -- AMD's words -----------------------------------------------------------------------------------


def test_amd_kernels_table_speaks_amd():
    """An MI250 trace (ROCm: HIP launches, a Tensile GEMM with the matrix-instruction tag
    `_MI32x32x2x1`): the kernel table says compute units and matrix cores (MFMA), never SM or
    Tensor Cores; the GEMM runs on the matrix cores; HIP launches give the launch delay."""
    from support.kineto_traces import MI250, TENSILE, V100, kineto

    amd = analyse(read_pytorch_trace_bytes(kineto([MI250], kernel=TENSILE, launch="hipLaunchKernel"), "t.json", "h"))
    t = tables.build(Measures(amd), "kernels")
    labels = " ".join(c["label"] for c in t.columns) + " ".join(t.notes)
    assert "Tensor Core" not in labels and "SM" not in labels and "Matrix cores (MFMA)" in labels
    (r,) = t.rows
    assert r["tensor_cores"] is True and r["calls"] == 20
    assert tables.build(Measures(amd), "idle").extra["launch_delay"]["count"] == 20
    nvidia = analyse(read_pytorch_trace_bytes(kineto([V100]), "t.json", "h"))
    t = tables.build(Measures(nvidia), "kernels")
    assert "Tensor Cores" in [c["label"] for c in t.columns] and t.rows[0]["tensor_cores"] is False


def test_route_answers_202_while_the_analysis_runs(tmp_path, monkeypatch):
    """While the host's file is still being read, the table route answers 202 with the analysis
    state (as `report` does), and the table once it is done; bad parameters are refused at once."""
    import threading

    from support import scenarios
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug import test, wrappers

    from tb_gpu_advisor.formats.xplane import reader as xspace_reader
    from tb_gpu_advisor.plugin import GpuAdvisorPlugin

    scenarios.single_gpu().write(str(tmp_path), run="slow", session="s1")
    c = test.Client(
        application.TensorBoardWSGI([GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(tmp_path)))]), wrappers.Response
    )
    real, gate = xspace_reader.read_profile_bytes, threading.Event()

    def reader(data, path, host, progress=None, scan=None, limit=None):
        gate.wait(10)
        return real(data, path, host, progress, scan, limit)

    monkeypatch.setattr(xspace_reader, "read_profile_bytes", reader)
    status, body = get(c, run="slow/s1", host="worker0", table="kernels", wait="0")
    assert status == 202 and body["pending"] and body["state"] in ("queued", "running")
    validate(body, "PendingResponse")
    status, body = get(c, run="slow/s1", host="worker0", table="nope", wait="0")
    assert status == 400
    gate.set()
    status, body = get(c, run="slow/s1", host="worker0", table="kernels", wait="10")
    assert status == 200 and body["rows"]


def test_the_command_gives_one_step_and_refuses_a_table_that_is_not_per_step(capsys):
    run = "pytorch_resnet50_num_workers_0"
    assert cli.main(["table", "kernels", DEMO, "--run", run, "--step", "7", "--format", "json", "--limit", "1000"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["step"] == 7 and one["notes"] == [] and sum(r["calls"] for r in one["rows"]) == 1462
    assert cli.main(["table", "kernels", DEMO, "--run", run, "--format", "json", "--limit", "1000"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert "step" not in whole and sum(r["calls"] for r in whole["rows"]) == 6 * 1462
    assert cli.main(["table", "memory", DEMO, "--run", run, "--step", "7"]) == 2
    assert "the memory table is over the whole capture; only kernels is per step" in capsys.readouterr().err


def _shape_links(path: str) -> dict[tuple[str, str], set[str]]:
    """From the raw file: each (op name, our input shapes) and the plugin's keys for the same events,
    `str(Input Dims)` (the plugin groups by dims alone; we also keep each input's type)."""
    raw = open(path, "rb").read()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    links: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in doc["traceEvents"] if isinstance(doc, dict) else doc:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "Operator", "user_annotation"):
            a = e.get("args") or {}
            links[(e["name"], shape_of(a))].add(str(a.get("Input Dims", a.get("Input dims", []))))
    return links


@pytest.mark.parametrize("f", real_files(), ids=lambda f: f"{f.run}:{f.host}")
def test_real_ops_by_shape_agree_with_the_pytorch_plugin(f, tmp_path):
    """Grouped `op_shape`, against the plugin's `op_list_groupby_name_input`. It keys a group by the
    op's name and `str(Input Dims)`; we by the name and each input's type and dims, so one of its
    groups may be several of ours (the same dims in float and half), and, where a trace records an
    empty input with no type (`aten::sum` on two_ranks rank 0: `[[], [267, 2048], ...]` and
    `[[267, 2048], ...]`), one of ours two of its. Both sides are summed over the groups the raw
    events link: calls equal, host total and device time within 1%; host self and device time as in
    `test_real_ops_agree_with_the_pytorch_plugin` (on the sampled traces, self at most the plugin's, and
    the device time the plugin cannot pair)."""
    sampled = "two_ranks" in f.run
    theirs = {(o.name, o.input_shape): o for o in plugin(f.path, tmp_path).op_list_groupby_name_input}
    ours = {(r["name"], r["input_shapes"]): r for r in rows_of(analyse(read_file(f)), "ops", "op_shape")}
    assert {k for k in ours if not k[0].startswith("Optimizer.")} <= set(_shape_links(f.path))
    # linked groups: union-find over our keys and theirs
    parent: dict[tuple, tuple] = {}

    def root(k: tuple) -> tuple:
        while parent.setdefault(k, k) != k:
            k = parent[k]
        return k

    for (name, shape), dims in _shape_links(f.path).items():
        for d in dims:
            parent[root(("theirs", name, d))] = root(("ours", name, shape))
    sums: dict[tuple, list[float]] = defaultdict(lambda: [0.0] * 10)
    for (name, d), o in theirs.items():
        s = sums[root(("theirs", name, d))]
        for j, v in enumerate(
            (o.calls, o.host_duration, o.self_host_duration, o.self_device_duration, o.device_duration)
        ):
            s[j] += v
    for (name, shape), r in ours.items():
        if name.startswith("Optimizer."):
            continue  # the plugin leaves these ranges out of its op table
        s = sums[root(("ours", name, shape))]
        for j, v in enumerate(
            (r["calls"], r["host_total_us"], r["host_self_us"], r["device_us"], r["device_total_us"])
        ):
            s[5 + j] += v
    assert len(sums) >= 0.9 * len(theirs)  # most groups are one of theirs and one of ours
    for key, (
        calls,
        total,
        self_,
        device,
        dtotal,
        our_calls,
        our_total,
        our_self,
        our_device,
        our_dtotal,
    ) in sums.items():
        assert our_calls == calls, key
        assert our_total == pytest.approx(total, rel=0.01, abs=1), key
        assert our_dtotal >= our_device, key
        if sampled:  # the plugin pairs no kernel with an op there: HTA is the oracle of device self time
            assert our_self <= self_ + 1, key
            assert device == dtotal == 0, key
        else:
            assert our_device == pytest.approx(device, rel=0.01, abs=1), key
            assert our_self == pytest.approx(self_, rel=0.01, abs=1), key
            assert our_dtotal == pytest.approx(dtotal, rel=0.01, abs=1), key
    if not sampled:
        # the split is real: some op's calls come in several shapes, each with its own device time
        names = [k[0] for k, r in ours.items() if r["device_us"]]
        assert len(names) > len(set(names))


def test_real_ops_show_the_call_stack_of_their_longest_call():
    """PyTorch 1.8 keeps a stack per op event (`Call stack`, with_stack=True): each op's row shows
    that of its longest call, found here in the raw file (an op's events of the longest duration)."""
    (f,) = [f for f in real_files() if f.path.endswith("worker0.1623143089861.pt.trace.json.gz")]
    doc = json.loads(gzip.decompress(open(f.path, "rb").read()))
    longest: dict[str, tuple[float, set[str]]] = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "Operator":
            dur, stacks = longest.get(e["name"], (-1.0, set()))
            stack = (e.get("args") or {}).get("Call stack", "")
            if e["dur"] > dur:
                longest[e["name"]] = (e["dur"], {stack})
            elif e["dur"] == dur:
                stacks.add(stack)
    rows = rows_of(analyse(read_file(f)), "ops")
    with_stack = [r for r in rows if r["stack"]]
    assert len(with_stack) >= 20
    for r in rows:
        if r["name"] in longest:
            assert r["stack"] in longest[r["name"]][1], r["name"]
    assert any("(" in r["stack"] and ".py" in r["stack"] for r in with_stack)


def test_real_op_events_keep_their_shapes_and_stacks():
    """Hand counts from the raw file: every op event with `Input Dims` keeps a shape (23,622 in
    resnet50 worker 0) and every op event with a `Call stack` its stack, but for the op events the
    reader drops (starting outside the profiler's span: 12 here, none of them with dims)."""
    (f,) = [f for f in real_files() if f.path.endswith("worker0.1623143089861.pt.trace.json.gz")]
    doc = json.loads(gzip.decompress(open(f.path, "rb").read()))
    ops = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "Operator"]
    dims = sum(1 for e in ops if e["args"].get("Input Dims"))
    stacks = sum(1 for e in ops if e["args"].get("Call stack"))
    p = read_file(f)
    kept = sum(int((t.events.kind == Kind.FRAMEWORK_OP).sum()) for t in p.threads)
    shapes = sum(int((t.events.shape >= 0).sum()) for t in p.threads)
    ours = sum(int((t.events.stack >= 0).sum()) for t in p.threads)
    assert shapes == dims == 23622
    assert stacks - (len(ops) - kept) <= ours <= stacks
    assert 0 < len(ops) - kept <= 12
