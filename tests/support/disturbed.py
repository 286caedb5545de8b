"""Real captures made on a shared machine: a test about the program captures again while other work on
the machine disturbed what it measures, and is skipped (not failed) when every try was disturbed."""

from __future__ import annotations

from typing import Callable, TypeVar

import pytest

T = TypeVar("T")


def undisturbed(capture: Callable[[], T | None], tries: int, disturbed: str) -> T:
    """The first result of `capture()` that is not None (None: the machine disturbed that capture), in
    at most `tries` calls; else the test is skipped, saying what disturbed every one."""
    for _ in range(tries):
        result = capture()
        if result is not None:
            return result
    pytest.skip(f"{disturbed} ({tries} tries)")
