"""The package's layering: discover → read → analyse → measure → check → present, one way.

The layers are the package's folders, bottom to top (LAYERS): common, model, formats, graph (the step
graph, when it is there), measures, checks, tables, report, job, present, serve, and the entry points at
the root (cli/, plugin.py). Drawn from the imports, no module imports a layer above its own, and no
two modules import each other, directly or not. The root holds the entry points only. The step graph
reads the model, the leaf helpers and the formats' registry; the measures may read it. Tables, the job
layer and compare read a file through its `Measures` only (as checks do), never the model or a
format's own modules.

Check modules read measurements and their own thresholds and nothing else: they may import only
checks.base, checks.texts, checks.findings, measures and common.units from the package, never touch a
private attribute of what they are given, and never reach through the measures to the profile (`m.p`,
`m.analysis`); table modules import only the measures and the tables' shared parts. Measure modules
import nothing above them (checks, presentation), and the subject modules (timing, kernels, copies, ...) compute from what they are given: they import
neither the classes that cache the measures nor the package that exports them.

Formats (`formats/`) are read down only, and apart:
- a format's package (`formats/<name>/`) imports its own modules, `formats.base` and the leaf
  modules FORMAT_IMPORTS (the Profile it builds, the shared name rules of classify.py, errors,
  settings and array helpers) and nothing else: no other format (what two formats share goes to
  classify.py or formats/base.py), nothing that discovers files or analyses a profile;
- the registry (`formats/__init__.py`) imports the format packages' declarations and formats.base;
- outside formats/, the package asks the registry: it imports `formats`, `formats.base` and
  `formats.discovery` only (FORMAT_INTERNALS_ALLOWED lists where it does not yet);
- no module of formats/ reads a private attribute of another object (`x._name`, x not self).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tb_gpu_advisor"
CHECK_IMPORTS = {"checks.base", "checks.texts", "checks.findings", "measures", "common.units"}
FORMAT_IMPORTS = {"formats.base", "model.profile", "model.classify", "common.errors", "common.units", "common.settings"}
FORMAT_IMPORTS |= {"model.arrays", "model.intervals", "model.extent"}
FORMAT_IMPORTS |= {"common.parallel"}  # the XSpace reader converts lines on threads
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
    """`m.p` / `ctx.m.p` / `m.analysis`: the profile or analysis behind the measures, which a check (or a
    table, the job, compare) must ask the measures about."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("p", "analysis"):
            inner = node.value
            if (isinstance(inner, ast.Name) and inner.id == "m") or (
                isinstance(inner, ast.Attribute) and inner.attr == "m"
            ):
                bad.append(f"{ast.unparse(node)} (line {node.lineno})")
    return bad


def check_module_violations(name: str, source: str) -> list[str]:
    # a prefix's checks may be a package of aspects (checks/capture/): its modules import each other
    own = ".".join(name.split(".")[:2])
    allowed = CHECK_IMPORTS - {name} | {m for m in internal_imports(source) if m.startswith(own + ".")}
    bad = [f"imports {m}" for m in sorted(internal_imports(source)) if m not in allowed]
    return bad + [f"reads {a}" for a in private_attributes(source) + profile_reads(source)]


CHECK_MODULES = sorted(p for p in (PACKAGE / "checks").rglob("*.py") if p != PACKAGE / "checks" / "__init__.py")
TABLE_IMPORTS = {"measures", "common.units"}


def table_module_violations(name: str, source: str) -> list[str]:
    """A table module reads the measures (and the tables' shared parts) only: what a table shows that a
    check also reads is worked out once, in measures/."""
    allowed = TABLE_IMPORTS | {"tables"}
    bad = [f"imports {m}" for m in sorted(internal_imports(source)) if not (m in allowed or m.startswith("tables."))]
    return bad + [f"reads {a}" for a in private_attributes(source) + profile_reads(source)]


@pytest.mark.parametrize("path", sorted((PACKAGE / "tables").glob("*.py")), ids=lambda p: p.name)
def test_table_module_reads_only_measures(path: Path) -> None:
    assert table_module_violations(module_name(path), path.read_text()) == []


