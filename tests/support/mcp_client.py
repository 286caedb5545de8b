"""The MCP server as an agent starts it: `tb-gpu-advisor mcp LOGDIR` run by the official SDK's stdio
client, its tools listed and called; and the command run as a user runs it, to compare with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "demo_logs")
GPU = str(ROOT / "tests" / "data" / "gpu")
ENV = {"PYTHONPATH": str(ROOT)}
TOOLS = {"list_runs", "analyze", "evidence", "table", "diff", "job", "whatif"}


def command(*args: str) -> subprocess.CompletedProcess:
    """The command, as a user runs it (a pipe: compact JSON)."""
    return subprocess.run(
        [sys.executable, "-m", "tb_gpu_advisor.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **ENV},
        timeout=600,
    )


def command_json(*args: str) -> dict:
    done = command(*args)
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def command_error(*args: str) -> str:
    done = command(*args)
    assert done.returncode == 2 and not done.stdout, (done.returncode, done.stdout[:300])
    return done.stderr.strip()


class Session:
    """The answers of one server session: (is_error, text) per call, in order, and the tools listed."""

    def __init__(self, tools: list, answers: list[tuple[bool, str]], stderr: str):
        self.tools = {t.name: t for t in tools}
        self.answers = answers
        self.stderr = stderr

    def json(self, i: int) -> dict:
        is_error, text = self.answers[i]
        assert not is_error, text
        return json.loads(text)

    def error(self, i: int) -> str:
        is_error, text = self.answers[i]
        assert is_error, text[:300]
        return text


def session(logdir: str, calls: list[tuple[str, dict]], *server_args: str) -> Session:
    """Start the server on `logdir` with the SDK's stdio client, list the tools, make the calls."""

    async def go(errlog) -> tuple[list, list[tuple[bool, str]]]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "tb_gpu_advisor.cli", "mcp", logdir, *server_args],
            env=ENV,
            cwd=str(ROOT),
        )
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            out = []
            for name, arguments in calls:
                result = await s.call_tool(name, arguments)
                assert len(result.content) == 1 and result.content[0].type == "text"
                out.append((bool(result.is_error), result.content[0].text))
            return tools, out

    with tempfile.TemporaryFile("w+") as errlog:
        tools, answers = anyio.run(go, errlog)
        errlog.seek(0)
        stderr = errlog.read()
    assert "Traceback" not in stderr, stderr
    return Session(tools, answers, stderr)
