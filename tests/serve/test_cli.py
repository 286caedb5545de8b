import json
import re

import pytest
from support import scenarios

from tb_gpu_advisor.checks import REGISTRY
from tb_gpu_advisor.cli import main


@pytest.fixture
def logdir(tmp_path):
    scenarios.single_gpu().write(str(tmp_path), run="single", session="s1")
    scenarios.multi_gpu().write(str(tmp_path), run="multi", session="s1")
    return tmp_path


def test_summary_text(logdir, capsys):
    assert main(["summary", str(logdir), "--run", "single/s1"]) == 0
    out = capsys.readouterr().out
    assert "run single/s1  host worker0" in out
    assert "GPU 0: Tesla V100-SXM2-16GB  cc 7.0, 80 SMs" in out
    assert 'steps: 3 from host-markers ("train"); mean 1.000 ms' in out
    assert "device busy 62.5% of step time" in out
    assert "16-bit compute 63.1% (6 of 9 kernels)" in out
    assert "device compute 0.555" in out and "host input wait 0.100" in out


def test_summary_json(logdir, capsys):
    assert main(["summary", str(logdir), "--json"]) == 0
    reports = json.loads(capsys.readouterr().out)["reports"]
    assert [(r["run"], r["host"]) for r in reports] == [("multi/s1", "worker0"), ("single/s1", "worker0")]
    multi, single = reports
    assert single["steps"]["count"] == 3 and single["steps"]["source"] == "host-markers"
    assert single["steps"]["mean_ms"] == pytest.approx(1.0)
    assert single["headline"]["device_busy_pct"] == pytest.approx(62.5)
    assert single["breakdown_ms"]["memcpy_h2d"] == pytest.approx(0.05)
    assert [d["id"] for d in multi["devices"]] == [0, 1, 2]
    assert [g["device_busy_pct"] for g in multi["headline"]["per_gpu"]] == pytest.approx([70.0, 50.0])
    assert multi["headline"]["idle_gpus"] == [2]  # no events: listed apart, not averaged in