@pytest.mark.parametrize(
    "source,expected",
    [
        ("from tb_gpu_advisor.model.analysis import Analysis", ["imports model.analysis"]),
        ("from tb_gpu_advisor.checks.texts import tf_data_present", ["imports checks.texts"]),
        ("def f(m):\n    return m.p.names", ["reads m.p (line 2)"]),
        ("def f(m):\n    return m.analysis.gpus", ["reads m.analysis (line 2)"]),
        ("from tb_gpu_advisor.measures import Measures\nfrom tb_gpu_advisor.tables.table import Table", []),
    ],
)
def test_the_table_rule_catches_what_it_should(source: str, expected: list[str]) -> None:
    assert table_module_violations("tables.example", source) == expected


@pytest.mark.parametrize("path", CHECK_MODULES, ids=lambda p: str(p.relative_to(PACKAGE / "checks")))
def test_check_module_reads_only_measurements(path: Path) -> None:
    assert check_module_violations(module_name(path), path.read_text()) == []


MEASURE_MODULES = sorted((PACKAGE / "measures").glob("*.py"))
# what a measure must never reach: the checks and the presentation
ABOVE_MEASURES = ("checks", "tables", "report", "job", "present", "serve", "plugin", "cli")
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
        ("measures.gpu", "from tb_gpu_advisor.present import render", ["imports present.render"]),
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
        ("from tb_gpu_advisor.model.profile import Kind", ["imports model.profile"]),
        (
            "def f():\n    from tb_gpu_advisor.formats.xplane.reader import read_profile",
            ["imports formats.xplane.reader"],
        ),
        ("import tb_gpu_advisor.model.analysis", ["imports model.analysis"]),
        ("def f(ctx):\n    return ctx.m._a.profile", ["reads ctx.m._a (line 2)"]),
        ("def f(ctx):\n    return ctx.m.p.ops", ["reads ctx.m.p (line 2)"]),
        ("def f(self):\n    m = self.m\n    return m.p.world_size", ["reads m.p (line 3)"]),
        ("from tb_gpu_advisor.measures import JAX\nfrom tb_gpu_advisor.common import units", []),
    ],
)
def test_the_rule_catches_what_it_should(source: str, expected: list[str]) -> None:
    assert check_module_violations("checks.example", source) == expected


def test_a_check_package_reads_its_own_aspects_only() -> None:
    """checks/capture/ is one prefix in several modules: they import each other, no other check module."""
    assert check_module_violations("checks.capture", "from tb_gpu_advisor.checks.capture import gpu, steps") == []
    assert check_module_violations("checks.capture.gpu", "from tb_gpu_advisor.checks.kernels import x") == [
        "imports checks.kernels"
    ]


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
    for low in ["model.analysis", "model.profile", "model.steps", "formats.xplane.reader"] + [
        m for m in graph if m.split(".")[0] == "measures"
    ]:
        assert not {d for d in graph[low] if d.split(".")[0] in ("checks", "present", "serve", "plugin", "cli")}


