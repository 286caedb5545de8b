"""The MCP server (`tb-gpu-advisor mcp LOGDIR`, tb_gpu_advisor/serve/mcp.py) as an agent meets it: started
as a process by the official SDK's own stdio client, its tools listed and called, each answer compared
with what the command prints for the same question (`--format json`, run as a process too), on
demo_logs/ and on the committed real GPU captures (tests/data/gpu/). Errors (a path outside the
logdir, a symbolic link leading out, an unknown run, an oversized request, a wrong argument) are the
command's messages, and the session goes on after each."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra: pip install -e '.[mcp]' (make test installs it)")

import anyio  # noqa: E402
from mcp import ClientSession  # noqa: E402
from support.mcp_client import (  # noqa: E402
    DEMO,
    ENV,
    GPU,
    ROOT,
    TOOLS,
    Session,
    command,
    command_error,
    command_json,
    session,
)
from test_schema import validate  # noqa: E402

INPUT_RUN = "02_input_bound/2026_11_22_10_00_00"
JOB_RUN = "20_ddp_straggler_8_ranks"
DIFF_CALL = {
    "before": INPUT_RUN,
    "after": "18_input_prefetched_after_02/2026_11_22_10_00_00",
    "before_host": "gpu-worker-0",
    "after_host": "gpu-worker-0",
}


@pytest.fixture(scope="module")
def demo() -> Session:
    return session(
        DEMO,
        [
            ("list_runs", {}),
            ("analyze", {"run": "02_input_bound", "detail": "full"}),
            ("analyze", {"run": "16_two_hosts", "host": "gpu-worker-1", "all_checks": True, "detail": "full"}),
            ("evidence", {"run": INPUT_RUN, "finding": "input.bound", "limit": 5}),
            ("table", {"run": INPUT_RUN, "kind": "ops", "sort": "calls", "limit": 7, "q": "a"}),
            ("diff", {"before": "02_input_bound", "after": "18_input_prefetched_after_02"}),
            ("job", {"run": JOB_RUN, "limit": 3}),
            ("analyze", {"run": JOB_RUN, "rank": 5, "detail": "full"}),
            # what the tab's Copy link gives beside the link, on a finding (frontend/browser/panel.test.mjs)
            ("evidence", {"run": "16_two_hosts/2026_11_22_10_00_00", "host": "gpu-worker-1", "finding": "input.bound"}),
            ("diff", DIFF_CALL),  # what diff's markdown gives
            ("analyze", {"run": "02_input_bound"}),  # 10: the brief answer, by default
            ("analyze", {"run": JOB_RUN}),
            ("analyze", {"run": JOB_RUN, "offset": 5}),
            ("analyze", {"run": JOB_RUN, "limit": 50}),
            ("analyze", {"run": JOB_RUN, "all_checks": True}),
            ("analyze", {"run": JOB_RUN, "detail": "full", "limit": 3}),  # 15: the reports a page at a time
            ("analyze", {"run": JOB_RUN, "detail": "full", "offset": 3, "limit": 5}),
            ("analyze", {"run": JOB_RUN, "detail": "full", "all_checks": True}),  # all eight ranks at once: over
        ],
    )


def test_the_tools_are_listed_read_only_each_saying_what_it_returns(demo):
    assert set(demo.tools) == TOOLS
    for name, t in demo.tools.items():
        said = " ".join(t.description.split())
        assert len(said) > 300 and "Use it" in said or name == "list_runs", name  # what it returns, when to use it
        assert "Equals `tb-gpu-advisor " in said, name  # the command that answers the same
        assert t.annotations.read_only_hint is True and t.annotations.destructive_hint is False, name
    assert demo.tools["analyze"].input_schema["required"] == ["run"]
    assert set(demo.tools["table"].input_schema["properties"]) >= {"run", "host", "kind", "sort", "limit", "q"}


def test_list_runs_is_the_commands_runs_analyse(demo):
    got = demo.json(0)
    validate(got, "RunList")
    assert got == {"logdir": DEMO, **command_json("runs", DEMO, "--analyse", "--json")}
    runs = {r["run"]: r for r in got["runs"]}
    assert got["runs"][0]["status"] == "critical"  # worst first
    assert runs[INPUT_RUN]["check"] == "input.bound" and runs[INPUT_RUN]["frameworks"] == ["tensorflow"]
    job = runs[JOB_RUN]
    assert job["hosts_total"] == 8 and [h["rank"] for h in job["hosts"]] != []
    assert [s["rank"] for s in job["job"]["stragglers"]] == [5]
    assert {p["id"] for p in job["job"]["problems"]} >= {"job.straggler", "job.wait"}  # waiting, not transfer


def test_analyze_is_the_commands_findings(demo):
    got = demo.json(1)
    validate(got, "AnalyzeOutput")
    assert got == command_json("analyze", DEMO, "--run", "02_input_bound", "--findings-only", "--format", "json")
    (report,) = got["reports"]
    checks = report["checks"]
    assert checks[0]["id"] == "input.bound" and checks[0]["status"] == "critical"
    assert {c["status"] for c in checks} <= {"critical", "warning", "info", "error"}  # the findings only
    assert checks[0]["saving_low_ms"] < checks[0]["saving_ms"] < checks[0]["saving_high_ms"]
    assert checks[0]["recommendation"] and checks[0]["link"].startswith("https://")
    everything = demo.json(2)
    assert everything == command_json(
        "analyze", DEMO, "--run", "16_two_hosts", "--host", "gpu-worker-1", "--format", "json"
    )
    assert "pass" in {c["status"] for c in everything["reports"][0]["checks"]}
    one_rank = demo.json(7)
    assert one_rank == command_json(
        "analyze", DEMO, "--run", JOB_RUN, "--rank", "5", "--findings-only", "--format", "json"
    )
    assert [r["rank_measures"]["rank"] for r in one_rank["reports"]] == [5]


BRIEF_KB, JOB_BRIEF_KB = 8, 16  # a default analyze answer: one run, the demo's 8-rank job


def test_analyze_gives_the_ranked_problems_and_their_fixes_first(demo):
    """The default answer (detail=brief): a line per host, the job, and the problems ranked, each with
    its saving and fix; the command's `analyze --brief --findings-only`. Before issue 48 the answer was
    the whole reports: 16.7 kB for 02_input_bound, 111.6 kB for the 8 ranks of 20_ddp_straggler_8_ranks
    (refused over the 100 kB an answer could be then)."""
    brief = demo.json(10)
    validate(brief, "AnalyzeBrief")
    assert brief == command_json("analyze", DEMO, "--run", "02_input_bound", "--brief", "--findings-only")
    full = demo.json(1)
    first = brief["problems"][0]
    check = full["reports"][0]["checks"][0]
    assert (first["check"], first["status"]) == ("input.bound", "critical")
    assert first["saving_ms"] == round(check["saving_ms"], 3)
    assert first["fix"] and check["recommendation"].startswith(first["fix"][:60])
    assert first["change"] == check["whatif"]["change"] == "input" and first["evidence"] == len(check["evidence"])
    assert len(demo.answers[10][1].encode()) <= BRIEF_KB * 1000
    assert len(demo.answers[1][1].encode()) > 2 * BRIEF_KB * 1000  # the full answer: twice as large and more
    job = demo.json(11)
    validate(job, "AnalyzeBrief")
    assert len(demo.answers[11][1].encode()) <= JOB_BRIEF_KB * 1000
    assert [h["rank"] for h in job["hosts"]] == list(range(8))
    assert job["jobs"][0]["stragglers"] == ["rank 5 (node1_1005)"]
    assert job["problems"][0]["check"] == "job.straggler" and job["problems"][0]["where"] == "job"
    # a finding on every rank is one entry naming them
    shapes = next(p for p in job["problems"] + demo.json(12)["problems"] if p["check"] == "capture.shapes")
    assert len(shapes["where"]) == 8


def test_analyze_pages_return_the_rest(demo):
    """The first page and the pages after it (`offset=next_offset`) give every problem once, in the order
    of one page of them all; every finding of every rank and of the job is one of them; the full
    reports come a page of hosts at a time, and all at once they are over the bound."""
    first, rest, every = demo.json(11), demo.json(12), demo.json(13)
    assert first["next_offset"] == 5 and first["total"] == every["total"] == len(every["problems"])
    assert rest["offset"] == 5 and rest["next_offset"] is None and "offset=5" in first["more"]
    assert first["problems"] + rest["problems"] == every["problems"]
    assert rest == command_json("analyze", DEMO, "--run", JOB_RUN, "--brief", "--findings-only", "--offset", "5")
    full = command_json("analyze", DEMO, "--run", JOB_RUN, "--findings-only", "--format", "json")
    fired = {(r["host"], c["id"]) for r in full["reports"] for c in r["checks"]}
    fired |= {("job", c["id"]) for j in full["runs"] for c in j["checks"]}
    listed = set()
    for p in every["problems"]:
        listed |= {("job", p["check"])} if p["where"] == "job" else {(h, p["check"]) for h in p["where"]}
    assert listed == fired
    # the checks that pass, on request
    ids = demo.json(14)
    assert ids["passed"] and not {p["check"] for p in ids["problems"]} & set(ids["passed"])
    # the full reports, a page of hosts at a time
    page1, page2 = demo.json(15), demo.json(16)
    validate(page1, "AnalyzeOutput")
    assert (page1["offset"], page1["next_offset"], page1["total_reports"]) == (0, 3, 8)
    assert (page2["offset"], page2["next_offset"]) == (3, None)
    assert page1["reports"] + page2["reports"] == full["reports"]
    assert page2 == command_json(
        "analyze", DEMO, "--run", JOB_RUN, "--findings-only", "--format", "json", "--offset", "3", "--limit", "5"
    )
    assert re.match(r"error: the answer is \d+ kB, over the 150 kB an answer may be", demo.error(17))


def test_a_default_analyze_answer_fits_for_every_demo_run():
    """Every run of demo_logs/ and the real GPU captures asked as an agent asks, the default answer:
    at most 8 kB for a run of one host, 16 kB for the 8-rank jobs (sizes measured, docs/agents.md)."""
    runs = command_json("runs", DEMO, "--json")["runs"]
    names = [r["run"] for r in runs]
    s = session(DEMO, [("analyze", {"run": n}) for n in names])
    sizes = {}
    for i, name in enumerate(names):
        doc = s.json(i)
        validate(doc, "AnalyzeBrief")
        sizes[name] = len(s.answers[i][1].encode())
        bound = JOB_BRIEF_KB if len(doc["hosts"]) > 2 else BRIEF_KB
        assert sizes[name] <= bound * 1000, (name, sizes[name])
    assert sizes["20_ddp_straggler_8_ranks"] > BRIEF_KB * 1000 / 2  # eight ranks' worth, still bounded
    g = session(
        GPU, [("list_runs", {})] + [("analyze", {"run": r["run"]}) for r in command_json("runs", GPU, "--json")["runs"]]
    )
    for i, (_, text) in enumerate(g.answers[1:], start=1):
        assert len(text.encode()) <= BRIEF_KB * 1000, (i, len(text.encode()))


def test_evidence_names_the_events_of_each_window(demo):
    got = demo.json(3)
    validate(got, "EvidenceOutput")
    assert got == command_json(
        "evidence", DEMO, "--run", INPUT_RUN, "--finding", "input.bound", "--limit", "5", "--format", "json"
    )
    assert got["finding"]["id"] == "input.bound" and got["windows"]
    for w in got["windows"]:
        inside = w["in_window"]
        assert 0 < inside["shown"] <= 5 <= inside["total"] or inside["shown"] == inside["total"]
        for e in inside["events"]:
            assert w["start_ms"] - e["dur_ms"] <= e["start_ms"] <= w["end_ms"]  # overlaps the window
    named = set(got["windows"][0]["events"])
    assert named & {e["name"] for e in got["windows"][0]["in_window"]["events"]}  # the finding's own events first


def test_table_diff_and_job_are_the_commands(demo):
    validate(demo.json(4), "TableResponse")
    assert demo.json(4) == command_json(
        "table", "ops", DEMO, "--run", INPUT_RUN, "--sort", "calls", "--limit", "7", "-q", "a", "--format", "json"
    )
    diff = demo.json(5)
    validate(diff, "Diff")
    assert diff == command_json(
        "diff", DEMO, DEMO, "--run", "02_input_bound", "--new-run", "18_input_prefetched_after_02", "--format", "json"
    )
    assert "input.bound" in diff["summary"]["fixed"]
    assert demo.json(9) == diff  # the call diff's markdown gives, with the runs' full names
    job = demo.json(6)
    validate(job, "AcrossHosts")
    assert job == command_json("job", DEMO, "--run", JOB_RUN, "--limit", "3", "--format", "json")
    assert job["ranks_captured"] == 8 and len(job["ranks"]) == 3
    assert [r["rank"] for r in job["ranks"] if r["straggler"]] == [5]  # the straggler is among those listed


@pytest.fixture(scope="module")
def gpu() -> Session:
    return session(
        GPU,
        [
            ("list_runs", {}),
            ("analyze", {"run": "torch_input_workers0", "detail": "full"}),
            ("evidence", {"run": "torch_bf16_memory", "finding": "kernels.small", "limit": 4}),
            ("table", {"run": "jax_train", "kind": "kernels", "limit": 5}),
            ("diff", {"before": "torch_input_workers0", "after": "torch_input_workers4"}),
            ("job", {"run": "torch_fp32"}),
            ("evidence", {"run": "torch_fp32", "finding": "precision.mixed-off"}),
        ],
    )


def test_on_real_gpu_captures_the_answers_are_the_commands(gpu):
    assert gpu.json(0) == {"logdir": GPU, **command_json("runs", GPU, "--analyse", "--json")}
    analyze = gpu.json(1)
    assert analyze == command_json(
        "analyze", GPU, "--run", "torch_input_workers0", "--findings-only", "--format", "json"
    )
    assert analyze["reports"][0]["checks"][0]["id"] == "input.bound"
    assert gpu.json(3) == command_json(
        "table", "kernels", GPU, "--run", "jax_train", "--limit", "5", "--format", "json"
    )
    diff = gpu.json(4)
    assert diff == command_json(
        "diff", GPU, GPU, "--run", "torch_input_workers0", "--new-run", "torch_input_workers4", "--format", "json"
    )
    assert "input.bound" in diff["summary"]["fixed"]
    # a single-rank run is not a job: the command's message
    assert gpu.error(5) == command_error("job", GPU, "--run", "torch_fp32")


def test_evidence_gives_the_source_frames_of_a_trace_with_stacks(gpu):
    got = gpu.json(2)
    assert got == command_json(
        "evidence", GPU, "--run", "torch_bf16_memory", "--finding", "kernels.small", "--limit", "4", "--format", "json"
    )
    events = [e for w in got["windows"] for e in w["in_window"]["events"]]
    assert events and all(e["track"].startswith("GPU 0") for e in events)
    framed = [got["stacks"][e["stack"]] for e in events if e["stack"] is not None]
    assert framed, "the kernels' launches have Python frames (with_stack=True)"
    # the script's own line that ran the model, and the torch module that launched the kernel
    assert any(f.startswith("capture_torch_gpu.py(") for frames in framed for f in frames)
    assert any(f.startswith("torch/nn/modules/") for frames in framed for f in frames)
    no_stacks = gpu.json(6)
    assert any("with_stack=True" in n for n in no_stacks["notes"])  # said where the trace has none


PAIRS = str(ROOT / "tests" / "data" / "gpu_pairs")  # H200 captures before and after a fix
V100 = str(ROOT / "tests" / "data" / "pytorch")
PREDICTION = (
    "change",
    "step_ms",
    "new_step_ms",
    "saving_ms",
    "saving_low_ms",
    "saving_high_ms",
    "error_pct",
    "bound",
    "new_bound",
    "basis",
    "profiler",
    "sentence",
)


def test_whatif_re_times_a_real_capture_as_its_report_does():
    s = session(
        PAIRS,
        [
            ("whatif", {"run": "gpt2_fp32", "change": "bf16"}),
            ("analyze", {"run": "gpt2_fp32", "detail": "full"}),
            ("whatif", {"run": "loader_w0", "change": "input"}),
            ("analyze", {"run": "loader_w0", "detail": "full"}),
            ("whatif", {"run": "gpt2_fp32", "change": "bf16+compile"}),
            ("whatif", {"run": "gpt2_fp32", "change": "input"}),  # GPT-2 on synthetic tokens waits for none
            ("whatif", {"run": "gpt2_fp32", "change": "bf17"}),
            ("whatif", {"run": "gpt2_fp32", "change": "bf16+bf16"}),
            ("whatif", {"run": "gpt2_fp32", "change": "fp16", "hots": "x"}),
        ],
    )
    bf16 = s.json(0)
    assert bf16 == command_json("whatif", PAIRS, "--run", "gpt2_fp32", "--change", "bf16", "--format", "json")
    validate({k: bf16[k] for k in PREDICTION}, "WhatIf")
    validate(bf16["step_model"], "StepModel")
    (report,) = s.json(1)["reports"]
    assert (bf16["run"], bf16["host"]) == (report["run"], report["host"])
    assert bf16["step_model"] == report["step_model"]
    mixed = next(c for c in report["checks"] if c["id"] == "precision.mixed-off")
    assert mixed["whatif"]["change"] == "bf16"  # an H200: bf16, not fp16
    assert bf16["saving_ms"] == mixed["whatif"]["saving_ms"] > 0.5 * bf16["step_ms"]  # fp32 GEMMs: most of it
    assert {k: bf16[k] for k in PREDICTION} == mixed["whatif"]
    assert bf16["bound"] == bf16["new_bound"] == "GPU"
    assert bf16["step_ms"] - bf16["new_step_ms"] == pytest.approx(bf16["saving_ms"], abs=1e-3)

    # the DataLoader without workers: the steps wait for input, and with the batches ready the GPU sets them
    inp = s.json(2)
    assert inp == command_json("whatif", PAIRS, "--run", "loader_w0", "--change", "input", "--format", "json")
    assert (inp["bound"], inp["new_bound"]) == ("input", "GPU") and inp["saving_ms"] > 0.5 * inp["step_ms"]
    (loader,) = s.json(3)["reports"]
    bound = next(c for c in loader["checks"] if c["id"] == "input.bound")
    assert bound["whatif"] == {k: inp[k] for k in PREDICTION}

    # several fixes together: what the report's step model sums its findings' fixes to
    both = s.json(4)
    assert both["step_model"]["all"]["change"] == "bf16+compile"
    assert {k: both[k] for k in PREDICTION} == both["step_model"]["all"]
    assert both["saving_ms"] > bf16["saving_ms"]

    assert s.error(5) == command_error("whatif", PAIRS, "--run", "gpt2_fp32", "--change", "input")
    assert s.error(5) == (
        f"error: the change 'input' does not apply to run 'gpt2_fp32', host '{bf16['host']}': it needs steps "
        "that wait for input (the data loader's or input pipeline's next batch)"
    )
    assert s.error(6) == command_error("whatif", PAIRS, "--run", "gpt2_fp32", "--change", "bf17")
    assert s.error(6) == (
        "error: unknown change 'bf17' (several are joined by +, e.g. bf16+compile); did you mean 'bf16' or "
        "'fp16'?\nchanges: input, syncs, graph, fusion, compile, bf16, fp16, tf32, channels_last, reduce-overhead, padding, "
        "host, overlap, allocator, warmup"
    )
    assert s.error(7) == "error: the change 'bf16+bf16' names 'bf16' twice; name each change once"
    assert s.error(8) == "error: whatif: unknown argument 'hots'; its arguments: change, host, run"


def test_whatif_says_a_change_the_gpu_cannot_make_does_not_apply():
    """The V100 has neither TF32 nor bf16 Tensor Cores: its ResNet-50 can go to fp16 only, which its
    host-bound steps do not feel."""
    host = "worker0.1623143089861"
    run = "resnet50_num_workers_0"
    s = session(
        V100,
        [
            ("whatif", {"run": run, "host": host, "change": "tf32"}),
            ("whatif", {"run": run, "host": host, "change": "bf16"}),
            ("whatif", {"run": run, "host": host, "change": "fp16"}),
            ("whatif", {"run": run, "change": "fp16"}),  # two hosts: name one
        ],
    )
    where = f"run '{run}', host '{host}'"
    assert s.error(0) == f"error: the change 'tf32' does not apply to {where}: the V100 SXM2 has no TF32 Tensor Cores"
    assert s.error(0) == command_error("whatif", V100, "--run", run, "--host", host, "--change", "tf32")
    assert s.error(1) == f"error: the change 'bf16' does not apply to {where}: the V100 SXM2 has no bf16 Tensor Cores"
    fp16 = s.json(2)
    assert fp16["change"] == "fp16" and "V100 SXM2" in fp16["basis"]
    # the host sets its steps (a DataLoader without workers): faster kernels save nothing on their own
    assert (fp16["bound"], fp16["saving_ms"]) == ("host", 0.0) and fp16["new_bound"] != "GPU"
    assert s.error(3).startswith("error: a what-if is of one host: name it with host\nhosts: worker0.")


def test_the_tabs_agent_call_opens_the_same_finding(demo):
    got = demo.json(8)
    assert (got["run"], got["host"], got["finding"]["id"]) == (
        "16_two_hosts/2026_11_22_10_00_00",
        "gpu-worker-1",
        "input.bound",
    )


AGENT_LINE = re.compile(r"^Agent: `tb-gpu-advisor mcp (.+?)`, then `(\w+) (\{.*\})`$")


def agent_calls(markdown: str) -> list[tuple[str, str, dict]]:
    """The MCP calls a markdown answer ends its parts with: (logdir, tool, arguments)."""
    found = [AGENT_LINE.match(line) for line in markdown.splitlines() if line.startswith("Agent: ")]
    assert found and all(found), markdown[-500:]
    return [(shlex.split(m.group(1))[0], m.group(2), json.loads(m.group(3))) for m in found if m]


def test_the_markdown_gives_the_calls_that_reproduce_it():
    """A run folder as the logdir, a job of two hosts: the overview's, the job's and each report's call,
    each made on a server started as the markdown says, answers as the command does."""
    folder = os.path.join(DEMO, "16_two_hosts")
    calls = agent_calls(command("analyze", folder, "--format", "markdown").stdout)
    assert [tool for _, tool, _ in calls] == ["list_runs", "job", "analyze", "analyze"]
    assert {logdir for logdir, _, _ in calls} == {folder}
    diff_calls = agent_calls(
        command(
            "diff",
            DEMO,
            DEMO,
            "--run",
            "02_input_bound",
            "--new-run",
            "18_input_prefetched_after_02",
            "--format",
            "markdown",
        ).stdout
    )
    assert diff_calls == [(DEMO, "diff", DIFF_CALL)]  # made in the demo session: the same as the command's
    s = session(folder, [(tool, args) for _, tool, args in calls])
    for i, (_, _tool, args) in enumerate(calls[2:], start=2):
        assert s.json(i) == command_json(
            "analyze", folder, "--run", args["run"], "--host", args["host"], "--brief", "--findings-only"
        )
    assert s.json(1)["stragglers"] == ["gpu-worker-1"]


def outside_logdir(tmp: Path) -> str:
    """A logdir with one run of its own, a run folder that is a symbolic link out of it, and a run
    whose trace is one."""
    logdir, elsewhere = tmp / "logs", tmp / "elsewhere"
    shutil.copytree(Path(DEMO) / "01_healthy", logdir / "01_healthy")
    shutil.copytree(Path(DEMO) / "02_input_bound", elsewhere / "02_input_bound")
    os.symlink(elsewhere / "02_input_bound", logdir / "linked_out")
    trace = "node0_1000.1700000000000.pt.trace.json.gz"
    shutil.copy(Path(DEMO) / JOB_RUN / trace, elsewhere / trace)
    (logdir / "trace_linked_out").mkdir()
    os.symlink(elsewhere / trace, logdir / "trace_linked_out" / trace)
    return str(logdir)


def tree(logdir: str) -> list[tuple[str, int, float]]:
    return sorted(
        (os.path.join(d, f), os.lstat(os.path.join(d, f)).st_size, os.lstat(os.path.join(d, f)).st_mtime)
        for d, _, files in os.walk(logdir)
        for f in files
    )


def test_errors_are_the_commands_and_the_session_goes_on(tmp_path):
    logdir = outside_logdir(tmp_path)
    healthy = "01_healthy/2026_11_22_10_00_00"
    calls = [
        ("analyze", {"run": "../elsewhere/02_input_bound"}),  # a path out of the logdir
        ("analyze", {"run": "/etc"}),
        ("table", {"run": "linked_out", "kind": "kernels"}),  # a symbolic link out of it
        ("analyze", {"run": healthy}),  # the session goes on
        ("analyze", {"run": "01_healthyy"}),  # unknown run
        ("table", {"run": healthy, "kind": "kernels", "limit": 100000}),  # an oversized request
        ("analyze", {"run": healthy, "all_checks": True, "detail": "full"}),  # an answer over the bound
        ("evidence", {"run": healthy, "finding": "input.boun"}),
        ("table", {"run": healthy, "kind": "kernelz"}),
        ("analyze", {"run": healthy, "hots": "x"}),  # an argument it does not take
        ("table", {"run": healthy, "kind": "kernels", "limit": "many"}),
        ("analyze", {}),
        ("evidence", {"run": healthy, "finding": "steps.gaps", "limit": 100000}),
        ("whatiff", {}),
        ("table", {"run": healthy, "kind": "kernels", "limit": 3}),
        ("analyze", {"run": "trace_linked_out"}),
        ("diff", {"before": healthy, "after": "linked_out/2026_11_22_10_00_00"}),
        ("whatif", {"run": "linked_out", "change": "input"}),
        ("whatif", {"run": healthy, "change": "input; rm -rf /"}),
    ]
    before = tree(logdir)
    s = session(logdir, calls, "--max-answer-kb", "40")
    for i in (0, 1, 2):  # a path, or a name the link resolves out of the logdir
        assert s.error(i) == (
            f"error: run {calls[i][1]['run']!r} is outside the logdir {logdir}: this server reads only inside it; "
            "name a run as list_runs lists it"
        )
    assert s.error(15) == (  # a file linked out of it
        f"error: run 'trace_linked_out': its profiles are outside the logdir {logdir} (a symbolic link leads out "
        "of it); this server reads only inside it"
    )
    assert s.error(16) == (
        f"error: after 'linked_out/2026_11_22_10_00_00' is outside the logdir {logdir}: this server reads only "
        "inside it; name a run as list_runs lists it"
    )
    assert s.json(3)["hosts"][0]["run"] == healthy
    # the command follows the link out of the logdir, the server does not: its runs are listed without it
    assert s.error(4) == command_error("analyze", logdir, "--run", "01_healthyy").replace(
        "linked_out/2026_11_22_10_00_00, ", ""
    )
    assert "did you mean '01_healthy'" in s.error(4)
    assert s.error(5) == command_error("table", "kernels", logdir, "--run", healthy, "--limit", "100000")
    assert s.error(5) == "error: limit must be between 0 and 1000"
    size = len(command("analyze", logdir, "--run", healthy, "--format", "json").stdout.strip().encode())
    assert size > 40_000
    assert s.error(6) == (
        f"error: the answer is {size / 1000:.0f} kB, over the 40 kB an answer may be (tb-gpu-advisor mcp "
        "--max-answer-kb); leave detail brief (the problems a page at a time), or with detail=full name a host "
        "or a rank (the job tool compares the ranks), page the reports (offset, limit) and leave all_checks false"
    )
    assert s.error(7) == command_error("evidence", logdir, "--run", healthy, "--finding", "input.boun")
    assert "did you mean 'input.bound'" in s.error(7)
    assert s.error(8) == "error: unknown table 'kernelz'; the tables are kernels, ops, memory, input, idle"
    assert s.error(9) == (
        "error: analyze: unknown argument 'hots'; its arguments: all_checks, cycle, detail, host, limit, offset, "
        "rank, run"
    )
    assert s.error(10) == "error: table: limit: Input should be a valid integer, unable to parse string as an integer"
    assert s.error(11) == "error: analyze: run is required"
    assert s.error(12) == command_error(
        "evidence", logdir, "--run", healthy, "--finding", "steps.gaps", "--limit", "100000"
    )
    assert (
        s.error(13)
        == "error: unknown tool 'whatiff'; the tools are list_runs, analyze, evidence, table, diff, job, whatif"
    )
    assert s.error(17) == s.error(2)  # the link out of the logdir, refused before the change is tried
    assert s.error(18) == command_error("whatif", logdir, "--run", healthy, "--change", "input; rm -rf /")
    assert s.error(18).startswith("error: unknown change 'input; rm -rf /'")
    assert s.json(14)["rows"]  # and on
    for _, text in s.answers:
        assert "Traceback" not in text and "pydantic" not in text and 'File "' not in text
    assert tree(logdir) == before  # nothing written into the logdir


def test_a_logdir_without_profiles_is_said_before_serving(tmp_path):
    done = command("mcp", str(tmp_path))
    assert done.returncode == 2 and done.stderr.startswith(f"error: {tmp_path}: no profiles found.")


@contextlib.contextmanager
def _http_server():
    """`mcp DEMO --http PORT` started and bound; its port. Stopped on leaving."""
    import socket

    from conftest import free_port

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tb_gpu_advisor.cli", "mcp", DEMO, "--http", str(port)],
        cwd=ROOT,
        env={**os.environ, **ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):  # the server imports and binds
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_http_on_the_loopback_address():
    from mcp.client.streamable_http import streamable_http_client

    async def go() -> tuple[set[str], dict]:
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            tools = {t.name for t in (await s.list_tools()).tools}
            result = await s.call_tool("table", {"run": INPUT_RUN, "kind": "idle", "limit": 2})
            return tools, json.loads(result.content[0].text)

    with _http_server() as port:
        tools, table = anyio.run(go)
    assert tools == TOOLS
    assert table == command_json("table", "idle", DEMO, "--run", INPUT_RUN, "--limit", "2", "--format", "json")


def test_a_file_url_is_confined_as_its_path(tmp_path):
    """Issue 51: `mcp file://LOGDIR` turned confinement off (the URL went to fsspec, and only local
    paths were checked): runs symlinked from outside were listed and analysed. A local `file://` is
    its path: neither a folder nor a file linked from outside is listed or read. A NUL in a name is a
    usage error (it was reported as the advisor's bug, with a traceback)."""
    logdir = outside_logdir(tmp_path)
    calls = [
        ("list_runs", {}),
        ("analyze", {"run": "linked_out/2026_11_22_10_00_00"}),
        ("analyze", {"run": "trace_linked_out"}),
        ("job", {"run": "trace_linked_out"}),
        ("analyze", {"run": "01_healthy\x00/../../elsewhere"}),
        ("analyze", {"run": "01_healthy", "host": "gpu-worker-0\x00"}),
        ("analyze", {"run": "01_healthy"}),
    ]
    s = session("file://" + logdir, calls)
    assert [r["run"] for r in s.json(0)["runs"]] == ["01_healthy/2026_11_22_10_00_00"]
    assert s.error(1).startswith("error: run 'linked_out/2026_11_22_10_00_00' is outside the logdir")
    assert s.error(2).startswith("error: run 'trace_linked_out': its profiles are outside the logdir")
    assert s.error(3) == s.error(2)
    assert s.error(4) == (
        "error: run '01_healthy\\x00/../../elsewhere': a name does not hold a NUL character; "
        "name a run as list_runs lists it"
    )
    assert s.error(5) == "error: host 'gpu-worker-0\\x00': a name does not hold a NUL character"
    assert s.json(6)["hosts"][0]["run"] == "01_healthy/2026_11_22_10_00_00"
    for _, text in s.answers:
        assert "please report it" not in text and "Traceback" not in text


def test_confinement_is_decided_on_the_file_opened(tmp_path, monkeypatch):
    """A link swapped in between the check of a file's path and its opening (9 of 1,771 calls answered
    from a file outside): whether a file is read is decided on the real path of the file opened
    (/proc/self/fd on Linux), for every reader, in this process and its workers (the setting the
    server sets, TB_GPU_ADVISOR_CONFINE)."""
    from tb_gpu_advisor.common.settings import CONFINE_ENV
    from tb_gpu_advisor.serve.mcp import Advisor
    from tb_gpu_advisor.serve.selection import UsageError

    logdir = outside_logdir(tmp_path)
    advisor = Advisor(logdir, 10**6)
    monkeypatch.setenv(CONFINE_ENV, advisor.confine)
    (f,) = advisor.files("01_healthy")  # checked: inside
    outside = tmp_path / "elsewhere" / "02_input_bound" / "plugins" / "profile" / "2026_11_22_10_00_00"
    os.replace(f.path, f.path + ".kept")
    os.symlink(outside / "gpu-worker-0.xplane.pb", f.path)  # swapped after the check
    with pytest.raises(UsageError, match="outside the folder this process reads"):
        advisor.analysed(f)
    (report,) = advisor.reports([f])
    assert report["checks"] == [] and "outside the folder this process reads" in report["errors"][0]


def test_over_4096_profiles_answer_list_runs_again(tmp_path):
    """Issue 51: with over REPORTS_KEPT (4,096) profiles, keeping the reports of one call dropped others
    the same call still needed: the second list_runs failed with an internal KeyError."""
    from tb_gpu_advisor.serve.mcp import REPORTS_KEPT

    run = tmp_path / "many"
    run.mkdir()
    for i in range(REPORTS_KEPT + 4):
        (run / f"w{i:05d}.1.pt.trace.json").write_bytes(b"")  # empty: each reported unreadable, at once
    s = session(str(tmp_path), [("list_runs", {}), ("list_runs", {})], "--max-answer-kb", "100000")
    first, second = s.json(0), s.json(1)
    assert first == second and first["runs"][0]["hosts_total"] == REPORTS_KEPT + 4


def test_http_sessions_are_bounded():
    """Issue 51: sessions over --http were not bounded (the SDK's default: 10,000, each kept 30 min).
    HTTP_SESSIONS may be open at once; one more is answered 503 until one ends."""
    import urllib.error
    import urllib.request

    from tb_gpu_advisor.serve.mcp import HTTP_SESSIONS

    initialize = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    ).encode()

    def open_session() -> int:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp",
            data=initialize,
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                r.read()
                assert r.headers["mcp-session-id"]
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    with _http_server() as port:
        statuses = [open_session() for _ in range(HTTP_SESSIONS + 2)]
    assert statuses == [200] * HTTP_SESSIONS + [503, 503]


