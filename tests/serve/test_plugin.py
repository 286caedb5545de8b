"""The plugin's WSGI routes in-process, through TensorBoard's own WSGI application."""

import collections
import json
import os
import re
import shutil
import threading
import time
from urllib.parse import unquote

import numpy as np
import pytest
from support import scenarios
from support.plugin_client import BASE, client, get
from test_schema import validate

from tb_gpu_advisor.checks import REGISTRY
from tb_gpu_advisor.formats.xplane import reader as xspace_reader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "demo_logs")
INPUT = "02_input_bound/2026_11_22_10_00_00"


@pytest.fixture(scope="module")
def demo():
    return client(DEMO)


def test_plugin_metadata_and_activity(tmp_path):
    _, plugin = client(DEMO)
    assert plugin.plugin_name == "gpu_advisor" and plugin.is_active()
    meta = plugin.frontend_metadata()
    assert meta.es_module_path == "/index.js" and meta.tab_name == "GPU Advisor"
    assert not client(tmp_path)[1].is_active()


def test_a_logdir_that_is_a_profile_file_says_to_pass_its_folder(tmp_path):
    """`tensorboard --logdir w.pt.trace.json.gz` (TensorBoard accepts a file): the tab is active and
    /runs names the file, so the panel says to pass its folder; any other file, or a folder, does not."""
    run = os.path.join(DEMO, "pytorch_resnet50_num_workers_0")
    (name,) = [n for n in os.listdir(run) if n.endswith(".pt.trace.json.gz")]
    shutil.copy(os.path.join(run, name), tmp_path / name)
    c, plugin = client(tmp_path / name)
    assert plugin.is_active()
    r, body = get(c, "/runs")
    assert r.status_code == 200 and body["runs"] == [] and body["logdir_file"] == name
    validate(body, "RunsResponse")
    (tmp_path / "notes.txt").write_text("not a profile")
    c, plugin = client(tmp_path / "notes.txt")
    assert not plugin.is_active() and "logdir_file" not in get(c, "/runs")[1]
    assert "logdir_file" not in get(client(DEMO)[0], "/runs")[1]


def test_every_route_says_its_handling_time(demo):
    """`Server-Timing: app;dur=<ms>` on every route and answer (200, 202 is not reached here, 400, 404,
    405): the plugin's own time, which the load benchmark's p95 target is about; never more than the
    client waited."""
    c, _ = demo
    host = {"run": INPUT, "host": "gpu-worker-0"}
    asks = [
        ("/index.js", {}, 200),
        ("/runs", {}, 200),
        ("/checks", {}, 200),
        ("/report", host, 200),
        ("/timeline", {**host, "width": 300}, 200),
        ("/export", host, 200),
        ("/report", {"run": "no/such", "host": "h"}, 404),
        ("/timeline", {**host, "width": "x"}, 400),
    ]
    for path, params, status in asks:
        t = time.perf_counter()
        r, _ = get(c, path, **params)
        waited_ms = 1000 * (time.perf_counter() - t)
        assert r.status_code == status, (path, r.status_code)
        m = re.fullmatch(r"app;dur=(\d+\.\d{3})", r.headers["Server-Timing"])
        assert m and 0 < float(m.group(1)) <= waited_ms, (path, r.headers["Server-Timing"])
    r = c.post(f"{BASE}/report")
    assert r.status_code == 405 and r.headers["Server-Timing"].startswith("app;dur=")


def test_index_and_checks(demo):
    c, _ = demo
    r, _ = get(c, "/index.js")
    assert r.status_code == 200 and r.mimetype == "text/javascript" and b"export {\n  render\n}" in r.data
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    r, body = get(c, "/checks")
    assert r.status_code == 200 and len(body["checks"]) == 51  # 43 host checks, 8 job checks
    assert [c["id"] for c in body["checks"]] == [c.id for c in REGISTRY]  # the catalogue, in its order


def test_runs(demo):
    c, _ = demo
    r, body = get(c, "/runs")
    assert r.status_code == 200 and r.headers["X-Content-Type-Options"] == "nosniff"
    runs = {x["run"]: x["hosts"] for x in body["runs"]}
    assert len(runs) == 24 and [h["host"] for h in runs["16_two_hosts/2026_11_22_10_00_00"]] == [
        "gpu-worker-0",
        "gpu-worker-1",
    ]
    h = runs[INPUT][0]
    assert h["size"] == os.path.getsize(
        os.path.join(DEMO, "02_input_bound/plugins/profile/2026_11_22_10_00_00/gpu-worker-0.xplane.pb")
    )
    assert h["mtime"] > 0 and h["analysis"]["state"] in ("new", "queued", "running", "done")
    assert "path" not in h  # no file-system paths leave the server


