"""The capture scripts' loop over their scenarios: each in turn, its time printed (and what `after`
adds), one that fails reported with its traceback while the others still run."""

from __future__ import annotations

import time
import traceback
from typing import Callable


def run_each(names: list[str], run: Callable[[str], None], after: Callable[[str], str] | None = None) -> int:
    """1 when any scenario failed, else 0."""
    failed = 0
    for name in names:
        t0 = time.perf_counter()
        try:
            run(name)
            print(f"{name}: {time.perf_counter() - t0:.1f} s{after(name) if after else ''}", flush=True)
        except Exception:
            failed += 1
            print(f"{name}: FAILED", flush=True)
            traceback.print_exc()
    return 1 if failed else 0
