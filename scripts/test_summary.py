"""The lines `make test` ends with: each suite's result, then one total, read from the logs and exit
statuses the suites left in the artifacts folder. Exits non-zero when any suite failed or left no result.

python scripts/test_summary.py ARTIFACTS_DIR
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SUITES = ("lint", "test-python", "test-frontend")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def pytest_counts(text: str) -> dict[str, int]:
    last = [line for line in text.splitlines() if re.search(r"\b(passed|failed|errors?|skipped)\b.* in [\d.]+s", line)]
    if not last:
        return {}
    found = re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", last[-1])
    return {("error" if k.startswith("error") else k): int(n) for n, k in found}


def node_counts(text: str) -> dict[str, int]:
    got = {k: int(v) for k, v in re.findall(r"^# (pass|fail|skipped) (\d+)", text, re.M)}
    if not got:
        return {}
    return {"passed": got.get("pass", 0), "failed": got.get("fail", 0), "skipped": got.get("skipped", 0)}


def describe(name: str, counts: dict[str, int]) -> str:
    if not counts:
        return f"{name}: no result"
    return f"{name} " + ", ".join(f"{n} {k}" for k, n in counts.items() if n or k == "passed")


def main(argv: list[str]) -> int:
    logs = Path(argv[1] if len(argv) > 1 else "artifacts")
    status = {s: read(logs / f"{s}.status").strip() for s in SUITES}
    lint_ok = status["lint"] == "0"
    suites = {
        "pytest": pytest_counts(read(logs / "test-python.log")),
        "panel unit tests": node_counts(read(logs / "test-unit.log")),
        "browser tests": node_counts(read(logs / "test-browser.log")),
    }
    failed_suites = [s for s, rc in status.items() if rc != "0"]
    parts = [
        "lint clean (ruff, ruff format, mypy, tsc, prettier)" if lint_ok else "lint FAILED (artifacts/test-lint.log)"
    ]
    parts += [describe(name, c) for name, c in suites.items()]
    if failed_suites:
        parts.append("failed suites: " + ", ".join(failed_suites))
    print("make test: " + "; ".join(parts))
    passed = sum(c.get("passed", 0) for c in suites.values())
    failed = sum(c.get("failed", 0) + c.get("error", 0) for c in suites.values()) + (0 if lint_ok else 1)
    skipped = sum(c.get("skipped", 0) for c in suites.values())
    missing = [name for name, c in suites.items() if not c]
    failed += len(missing)
    print(f"total: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed or failed_suites else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
