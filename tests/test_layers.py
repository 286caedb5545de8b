"""The package's layering: discover → read → analyse → measure → check → present, one way.

Check modules read measurements and their own thresholds and nothing else: they may import only
checks.base, checks.texts, measures, report and units from the package, never touch a private
attribute of what they are given, and never reach through the measures to the profile (`m.p`). Measure modules import nothing above them (checks, presentation),
and the subject modules (timing, kernels, copies, ...) compute from what they are given: they import
neither the classes that cache the measures nor the package that exports them.

Formats (`formats/`) are read down only, and apart:
- a format's package (`formats/<name>/`) imports its own modules, `formats.base` and the leaf
  modules FORMAT_IMPORTS (the Profile it builds, the shared name rules of classify.py, errors,
  settings and array helpers) and nothing else: no other format (what two formats share goes to
  classify.py or formats/base.py), nothing that discovers files or analyses a profile;
- the registry (`formats/__init__.py`) imports the format packages' declarations and formats.base;
- outside formats/, the package asks the registry: it imports `formats` and `formats.base` only
  (FORMAT_INTERNALS_ALLOWED lists where it does not yet);
- no module of formats/ reads a private attribute of another object (`x._name`, x not self).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tb_gpu_advisor"
CHECK_IMPORTS = {"checks.base", "checks.texts", "measures", "report", "units"}
FORMAT_IMPORTS = {"formats.base", "profile", "classify", "errors", "units", "settings", "arrays", "intervals", "extent"}
FORMAT_IMPORTS |= {"parallel"}  # the XSpace reader converts lines on threads
# cli.profile_file names a file given on the command line by the Kineto suffixes; it is to ask
# formats.for_file once the CLI is split
FORMAT_INTERNALS_ALLOWED: dict[str, set[str]] = {}


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
                # `from tb_gpu_advisor import intervals` names a module (or a package); `from x.y import Z`
                # names x.y
                candidate = f"{base}.{alias.name}".lstrip(".")
                where = PACKAGE / candidate.replace(".", "/")
                out.add(candidate if where.with_suffix(".py").exists() or where.is_dir() else base)
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


def profile_reads(source: str) -> list[str]:
    """`m.p` / `ctx.m.p`: the profile behind the measures, which a check must ask the measures about."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "p":
            inner = node.value
            if (isinstance(inner, ast.Name) and inner.id == "m") or (
                isinstance(inner, ast.Attribute) and inner.attr == "m"
            ):
                bad.append(f"{ast.unparse(node)} (line {node.lineno})")
    return bad


def check_module_violations(name: str, source: str) -> list[str]:
    allowed = CHECK_IMPORTS - {name}
    bad = [f"imports {m}" for m in sorted(internal_imports(source)) if m not in allowed]
    return bad + [f"reads {a}" for a in private_attributes(source) + profile_reads(source)]


CHECK_MODULES = sorted(p for p in (PACKAGE / "checks").glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", CHECK_MODULES, ids=lambda p: p.name)
def test_check_module_reads_only_measurements(path: Path) -> None:
    assert check_module_violations(module_name(path), path.read_text()) == []


MEASURE_MODULES = sorted((PACKAGE / "measures").glob("*.py"))
# what a measure must never reach: the checks and the presentation
ABOVE_MEASURES = ("checks", "render", "service", "plugin", "cli")
# the classes that cache measures, and the package that exports them: above the subject modules
MEASURE_CLASSES = {"measures", "measures.capture", "measures.gpu", "measures.core"}


def measure_module_violations(name: str, source: str) -> list[str]:
    imports = sorted(internal_imports(source))
    bad = [f"imports {m}" for m in imports if any(m == a or m.startswith(a + ".") for a in ABOVE_MEASURES)]
    if name not in MEASURE_CLASSES:
        bad += [f"imports {m}" for m in imports if m in MEASURE_CLASSES]
    return bad + [f"reads {a}" for a in private_attributes(source)]


@pytest.mark.parametrize("path", MEASURE_MODULES, ids=lambda p: p.name)
def test_measure_module_stays_below_the_checks(path: Path) -> None:
    assert measure_module_violations(module_name(path), path.read_text()) == []
    assert len(path.read_text().splitlines()) <= 600, "split the module by subject"


@pytest.mark.parametrize(
    "name,source,expected",
    [
        ("measures.copies", "from tb_gpu_advisor.checks.base import Context", ["imports checks.base"]),
        ("measures.gpu", "from tb_gpu_advisor import render", ["imports render"]),
        ("measures.copies", "from tb_gpu_advisor.measures.gpu import GpuMeasures", ["imports measures.gpu"]),
        ("measures.copies", "from tb_gpu_advisor.measures import Window", ["imports measures"]),
        ("measures.core", "from tb_gpu_advisor.measures.gpu import GpuMeasures", []),
        ("measures.core", "def f(g):\n    return g._g.activity", ["reads g._g (line 2)"]),
        ("measures.timing", "from tb_gpu_advisor.measures.host import HostSets", []),
    ],
)
def test_the_measure_rule_catches_what_it_should(name: str, source: str, expected: list[str]) -> None:
    assert measure_module_violations(name, source) == expected


@pytest.mark.parametrize(
    "source,expected",
    [
        ("from tb_gpu_advisor.checks.kernels import x", ["imports checks.kernels"]),
        ("from tb_gpu_advisor.checks import kernels", ["imports checks.kernels"]),
        ("from tb_gpu_advisor.profile import Kind", ["imports profile"]),
        (
            "def f():\n    from tb_gpu_advisor.formats.xplane.reader import read_profile",
            ["imports formats.xplane.reader"],
        ),
        ("import tb_gpu_advisor.analysis", ["imports analysis"]),
        ("def f(ctx):\n    return ctx.m._a.profile", ["reads ctx.m._a (line 2)"]),
        ("def f(ctx):\n    return ctx.m.p.ops", ["reads ctx.m.p (line 2)"]),
        ("def f(self):\n    m = self.m\n    return m.p.world_size", ["reads m.p (line 3)"]),
        ("from tb_gpu_advisor.measures import JAX\nfrom tb_gpu_advisor import units", []),
    ],
)
def test_the_rule_catches_what_it_should(source: str, expected: list[str]) -> None:
    assert check_module_violations("checks.example", source) == expected


def test_no_import_cycles() -> None:
    graph = {module_name(p): internal_imports(p.read_text()) for p in PACKAGE.rglob("*.py")}
    graph = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}
    # a package's __init__ importing its own submodules (the check registry, a format's reader when it
    # reads) is not a cycle
    for m in graph:
        if (PACKAGE / m.replace(".", "/") / "__init__.py").exists():
            graph[m] = {d for d in graph[m] if not d.startswith(m + ".")}
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
    for low in ["analysis", "profile", "steps", "formats.xplane.reader"] + [
        m for m in graph if m.split(".")[0] == "measures"
    ]:
        assert not {d for d in graph[low] if d.startswith("checks") or d in ("plugin", "service", "render", "cli")}