def format_violations(name: str, source: str) -> list[str]:
    """What a module of formats/ imports that the rules above do not allow, and the private
    attributes it reads."""
    parts = name.split(".")
    imports = internal_imports(source)
    if name == "formats":
        allowed = {"formats.base"} | {m for m in imports if m.count(".") == 1 and m.startswith("formats.")}
    elif name == "formats.base":
        allowed = {
            "model.profile",
            "common.errors",
            "common.settings",
        }  # leaves: the error a read raises, the size limit
    elif name == "formats.discovery":  # asks the registry, as the package does
        allowed = {"formats", "formats.base", "common.errors", "common.settings"}
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
        (
            "formats.xplane.scan",
            "def f():\n    from tb_gpu_advisor.formats.discovery import read_bytes",
            ["imports formats.discovery"],
        ),
        ("formats.xplane.reader", "from tb_gpu_advisor.model.analysis import analyse", ["imports model.analysis"]),
        (
            "formats.kineto.native",
            "from tb_gpu_advisor.formats.kineto import reader as r\nr._loads(b'')",
            ["reads r._loads (line 2)"],
        ),
        (
            "formats.kineto.native",
            "from tb_gpu_advisor.formats.kineto.reader import Columns\nfrom tb_gpu_advisor.model import classify",
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
        inner = {m for m in internal_imports(p.read_text()) if m.startswith("formats.")}
        inner -= {"formats.base", "formats.discovery"}
        inner -= FORMAT_INTERNALS_ALLOWED.get(name, set())
        if inner:
            bad[name] = sorted(inner)
    assert bad == {}


@pytest.mark.parametrize("name", ["formats/discovery.py", "report/engine.py", "model/classify.py"])
def test_discovery_and_engine_read_no_private_attributes(name):
    assert private_attributes((PACKAGE / name).read_text()) == []


def test_the_job_layer_does_not_reach_the_presentation():
    """job/ (digests, job analysis, job diff, ranks apart) is called by the CLI and the plugin, never
    the other way: nothing it imports, directly or not, is plugin, service, cli or render."""
    graph = {module_name(p): internal_imports(p.read_text()) for p in PACKAGE.rglob("*.py")}
    job = sorted(m for m in graph if m == "job" or m.startswith("job."))
    assert {"job", "job.analysis", "job.diff", "job.ranks"} <= set(job)
    for start in job:
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m in seen or m not in graph:
                continue
            seen.add(m)
            todo.extend(graph[m])
        assert not seen & {"plugin", "serve.service", "cli", "present.render"}, start


# -- the layers, drawn from the imports ------------------------------------------------------------

# bottom to top: a module imports its own layer and those below, never one above. A new folder takes
# its place here (the test fails on a folder it does not know).
LAYERS = (
    "common",
    "model",
    "formats",
    "graph",
    "measures",
    "checks",
    "tables",
    "report",
    "job",
    "present",
    "serve",
    "entry points",
)
ENTRY_POINTS = {"cli", "plugin", "__main__"}  # the package root's modules beside __init__ (the version), and cli/
ROOT_FILES = {"__init__.py", "__main__.py", "cli.py", "plugin.py", "schema.json"}
# the step graph reads the profile model, the leaf helpers and the formats' registry, nothing above
GRAPH_IMPORTS = ("common", "model", "graph")
GRAPH_FORMATS = {"formats", "formats.base"}


def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports (nested imports included)."""
    graph = {module_name(p): internal_imports(p.read_text()) for p in PACKAGE.rglob("*.py")}
    return {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}


def layer_of(module: str) -> int:
    """A module's layer: its folder's, or the entry points' for a module of the root (the root's
    __init__, the version, is below everything)."""
    if module == "":
        return -1
    top = module.split(".")[0]
    return LAYERS.index("entry points" if top in ENTRY_POINTS else top)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """The imports that run from a layer up to a higher one."""
    return sorted(
        f"{m} ({LAYERS[layer_of(m)]}) imports {d} ({LAYERS[layer_of(d)]})"
        for m, deps in graph.items()
        for d in deps
        if layer_of(d) > layer_of(m)
    )


def test_every_folder_is_a_layer():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    placed = set(LAYERS) | ENTRY_POINTS  # cli/: the command, a module per command
    assert folders <= placed, f"place {sorted(folders - placed)} in LAYERS"
    assert {
        "common",
        "model",
        "formats",
        "measures",
        "checks",
        "tables",
        "report",
        "job",
        "present",
        "serve",
    } <= folders


def test_no_import_runs_back_up():
    assert upward_imports(import_graph()) == []


def test_the_root_holds_the_entry_points_only():
    files = sorted(p.name for p in PACKAGE.iterdir() if p.is_file() and not p.name.endswith((".so", ".pyd")))
    assert set(files) <= ROOT_FILES and len(files) <= 8, files
    assert {module_name(p) for p in PACKAGE.glob("*.py")} - {""} <= ENTRY_POINTS


def test_a_file_goes_down_to_its_report():
    """From `analyse_file` (report/engine.py) every module the report is made with lies in the report's
    layer or below: the walk never climbs to the job, the presentation or the server."""
    graph = import_graph()
    seen, todo = set(), ["report.engine"]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph[m])
    assert {m for m in seen if layer_of(m) > LAYERS.index("report")} == set()
    assert "measures.rank" in seen and not any(m.startswith("job") for m in seen)


@pytest.mark.parametrize(
    "graph,expected",
    [
        ({"report.engine": {"job.digest"}, "job.digest": set()}, ["report.engine (report) imports job.digest (job)"]),
        (
            {"measures.core": {"checks.base"}, "checks.base": set()},
            ["measures.core (measures) imports checks.base (checks)"],
        ),
        ({"model.steps": {"graph.path"}, "graph.path": set()}, ["model.steps (model) imports graph.path (graph)"]),
        ({"measures.core": {"graph.path"}, "graph.path": {"model.steps"}, "model.steps": set()}, []),
        ({"cli": {"serve.service"}, "serve.service": {"report.engine"}, "report.engine": set()}, []),
    ],
)
def test_the_layer_rule_catches_what_it_should(graph, expected):
    assert upward_imports(graph) == expected


def graph_module_violations(source: str) -> list[str]:
    """What a module of the step graph imports beyond the model, the leaf helpers and the registry."""
    imports = sorted(internal_imports(source))
    ok = [m for m in imports if m.split(".")[0] in GRAPH_IMPORTS or m in GRAPH_FORMATS]
    return [f"imports {m}" for m in imports if m not in ok]


def test_the_step_graph_reads_the_model_only():
    """graph/ (issue 40), where it is: beneath the measures, above the model and the formats' registry."""
    bad = {
        module_name(p): graph_module_violations(p.read_text())
        for p in (PACKAGE / "graph").rglob("*.py")
        if graph_module_violations(p.read_text())
    }
    assert bad == {}


