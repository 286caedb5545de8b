"""Units and shares: the engine keeps integer picoseconds; these turn them into what people read."""

from __future__ import annotations

PS_PER_MS = 1e9


def ms(ps: float) -> float:
    return float(ps) / PS_PER_MS


def pct(part: float, whole: float) -> float | None:
    """part as a percentage of whole; None when whole is not positive (never a division by zero)."""
    return 100.0 * part / whole if whole > 0 else None


def fmt_pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f}%"
