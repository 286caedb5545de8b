"""The real captures the step-graph tests read (tests/graph/, benchmarks/whatif_pairs.py), each read,
analysed, its graph built and its what-ifs made once per test process."""

from __future__ import annotations

import glob
import json
import os
from functools import lru_cache
from typing import NamedTuple

from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.graph.build import StepGraph, build
from tb_gpu_advisor.graph.whatif import WhatIf
from tb_gpu_advisor.model.analysis import Analysis, analyse
from tb_gpu_advisor.model.profile import Profile
from tb_gpu_advisor.report.engine import analyse_file, read_path

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS_DIR = os.path.join(TESTS, "data", "gpu_pairs")  # H200 pairs, each step also timed unprofiled
GPU_DIR = os.path.join(TESTS, "data", "gpu")  # H100 captures
V100_DIR = os.path.join(TESTS, "data", "pytorch")  # ../shared/realdata's V100 traces
VALIDATION_DIR = os.path.join(TESTS, "data", "gpu_validation")  # H200 pairs kept apart
TIMINGS = json.load(open(os.path.join(PAIRS_DIR, "timings.json")))


class Captured(NamedTuple):
    profile: Profile
    analysis: Analysis
    graph: StepGraph
    what_if: WhatIf


def capture_files(run_dir: str) -> list[str]:
    """A run folder's profiles: PyTorch traces at its top, XSpace files under plugins/profile."""
    return sorted(
        glob.glob(os.path.join(run_dir, "*.pt.trace.json*"))
        + glob.glob(os.path.join(run_dir, "plugins", "profile", "*", "*.xplane.pb"))
    )


@lru_cache(maxsize=None)
def loaded(path: str) -> Captured:
    p = read_path(path)
    a = analyse(p)
    g = build(p, a.host_steps)
    return Captured(p, a, g, WhatIf(p, g, p.framework))


def run_path(folder: str, run: str) -> str:
    """tests/data/<folder>/<run>: a run of the real captures."""
    return os.path.join(TESTS, "data", folder, run)


@lru_cache(maxsize=None)
def analysed(folder: str, run: str):
    """The one profile of tests/data/<folder>/<run> analysed as the engine does (`analyse_file`), once per
    test process."""
    (one,) = discover(run_path(folder, run))[0]
    return analyse_file(one)
