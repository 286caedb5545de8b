"""XSpace (`<host>.xplane.pb`), written by TensorFlow's and JAX's profilers under
`<run>/plugins/profile/<session>/`. The reader is imported when a file is read: the registry is
imported by the command before NumPy is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from tb_gpu_advisor.model.profile import Profile

from tb_gpu_advisor.formats.base import Data, Format, Prefetched, Progress, head

SUFFIX = ".xplane.pb"
PROFILE_DIR = ("plugins", "profile")
# Files of very old captures that current tools no longer read.
LEGACY_SUFFIXES = (
    ".trace.json.gz",
    ".overview_page.pb",
    ".input_pipeline.pb",
    ".tensorflow_stats.pb",
    ".kernel_stats.pb",
    ".memory_profile.json.gz",
)
# Profilers write an XSpace's fields in order: it starts with a plane (field 1, length-delimited),
# and the plane with its id (1), name (2) or lines (3). (A space without planes is no profile.)
PLANE = 0x0A
PLANE_TAGS = frozenset({0x08, 0x12, 0x1A})


def run(parts: list[str]) -> str | None:
    """`<tb_run>/plugins/profile/<session>` is run `<tb_run>/<session>` (`<session>` at the root)."""
    if len(parts) < 3 or tuple(parts[-3:-1]) != PROFILE_DIR:
        return None
    tb_run = "/".join(parts[:-3])
    return f"{tb_run}/{parts[-1]}" if tb_run else parts[-1]


def detect(head: bytes) -> bool:
    """A plane's tag, its length (a varint) and the tag of the plane's first field: JSON text that
    starts with a newline ("\\n{") is not taken for a plane."""
    if len(head) < 3 or head[0] != PLANE:
        return False
    at = 1
    while at < min(len(head), 11) and head[at] & 0x80:
        at += 1
    return at + 1 < len(head) and at < 11 and head[at + 1] in PLANE_TAGS


def read(data: Data, path: str, host: str, progress: Progress | None, max_bytes: int | None, started: Any) -> Profile:
    from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes

    return read_profile_bytes(data, path, host, progress, started, max_bytes)


def prefetch(path: str, read_bytes: Callable[[], Data]) -> Prefetched | None:
    """The file, and the native scan started on it on a worker thread (scan.py: the file read into
    memory, then scanned); None without the native scanner."""
    from tb_gpu_advisor.formats.xplane.scan import Admission, Scan, native_wanted

    if not native_wanted():
        return None
    data = read_bytes()
    if not data or not detect(head(data, 64)):  # the reader says what it is (reader._refuse_from_head)
        return None
    return Prefetched(path, data, Scan(data, background=True, admit=Admission(path, len(data), None)))


FORMAT = Format(
    name="xplane",
    title="XSpace",
    suffixes=(SUFFIX,),
    run=run,
    detect=detect,
    read=read,
    prefetch=prefetch,
    folder_marks_profile=True,
    legacy_suffixes=LEGACY_SUFFIXES,
    modules=("tb_gpu_advisor.formats.xplane.reader",),
)
