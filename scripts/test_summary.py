"""The one line `make test` ends with: every suite's counts, read from the logs the suites wrote.

python scripts/test_summary.py LINT_LOG PYTEST_LOG UNIT_LOG BROWSER_LOG
"""

from __future__ import annotations

import re
import sys


def pytest_counts(text: str) -> str:
    last = [line for line in text.splitlines() if re.search(r"\b(passed|failed|error)\b.* in [\d.]+s", line)]
    if not last:
        return "pytest: no result"
    counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", last[-1]))
    return "pytest " + ", ".join(f"{n} {k}" for k, n in counts.items())


def node_counts(name: str, text: str) -> str:
    get = {k: int(v) for k, v in re.findall(r"^# (pass|fail|skipped) (\d+)", text, re.M)}
    return f"{name} {get.get('pass', 0)} passed" + (f", {get['fail']} failed" if get.get("fail") else "")


def main(argv: list[str]) -> int:
    lint, pytest_log, unit, browser = (open(p, encoding="utf-8", errors="replace").read() for p in argv[1:5])
    lint_ok = "Success: no issues found" in lint and "All checks passed!" in lint
    parts = [
        "lint clean (ruff, ruff format, mypy)" if lint_ok else "lint: see artifacts/test-lint.log",
        pytest_counts(pytest_log),
        node_counts("panel unit tests", unit),
        node_counts("browser tests", browser),
    ]
    print("make test: " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
