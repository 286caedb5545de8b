"""`checks` (the catalogue), `mcp` (the server for coding agents) and `skill` (how an agent uses it)."""

from __future__ import annotations

import argparse
import sys

from tb_gpu_advisor.cli.common import EXIT_OK, write_json
from tb_gpu_advisor.serve.questions import DEFAULT_ANSWER_KB


def cmd_checks(args: argparse.Namespace) -> int:
    from tb_gpu_advisor.checks import catalogue
    from tb_gpu_advisor.present import render

    cat = catalogue()
    if args.json or args.format == "json":
        write_json({"checks": cat})
    elif args.format == "markdown":
        print(render.catalogue_markdown(cat))
    else:
        print(render.catalogue_text(cat))
    return EXIT_OK


def cmd_skill(args: argparse.Namespace) -> int:
    """The agent skill shipped with the package: how an agent uses the MCP server's tools."""
    from importlib import resources

    sys.stdout.write((resources.files("tb_gpu_advisor") / "skill" / "SKILL.md").read_text(encoding="utf-8"))
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    """The MCP server for coding agents (serve/mcp.py), on stdio or, with --http, on 127.0.0.1."""
    from tb_gpu_advisor.serve import mcp

    return mcp.main(args.logdir, http_port=args.http, max_answer_kb=args.max_answer_kb)


def add(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("checks", help="list every check with its thresholds")
    c.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    c.add_argument("--json", action="store_true", help="same as --format json")
    c.set_defaults(func=cmd_checks)

    m = sub.add_parser(
        "mcp",
        help="serve the advice to coding agents (Model Context Protocol, stdio): pip install 'tb_gpu_advisor[mcp]'",
    )
    m.add_argument("logdir", help="the logdir the server reads, and nothing outside it")
    m.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT instead of stdio")
    m.add_argument(
        "--max-answer-kb",
        type=float,
        default=DEFAULT_ANSWER_KB,
        help="the largest answer a tool gives, kB (default: %(default)s); a larger one is refused with what to narrow",
    )
    m.set_defaults(func=cmd_mcp)

    k = sub.add_parser(
        "skill", help="print the agent skill (SKILL.md): how a coding agent uses the mcp server's tools, in order"
    )
    k.set_defaults(func=cmd_skill)