@pytest.mark.parametrize(
    "source,expected",
    [
        ("from tb_gpu_advisor.model.steps import Steps\nfrom tb_gpu_advisor.formats.base import Format", []),
        ("from tb_gpu_advisor.measures import Measures", ["imports measures"]),
        ("from tb_gpu_advisor.formats.kineto.reader import read", ["imports formats.kineto.reader"]),
    ],
)
def test_the_graph_rule_catches_what_it_should(source, expected):
    assert graph_module_violations(source) == expected


# -- tables, job and compare read Measures ---------------------------------------------------------

MEASURES_READERS = sorted(
    [
        *(PACKAGE / "job").glob("*.py"),
        *(PACKAGE / "report" / name for name in ("compare.py", "noise.py", "step.py", "device_time.py")),
        *(PACKAGE / "tables").glob("*.py"),
    ]
)
FORMATS_READ = {"formats", "formats.base", "formats.discovery"}  # the registry, and a file's name


def reader_violations(source: str) -> list[str]:
    """A reader of measures imports nothing of the profile model or a format's own modules, and reads
    neither the profile nor the analysis behind the measures (`m.p`, `m.analysis`)."""
    imports = sorted(internal_imports(source))
    bad = [
        f"imports {m}" for m in imports if m.startswith("model") or (m.startswith("formats") and m not in FORMATS_READ)
    ]
    return bad + [f"reads {a}" for a in private_attributes(source) + profile_reads(source)]


@pytest.mark.parametrize("path", MEASURES_READERS, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_tables_job_and_compare_read_measures(path: Path) -> None:
    assert reader_violations(path.read_text()) == []


@pytest.mark.parametrize(
    "source,expected",
    [
        ("from tb_gpu_advisor.model.analysis import Analysis", ["imports model.analysis"]),
        ("from tb_gpu_advisor.model import intervals as iv", ["imports model.intervals"]),
        ("def f(m):\n    return m.analysis.gpus", ["reads m.analysis (line 2)"]),
        ("from tb_gpu_advisor.measures import Measures\nfrom tb_gpu_advisor.formats.discovery import HostFile", []),
    ],
)
def test_the_reader_rule_catches_what_it_should(source, expected):
    assert reader_violations(source) == expected
