"""A table declares itself once (issue 39: a new table was six hand edits: table.py, tables/__init__.py,
cli/table.py, schema.json twice and the panel's list). Its module's `@table` is all there is: the command's
choices, the `/checks` route's tables (the panel's tabs), the schema's names, rows and answer fields
come from the registry, and importing tables/ imports every module in it."""

from __future__ import annotations

import importlib.util
import json
import os
import pkgutil
from pathlib import Path

import pytest
from support.sim import Sim

from tb_gpu_advisor import cli, tables
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.tables.table import INTEGER, REGISTRY, Table, column, table

ROOT = Path(__file__).resolve().parent.parent.parent


def write_schema():
    spec = importlib.util.spec_from_file_location("write_schema", ROOT / "scripts" / "write_schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_module_of_tables_declares_one_table():
    modules = sorted(m.name for m in pkgutil.iter_modules(tables.__path__) if m.name != "table")
    declared = sorted(t.build.__module__.rsplit(".", 1)[1] for t in REGISTRY)
    assert declared == modules and tables.TABLES == ("kernels", "ops", "memory", "input", "idle")


def test_the_command_and_the_route_list_the_registry(tmp_path):
    assert list(cli.TableNames()) == list(tables.TABLES) == list(tables.names()) and "ops" in cli.TableNames()
    from support.plugin_client import client, get

    c, _ = client(tmp_path)
    _, body = get(c, "/checks")
    assert body["tables"] == tables.catalogue()
    assert [t["id"] for t in body["tables"]] == list(tables.TABLES)


def test_the_panel_keeps_no_list_of_tables():
    src = ROOT / "frontend" / "src"
    listed = [
        p.name for p in src.rglob("*.ts") if "label: 'Operators'" in p.read_text() or "'Idle time'" in p.read_text()
    ]
    assert listed == []


@pytest.fixture
def example_table():
    """A table declared here as a module would declare it, and taken out of the registry afterwards."""

    def rows(m: Measures, group: str | None = None) -> Table:
        out = [{"device": g.id, "kernels": int(len(g.kernels)), "trace": None} for g in m.gpus]
        columns = [c.json() for c in COLUMNS]
        return Table("example", group, columns, out, "kernels", (), [], {"example_total": len(out)})

    COLUMNS = [column("device", "GPU", cell=INTEGER), column("kernels", "Kernels", cell=INTEGER)]
    table(
        name="example",
        label="Example",
        noun="GPUs",
        order=99,
        row="one GPU",
        row_type="ExampleRow",
        columns=COLUMNS,
        extra={"example_total": {"type": "integer"}},
    )(rows)
    try:
        yield
    finally:
        REGISTRY[:] = [t for t in REGISTRY if t.name != "example"]


def test_a_new_table_is_its_declaration(example_table):
    """Declared, a table is built and answered, listed by the command and the route, and the schema
    generated from the registry holds its name, rows and answer field, against which its answer is valid."""
    import jsonschema

    s = Sim(gpus=2)
    s.steps(2, 1000.0, lambda i, t: (s.kernel(t + 10, 100), s.kernel(t + 10, 50, gpu=1), s.kernel(t + 90, 50, gpu=1)))
    doc = tables.answer(tables.build(Measures(s.analysis()), "example"))
    assert [r["kernels"] for r in doc["rows"]] == [4, 2] and doc["example_total"] == 2
    assert "example" in cli.TableNames() and tables.catalogue()[-1]["id"] == "example"
    with open(os.path.join(ROOT, "tb_gpu_advisor", "schema.json"), encoding="utf-8") as f:
        schema = write_schema().generated(json.load(f))
    assert "example" in schema["$defs"]["TableName"]["enum"] and "ExampleRow" in schema["$defs"]
    jsonschema.validate(doc, {**schema, "$ref": "#/$defs/TableResponse"}, cls=jsonschema.Draft202012Validator)
