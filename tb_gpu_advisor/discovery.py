"""Find profile runs and hosts under a logdir, named as the Profile tab names them. Read-only.

A capture lives at `<logdir>/<tb_run>/plugins/profile/<session>/<host>.xplane.pb`; the run is
`<tb_run>/<session>` (just `<session>` at the logdir root) and the host is the file name without
`.xplane.pb`. A PyTorch trace (`torch.profiler.tensorboard_trace_handler(logdir/run)`) lives at
`<logdir>/<run>/<worker>.<span>.pt.trace.json[.gz]`, as the PyTorch profiler plugin named them: the
folder is the run, and each file (a worker's profiling span) is a host.
"""

from __future__ import annotations

import dataclasses
import mmap
import os
import posixpath
import stat
import sys
import threading
from functools import lru_cache

from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.settings import settings

XPLANE_SUFFIX = ".xplane.pb"
PYTORCH_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")
XPLANE, PYTORCH_TRACE = "xplane", "pytorch"  # HostFile.kind
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


def gfile(path: str = ""):
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
    kind: str = XPLANE  # XPLANE or PYTORCH_TRACE: which reader reads it

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class LegacyRun:
    """A session folder holding only files of old captures the advisor cannot read."""

    run: str
    path: str


# Profiles larger than this are refused (TB_GPU_ADVISOR_MAX_PROFILE_MB, or the plugin's flag).
# Reading and analysing takes about this many times the file's size in memory at its peak.
MEMORY_PER_FILE_BYTE = 3.0
READ_TIMEOUT_S = 120.0  # a remote read that takes longer is given up


def max_profile_bytes() -> int:
    return int(settings().max_profile_mb * 2**20)


