"""Find profile runs and hosts under a logdir, named as the Profile tab names them, and read their
bytes. Read-only.

Which files are profiles, and which run each belongs to, the formats' registry says (`formats/`):
an XSpace capture lives at `<logdir>/<tb_run>/plugins/profile/<session>/<host>.xplane.pb`, run
`<tb_run>/<session>` (just `<session>` at the logdir root); a PyTorch trace
(`torch.profiler.tensorboard_trace_handler(logdir/run)`) at `<logdir>/<run>/<worker>.<span>.pt.trace.json[.gz]`,
as the PyTorch profiler plugin named them: the folder is the run. A file's host is its name without
its format's suffix (for a trace, a worker's profiling span).
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import posixpath
import re
import sys
import threading
import time
from functools import lru_cache
from typing import Any, Iterator

from tb_gpu_advisor import formats
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.common.settings import settings
from tb_gpu_advisor.formats import base
from tb_gpu_advisor.formats.base import Data, LocalFile, Prefetched

log = logging.getLogger(__name__)

XPLANE, PYTORCH_TRACE = formats.XSPACE.name, formats.KINETO.name  # HostFile.kind of each format


def gfile(path: str = "") -> Any:
    """TensorBoard's file-system layer for `path`: TensorFlow's gfile when TensorFlow is already loaded
    and has a file system for the path's scheme (every file system TF knows), otherwise TensorBoard's
    own (local, s3, fsspec), never importing TensorFlow just for this."""
    tf = sys.modules.get("tensorflow")
    if tf is not None and _tensorflow_reads(path.split("://", 1)[0] if "://" in path else ""):
        try:
            return tf.io.gfile
        except AttributeError:
            pass
    from tensorboard.compat.tensorflow_stub.io import gfile as stub

    return stub


@lru_cache(maxsize=64)
def _tensorflow_reads(scheme: str) -> bool:
    """Whether TensorFlow has a file system for `scheme` (fsspec's `memory://`, say, it has not; then
    TensorBoard's own layer reads it, whether or not something imported TensorFlow first)."""
    if not scheme:
        return True
    try:
        sys.modules["tensorflow"].io.gfile.exists(f"{scheme}://")
    except Exception as e:  # noqa: BLE001  (TF raises its own error types; only one of them says "no")
        return type(e).__name__ != "UnimplementedError"
    return True


@dataclasses.dataclass(frozen=True)
class HostFile:
    run: str
    host: str
    path: str
    size: int
    mtime: float | None  # seconds since the epoch, where the file system tells
    kind: str = XPLANE  # the name of its format (formats.by_name): which reader reads it

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class LegacyRun:
    """A session folder holding only files of old captures the advisor cannot read."""

    run: str
    path: str


# Reading and analysing a file takes about this many times its size in memory at its peak (the job
# layer sizes its worker processes by it; a read projects its own cost: formats.base.Budget).
MEMORY_PER_FILE_BYTE = 3.0
READ_TIMEOUT_S = 120.0  # a remote read that takes longer is given up


def max_profile_bytes() -> int:
    return base.max_profile_bytes()


def available_memory() -> int | None:
    """Bytes of memory available to new work (Linux's MemAvailable), or None where unknown."""
    return base.available_memory()


def check_size(path: str, size: int, limit: int | None = None) -> None:
    """Refuse a file beyond the size limit (TB_GPU_ADVISOR_MAX_PROFILE_MB, or the plugin's flag), or
    one larger than the memory free. What its analysis would hold, its format's reader projects from
    what the file holds (events, lines; what a gzip inflates to) as it reads (formats.base.Budget)."""
    base.Budget(base.max_profile_bytes(limit), 0, False).check_size(path, size)
    free = available_memory()
    if free is not None and size > free:
        raise ProfileReadError(
            path,
            f"the file is {size / 2**20:,.0f} MB, more than the {free / 2**30:.1f} GB of memory free",
        )


def read_bytes(path: str, limit: int | None = None) -> Data:
    """A profile's bytes, read-only: a local regular file opened (a FIFO or device would block) within
    the size limit, as a `formats.base.LocalFile`, which its reader reads with `pread`, never mapped,
    so that a file truncated or written again while it is read cannot fault the process; remote files
    read whole through TensorBoard's file-system layer, given up after READ_TIMEOUT_S."""
    if "://" not in path:
        src = LocalFile(path)  # refuses a file opened outside the confining folder (settings' confine)
        try:
            check_size(path, src.size, limit)
        except ProfileReadError:
            src.close()
            raise
        return src
    confine = settings().confine
    if confine is not None and not base.inside(path, confine):
        raise ProfileReadError(path, base.OUTSIDE)
    fs = gfile(path)
    result: dict = {}

    def read() -> None:
        try:
            size = int(fs.stat(path).length)
            check_size(path, size, limit)
            with fs.GFile(path, "rb") as f:
                result["data"] = f.read()
        except ProfileReadError as e:
            result["error"] = e
        except Exception as e:  # noqa: BLE001  (file systems raise many types; the message is what matters)
            result["error"] = ProfileReadError(path, f"cannot read the file ({e})")

    t = threading.Thread(target=read, name="gpu_advisor_read", daemon=True)
    t.start()
    t.join(READ_TIMEOUT_S)
    if t.is_alive():
        raise ProfileReadError(path, f"reading the file took over {READ_TIMEOUT_S:.0f} s; given up")
    if "error" in result:
        raise result["error"]
    return result["data"]


def prefetch(f: HostFile, max_bytes: int | None = None) -> Prefetched | None:
    """Reads the file and starts its format's work on the bytes (XSpace: the native scan, on a worker
    thread), so that it runs while the caller imports the analysis. None where the format starts
    nothing, or when the file cannot be read (reading it again then reports why, as without this)."""
    start = formats.by_name(f.kind).prefetch
    if start is None:
        return None
    try:
        return start(f.path, lambda: read_bytes(f.path, max_bytes))
    except ProfileReadError:
        return None


def _join(a: str, b: str) -> str:
    return posixpath.join(a, b) if "://" in a else os.path.join(a, b)


def _relative(path: str, root: str) -> str:
    root = root.rstrip("/\\")
    rel = path[len(root) :].lstrip("/\\") if path.startswith(root) else path
    return rel.replace("\\", "/")


def _parts(dirpath: str, logdir: str) -> list[str]:
    """The folders from the logdir down to `dirpath`."""
    rel = _relative(dirpath, logdir)
    return rel.split("/") if rel else []


# A walk goes this many folders below the logdir at most (a profile lives 3 or 4 below its run), and
# for this long: 1,100 nested folders overflowed Python's recursion (os.walk), and at depth 900 a
# listing took 17 s (each folder's real path resolved from the root); a link to `/` walked the whole
# file system. What the bounds cut is logged; the runs found before are listed.
MAX_DEPTH = 32
WALK_BUDGET_S = 10.0


class NoFileSystem(ValueError):
    """A logdir whose scheme (`nosuch://`) no file system here reads: a message for the user."""


def local_path(path: str) -> str:
    """A local `file://` URL as the path it names (`file:///a/b` and `file://localhost/a/b` are
    `/a/b`): read as any local path (confinement, read with pread, never through fsspec); any other
    path as it is."""
    for prefix in ("file://localhost/", "file:///"):
        if path.startswith(prefix):
            return "/" + path[len(prefix) :]
    return path


def check_scheme(path: str) -> None:
    """Raises NoFileSystem when `path` is a URL whose scheme no file system here reads (TensorBoard's
    layer: TensorFlow's file systems, s3, and fsspec's when it is installed)."""
    if "://" not in path:
        return
    scheme = path.split("://", 1)[0]
    message = (
        f"{path}: no file system here reads {scheme}:// (TensorBoard reads local paths, gs:// and s3:// "
        "with TensorFlow, and others through fsspec: pip install fsspec and the scheme's package)"
    )
    try:
        gfile(path).exists(path)
    except (ValueError, ImportError, NotImplementedError):
        raise NoFileSystem(message) from None
    except Exception as e:  # noqa: BLE001  TensorFlow's own error types: only one of them says "no"
        if type(e).__name__ == "UnimplementedError":
            raise NoFileSystem(message) from None


def _walk(logdir: str, confine: str | None = None) -> Iterator[tuple[str, list[str]]]:
    """(folder, files) under a logdir, breadth first, without recursion, at most MAX_DEPTH folders
    down and for WALK_BUDGET_S; a folder that cannot be listed is passed over, the rest walked. Local
    folders: symlinked folders followed, each real folder once (a link loop, or two links to one
    folder, cannot make the walk repeat or hang), but not a link to a folder that holds the logdir
    (a link to `/` walked the whole file system); with `confine` (a real path), links only to what
    lies inside it (the MCP server's logdir). Only regular files are listed (a FIFO or device named
    like a profile would block a read). Remote logdirs (gs://, s3://, ...): TensorBoard's file-system
    layer."""
    remote = "://" in logdir
    if confine is None and not remote:
        confine = settings().confine
    fs = gfile(logdir) if remote else None
    if not (fs.isdir(logdir) if fs is not None else os.path.isdir(logdir)):
        return
    root = os.path.realpath(logdir) if not remote else ""
    seen: set[tuple[int, int]] = set()
    if not remote:
        st = os.stat(logdir)
        seen.add((st.st_dev, st.st_ino))
    deadline = time.monotonic() + WALK_BUDGET_S
    todo: collections.deque[tuple[str, int]] = collections.deque([(logdir, 0)])
    too_deep = 0
    while todo:
        folder, depth = todo.popleft()
        listed = _list_remote(fs, folder) if fs is not None else _list_local(folder, root, confine, seen)
        if listed is None:
            continue
        subdirs, files = listed
        yield folder, files
        if depth >= MAX_DEPTH:
            too_deep += len(subdirs)
        else:
            todo.extend((d, depth + 1) for d in subdirs)
        if time.monotonic() > deadline:
            log.warning("%s: listing took over %.0f s; %d folders not searched", logdir, WALK_BUDGET_S, len(todo))
            return
    if too_deep:
        log.warning("%s: folders deeper than %d below it were not searched (%d)", logdir, MAX_DEPTH, too_deep)


def _list_local(
    folder: str, root: str, confine: str | None, seen: set[tuple[int, int]]
) -> tuple[list[str], list[str]] | None:
    """A local folder's subfolders to walk (paths) and regular files (names), sorted; None when it
    cannot be listed."""
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return None
    subdirs, files = [], []
    for e in entries:
        try:
            if e.is_dir():
                if e.is_symlink():
                    real = os.path.realpath(e.path)
                    if base.inside(root, real) or (confine is not None and not base.inside(real, confine)):
                        continue
                st = e.stat()
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                subdirs.append(e.path)
            elif e.is_file():  # a link to a file outside `confine` is listed: reading it is refused (LocalFile)
                files.append(e.name)
        except OSError:  # a dangling link or a file that went away
            continue
    return sorted(subdirs), sorted(files)


def _list_remote(fs: Any, folder: str) -> tuple[list[str], list[str]] | None:
    try:
        names = [str(n).rstrip("/") for n in fs.listdir(folder)]
        subdirs, files = [], []
        for n in sorted(names):
            path = posixpath.join(folder, n)
            if fs.isdir(path):
                subdirs.append(path)
            else:
                files.append(n)
    except Exception:  # noqa: BLE001  (file systems raise many types: a folder that cannot be listed is passed over)
        return None
    return subdirs, files


def _stat(path: str) -> tuple[int, float | None]:
    if "://" not in path:
        st = os.stat(path)
        return st.st_size, st.st_mtime
    st = gfile(path).stat(path)
    mtime_ns = getattr(st, "mtime_nsec", None)
    return int(st.length), (mtime_ns / 1e9 if mtime_ns else None)


def discover(logdir: str, confine: str | None = None) -> tuple[list[HostFile], list[LegacyRun]]:
    """Every profile host file under `logdir`, sorted by run then host; and legacy-only runs. With
    `confine` (a real path), symbolic links are followed only to what lies inside it."""
    found: list[HostFile] = []
    legacy: list[LegacyRun] = []
    for dirpath, files in _walk(logdir, confine):
        parts = _parts(dirpath, logdir)
        for fmt in formats.FORMATS:
            run = fmt.run(parts)
            if run is None:  # not where this format's files live
                continue
            run = run or posixpath.basename(logdir.rstrip("/")) or "."
            mine = sorted(f for f in files if formats.for_file(f) is fmt)
            for f in mine:
                path = _join(dirpath, f)
                try:
                    size, mtime = _stat(path)
                except OSError:
                    continue
                found.append(HostFile(run, fmt.host_name(f), path, size, mtime, fmt.name))
            old = fmt.legacy_suffixes
            if not mine and old and any(f.endswith(old) and formats.for_file(f) is None for f in files):
                legacy.append(LegacyRun(run, dirpath))
    found.sort(key=lambda h: (h.run, h.host))
    legacy.sort(key=lambda r: r.run)
    return found, legacy


def has_profiles(logdir: str) -> bool:
    """Cheap check: is there a profile under the logdir, or a folder that marks one's place (a
    `plugins/profile/<session>` folder, as the Profile tab has it)?"""
    try:
        for dirpath, files in _walk(logdir):
            parts = _parts(dirpath, logdir)
            for fmt in formats.FORMATS:
                if fmt.run(parts) is not None and (
                    fmt.folder_marks_profile or any(formats.for_file(f) is fmt for f in files)
                ):
                    return True
    except Exception:  # noqa: BLE001  an unreadable logdir has no profiles we can show
        return False
    return False


# -- a file's rank, as its name tells ---------------------------------------------------------------

_SPAN = re.compile(r"^(?P<worker>.+)\.(?P<span>\d+)$")
_HOST_PID = re.compile(r"^(?P<machine>.+)_\d+$")  # torch.profiler's default worker name: <hostname>_<pid>


def worker_and_cycle(f: HostFile) -> tuple[str, str, str]:
    """(job, worker, cycle) of a file: a PyTorch trace `vm_24996.1795480...` is worker `vm_24996`,
    cycle `1795480...` of run `f.run`; an XSpace host is its own worker, and the session folder of
    `<run>/<session>` is the cycle of job `<run>`."""
    if f.kind == PYTORCH_TRACE:
        m = _SPAN.match(f.host)
        return f.run, (m.group("worker") if m else f.host), (m.group("span") if m else "")
    job, sep, session = f.run.rpartition("/")
    return (job if sep else f.run), f.host, session


def machine_of(f: HostFile, worker: str) -> str:
    """The machine a file's rank ran on: an XSpace host is one; a PyTorch worker named as
    `tensorboard_trace_handler` names it by default, `<hostname>_<pid>`, ran on `<hostname>`; any
    other worker name is taken for a machine of its own."""
    if f.kind == PYTORCH_TRACE:
        m = _HOST_PID.match(worker)
        return m.group("machine") if m else worker
    return worker


# -- the step time a run logged beside its profile ---------------------------------------------------

# the TensorBoard scalar a run's step time is read from, ms a step (docs/whatif.md, "The profiler's own
# cost"): what the advisor scales the profiler's cost to meet; `--step-time-tag` names another
STEP_TIME_TAG = "step_time_ms"


def run_folder(f: HostFile) -> str:
    """The folder of a profile's run, where its event files are: a PyTorch trace's own folder; an
    XSpace file's run folder, above its plugins/profile/<session>/."""
    path = f.path.replace("\\", "/") if "://" not in f.path else f.path
    marker = "/plugins/profile/"
    i = path.rfind(marker)
    return path[:i] if i >= 0 else posixpath.dirname(path)


def logged_step_times(f: HostFile, tag: str = STEP_TIME_TAG) -> list[float]:
    """The values of the scalar `tag` the run logged beside the profile (its folder's event files, not
    its subfolders'), read with TensorBoard's own event reader; [] where there are none. A scalar
    written by `torch.utils.tensorboard.SummaryWriter.add_scalar` (a simple value) or by
    `tf.summary.scalar` (a tensor) alike."""
    folder = run_folder(f)
    try:  # a local folder listed without TensorBoard's file-system layer, which imports protobuf
        listed = os.listdir(folder) if "://" not in folder else gfile(folder).listdir(folder)
        names = sorted(n for n in listed if ".tfevents." in n)
    except (OSError, ValueError):
        return []
    if not names:
        return []
    # TensorBoard's reader (it loads TensorFlow where it is installed): only for a run with event files
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util import tensor_util

    out: list[float] = []
    for name in names:
        try:
            for event in EventFileLoader(_join(folder, name)).Load():
                for v in event.summary.value:
                    if v.tag != tag:
                        continue
                    if v.HasField("tensor"):
                        values = tensor_util.make_ndarray(v.tensor).reshape(-1)
                        if len(values):
                            out.append(float(values[0]))
                    else:
                        out.append(float(v.simple_value))
        except Exception:  # noqa: BLE001  a torn or foreign event file: its scalars are not read
            continue
    return [x for x in out if 0 < x < float("inf")]
