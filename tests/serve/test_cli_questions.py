"""The command's answers to what an agent asks (serve/questions.py; the MCP server gives the same JSON,
tests/serve/test_mcp.py): `analyze --findings-only`, `runs --analyse`, `job` and `evidence`."""

import json
import os
import shutil

import pytest
from test_schema import validate

from tb_gpu_advisor.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "demo_logs")
GPU = os.path.join(ROOT, "tests", "data", "gpu")
INPUT_RUN = "02_input_bound/2026_11_22_10_00_00"
JOB_RUN = "20_ddp_straggler_8_ranks"


def run_json(capsys, *args: str) -> dict:
    assert main([*args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_findings_only_leaves_out_the_passes(capsys):
    full = run_json(capsys, "analyze", DEMO, "--run", "16_two_hosts")
    short = run_json(capsys, "analyze", DEMO, "--run", "16_two_hosts", "--findings-only")
    validate(short, "AnalyzeOutput")
    assert short["overview"] == full["overview"]
    for a, b in zip(full["reports"], short["reports"]):
        assert b["checks"] == [c for c in a["checks"] if c["status"] not in ("pass", "not-applicable")]
        assert {k: v for k, v in a.items() if k != "checks"} == {k: v for k, v in b.items() if k != "checks"}
    assert short["runs"][0]["checks"] == [c for c in full["runs"][0]["checks"] if c["status"] != "pass"]
    assert len(json.dumps(short)) < len(json.dumps(full)) / 3
    assert main(["analyze", DEMO, "--run", INPUT_RUN, "--findings-only", "--fail-on", "critical"]) == 1
    assert "passed (" not in capsys.readouterr().out


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("three") / "logs"
    for run in ("01_healthy", "02_input_bound", JOB_RUN):
        shutil.copytree(os.path.join(DEMO, run), logdir / run)
    return str(logdir)


def test_runs_analyse_says_what_the_overview_shows(three_runs, capsys):
    doc = run_json_flag(capsys, "runs", three_runs, "--analyse")
    validate(doc, "RunList")
    assert [r["run"] for r in doc["runs"]] == [INPUT_RUN, JOB_RUN, "01_healthy/2026_11_22_10_00_00"]  # worst first
    first = doc["runs"][0]
    assert (first["status"], first["check"], first["host"]) == ("critical", "input.bound", "gpu-worker-0")
    assert first["top_saving_ms"] == pytest.approx(14.17, abs=0.01) and first["frameworks"] == ["tensorflow"]
    assert first["job"] is None and first["hosts_total"] == 1
    job = doc["runs"][1]
    assert job["frameworks"] == ["pytorch"] and job["hosts_total"] == 8
    assert sorted(h["rank"] for h in job["hosts"]) == list(range(8))
    assert job["job"]["ranks"] == 8 and [s["label"] for s in job["job"]["stragglers"]] == ["rank 5 (node1_1005)"]
    assert {"job.straggler", "job.wait"} <= {p["id"] for p in job["job"]["problems"]}  # waiting, not transfer
    assert main(["runs", three_runs, "--analyse"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"CRITICAL  {INPUT_RUN}  (tensorflow, 1 host)  step 23.37 ms  top saving 14.17 ms")
    assert "job: 8 ranks, straggler rank 5 (node1_1005); job checks: job.straggler (critical)" in lines[2]
    # without --analyse nothing is read
    assert main(["runs", three_runs, "--json"]) == 0
    assert "status" not in capsys.readouterr().out


def run_json_flag(capsys, *args: str) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_job_compares_the_ranks_and_lists_the_straggler_first(capsys):
    doc = run_json(capsys, "job", DEMO, "--run", JOB_RUN)
    validate(doc, "AcrossHosts")
    assert doc["ranks_captured"] == 8 and len(doc["ranks"]) == 8 and doc["stragglers"] == ["node1_1005.1700000000000"]
    short = run_json(capsys, "job", DEMO, "--run", JOB_RUN, "--limit", "2")
    validate(short, "AcrossHosts")
    assert [r["rank"] for r in short["ranks"]] == [0, 5]  # the straggler kept, in rank order
    assert [h["host"] for h in short["hosts"]] == [r["host"] for r in short["ranks"]]
    assert main(["job", DEMO, "--run", JOB_RUN, "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Job {JOB_RUN}: 8 of 8 ranks, 1 profiling cycle; straggler: rank 5 (node1_1005)")
    assert "(2 of 8 ranks listed: stragglers and outliers first)" in out
    # an XSpace run folder whose hosts are the ranks
    assert run_json(capsys, "job", DEMO, "--run", "16_two_hosts")["stragglers"] == ["gpu-worker-1"]
    assert main(["job", DEMO, "--run", JOB_RUN, "--cycle", "3"]) == 2
    assert capsys.readouterr().err.strip() == f"error: job {JOB_RUN} has 1 profiling cycle; no cycle 3"
    assert main(["job", DEMO, "--run", INPUT_RUN]) == 2
    assert capsys.readouterr().err.startswith(
        f"error: run '{INPUT_RUN}' is not a job: one rank and one profiling cycle (analyze reports it)\nhosts: "
    )
    assert main(["job", DEMO, "--run", JOB_RUN, "--limit", "0"]) == 2
    assert "limit must be between 1 and 4096 ranks" in capsys.readouterr().err


def test_evidence_lists_each_windows_events(capsys):
    doc = run_json(capsys, "evidence", DEMO, "--run", INPUT_RUN, "--finding", "input.bound", "--limit", "3")
    validate(doc, "EvidenceOutput")
    assert doc["finding"]["id"] == "input.bound" and doc["finding"]["saving_ms"] == pytest.approx(14.17, abs=0.01)
    assert doc["table"] == {"table": "input", "name": [], "q": None, "at_ms": None}
    # it names no rows: its table's first, the slowest tf.data stage first
    assert doc["table_rows"]["rows"][0]["slowest"] and len(doc["table_rows"]["rows"]) == 3
    w = doc["windows"][0]
    assert w["thread"].startswith("tf_data_iterator_get_next") and w["in_window"]["shown"] <= 3
    assert all(e["track"] == f"host · {w['thread']}" for e in w["in_window"]["events"])
    assert doc["stacks"] == [] and doc["notes"] == []  # a TensorFlow profile: no Python frames, none expected
    assert main(["evidence", DEMO, "--run", INPUT_RUN, "--finding", "input.bound", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"CRITICAL  input.bound  Input-bound: 61.7% of each step waits for input  (run {INPUT_RUN}")
    assert "window 0: host · tf_data_iterator_get_next" in out


def test_evidence_with_python_stacks(capsys):
    doc = run_json(
        capsys, "evidence", GPU, "--run", "torch_bf16_memory", "--finding", "steps.host-work", "--limit", "4"
    )
    validate(doc, "EvidenceOutput")
    events = [e for w in doc["windows"] for e in w["in_window"]["events"]]
    assert all(e["track"] == "host · python" for e in events)
    stacks = [doc["stacks"][e["stack"]] for e in events if e["stack"] is not None]
    assert stacks and all(s[-1] == "capture_torch_gpu.py(285): <module>" for s in stacks)  # outermost last
    assert len({tuple(s) for s in stacks}) == len(doc["stacks"])  # each stack once
    kernels = run_json(capsys, "evidence", GPU, "--run", "torch_fp32", "--finding", "tensorcore.unused")
    named = kernels["table"]["name"]
    assert named and {r["name"] for r in kernels["table_rows"]["rows"]} == set(named)  # the rows it links to


def test_evidence_usage_errors(capsys):
    assert main(["evidence", DEMO, "--run", INPUT_RUN, "--finding", "input.boun"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: no check 'input.boun' in the report of run '{INPUT_RUN}', host 'gpu-worker-0'; ")
    assert "did you mean 'input.bound'" in err and "\nfindings: input.bound, " in err
    assert main(["evidence", DEMO, "--run", "16_two_hosts", "--finding", "input.bound"]) == 2
    assert capsys.readouterr().err.startswith(
        "error: a finding's evidence is of one host: name it with --run and --host"
    )
    assert main(["evidence", DEMO, "--run", INPUT_RUN, "--finding", "input.bound", "--limit", "0"]) == 2
    assert capsys.readouterr().err.strip() == "error: limit must be between 1 and 200 events per window"


def test_the_markdowns_agent_call_keeps_any_name_in_one_code_span():
    from tb_gpu_advisor.present.render import agent_line, code, mcp_call

    assert code("plain") == "`plain`" and code("a`b") == "`` a`b ``" and code("``x") == "``` ``x ```"
    line = agent_line("logs dir/x", mcp_call("analyze", run="r`un", host="h\nost", rank=None))
    assert (
        line == "Agent: `tb-gpu-advisor mcp 'logs dir/x'`, then " + '`` analyze {"run": "r`un", "host": "h\\nost"} ``'
    )
    assert mcp_call("list_runs") == "list_runs {}"


def test_the_mcp_server_without_its_extra_says_how_to_install_it(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "mcp", None)  # as where the mcp extra is not installed
    assert main(["mcp", DEMO]) == 2
    assert capsys.readouterr().err == "error: the MCP server needs the mcp package: pip install 'tb_gpu_advisor[mcp]'\n"


@pytest.mark.parametrize(
    "word,meant",
    [
        ("amp", "did you mean 'bf16' or 'fp16'?"),  # by its spelling alone, 'graph'
        ("autocast", "did you mean 'bf16' or 'fp16'?"),
        ("cuda_graphs", "did you mean 'graph'?"),
        ("torch.compile", "did you mean 'compile'?"),
        ("DataLoader", "did you mean 'input'?"),
        ("bf17", "did you mean 'bf16' or 'fp16'?"),  # a misspelling: the changes spelled like it
    ],
)
def test_an_unknown_change_is_told_the_change_it_means(word, meant, capsys):
    """`whatif --change amp` is refused before any profile is read, naming the changes a user means by
    the word (mixed precision is bf16 or fp16), not the one spelled most like it."""
    assert main(["whatif", DEMO, "--run", INPUT_RUN, "--change", word]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: unknown change {word!r} (several are joined by +, e.g. bf16+compile); {meant}\n")
    assert "'graph'" not in err or word == "cuda_graphs"
