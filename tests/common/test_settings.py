"""The environment is read and written in settings.py only (issue 23: settings were read in five places)."""

import ast
from pathlib import Path

from tb_gpu_advisor.common.settings import Settings

PACKAGE = Path(__file__).resolve().parent.parent.parent / "tb_gpu_advisor"


def environ_uses(source: str) -> list[int]:
    """Lines that use `os.environ`, `os.getenv`/`putenv` or import them from os (a WSGI `environ`
    argument is not the process's environment)."""
    lines = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Attribute) and n.attr in ("environ", "getenv", "putenv", "unsetenv"):
            if isinstance(n.value, ast.Name) and n.value.id == "os":
                lines.append(n.lineno)
        elif isinstance(n, ast.ImportFrom) and n.module == "os":
            if {a.name for a in n.names} & {"environ", "getenv", "putenv", "unsetenv"}:
                lines.append(n.lineno)
    return lines


def test_only_settings_touches_the_environment():
    found = {
        str(p.relative_to(PACKAGE)): lines
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.name != "settings.py" and (lines := environ_uses(p.read_text()))
    }
    assert found == {}


def test_the_rule_catches_what_it_should():
    assert environ_uses("import os\nx = os.environ.get('A')") == [2]
    assert environ_uses("from os import getenv\ngetenv('A')") == [1]
    assert environ_uses("import os\nx = os.path.join('a')") == []
    assert environ_uses("def app(environ, start):\n    return environ['PATH_INFO']") == []


def test_settings_from_an_environment():
    s = Settings.from_env({"TB_GPU_ADVISOR_THREADS": "3", "TB_GPU_ADVISOR_MAX_PROFILE_MB": "oops"})
    assert s.threads == 3 and s.max_profile_mb == 2048.0  # an unreadable value is the default
    assert Settings.from_env({"TB_GPU_ADVISOR_PURE_PYTHON": "1"}).pure_python
    assert Settings.from_env({"TB_GPU_ADVISOR_MALLOC": "default"}).tune_malloc is False
