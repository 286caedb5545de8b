"""Public real traces gathered from the wild (issue 50), kept outside the repository: each in a folder of
its own under `$TB_GPU_ADVISOR_WILD`, else `<repo>/../shared/realdata/wild`. A test that reads one skips,
saying where it looked, when the folder is not there (CI today)."""

from __future__ import annotations

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def wild(name: str) -> str:
    """The folder of the wild trace `name`, or skip the test."""
    base = os.environ.get("TB_GPU_ADVISOR_WILD") or os.path.join(ROOT, "..", "shared", "realdata", "wild")
    path = os.path.join(base, name)
    if not os.path.isdir(path):
        pytest.skip(f"the public trace {name} is not at {path} (set TB_GPU_ADVISOR_WILD to the corpus folder)")
    return path
