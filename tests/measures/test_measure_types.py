"""A measure says what it returns: every measure of `Measures` and `GpuMeasures` is annotated, returns
no untyped dict (records are frozen, slotted dataclasses; a dict only maps data, such as op ids or stage
names, to numbers), and the dataclasses it returns are frozen, so a check cannot change a cached
measure under the next check."""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest

from tb_gpu_advisor.common.parallel import cached
from tb_gpu_advisor.measures import GpuMeasures, Measures

SCALARS = (int, float, str, bool, np.ndarray, type(None))


def measures_of(cls: type) -> list[tuple[str, typing.Any]]:
    """(name, function) of each public measure of a class and its bases."""
    out = {}
    for klass in reversed(cls.__mro__[:-1]):
        for name, attr in vars(klass).items():
            if name.startswith("_"):
                continue
            fn = attr.fn if isinstance(attr, cached) else attr.fget if isinstance(attr, property) else attr
            if callable(fn):
                out[name] = fn
    return sorted(out.items())


MEASURES = [(c.__name__, n, f) for c in (Measures, GpuMeasures) for n, f in measures_of(c)]


def ours(t: typing.Any) -> bool:
    """A measure's own type (not the profile's Device or Steps, which the measures hand on)."""
    return t.__module__.startswith(("tb_gpu_advisor.measures", __name__))


def problems(hint: typing.Any, where: str) -> list[str]:
    """What in a return annotation is not a typed measure."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is typing.Any or hint is dict or hint is list or hint is object:
        return [f"{where}: {hint} says nothing of what it holds"]
    if origin is dict:
        key, value = args
        if key not in (int, str) or value is typing.Any or typing.get_origin(value) is dict or value is dict:
            return [f"{where}: {hint} is a record, not a mapping of data to values"]
        return problems(value, where)
    if origin in (list, tuple, typing.Union, type(int | None)):
        return [p for a in args if a is not Ellipsis for p in problems(a, where)]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and ours(hint):
        if not vars(hint)["__dataclass_params__"].frozen:
            return [f"{where}: {hint.__name__} is not frozen"]
        fields = typing.get_type_hints(hint)
        return [p for name, t in fields.items() for p in problems(t, f"{where}.{name}")]
    return []


@pytest.mark.parametrize("owner,name,fn", MEASURES, ids=[f"{o}.{n}" for o, n, _ in MEASURES])
def test_a_measure_returns_a_typed_value(owner: str, name: str, fn: typing.Callable[..., typing.Any]) -> None:
    hints = typing.get_type_hints(fn)
    assert "return" in hints, f"{owner}.{name} has no return annotation"
    assert problems(hints["return"], f"{owner}.{name}") == []


def test_the_rule_catches_what_it_should() -> None:
    @dataclasses.dataclass
    class Loose:
        x: int

    @dataclasses.dataclass(frozen=True)
    class Holds:
        rows: list[dict]

    assert problems(dict[str, typing.Any], "m") == [
        "m: dict[str, typing.Any] is a record, not a mapping of data to values"
    ]
    assert problems(list[dict], "m") == ["m: <class 'dict'> says nothing of what it holds"]
    assert problems(Loose, "m") == ["m: Loose is not frozen"]
    assert problems(Holds, "m") == ["m.rows: <class 'dict'> says nothing of what it holds"]
    assert problems(dict[int, tuple[float, bool]], "m") == []
    assert problems(tuple[int, ...] | None, "m") == []


def test_every_returned_dataclass_has_slots() -> None:
    """Slots: a misspelt field is an error, not a new attribute."""
    seen = set()

    def walk(hint: typing.Any) -> None:
        if dataclasses.is_dataclass(hint) and ours(hint) and hint not in seen:
            seen.add(hint)
            assert "__slots__" in vars(hint), hint
            for t in typing.get_type_hints(hint).values():
                walk(t)
        for a in typing.get_args(hint):
            walk(a)

    for _, _, fn in MEASURES:
        walk(typing.get_type_hints(fn).get("return"))
    assert len(seen) >= 15