def test_report_one_host_and_all_hosts(demo):
    c, _ = demo
    r, rep = get(c, "/report", run=INPUT, host="gpu-worker-0")
    assert r.status_code == 200 and rep["schema"] == "tb-gpu-advisor/report@1"
    assert rep["checks"][0]["id"] == "input.bound" and rep["checks"][0]["status"] == "critical"
    r, body = get(c, "/report", run="16_two_hosts/2026_11_22_10_00_00")
    assert r.status_code == 200 and [x["host"] for x in body["reports"]] == ["gpu-worker-0", "gpu-worker-1"]
    assert body["runs"][0]["slowest_host"] == "gpu-worker-1"
    _, runs = get(c, "/runs")
    state = next(x for x in runs["runs"] if x["run"] == INPUT)["hosts"][0]["analysis"]
    assert (
        state["state"] == "done"
        and state["progress"] == 1.0
        and state["worst"]["id"] == "input.bound"
        and state["worst"]["status"] == "critical"
        and state["worst"]["title"].startswith("Input-bound")
    )


def test_timeline_bounded_by_width(demo):
    c, _ = demo
    run = "05_launch_bound_small_kernels/2026_11_22_10_00_00"  # 10,000 kernels
    for width in (50, 400):
        r, t = get(c, "/timeline", run=run, host="gpu-worker-0", width=width)
        assert r.status_code == 200
        assert all(len(track["segments"]) <= width for track in t["tracks"])
        assert t["window"]["width"] == width and len(t["steps"]) == 5
    r, zoom = get(c, "/timeline", run=run, host="gpu-worker-0", start_ms=10, end_ms=10.5, width=500)
    stream = next(tr for tr in zoom["tracks"] if tr["id"] == "gpu0/stream7")
    # zoomed in to 0.5 ms, the ~30 µs kernel period shows as separate segments
    assert len(stream["segments"]) >= 10 and all(10 <= s[0] and s[1] <= 10.5 for s in stream["segments"])
    assert {s[3] for s in stream["segments"]} == {"compute"}
    _, t = get(c, "/timeline", run=INPUT, host="gpu-worker-0", width=300)
    marks = [f for f in t["findings"] if f["check"] == "input.bound"]
    assert marks and marks[0]["thread"].startswith("tf_data_iterator_get_next") and marks[0]["status"] == "critical"
    assert {tr["group"] for tr in t["tracks"]} == {"GPU 0", "Host"}


def test_export_download_of_a_run_with_a_unicode_name(tmp_path):
    """The download's file name for run `实验_ü` (issue 27: werkzeug failed with UnicodeEncodeError and
    sent no response): an ASCII `filename` beside the exact one in `filename*` (RFC 5987 / 6266), every
    header value Latin-1 as WSGI requires."""
    src = os.path.join(DEMO, "02_input_bound")
    shutil.copytree(src, tmp_path / "实验_ü")
    c, _ = client(tmp_path)
    r, _ = get(c, "/export", run="实验_ü/2026_11_22_10_00_00", host="gpu-worker-0", download=1)
    assert r.status_code == 200
    cd = r.headers["Content-Disposition"]
    assert cd == (
        'attachment; filename="_____2026_11_22_10_00_00_gpu-worker-0.trace.json"; '
        "filename*=UTF-8''%E5%AE%9E%E9%AA%8C_%C3%BC_2026_11_22_10_00_00_gpu-worker-0.trace.json"
    )
    for _, value in r.headers.items():
        value.encode("latin-1")  # raises where a WSGI server would
    assert unquote(cd.split("UTF-8''")[1]) == "实验_ü_2026_11_22_10_00_00_gpu-worker-0.trace.json"
    assert json.loads(r.data)["traceEvents"]