def test_errors_exit_2_with_one_line(logdir, capsys, tmp_path_factory):
    assert main(["summary", str(logdir), "--run", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: unknown run 'nope' under {logdir}\nruns: multi/s1, single/s1"
    assert main(["summary", str(logdir), "--run", "single/s1", "--host", "zz"]) == 2
    assert "unknown host 'zz'" in capsys.readouterr().err
    empty = tmp_path_factory.mktemp("empty")
    assert main(["summary", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {empty}: no profiles found. Looked for:\n")
    # both formats, and where each framework writes them
    assert "<run>/plugins/profile/<session>/<host>.xplane.pb" in err and "<worker>.<span>.pt.trace.json" in err
    assert ".pt.trace.json.gz" in err and "tensorboard_trace_handler(logdir/run)" in err
    assert "profile_batch=(10, 15)) under log_dir/train" in err and "jax.profiler.trace(logdir)" in err


def test_unreadable_file_is_named_and_others_still_reported(logdir, capsys):
    bad = logdir / "bad" / "plugins" / "profile" / "s1"
    bad.mkdir(parents=True)
    (bad / "worker0.xplane.pb").write_bytes(b"\x00garbage\xff" * 10)
    assert main(["summary", str(logdir)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and str(bad / "worker0.xplane.pb") in lines[0]
    assert "run single/s1" in captured.out and "run multi/s1" in captured.out


DEMO = __import__("os").path.join(
    __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.dirname(__file__))), "demo_logs"
)
INPUT_RUN = "02_input_bound/2026_11_22_10_00_00"


def test_analyze_text_ranks_findings_with_numbers(capsys):
    assert main(["analyze", DEMO, "--run", INPUT_RUN]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"GPU Advisor · run {INPUT_RUN} · host gpu-worker-0")
    first, second = out.index("CRITICAL  input.bound"), out.index("WARNING   steps.gaps")
    assert first < second  # ranked by saving
    # the saving is the step re-timed with the input wait gone (docs/whatif.md): 14.17 of 23.55 ms
    assert "61.7% of step time waiting for input" in out and "estimated saving: 14.17 ms/step (60.1%)" in out
    assert "what-if: step 23.6 → 9.4 ms; waiting for input sets it now, the GPU after the fix" in out
    assert "guide: https://www.tensorflow.org/guide/gpu_performance_analysis#1._debug_the_input_pipeline" in out
    # layout.channels-last (no cuDNN layout changes) and capture.range-profiler (PyTorch's) among them
    assert "not applicable (15):" in out


def test_analyze_json_schema(capsys):
    assert main(["analyze", DEMO, "--run", "16_two_hosts/2026_11_22_10_00_00", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["host"] for r in doc["reports"]] == ["gpu-worker-0", "gpu-worker-1"]
    r = doc["reports"][1]
    for key in (
        "schema",
        "advisor_version",
        "run",
        "host",
        "devices",
        "steps",
        "headline",
        "breakdown_ms",
        "checks",
        "errors",
    ):
        assert key in r
    assert r["schema"] == "tb-gpu-advisor/report@1"
    assert set(r["steps"]) >= {"count", "source", "mean_ms", "stdev_ms", "min_ms", "max_ms"}
    assert set(r["headline"]) >= {"device_busy_pct", "device_op_time_pct", "fp16_compute_pct", "per_gpu"}
    from tb_gpu_advisor.checks import REGISTRY

    host_checks = sorted(c.id for c in REGISTRY if c.scope == "host")  # the job checks run on jobs
    assert sorted(c["id"] for c in r["checks"]) == host_checks  # passes included
    top = r["checks"][0]
    assert top["id"] == "input.bound" and top["status"] == "critical"
    for key in ("metrics", "thresholds", "saving_ms", "saving_pct", "evidence", "recommendation", "snippet", "link"):
        assert key in top
    ev = top["evidence"][0]
    assert ev["thread"].startswith("tf_data_iterator_get_next") and ev["end_ms"] > ev["start_ms"]
    assert doc["runs"][0]["slowest_host"] == "gpu-worker-1"


def test_analyze_markdown(capsys):
    assert main(["analyze", DEMO, "--run", INPUT_RUN, "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"### GPU Advisor: `{INPUT_RUN}` on `gpu-worker-0`")
    assert "| **critical** | `input.bound` Input-bound: 61.7% of each step waits for input |" in out
    assert "<details><summary>What to change</summary>" in out


def test_analyze_fail_on_and_set(capsys):
    assert main(["analyze", DEMO, "--run", INPUT_RUN, "--fail-on", "critical"]) == 1
    assert main(["analyze", DEMO, "--run", "01_healthy/2026_11_22_10_00_00", "--fail-on", "warning"]) == 0
    capsys.readouterr()
    # raising the thresholds past the measured 61.7% turns the finding into a pass
    args = [
        "analyze",
        DEMO,
        "--run",
        INPUT_RUN,
        "--format",
        "json",
        "--set",
        "input.bound.warning=70",
        "--set",
        "input.bound.critical=80",
    ]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    ib = next(c for c in doc["reports"][0]["checks"] if c["id"] == "input.bound")
    assert ib["status"] == "pass" and {t["name"]: t["value"] for t in ib["thresholds"]} == {
        "warning": 70.0,
        "critical": 80.0,
    }


def test_analyze_usage_errors(capsys):
    assert main(["analyze", DEMO, "--set", "nope.x=1"]) == 2
    assert "unknown threshold 'nope.x'" in capsys.readouterr().err
    assert main(["analyze", DEMO, "--set", "input.bound.warning=abc"]) == 2
    assert "is not a number" in capsys.readouterr().err
    assert main(["analyze", DEMO, "--set", "nothreshold"]) == 2
    assert main(["analyze", DEMO, "--params", "-5"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["analyze", DEMO, "--format", "yaml"])
    assert e.value.code == 2


def test_analyze_unreadable_file(logdir, capsys):
    bad = logdir / "bad" / "plugins" / "profile" / "s1"
    bad.mkdir(parents=True)
    (bad / "worker0.xplane.pb").write_bytes(b"")
    assert main(["analyze", str(logdir), "--format", "json"]) == 2
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    broken = next(r for r in doc["reports"] if r["run"] == "bad/s1")
    assert broken["checks"] == [] and "the file is empty" in broken["errors"][0]
    assert len([r for r in doc["reports"] if r["checks"]]) == 2
    assert captured.err.count("error:") == 1


def test_an_analysis_that_fails_is_reported_for_its_run_only(logdir, capsys, monkeypatch):
    """A bug that raises on one run (here: the analysis of a profile with three GPUs) gives that run a
    report with its error, exit status 3 (not 1, which --fail-on uses), and the other runs still
    reported; `summary` does the same."""
    from tb_gpu_advisor.model import analysis
    from tb_gpu_advisor.report import engine

    real = analysis.analyse

    def analyse(profile):
        if len(profile.devices) == 3:
            raise IndexError("index 0 is out of bounds")
        return real(profile)

    monkeypatch.setattr(engine, "analyse", analyse)
    monkeypatch.setattr(analysis, "analyse", analyse)  # the command imports it where it needs it
    monkeypatch.setenv("TB_GPU_ADVISOR_PROCESSES", "0")  # in this process, where the bug is planted
    assert main(["analyze", str(logdir), "--format", "json", "--fail-on", "warning"]) == 3
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    failed = next(r for r in doc["reports"] if r["run"] == "multi/s1")
    assert failed["failure"] == "analysis-failed" and failed["checks"] == []
    assert "the analysis failed (IndexError: index 0 is out of bounds); please report it" in failed["errors"][0]
    single = next(r for r in doc["reports"] if r["run"] == "single/s1")
    assert single["failure"] is None and single["checks"]
    assert captured.err.count("error:") == 1 and "Traceback" not in captured.err
    assert main(["summary", str(logdir)]) == 3
    captured = capsys.readouterr()
    assert "run single/s1" in captured.out and "the analysis failed (IndexError" in captured.err


def test_checks_catalogue(capsys):
    assert main(["checks", "--json"]) == 0
    cat = json.loads(capsys.readouterr().out)["checks"]
    ids = [c["id"] for c in cat]
    # the registry in guide order (a new check is its declaration: not listed here)
    assert ids == [c.id for c in REGISTRY] and len(ids) == len(set(ids)) >= 44
    assert ids[0] == "capture.no-gpu" and ids[-1].startswith("job.")
    job = [c["id"] for c in cat if c["scope"] == "job"]
    known = ["job.cycle-lengths", "job.clock-skew", "job.partial", "job.straggler", "job.imbalance"]
    assert [i for i in job if i in known] == known  # in the guide's order
    assert {"job.exposed-comm", "job.allreduce-count"} <= set(job)
    ib = next(c for c in cat if c["id"] == "input.bound")
    assert {t["name"]: t["default"] for t in ib["thresholds"]} == {"warning": 5.0, "critical": 20.0}
    assert main(["checks"]) == 0
    assert "input.bound" in capsys.readouterr().out


def test_markdown_escapes_names_from_the_profile(tmp_path, capsys):
    from support import hostile_profile

    hostile_profile.write(str(tmp_path))
    assert main(["analyze", str(tmp_path), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "<script>" not in out and "<img" not in out and "<svg" not in out
    assert "ampere\\_sgemm\\_&lt;script&gt;window.top.\\_\\_xss=2&lt;/script&gt;\\_128x64\\_nn" in out


def test_text_output_neutralises_terminal_escapes(tmp_path, capsys):
    from support.xplane_writer import GPU_SPECS, ProfileWriter

    w = ProfileWriter("worker0")
    py, tfc = w.thread("python", 1), w.thread("tf_Compute/2", 2)
    s = w.gpu(0, GPU_SPECS["A100"]).stream(7, "Compute")
    for i in range(3):
        py.step(i, 1000 + i * 1000, 1000)
        s.kernel("k", 1010 + i * 1000, 500, op="a/MatMul:MatMul")
        tfc.op("evil\x1b[2J\x1b]0;pwned\x07/Unique:Unique", 1600 + i * 1000, 300)
    w.write(str(tmp_path), run="r", session="s")
    assert main(["analyze", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "placement.host-ops" in out and "evil\\x1b[2J\\x1b]0;pwned\\x07/Unique" in out  # shown escaped
    assert "\x1b" not in out and "\x07" not in out


def test_runs_lists_what_is_there(logdir, capsys):
    assert main(["runs", str(logdir)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("multi/s1  worker0 (") and out[1].startswith("single/s1  worker0 (")
    assert main(["runs", str(logdir), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in doc["runs"]] == ["multi/s1", "single/s1"]
    assert doc["runs"][0]["hosts"][0]["host"] == "worker0" and doc["runs"][0]["hosts"][0]["bytes"] > 0


def test_run_folder_did_you_mean_and_missing_paths(logdir, capsys, tmp_path):
    # a run folder with one session stands for its run
    assert main(["summary", str(logdir), "--run", "single"]) == 0
    assert "run single/s1" in capsys.readouterr().out
    # a folder with two sessions asks which
    scenarios.single_gpu().write(str(logdir), run="single", session="s2")
    assert main(["summary", str(logdir), "--run", "single"]) == 2
    err = capsys.readouterr().err
    assert "run folder 'single' holds 2 sessions; name one" in err and "sessions: single/s1, single/s2" in err
    # a near miss is suggested, and the runs there are listed
    assert main(["analyze", str(logdir), "--run", "singel/s1"]) == 2
    err = capsys.readouterr().err
    assert "unknown run 'singel/s1'" in err and "did you mean 'single/s1'" in err and "runs: multi/s1" in err
    assert main(["analyze", str(logdir), "--run", "multi/s1", "--host", "worker"]) == 2
    err = capsys.readouterr().err
    assert "unknown host 'worker' in run 'multi/s1'; did you mean 'worker0'?" in err and "hosts: worker0" in err
    # a path that does not exist, or is a file, says so
    assert main(["analyze", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert main(["analyze", str(f)]) == 2
    assert capsys.readouterr().err == f"error: {f}: not a profile (.xplane.pb or .pt.trace.json[.gz])\n"


def test_the_overview_comes_first(capsys):
    """With several runs, the first lines are every run and host, worst first, then the hosts of
    multi-host runs compared; then each report. Markdown has the same overview."""
    assert main(["analyze", DEMO]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["status", "run"]
    # worst first, by the saving: the PyTorch num_workers=0 trace loses the most, to the host's
    # dispatch op by op (the what-if of the torch.compile(mode="reduce-overhead") its advice names,
    # 36% of its step: critical by its cost)
    assert out[1].startswith("CRITICAL  pytorch_resnet50_num_workers_0") and "Host work: GPU idle 8.5%" in out[1]
    assert "63.24 ms" in out[1]
    savings = [float(m[1]) for line in out[1:10] if (m := re.search(r" ([\d.]+) ms  \S", line))]
    assert len(savings) >= 5
    assert savings == sorted(savings, reverse=True)
    # a job's own row, above its ranks, whose worst is only a capture note
    job = next(i for i, line in enumerate(out) if "20_ddp_straggler_8_ranks" in line)
    assert "all 8 ranks" in out[job] and "Straggler: rank 5 (node1_1005)" in out[job]
    assert all("record_shapes off" in line for line in out[job + 1 : job + 9])
    across = next(i for i, line in enumerate(out) if line.startswith("Job 16_two_hosts"))
    first_report = next(i for i, line in enumerate(out) if line.startswith("GPU Advisor · run"))
    assert 20 <= across < first_report
    # a synchronous job: worker 1 waits for input, worker 0 waits for it in the all-reduce
    assert out[across] == "Job 16_two_hosts: 2 ranks, 1 profiling cycle; straggler: gpu-worker-1"
    assert out[across + 2].startswith("  gpu-worker-1: step 11.64 ms") and out[across + 2].endswith("straggler")
    assert main(["analyze", DEMO, "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("### GPU Advisor: overview")
    assert "Job 16\\_two\\_hosts: 2 ranks, 1 profiling cycle; straggler: gpu-worker-1" in md  # names escaped
    assert md.index("### GPU Advisor: overview") < md.index("### GPU Advisor: `01_healthy")


def test_the_installed_command_writes_everything_before_it_exits():
    """The command leaves with os._exit after flushing (tearing down an analysis only costs time):
    its whole output arrives, and its exit status is main's."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "tb_gpu_advisor.cli", "analyze", DEMO, "--run", INPUT_RUN, "--format", "json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["reports"][0]["run"] == INPUT_RUN
    r = subprocess.run(cmd + ["--fail-on", "warning"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and json.loads(r.stdout)["reports"]


def test_the_command_reads_while_it_imports_the_analysis(tmp_path):
    """`import tb_gpu_advisor.cli` leaves NumPy and the analysis out (they take ~0.1 s), so that
    `analyze` starts reading its first file on another thread before it imports them; the report is
    the same as without that head start."""
    import subprocess
    import sys

    code = "import sys, tb_gpu_advisor.cli; print(sorted(m for m in ('numpy', 'tb_gpu_advisor.model.analysis') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    from tb_gpu_advisor.formats.discovery import discover, prefetch
    from tb_gpu_advisor.report import engine

    (f,) = [x for x in discover(DEMO)[0] if x.run.startswith("12_multi_gpu_imbalance")]
    ahead = prefetch(f)
    assert ahead is not None
    assert engine.advise(f, prefetched=ahead) == engine.advise(f)
    assert ahead.take() is None  # handed over once: nothing keeps the bytes alive after the read


def test_allocator_setting_changes_nothing_but_speed(logdir):
    """The command keeps freed memory for reuse (keep_freed_memory); the report is the same with
    glibc's default behaviour. In subprocesses: the setting is process-wide."""
    import os
    import subprocess
    import sys

    def run(env):
        cmd = [sys.executable, "-m", "tb_gpu_advisor.cli", "analyze", str(logdir), "--format", "json"]
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env}, timeout=120)
        assert out.returncode in (0, 1), out.stderr
        return json.loads(out.stdout)

    kept, default = run({}), run({"TB_GPU_ADVISOR_MALLOC": "default"})
    assert [r["host"] for r in kept["reports"]] == ["worker0", "worker0"] and kept == default


def test_names_with_control_and_bidi_characters_are_escaped(tmp_path, capsys):
    """A run named with a newline and a right-to-left override (issue 27): printed escaped on one line,
    so it cannot pose as another run; the JSON keeps the name exact."""
    run = "evil\n\u202eexe.txt\x1b[2J"
    scenarios.single_gpu().write(str(tmp_path), run=run, session="s1")
    assert main(["runs", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("evil\\n\\u202eexe.txt\\x1b[2J/s1  worker0 (") and out.count("\n") == 1
    assert "\u202e" not in out and "\x1b" not in out
    assert main(["runs", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["run"] == run + "/s1"
    assert main(["analyze", str(tmp_path), "--run", run + "/s1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "GPU Advisor · run evil\\n\\u202eexe.txt\\x1b[2J/s1 · host worker0"


def test_a_saving_is_printed_with_its_range(capsys):
    """The V100 num_workers=0 trace: input.bound's 48.46 ms/step (its step re-timed without the input wait
    and the profiler: 160.5 -> 112.1 ms), stated as 16.51-79.67 (the input model's error on its
    held-out pairs, the profiler's cost's range, the host's pace, and its six steps' spread;
    tests/checks/test_savings.py),
    in text and in markdown, with the step it predicts."""
    run = "pytorch_resnet50_num_workers_0"
    assert main(["analyze", DEMO, "--run", run]) == 0
    assert "estimated saving: 48.46 ms/step (30.2%), 16.51–79.67 ms/step" in capsys.readouterr().out
    assert main(["analyze", DEMO, "--run", run, "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert (
        "| 48.46 ms/step (30.2%), 16.51–79.67 ms/step<br>step 160.5 → 112.1 ms; the host sets it now and after the fix"
        in out
    )


def test_a_partial_capture_names_each_gpus_steps_as_the_panel_does(capsys):
    """17_multi_gpu_partial_capture: GPUs 4 and 6 each measured in their own steps (19.87 and 21.31 ms),
    so the header names both, as the panel's stepsText does, instead of "1 steps ...: mean 19.87 ms,
    stdev 0.00" (the host's one step)."""
    assert main(["analyze", f"{DEMO}/17_multi_gpu_partial_capture", "--format", "json"]) in (0, 3)
    (r,) = json.loads(capsys.readouterr().out)["reports"]
    per_gpu = [(g["device_id"], g["count"], round(g["mean_ms"], 2)) for g in r["steps"]["per_gpu"]]
    assert per_gpu == [(4, 1, 19.87), (6, 1, 21.31)]
    main(["analyze", f"{DEMO}/17_multi_gpu_partial_capture"])
    out = capsys.readouterr().out
    assert "  steps per GPU (device-steps-line): GPU 4 1 step, mean 19.87 ms; GPU 6 1 step, mean 21.31 ms" in out
    assert "1 steps" not in out


def test_one_step_is_told_without_a_spread():
    from tb_gpu_advisor.present.render import header_lines

    steps = {"count": 1, "source": "host-markers", "marker": "train", "mean_ms": 5.0, "stdev_ms": 0.0}
    steps |= {"min_ms": 5.0, "max_ms": 5.0, "per_gpu": []}
    lines = header_lines({"run": "r", "host": "h", "devices": [], "steps": steps})
    assert '  1 step (host-markers "train"): 5.00 ms' in lines
    lines = header_lines({"run": "r", "host": "h", "devices": [], "steps": {**steps, "count": 3, "stdev_ms": 0.5}})
    assert '  3 steps (host-markers "train"): mean 5.00 ms, stdev 0.50, min 5.00, max 5.00' in lines


def test_markdown_names_render_as_text(tmp_path, capsys):
    """Issue 51: names made of markdown (an image, a link, a mention, emphasis) render as the names
    themselves in `--format markdown` (pasted into a pull request), not as an image, a link, a mention
    or markup: rendered by a CommonMark renderer, the output holds no `<img`, no link to the names' URL,
    and its text is the names."""
    from markdown_it import MarkdownIt
    from support.xplane_writer import GPU_SPECS, ProfileWriter

    kernel = "![x](http://e.x/i.png)@everyone_**sgemm**_<b>128x64_nn"
    w = ProfileWriter("gpu-worker-0")
    compute = w.gpu(0, GPU_SPECS["A100"]).stream(7, "Compute")
    py = w.thread("python", 1)
    for i in range(5):
        t = 1000 + i * 1000.0
        py.step(i, t, 1000)
        compute.kernel(kernel, t + 10, 600, op="a/MatMul:MatMul", launch=py, lead_us=5)
    w.write(str(tmp_path), run="r_*x*_[y](e.x)#1", session="s")
    assert main(["analyze", str(tmp_path), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    html = MarkdownIt("commonmark").enable("table").render(out)
    prose = re.sub(r"<[^>]*>", "", re.sub(r"<code>.*?</code>", "", html))  # what GitHub links: @mentions, URLs, #1
    assert "@everyone" not in prose and "http://" not in prose and "#1" not in prose
    assert "<img" not in html and 'href="http://e.x' not in html and "<b>" not in html and "<strong>sgemm" not in html
    text = html.replace("\u200b", "")
    # tensorcore.unused names it: no entry of the kernel naming table knows it (issue 50), so no verdict
    assert "(e.g. ![x](http://e.x/i.png)@everyone_**sgemm**_&lt;b&gt;128x64_nn)" in text
    assert "<code>r_*x*_[y](e.x)#1/s</code>" in text
