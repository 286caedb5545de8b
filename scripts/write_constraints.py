"""`make constraints`: print a constraints file from the packages a virtual environment holds.

    python scripts/write_constraints.py VENV_PYTHON > constraints.txt

The packages that decide test results come first; the rest follow, every one pinned.
"""

from __future__ import annotations

import re
import subprocess
import sys

DECIDING = {
    "dask",
    "distributed",
    "holistictraceanalysis",
    "keras",
    "mcp",  # the MCP SDK: its client drives tests/serve/test_mcp.py
    "numpy",
    "orjson",
    "pandas",
    "protobuf",
    "tensorboard",
    "tensorboard-data-server",
    "tensorboard-plugin-profile",
    "tensorflow-cpu",
    "torch",
    "torch-tb-profiler",
    "werkzeug",
}
HEADER = """\
# What decides a test's result, pinned: `make test` and `make demo` install with `-c constraints.txt`.
# To move forward: `make constraints` (a fresh venv, the extras unpinned, then `pip freeze`), run
# `make test`, and commit this file with what changed in the test results.
"""


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main(argv: list[str]) -> int:
    python = argv[1] if len(argv) > 1 else sys.executable
    frozen = subprocess.run(
        [python, "-m", "pip", "freeze", "--exclude-editable"], check=True, capture_output=True, text=True
    ).stdout
    pins: dict[str, str] = {}
    for line in frozen.splitlines():
        if "==" in line and not line.startswith(("#", "-")):
            name, version = line.split("==", 1)
            if normalise(name) != "tb-gpu-advisor":
                pins[normalise(name)] = version.split("+", 1)[0]  # torch's +cpu: `==2.13.0` matches it
    pins.setdefault("torch-tb-profiler", "0.4.3")  # the PyTorch plugin the tests compare with
    deciding = sorted(n for n in pins if n in DECIDING)
    rest = sorted(n for n in pins if n not in DECIDING)
    out = [HEADER, "# The frameworks and tools the tests capture with or compare against"]
    out += [f"{n}=={pins[n]}" for n in deciding]
    out += ["", "# Everything else the test environment installs"] + [f"{n}=={pins[n]}" for n in rest]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