def test_export_is_chrome_trace_with_findings_track(demo):
    c, _ = demo
    r, _ = get(c, "/export", run=INPUT, host="gpu-worker-0")
    # without download= the trace viewer can load it; with it the browser saves a file
    assert r.status_code == 200 and r.mimetype == "application/json" and "Content-Disposition" not in r.headers
    r, _ = get(c, "/export", run=INPUT, host="gpu-worker-0", download=1)
    assert r.status_code == 200 and "attachment" in r.headers["Content-Disposition"]
    doc = json.loads(r.data)
    events = doc["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    advisor = [e for e in slices if e["pid"] == 0]
    assert any(e["name"].startswith("input.bound: step") for e in advisor)
    kernels = [e for e in slices if e["pid"] == 100]
    assert len(kernels) == 6 * 40 + 6 * 1 + 0  # 40 kernels and one input copy per step on GPU 0
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert "GPU 0: NVIDIA A100-SXM4-40GB" in names and "GPU Advisor" in names
    # time zero is kept by an event at 0 (a viewer that shifts the earliest event to zero keeps it)
    assert any(e["ph"] == "i" and e["ts"] == 0 for e in events)


def test_export_for_a_finding_is_bounded_and_carries_the_advice(demo):
    c, _ = demo
    _, rep = get(c, "/report", run=INPUT, host="gpu-worker-0")
    finding = next(x for x in rep["checks"] if x["id"] == "input.bound")
    ev = finding["evidence"][0]
    r, _ = get(c, "/export", run=INPUT, host="gpu-worker-0", finding="input.bound", evidence=0)
    assert r.status_code == 200
    doc = json.loads(r.data)
    lo, hi = doc["otherData"]["detail_ms"]
    span = ev["end_ms"] - ev["start_ms"]
    assert lo == pytest.approx(max(ev["start_ms"] - span, 0)) and hi == pytest.approx(ev["end_ms"] + span)
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    full = [e for e in slices if e["pid"] != 0 and "thinned" not in e["name"]]
    thin = [e for e in slices if "thinned" in e["name"]]
    # events one by one only near the window; elsewhere busy stretches that count what they merge
    assert full and all(e["ts"] < hi * 1000 and e["ts"] + e["dur"] > lo * 1000 for e in full)
    assert thin and all(e["ts"] + e["dur"] <= lo * 1000 + 1e-6 or e["ts"] >= hi * 1000 - 1e-6 for e in thin)
    all_r, _ = get(c, "/export", run=INPUT, host="gpu-worker-0")
    every = [e for e in json.loads(all_r.data)["traceEvents"] if e["ph"] == "X" and e["pid"] != 0]
    assert len(full) + sum(e["args"]["events"] for e in thin) >= len(every) > len(full) + len(thin)
    # the finding's slice carries the advice
    (advice,) = [e for e in slices if e["pid"] == 0 and e["ts"] == pytest.approx(ev["start_ms"] * 1000)]
    args = advice["args"]
    assert args["check"] == "input.bound" and args["status"] == "critical"
    assert args["finding"].startswith("Input-bound") and args["what to do"] == finding["recommendation"]
    assert "per step" in args["possible saving"] and args["measured"] and args["guide"].startswith("https://")
    # the evidence's own thread comes first after the advice
    threads = {
        (e["pid"], e["tid"]): e["args"]["sort_index"]
        for e in doc["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_sort_index"
    }
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    host_threads = sorted((v, names[k]) for k, v in threads.items() if k[0] == 1)
    assert host_threads[0][1].startswith(ev["thread"].split(" (")[0])
    r, body = get(c, "/export", run=INPUT, host="gpu-worker-0", finding="input.bound", evidence=99)
    assert r.status_code == 400 and "no evidence 99" in body["error"]["message"]


@pytest.mark.parametrize(
    "path,params,status",
    [
        ("/report", {}, 400),
        ("/report", {"run": INPUT, "wait": "abc"}, 400),
        ("/report", {"run": INPUT, "wait": "1e9"}, 400),
        ("/report", {"run": "nope"}, 404),
        ("/report", {"run": INPUT, "host": "nope"}, 404),
        ("/report", {"run": "../../etc", "host": "passwd"}, 404),
        ("/timeline", {"run": INPUT}, 400),
        ("/timeline", {"run": INPUT, "host": "gpu-worker-0", "width": "0"}, 400),
        ("/timeline", {"run": INPUT, "host": "gpu-worker-0", "width": "nan"}, 400),
        ("/timeline", {"run": INPUT, "host": "gpu-worker-0", "start_ms": "5", "end_ms": "1"}, 400),
        ("/timeline", {"run": INPUT, "host": "nope"}, 404),
        ("/export", {"run": "nope", "host": "x"}, 404),
        ("/export", {"host": "x"}, 400),
    ],
)
def test_errors_are_json(demo, path, params, status):
    c, _ = demo
    r, body = get(c, path, **params)
    assert r.status_code == status and r.mimetype == "application/json"
    assert body["error"]["status"] == status and body["error"]["message"]
    assert r.headers["X-Content-Type-Options"] == "nosniff"


def test_unreadable_profile_is_422_and_others_still_200(tmp_path):
    scenarios.single_gpu().write(str(tmp_path), run="good", session="s1")
    bad = tmp_path / "bad" / "plugins" / "profile" / "s1"
    bad.mkdir(parents=True)
    (bad / "worker0.xplane.pb").write_bytes(b"\x08\x96\x01garbage" * 10)
    c, _ = client(tmp_path)
    r, body = get(c, "/report", run="bad/s1", host="worker0")
    assert r.status_code == 422 and "worker0.xplane.pb" in body["error"]["message"]
    for path in ("/timeline", "/export"):
        assert get(c, path, run="bad/s1", host="worker0")[0].status_code == 422
    assert get(c, "/report", run="good/s1", host="worker0")[0].status_code == 200
    _, runs = get(c, "/runs")
    states = {x["run"]: x["hosts"][0]["analysis"] for x in runs["runs"]}
    assert states["bad/s1"]["state"] == "error" and "worker0.xplane.pb" in states["bad/s1"]["error"]


def test_cache_second_request_from_memory_and_new_file_reanalysed(tmp_path, monkeypatch):
    scenarios.single_gpu().write(str(tmp_path), run="r", session="s1")
    c, plugin = client(tmp_path)
    calls = []
    real = xspace_reader.read_profile_bytes
    monkeypatch.setattr(xspace_reader, "read_profile_bytes", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    for _ in range(3):
        assert get(c, "/report", run="r/s1", host="worker0")[0].status_code == 200
    assert len(calls) == 1
    # the file changes (size and mtime): a new analysis once discovery sees it
    path = scenarios.multi_gpu().write(str(tmp_path), run="r", session="s1")
    os.utime(path, (time.time() + 10, time.time() + 10))
    plugin.service._files = None
    _, rep = get(c, "/report", run="r/s1", host="worker0")
    assert len(calls) == 2 and len(rep["devices"]) == 3


def test_concurrent_requests_compute_once_and_slow_run_does_not_block_others(tmp_path, monkeypatch):
    scenarios.single_gpu().write(str(tmp_path), run="slow", session="s1")
    scenarios.single_gpu().write(str(tmp_path), run="fast", session="s1")
    c, plugin = client(tmp_path)
    real = xspace_reader.read_profile_bytes
    gate = threading.Event()
    calls = []

    def reader(data, path, host, progress=None, scan=None, limit=None):
        calls.append(path)
        if "slow" in path:
            progress(1, 2)
            gate.wait(10)
        return real(data, path, host, progress, scan, limit)

    monkeypatch.setattr(xspace_reader, "read_profile_bytes", reader)
    results = []
    threads = [
        threading.Thread(
            target=lambda: results.append(get(c, "/report", run="slow/s1", host="worker0", wait=10)[0].status_code)
        )
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    time.sleep(0.3)
    # meanwhile another run answers, while the slow one is still held (none of its four asks has its
    # answer: waiting behind it would have taken the gate's 10 s, after which they all had one), and
    # the slow one reports its progress
    assert get(c, "/report", run="fast/s1", host="worker0")[0].status_code == 200
    assert results == [] and not gate.is_set()
    _, runs = get(c, "/runs")
    slow = next(x for x in runs["runs"] if x["run"] == "slow/s1")["hosts"][0]["analysis"]
    assert slow["state"] == "running" and slow["progress"] == pytest.approx(0.45)
    r, body = get(c, "/report", run="slow/s1", host="worker0", wait=0)
    assert r.status_code == 202 and body["pending"] and body["state"] == "running"
    gate.set()
    for t in threads:
        t.join(15)
    assert results == [200] * 4
    assert sum("slow" in p for p in calls) == 1


def test_no_path_is_built_from_request_text(tmp_path):
    (tmp_path / "logs").mkdir()
    scenarios.single_gpu().write(str(tmp_path / "logs"), run="r", session="s1")
    outside = tmp_path / "secret" / "plugins" / "profile" / "s1"
    outside.mkdir(parents=True)
    shutil.copy(tmp_path / "logs" / "r" / "plugins" / "profile" / "s1" / "worker0.xplane.pb", outside)
    c, _ = client(tmp_path / "logs")
    for run in ("../secret/s1", str(tmp_path / "secret" / "s1"), "r/../../secret/s1", "r/s1/../../../secret/s1"):
        assert get(c, "/report", run=run, host="worker0")[0].status_code == 404


def test_serving_every_route_writes_nothing(tmp_path):
    logdir = tmp_path / "demo"
    shutil.copytree(DEMO, logdir)

    def snapshot():
        return sorted(
            (os.path.relpath(os.path.join(d, f), logdir), os.stat(os.path.join(d, f)).st_mtime_ns)
            for d, _, fs in os.walk(logdir)
            for f in fs
        )

    before = snapshot()
    c, _ = client(logdir)
    _, runs = get(c, "/runs")
    for run in runs["runs"]:
        for h in run["hosts"]:
            for path in ("/report", "/timeline", "/export"):
                assert get(c, path, run=run["run"], host=h["host"])[0].status_code == 200, (path, run["run"])
        assert get(c, "/report", run=run["run"])[0].status_code == 200
    assert get(c, "/checks")[0].status_code == 200
    assert snapshot() == before


def test_many_lines_and_a_repeated_gpu_plane_stay_bounded():
    """5,000 host threads of distinct names, 300 streams on one GPU and that GPU's plane twice in the
    file: the timeline has at most MAX_TRACKS tracks per GPU and host, each GPU once, and the export
    holds every event once (it grew quadratically with repeated plane ids)."""
    from tb_gpu_advisor.checks import run_checks
    from tb_gpu_advisor.formats.xplane import xplane_pb2
    from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.model.analysis import analyse
    from tb_gpu_advisor.present.export import chrome_trace
    from tb_gpu_advisor.present.timeline import MAX_TRACKS, Timeline
    from tb_gpu_advisor.report import report_json

    w = scenarios.single_gpu()
    for k in range(5000):
        w.thread(f"worker_{k}/{k}", 10_000 + k).op(f"op{k}", 1000.0 + k, 1.0)
    gpu = w.gpu(1)
    for k in range(300):
        gpu.stream(100 + k, "Compute").kernel(f"kernel_{k}", 1000.0 + k, 2.0)
    space = xplane_pb2.XSpace()
    space.ParseFromString(w.to_bytes())
    dup = next(p for p in space.planes if p.name == "/device:GPU:1")
    space.planes.add().CopyFrom(dup)  # the same plane id and name again
    a = analyse(read_profile_bytes(space.SerializeToString(), "f.xplane.pb", "h"))
    findings, errors = run_checks(Measures(a))
    rep = report_json("r", "h", a.summary(), findings, errors)
    t = Timeline(a, rep).window(None, None, 800)
    per_group = collections.Counter(tr["group"] for tr in t["tracks"])
    assert per_group["Host"] <= MAX_TRACKS and per_group["GPU 1"] <= MAX_TRACKS
    assert any(tr["label"].endswith("other streams") for tr in t["tracks"])
    assert any(tr["label"].startswith("other threads") for tr in t["tracks"])
    doc = json.loads("".join(chrome_trace(a, rep)))
    kernels = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"].startswith("kernel_")]
    assert len(kernels) == sum(len(s.events) for s in a.profile.streams if s.device_id == 1)


def _reference_segments(ev, lo, hi, px):
    """The timeline's segments worked out directly from the events: clip to the window, union,
    merge gaps under a pixel, measure the busy time in each."""
    from tb_gpu_advisor.model import intervals as iv
    from tb_gpu_advisor.model.profile import Kind

    sel = (ev.end_ps > lo) & (ev.start_ps < hi) & (ev.kind != Kind.STEP)
    s, e = np.maximum(ev.start_ps[sel], lo), np.minimum(ev.end_ps[sel], hi)
    bs, be = iv.union(s, e)
    out = []
    for a, b in zip(bs.tolist(), be.tolist()):
        if out and a - out[-1][1] <= px:
            out[-1][1] = b
        else:
            out.append([a, b])
    return [(a, b, float(iv.measure_in((bs, be), np.array([a]), np.array([b]))[0]) / max(b - a, 1)) for a, b in out]


@pytest.mark.parametrize("run", ["05_launch_bound_small_kernels", "12_multi_gpu_imbalance", "02_input_bound"])
def test_timeline_segments_match_the_events(run):
    """Segments from the merged, indexed busy time equal those worked out from the raw events, for
    random windows and widths."""
    from tb_gpu_advisor.formats.discovery import discover
    from tb_gpu_advisor.present.timeline import DEVICE_CLASSES, Track
    from tb_gpu_advisor.report.engine import analyse_file

    (f,) = [x for x in discover(DEMO)[0] if x.run.startswith(run)]
    a = analyse_file(f)[0].analysis
    rng = np.random.default_rng(1)
    for s in a.profile.streams:
        track = Track(s.events, DEVICE_CLASSES)
        for _ in range(20):
            lo = int(rng.uniform(0, a.profile.end_ps))
            hi = lo + int(rng.uniform(1, a.profile.end_ps))
            px = (hi - lo) / int(rng.integers(10, 2000))
            got = [(round(x[0] * 1e9), round(x[1] * 1e9), x[2]) for x in track.segments(lo, hi, px)]
            want = _reference_segments(s.events, lo, hi, px)
            assert len(got) == len(want)
            assert np.abs(np.array([g[:2] for g in got]) - np.array([w[:2] for w in want])).max(initial=0) <= 1000
            assert [g[2] for g in got] == pytest.approx([round(w[2], 3) for w in want], abs=1e-3)


@pytest.mark.parametrize("keyed", [True, False])
def test_timeline_all_tracks_at_once_equals_track_by_track(keyed):
    """The window over every track at once (one binary search on keys, or one per track when the
    keys would overflow) gives each track the segments it gives alone, windows at the edges too."""
    from tb_gpu_advisor.formats.discovery import discover
    from tb_gpu_advisor.present.timeline import Timeline, TrackSet
    from tb_gpu_advisor.report.engine import analyse_file

    (f,) = [x for x in discover(DEMO)[0] if x.run.startswith("12_multi_gpu_imbalance")]
    m, rep = analyse_file(f)
    a = m.analysis
    tracks = [t for _, t in Timeline(a, rep).tracks]
    both = TrackSet(tracks)
    assert both.keyed  # this profile's keys fit
    both.keyed = keyed
    end = a.profile.end_ps
    rng = np.random.default_rng(2)
    windows = [(0, end), (-5, 10**6), (end - 10**6, end + 10), (end + 1, end + 2)]
    windows += [(lo, lo + int(rng.uniform(1, end))) for lo in rng.uniform(0, end, 30).astype(int).tolist()]
    for lo, hi in windows:
        px = max((hi - lo) / int(rng.integers(10, 2000)), 1.0)
        got = both.segments(lo, hi, px)
        assert got == [TrackSet([t]).segments(lo, hi, px)[0] for t in tracks]
        assert [bool(g) for g in got] == [bool(((t.ends > lo) & (t.starts < hi)).any()) for t in tracks]


def test_event_route_and_overview_analyses(demo):
    c, _ = demo
    run = "05_launch_bound_small_kernels/2026_11_22_10_00_00"
    _, t = get(c, "/timeline", run=run, host="gpu-worker-0", width=200)
    seg = t["tracks"][0]["segments"][0]
    r, ev = get(c, "/event", run=run, host="gpu-worker-0", track=t["tracks"][0]["id"], t_ms=seg[0] + 1e-6)
    assert r.status_code == 200 and ev["event"]["name"] and ev["event"]["dur_ms"] > 0
    assert ev["event"]["start_ms"] <= seg[0] + 1e-6 <= ev["event"]["start_ms"] + ev["event"]["dur_ms"]
    r, ev = get(c, "/event", run=run, host="gpu-worker-0", track=t["tracks"][0]["id"], t_ms=-5)
    assert r.status_code == 200 and ev["event"] is None
    r, body = get(c, "/event", run=run, host="gpu-worker-0", track="nope", t_ms=1)
    assert r.status_code == 400 and body["error"]["message"] == "unknown track"
    r, body = get(c, "/event", run=run, host="gpu-worker-0", track="gpu0/stream7")
    assert r.status_code == 400
    # the overview asks for every analysis; they finish in the background
    r, runs = get(c, "/runs", analyse="all")
    assert r.status_code == 200
    deadline = time.monotonic() + 60
    while any(h["analysis"]["state"] not in ("done", "error") for x in runs["runs"] for h in x["hosts"]):
        assert time.monotonic() < deadline
        time.sleep(0.2)
        _, runs = get(c, "/runs")
    states = {x["run"]: x["hosts"][0]["analysis"] for x in runs["runs"]}
    assert states[run]["worst"]["id"] == "kernels.launch-bound" and states[run]["step_ms"] > 0
    assert get(c, "/runs", analyse="yes")[0].status_code == 400