def test_a_file_replaced_by_one_of_its_size_and_time_is_analysed_again(tmp_path):
    """Issue 51, in the server: its reports and analyses were kept by the listed (path, size, mtime), so
    a profile replaced by another of the same size and modification time (`cp -p`, `mv` of a kept
    copy) was answered with the first one's report. What identifies the bytes read is kept with
    each, and checked against the file on disk."""
    from tb_gpu_advisor.serve.mcp import Advisor

    original = Path(ROOT) / "tests" / "corpus" / "torch_cpu_small.pt.trace.json"
    doc = json.loads(original.read_text())
    for e in doc["traceEvents"]:  # the other file: every event three times as long
        for k in ("ts", "dur"):
            if isinstance(e.get(k), (int, float)):
                e[k] = e[k] * 3
    texts = [original.read_text(), json.dumps(doc)]
    size = max(len(t) for t in texts)
    (tmp_path / "r").mkdir()
    path = tmp_path / "r" / "w.1.pt.trace.json"
    (tmp_path / "other").write_text(texts[1].ljust(size))  # the same size, and (below) the same time
    path.write_text(texts[0].ljust(size))
    advisor = Advisor(str(tmp_path), 10**6)
    (f,) = advisor.files("r")
    step = advisor.reports([f])[0]["steps"]["mean_ms"]
    assert advisor.analysed(f)[1]["steps"]["mean_ms"] == step
    os.utime(tmp_path / "other", ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))
    os.replace(tmp_path / "other", path)
    assert advisor.files("r") == [f]  # listed as it was
    assert abs(advisor.reports([f])[0]["steps"]["mean_ms"] / step - 3) < 0.01
    assert abs(advisor.analysed(f)[1]["steps"]["mean_ms"] / step - 3) < 0.01
