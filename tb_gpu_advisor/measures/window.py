"""Where a finding points: a time range on a GPU stream or a host thread, and the names of the capture."""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor.model.profile import Profile


@dataclasses.dataclass(frozen=True, slots=True)
class Window:
    """A time range on one GPU stream or host thread, and the events it is about. Frozen, as measures
    are cached: a check relabels one with `dataclasses.replace`."""

    start_ps: int
    end_ps: int
    label: str
    events: list[str]
    device_id: int | None = None
    stream_id: int | None = None
    stream: str | None = None
    thread: str | None = None


def stream_label(p: Profile, index: int | None) -> tuple[int | None, str]:
    """(stream id, stream name) of a stream index, or (None, 'all streams')."""
    if index is None or not 0 <= index < len(p.streams):
        return None, "all streams"
    s = p.streams[index]
    return s.stream_id, s.name


def gpu_window(
    p: Profile,
    device_id: int,
    start: int,
    end: int,
    label: str,
    events: list[str] | None = None,
    stream: int | None = None,
) -> Window:
    """A window on one of a GPU's streams (`stream`: its index in the profile), or on all of them."""
    sid, sname = stream_label(p, stream)
    return Window(int(start), int(end), label, events or [], device_id=device_id, stream_id=sid, stream=sname)


def thread_name(p: Profile, index: int) -> str:
    return p.threads[index].name if 0 <= index < len(p.threads) else ""


def label_text(p: Profile, label: int) -> str:
    """The text of a host work label: an op type (labels below -1, as -2 - op) or a name id."""
    return p.op_type(-2 - label) if label < -1 else p.names[label]
