"""Every check of the registry is tested on a profile that triggers it and on one that passes it: the
section tests (test_checks_*.py) record each status a check returns, and this test, which runs after
them, fails when a check was never seen with a problem status (critical, warning or info) and with
`pass`. It also checks that each check lives in the module named after its id's prefix."""

import importlib
import os

import pytest
from conftest import section_tests_complete
from support.sim import SEEN

from tb_gpu_advisor.checks import REGISTRY

FIRES = {"critical", "warning", "info"}


def test_every_check_is_seen_firing_and_passing(request):
    if not section_tests_complete(request.session):
        pytest.skip("only part of the section tests ran")
    missing = []
    for c in REGISTRY:
        seen = SEEN.get(c.id, set())
        if not seen & FIRES:
            missing.append(f"{c.id}: never fired")
        if "pass" not in seen:
            missing.append(f"{c.id}: never passed")
    assert missing == []


def test_checks_live_in_the_module_named_after_their_prefix():
    for c in REGISTRY:
        prefix = c.id.split(".")[0]
        # a module named after the prefix, or a package of its aspects (checks/capture/)
        assert c.source == f"tb_gpu_advisor/checks/{prefix}.py" or c.source.startswith(
            f"tb_gpu_advisor/checks/{prefix}/"
        ), c.id
        assert os.path.exists(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), c.source))
        importlib.import_module(f"tb_gpu_advisor.checks.{prefix}")


def test_each_check_declares_its_place_and_nothing_else_orders_them():
    """Issue 23: the order is declared in @check (`order`, within the check's section); no list of
    ids orders the registry."""
    from pathlib import Path

    from tb_gpu_advisor.checks import REGISTRY, SECTIONS

    keys = [(int(SECTIONS[c.section][0]), c.order) for c in REGISTRY]
    assert keys == sorted(keys) and len(set(keys)) == len(keys) and all(c.order > 0 for c in REGISTRY)
    init = (Path(__file__).resolve().parent.parent.parent / "tb_gpu_advisor" / "checks" / "__init__.py").read_text()
    assert not [c.id for c in REGISTRY if f'"{c.id}"' in init]


def test_a_check_declares_what_the_house_reads_of_it():
    """Issue 39: facts about a check lived outside its @check (CHECK_TABLES, NOISE_MEASURES,
    COLLECTIVE_TIME_CHECKS twice, the engine's case for precision.mixed-off, job/'s for job.straggler).
    Now each is declared and read from the registry, and no module outside checks/ (nor the panel's
    source) names a check by its id."""
    from pathlib import Path

    from tb_gpu_advisor import tables
    from tb_gpu_advisor.checks import catalogue, collective_time_checks, tables_of

    assert {t for t in tables_of().values() if t} <= set(tables.names())
    assert sum(1 for t in tables_of().values() if t) == 24
    assert [c.id for c in REGISTRY if c.noise] == ["input.bound", "kernels.launch-bound"]
    assert collective_time_checks() == ["allreduce.cost"]
    assert {c.id: c.headline for c in REGISTRY if c.headline} == {"precision.mixed-off": "fp16_compute_pct"}
    assert [c.id for c in REGISTRY if c.marks_stragglers] == ["job.straggler"]
    by_id = {c["id"]: c for c in catalogue()}
    assert by_id["allreduce.cost"]["collective_time"] and by_id["input.bound"]["noise"] == "input wait"
    assert by_id["multigpu.batch"]["table"] == "memory" and by_id["job.partial"]["table"] is None
    root = Path(__file__).resolve().parent.parent.parent
    sources = [p for p in (root / "tb_gpu_advisor").rglob("*.py") if "checks" not in p.parts]
    sources += list((root / "frontend" / "src").rglob("*.ts"))
    named = [
        f"{p.relative_to(root)}: {c.id}"
        for p in sources
        for c in REGISTRY
        if f'"{c.id}"' in p.read_text() or f"'{c.id}'" in p.read_text()
    ]
    assert named == []
