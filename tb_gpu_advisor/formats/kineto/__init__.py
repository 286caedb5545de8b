"""PyTorch profiler traces (Kineto JSON, `<worker>.<span>.pt.trace.json[.gz]`), written by
`torch.profiler.tensorboard_trace_handler(logdir/run)`: the folder is the run. The reader is imported
when a file is read: the registry is imported by the command before NumPy is."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tb_gpu_advisor.model.profile import Profile

from tb_gpu_advisor.formats.base import Data, Format, Progress

SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")
GZIP_MAGIC = b"\x1f\x8b"
_FIRST = re.compile(rb"[ \t\r\n]*(.)", re.S)


def run(parts: list[str]) -> str | None:
    return "/".join(parts)


def detect(head: bytes) -> bool:
    """gzip, or JSON text that starts as an object does."""
    if head[:2] == GZIP_MAGIC:
        return True
    m = _FIRST.match(head)
    return m is not None and m.group(1) == b"{"


def read(data: Data, path: str, host: str, progress: Progress | None, max_bytes: int | None, started: Any) -> Profile:
    from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes

    return read_pytorch_trace_bytes(data, path, host, progress, limit=max_bytes)


def host_name(file_name: str) -> str:
    """`worker0.1623143089861.pt.trace.json.gz` -> `worker0.1623143089861` (a worker and its span)."""
    return FORMAT.host_name(file_name)


FORMAT = Format(
    name="pytorch",
    title="PyTorch trace",
    suffixes=SUFFIXES,
    run=run,
    detect=detect,
    read=read,
    reads_apart=True,
    modules=("tb_gpu_advisor.formats.kineto.native",),
)