def format_violations(name: str, source: str) -> list[str]:
    """What a module of formats/ imports that the rules above do not allow, and the private
    attributes it reads."""
    parts = name.split(".")
    imports = internal_imports(source)
    if name == "formats":
        allowed = {"formats.base"} | {m for m in imports if m.count(".") == 1 and m.startswith("formats.")}
    elif name == "formats.base":
        allowed = {"profile", "errors", "settings"}  # leaves: the error a read raises, the size limit
    else:
        own = ".".join(parts[:2])  # formats.<name>
        allowed = FORMAT_IMPORTS | {m for m in imports if m == own or m.startswith(own + ".")}
    bad = [f"imports {m}" for m in sorted(imports) if m not in allowed]
    return bad + [f"reads {a}" for a in private_attributes(source)]


FORMAT_MODULES = sorted(p for p in (PACKAGE / "formats").rglob("*.py") if not p.name.endswith("_pb2.py"))


@pytest.mark.parametrize("path", FORMAT_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_formats_read_down_only_and_apart(path):
    assert format_violations(module_name(path), path.read_text()) == []


@pytest.mark.parametrize(
    "name,source,expected",
    [
        (
            "formats.kineto.reader",
            "from tb_gpu_advisor.formats.xplane.reader import INT32_MAX",
            ["imports formats.xplane.reader"],
        ),
        ("formats.kineto.reader", "from tb_gpu_advisor.formats import xplane", ["imports formats.xplane"]),
        ("formats.xplane.scan", "def f():\n    from tb_gpu_advisor.discovery import read_bytes", ["imports discovery"]),
        ("formats.xplane.reader", "from tb_gpu_advisor.analysis import analyse", ["imports analysis"]),
        (
            "formats.kineto.native",
            "from tb_gpu_advisor.formats.kineto import reader as r\nr._loads(b'')",
            ["reads r._loads (line 2)"],
        ),
        (
            "formats.kineto.native",
            "from tb_gpu_advisor.formats.kineto.reader import Columns\nfrom tb_gpu_advisor import classify",
            [],
        ),
        (
            "formats",
            "from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes",
            ["imports formats.xplane.reader"],
        ),
    ],
)
def test_the_format_rules_catch_what_they_should(name, source, expected):
    assert format_violations(name, source) == expected


def test_the_package_asks_the_registry():
    """Outside formats/, nothing imports a format's own modules: a new format is not a change there."""
    bad = {}
    for p in PACKAGE.rglob("*.py"):
        name = module_name(p)
        if name == "formats" or name.startswith("formats."):
            continue
        inner = {m for m in internal_imports(p.read_text()) if m.startswith("formats.") and m != "formats.base"}
        inner -= FORMAT_INTERNALS_ALLOWED.get(name, set())
        if inner:
            bad[name] = sorted(inner)
    assert bad == {}


@pytest.mark.parametrize("name", ["discovery.py", "engine.py", "classify.py"])
def test_discovery_and_engine_read_no_private_attributes(name):
    assert private_attributes((PACKAGE / name).read_text()) == []


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
