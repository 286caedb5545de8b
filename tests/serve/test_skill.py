"""The agent skill shipped with the package (tb_gpu_advisor/skill/SKILL.md): every tool it names is a
tool of the MCP server, every tool of the server is in it, and every example call in it runs on the
demo logdir it names, answering what the command answers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("mcp", reason="the mcp extra: pip install -e '.[mcp]' (make test installs it)")

from support.mcp_client import DEMO, ENV, ROOT, TOOLS, session  # noqa: E402

SKILL = ROOT / "tb_gpu_advisor" / "skill" / "SKILL.md"
TEXT = SKILL.read_text(encoding="utf-8")


def examples() -> list[tuple[str, dict]]:
    """The example calls: each line of the ```mcp blocks, `tool {json arguments}`."""
    calls = []
    for block in re.findall(r"```mcp\n(.*?)```", TEXT, re.S):
        for line in block.strip().splitlines():
            name, _, arguments = line.partition(" ")
            calls.append((name, json.loads(arguments)))
    return calls


def test_the_skill_says_what_it_is_for():
    front = TEXT.split("---\n")[1]
    fields = dict(line.split(": ", 1) for line in front.strip().splitlines())
    assert fields["name"] == "gpu-advisor"
    assert "Use when" in fields["description"] and len(fields["description"]) <= 1024
    # the order an agent follows, and what not to conclude
    order = [TEXT.index(f"**`{t}(") for t in ("list_runs", "analyze", "evidence")]
    assert order == sorted(order) and TEXT.index("**Change one thing**") < TEXT.index("**`diff(")
    assert "a prediction" in TEXT and "capture.*" in TEXT and "not problems of the program" in TEXT


def test_every_tool_it_names_is_the_servers_and_every_example_runs():
    named = set(re.findall(r"`(\w+)\(", TEXT))
    calls = examples()
    assert named == TOOLS, "the skill names each of the server's tools, and no other"
    assert {name for name, _ in calls} == TOOLS, "an example call for every tool"
    assert "tb-gpu-advisor mcp demo_logs" in TEXT  # the logdir the examples are for
    s = session(DEMO, calls)
    assert set(s.tools) == TOOLS
    for i, (name, arguments) in enumerate(calls):
        doc = s.json(i)  # not an error
        assert doc, (name, arguments)
    # one of them, as the command answers it
    i = calls.index(("evidence", {"run": "02_input_bound", "finding": "input.bound", "limit": 5}))
    assert s.json(i)["windows"] and s.json(i)["table_rows"]["rows"][0]["slowest"]


def test_it_ships_with_the_package_and_the_command_prints_it():
    data = re.search(r"^tb_gpu_advisor = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert data and '"skill/*.md"' in data.group(1)  # [tool.setuptools.package-data]
    done = subprocess.run(
        [sys.executable, "-m", "tb_gpu_advisor.cli", "skill"],
        capture_output=True,
        text=True,
        env={**os.environ, **ENV},
        cwd=ROOT,
    )
    assert done.returncode == 0 and done.stdout == TEXT
