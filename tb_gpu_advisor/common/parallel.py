"""Threads for the work that splits cleanly: one GPU's analysis, one check. NumPy releases the GIL
in its array loops, so two cores take about a third off a large profile (measured in
benchmarks/read_benchmark.py). Results come back in input order, so output never depends on timing.

TB_GPU_ADVISOR_THREADS sets the number of threads (1: everything on the calling thread);
TB_GPU_ADVISOR_PROCESSES the number of files analysed at once in worker processes (job/ranks.py; 0: one
after the other in the calling process).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Generic, Iterable, TypeVar, overload

from tb_gpu_advisor.common.settings import settings

T = TypeVar("T")
R = TypeVar("R")


def threads() -> int:
    n = settings().threads
    return max(1, n) if n else min(4, os.cpu_count() or 1)


def processes_setting() -> int | None:
    """TB_GPU_ADVISOR_PROCESSES: None when unset or not a number (ranks.processes decides), else 0 or more."""
    n = settings().processes
    return None if n is None else max(0, n)


def map_ordered(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """fn over items on up to `threads()` threads, results in input order; the first exception
    raised is re-raised."""
    items = list(items)
    n = min(threads(), len(items))
    if n <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(n, thread_name_prefix="tb-gpu-advisor") as pool:
        return list(pool.map(fn, items))


class cached(Generic[T]):
    """functools.cached_property without Python 3.11's lock, which is shared by every instance of
    a class and so serialises one GPU's measurement behind another's. Two threads may compute the
    same value; both results are equal and one is kept."""

    def __init__(self, fn: Callable[[Any], T]):
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> cached[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = self.fn(obj)
        obj.__dict__[self.name] = value
        return value


class cached_once(cached[T]):
    """`cached` computed by one thread only, the others waiting for it: for a value that costs more
    than the wait (the step graph and its what-ifs, which several checks ask for at once)."""

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        lock = obj.__dict__.setdefault(f"_{self.name}_lock", threading.Lock())  # setdefault is atomic
        with lock:
            if self.name in obj.__dict__:
                return obj.__dict__[self.name]
            value = self.fn(obj)
            obj.__dict__[self.name] = value
            return value