def available_memory() -> int | None:
    """Bytes of memory available to new work (Linux's MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_size(path: str, size: int, limit: int | None = None) -> None:
    """Refuse a file beyond the size limit, or one whose analysis would not fit in memory."""
    limit = max_profile_bytes() if limit is None else limit
    if size > limit:
        raise ProfileReadError(
            path,
            f"the file is {size / 2**20:.0f} MB, over the {limit / 2**20:.0f} MB limit "
            "(raise it with --gpu_advisor_max_profile_mb or TB_GPU_ADVISOR_MAX_PROFILE_MB)",
        )
    free = available_memory()
    need = size * MEMORY_PER_FILE_BYTE
    if free is not None and need > free:
        raise ProfileReadError(
            path,
            f"analysing this {size / 2**20:.0f} MB file needs about {need / 2**30:.1f} GB of "
            f"memory; {free / 2**30:.1f} GB is available",
        )


def read_bytes(path: str, limit: int | None = None) -> bytes | mmap.mmap:
    """A profile's bytes, read-only: local regular files only (a FIFO or device would block), within the
    size limit, mapped into memory rather than copied; remote files through TensorBoard's file-system
    layer, given up after READ_TIMEOUT_S."""
    if "://" not in path:
        try:
            st = os.stat(path)
        except OSError as e:
            raise ProfileReadError(path, f"cannot read the file ({e.strerror or e})") from None
        if not stat.S_ISREG(st.st_mode):
            raise ProfileReadError(path, "not a regular file")
        check_size(path, st.st_size, limit)
        try:
            with open(path, "rb") as f:
                if st.st_size == 0:
                    return b""
                try:
                    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                except (OSError, ValueError):  # a file system that cannot map: read it
                    return f.read(st.st_size + 1)
        except OSError as e:
            raise ProfileReadError(path, f"cannot read the file ({e.strerror or e})") from None
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


def host_name(path: str) -> str:
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return base[: -len(XPLANE_SUFFIX)] if base.endswith(XPLANE_SUFFIX) else base


def pytorch_host_name(file_name: str) -> str:
    """`worker0.1623143089861.pt.trace.json.gz` -> `worker0.1623143089861` (a worker and its span)."""
    for suffix in sorted(PYTORCH_SUFFIXES, key=len, reverse=True):
        if file_name.endswith(suffix):
            return file_name[: -len(suffix)]
    return file_name


def _join(a: str, b: str) -> str:
    return posixpath.join(a, b) if "://" in a else os.path.join(a, b)


def _relative(path: str, root: str) -> str:
    root = root.rstrip("/\\")
    rel = path[len(root) :].lstrip("/\\") if path.startswith(root) else path
    return rel.replace("\\", "/")


def _walk(logdir: str):
    """(folder, files) under a logdir. Local folders: os.walk following symlinked folders, each real
    folder visited once (a symlink loop, or two links to one folder, cannot make the walk repeat or
    hang), and only regular files listed (a FIFO or device named like a profile would block a read).
    Remote logdirs (gs://, s3://, ...): TensorBoard's file-system layer."""
    if "://" in logdir:
        fs = gfile(logdir)
        if not fs.isdir(logdir):
            return
        for dirpath, _subdirs, files in fs.walk(logdir):
            yield str(dirpath), [str(f) for f in files]
        return
    if not os.path.isdir(logdir):
        return
    seen: set[str] = set()
    for dirpath, subdirs, files in os.walk(logdir, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            subdirs[:] = []
            continue
        seen.add(real)
        subdirs[:] = [d for d in subdirs if os.path.realpath(os.path.join(dirpath, d)) not in seen]
        regular = []
        for f in files:
            try:
                if stat.S_ISREG(os.stat(os.path.join(dirpath, f)).st_mode):
                    regular.append(f)
            except OSError:  # a dangling link or a file that went away
                continue
        yield dirpath, regular


def _stat(path: str) -> tuple[int, float | None]:
    if "://" not in path:
        st = os.stat(path)
        return st.st_size, st.st_mtime
    st = gfile(path).stat(path)
    mtime_ns = getattr(st, "mtime_nsec", None)
    return int(st.length), (mtime_ns / 1e9 if mtime_ns else None)


def discover(logdir: str) -> tuple[list[HostFile], list[LegacyRun]]:
    """Every profile host file under `logdir`, sorted by run then host; and legacy-only runs."""
    found: list[HostFile] = []
    legacy: list[LegacyRun] = []
    for dirpath, files in _walk(logdir):
        parts = _relative(dirpath, logdir).split("/") if _relative(dirpath, logdir) else []
        traces = sorted(f for f in files if f.endswith(PYTORCH_SUFFIXES))
        for f in traces:  # <run>/<worker>.<span>.pt.trace.json[.gz]
            path = _join(dirpath, f)
            try:
                size, mtime = _stat(path)
            except OSError:
                continue
            run = "/".join(parts) or posixpath.basename(logdir.rstrip("/")) or "."
            found.append(HostFile(run, pytorch_host_name(f), path, size, mtime, PYTORCH_TRACE))
        # .../<tb_run>/plugins/profile/<session>
        if len(parts) < 3 or tuple(parts[-3:-1]) != PROFILE_DIR:
            continue
        session = parts[-1]
        tb_run = "/".join(parts[:-3])
        run = f"{tb_run}/{session}" if tb_run else session
        xplanes = sorted(f for f in files if f.endswith(XPLANE_SUFFIX))
        for f in xplanes:
            path = _join(dirpath, f)
            try:
                size, mtime = _stat(path)
            except OSError:
                continue
            found.append(HostFile(run, host_name(f), path, size, mtime))
        if not xplanes and any(f.endswith(LEGACY_SUFFIXES) and not f.endswith(PYTORCH_SUFFIXES) for f in files):
            legacy.append(LegacyRun(run, dirpath))
    found.sort(key=lambda h: (h.run, h.host))
    legacy.sort(key=lambda r: r.run)
    return found, legacy


def has_profiles(logdir: str) -> bool:
    """Cheap check: is there at least one `plugins/profile` folder, or a PyTorch trace, under the logdir?"""
    try:
        for dirpath, files in _walk(logdir):
            if "/".join(_relative(dirpath, logdir).split("/")[-3:-1]) == "plugins/profile":
                return True
            if any(f.endswith(PYTORCH_SUFFIXES) for f in files):
                return True
    except Exception:  # noqa: BLE001  an unreadable logdir has no profiles we can show
        return False
    return False
