"""The package's layering: discover → read → analyse → measure → check → present, one way.

Check modules read measurements and their own thresholds and nothing else: they may import only
checks.base, checks.texts, measures, report and units from the package, and never touch a private
attribute of what they are given.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tb_gpu_advisor"
CHECK_IMPORTS = {"checks.base", "checks.texts", "measures", "report", "units"}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def internal_imports(source: str) -> set[str]:
    """Package modules a source imports (relative to tb_gpu_advisor), nested imports included."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tb_gpu_advisor"):
            base = node.module[len("tb_gpu_advisor") :].lstrip(".")
            for alias in node.names:
                # `from tb_gpu_advisor import intervals` names a module; `from x.y import Z` names x.y
                candidate = f"{base}.{alias.name}".lstrip(".")
                out.add(candidate if (PACKAGE / (candidate.replace(".", "/") + ".py")).exists() else base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tb_gpu_advisor."):
                    out.add(alias.name[len("tb_gpu_advisor.") :])
    out.discard("")
    return out


def private_attributes(source: str) -> list[str]:
    """`x._name` reads of anything but self (dunders aside)."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                bad.append(f"{ast.unparse(node)} (line {node.lineno})")
    return bad


def check_module_violations(name: str, source: str) -> list[str]:
    allowed = CHECK_IMPORTS - {name}
    bad = [f"imports {m}" for m in sorted(internal_imports(source)) if m not in allowed]
    return bad + [f"reads {a}" for a in private_attributes(source)]


CHECK_MODULES = sorted(p for p in (PACKAGE / "checks").glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", CHECK_MODULES, ids=lambda p: p.name)
def test_check_module_reads_only_measurements(path):
    assert check_module_violations(module_name(path), path.read_text()) == []


@pytest.mark.parametrize(
    "source,expected",
    [
        ("from tb_gpu_advisor.checks.kernels import x", ["imports checks.kernels"]),
        ("from tb_gpu_advisor.checks import kernels", ["imports checks.kernels"]),
        ("from tb_gpu_advisor.profile import Kind", ["imports profile"]),
        ("def f():\n    from tb_gpu_advisor.xplane.reader import read_profile", ["imports xplane.reader"]),
        ("import tb_gpu_advisor.analysis", ["imports analysis"]),
        ("def f(ctx):\n    return ctx.m._a.profile", ["reads ctx.m._a (line 2)"]),
        ("from tb_gpu_advisor.measures import JAX\nfrom tb_gpu_advisor import units", []),
    ],
)
def test_the_rule_catches_what_it_should(source, expected):
    assert check_module_violations("checks.example", source) == expected


def test_no_import_cycles():
    graph = {module_name(p): internal_imports(p.read_text()) for p in PACKAGE.rglob("*.py")}
    graph = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}
    # a package's __init__ importing its own submodules (the check registry) is not a cycle
    for m in graph:
        graph[m] = {d for d in graph[m] if not d.startswith(m + ".")} if m == "checks" else graph[m]
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " → ".join(path + [m, d]))
            if d not in state:
                visit(d, path + [m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    # and measurement never reaches up into the checks or the presentation
    for low in ("measures", "analysis", "profile", "steps", "xplane.reader"):
        assert not {d for d in graph[low] if d.startswith("checks") or d in ("plugin", "service", "render", "cli")}


def test_the_job_layer_does_not_reach_the_presentation():
    """job/ (digests, job analysis, job diff, ranks apart) is called by the CLI and the plugin, never
    the other way: nothing it imports, directly or not, is plugin, service, cli or render."""
    graph = {module_name(p): internal_imports(p.read_text()) for p in PACKAGE.rglob("*.py")}
    job = sorted(m for m in graph if m == "job" or m.startswith("job."))
    assert {"job", "job.digest", "job.analysis", "job.diff", "job.ranks"} <= set(job)
    for start in job:
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m in seen or m not in graph:
                continue
            seen.add(m)
            todo.extend(graph[m])
        assert not seen & {"plugin", "service", "cli", "render"}, start
