"""What every format shares that is not classification: the declaration a format makes to the
registry, the bytes a reader is given (in memory, or a local file read so that it cannot fault),
the budget a read is held to, and the bounds readers hold values to. No NumPy here: the command
imports the registry, and starts reading its first file, before it imports the analysis."""

from __future__ import annotations

import dataclasses
import mmap
import os
import posixpath
import stat
from typing import TYPE_CHECKING, Any, Callable, Iterator

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.common.settings import MAX_PROFILE_SETTING, settings

if TYPE_CHECKING:
    from tb_gpu_advisor.model.profile import OpTable, Profile, StringTable

Buffer = bytes | bytearray | memoryview | mmap.mmap  # a file's bytes, in memory
Progress = Callable[[int, int], None]  # (done, total), in the reader's own units

MAX_DUR_PS = 10**18  # about 11.6 days: a longer event is a broken value, clamped
INT32_MAX = 2**31 - 1

# --- the bytes of a local file ----------------------------------------------------------------------

CHANGED = "the file changed while it was read; read it again"
PIECE = 16 << 20  # bytes read at a time into a snapshot


class LocalFile:
    """A local profile file, open for reading and never mapped: a mapped file that shrinks under the
    reader faults it (SIGBUS: the whole server died when a capture was written again to the same
    path, issue 38), a read cannot. Its bytes are read with `pread`, in pieces (`pieces`, for a
    reader that streams them) or whole into memory of our own (`snapshot`); every read is checked
    against the size the file had when opened, and `verify` checks the size and modification time
    once read: a file that changed gives ProfileReadError(CHANGED). (A file replaced by a rename is
    not a change: the reader keeps the file it opened, whole.)"""

    def __init__(self, path: str) -> None:
        """Opens a regular file (a FIFO or device named like a profile is refused without blocking)."""
        self.path, self.fd = path, -1
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise ProfileReadError(path, f"cannot read the file ({e.strerror or e})") from None
        st = os.fstat(self.fd)
        if not stat.S_ISREG(st.st_mode):
            self.close()
            raise ProfileReadError(path, "not a regular file")
        confine = settings().confine
        if confine is not None and not inside(opened_path(self.fd, path), confine):
            self.close()  # decided on the file opened: a link swapped after a check of its path changes nothing
            raise ProfileReadError(path, OUTSIDE)
        self.size = st.st_size
        self._stamp = _stamp(st)
        # what identifies the bytes read: a file replaced, even by one of the same size and modification
        # time (`cp -p`, `mv` of a kept copy), has another inode or change time
        self.identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def __len__(self) -> int:
        return self.size

    def __enter__(self) -> LocalFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        self.close()

    def read_at(self, pos: int, n: int) -> bytearray:
        """`n` bytes from `pos` (fewer only at the end of the file as opened)."""
        buffer = bytearray(max(0, min(n, self.size - pos)))
        with memoryview(buffer) as view:
            self.read_into(view, pos)
        return buffer

    def read_into(self, buffer: memoryview, pos: int) -> None:
        """`buffer` filled from `pos` (within the file's size as opened); a read that comes short
        (a file system may) is continued, one that finds the file's end before it, a change."""
        done = 0
        while done < len(buffer):
            with buffer[done:] as rest:
                got = os.preadv(self.fd, [rest], pos + done)
            if got <= 0:  # the file is shorter than it was
                self._changed()
            done += got

    def pieces(self, n: int) -> Iterator[bytearray]:
        """The whole file in pieces of `n` bytes, checked (`verify`) once the last one is read."""
        for pos in range(0, self.size, n):
            yield self.read_at(pos, n)
        self.verify()

    def snapshot(self) -> Buffer:
        """The whole file in memory of our own (anonymous pages, which a reader may give back as it
        goes: `mmap.madvise(MADV_DONTNEED)` on them frees them), checked (`verify`)."""
        if not self.size:
            self.verify()
            return b""
        m = mmap.mmap(-1, self.size)
        try:
            with memoryview(m) as view:
                for pos in range(0, self.size, PIECE):
                    with view[pos : pos + PIECE] as part:
                        self.read_into(part, pos)
            self.verify()
        except BaseException:
            m.close()
            raise
        return m

    def verify(self) -> None:
        """Raises ProfileReadError(CHANGED) when the file is not as it was when opened: another size or
        modification time, or bytes beyond its size."""
        if _stamp(os.fstat(self.fd)) != self._stamp or os.pread(self.fd, 1, self.size):
            self._changed()

    def _changed(self) -> None:
        raise ProfileReadError(self.path, CHANGED)


OUTSIDE = "outside the folder this process reads (a symbolic link leads out of it); read only inside it"


def opened_path(fd: int, path: str) -> str:
    """The real path of the file open at `fd`: Linux says it (/proc/self/fd); elsewhere `path` resolved now."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def inside(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies under it (both real paths, or both URLs, normalised)."""
    if ("://" in path) != ("://" in root):
        return False
    if "://" in path:
        scheme, rest = path.split("://", 1)
        path = f"{scheme}://{posixpath.normpath('/' + rest).lstrip('/')}"
    return path == root or path.startswith(root.rstrip("/" + os.sep) + ("/" if "://" in root else os.sep))


def identity(path: str) -> tuple[int, int, int, int, int] | None:
    """A local file's identity now (LocalFile.identity), None where it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _stamp(st: os.stat_result) -> tuple[int, int]:
    """Size and modification time: what a write or truncation changes (the change time is not: a
    rename or a new link changes it, and the file read is whole)."""
    return st.st_size, st.st_mtime_ns


Data = Buffer | LocalFile  # what a reader is given


def in_memory(data: Data) -> Buffer:
    """The bytes, whole: a local file's snapshot (checked), a buffer as it is."""
    return data.snapshot() if isinstance(data, LocalFile) else data


def head(data: Data, n: int) -> bytes:
    return bytes(data.read_at(0, n)) if isinstance(data, LocalFile) else bytes(memoryview(data)[:n])


# --- what a read may cost -------------------------------------------------------------------------

# An analysis may hold about this many times the size limit: a file at the limit needs up to about
# 2x its size as XSpace, 1x as a PyTorch trace's text. A file of denser events (a gzip of one event
# repeated, a file of empty lines) is refused once what it projects passes this, or the free memory.
MEMORY_PER_LIMIT_BYTE = 3.0
# What a file may cost is bounded by its size on disk too: profilers' files cost a few times their
# size to analyse (a real XSpace file up to about 5 times, a gzipped PyTorch trace up to about 30, its
# text inflating up to 30 times), so a file projected to cost more than this many times its size on
# disk (and more than MEMORY_FLOOR, which any file may) is not one a profiler wrote, but a small file
# that costs GBs (issue 51: 2.2 MB that cost 7,955 MB, 96 MB that cost 1.75 GB). Each format's reader
# gives its factor to Budget.of.
MEMORY_FLOOR = 512 << 20
# Lines (threads and streams) a file may have: each costs a table and a share of every pass over
# tables (about 0.3 ms and 5-10 kB), and profilers write a few hundred at most.
MAX_LINES = 10_000


def max_profile_bytes(limit: int | None = None) -> int:
    """The size limit a file is read under: `limit`, else the setting (TB_GPU_ADVISOR_MAX_PROFILE_MB)."""
    return int(limit) if limit else int(settings().max_profile_mb * 2**20)


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


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MB"


def _size(n: float) -> str:
    return f"{n / 2**20:,.1f} MB" if n < 10 << 20 else _mb(n)


def _memory(n: float) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else _mb(n)


@dataclasses.dataclass(frozen=True)
class Budget:
    """What reading one file may cost: `limit`, the bytes it may be (its size; for a gzip, what it
    inflates to), and `memory`, what its reading and analysis may hold: MEMORY_PER_LIMIT_BYTE times
    the limit, or the memory free when that is less, or (given the file's `size` on disk and its
    format's `per_byte`) `per_byte` times its size when that is less and over MEMORY_FLOOR."""

    limit: int
    memory: int
    free: bool  # `memory` is the memory free (else the limit's share)
    size: int | None = None  # the file's size on disk, when `memory` is what that size allows

    @staticmethod
    def of(limit: int | None = None, size: int | None = None, per_byte: float | None = None) -> Budget:
        limit = max_profile_bytes(limit)
        share = int(limit * MEMORY_PER_LIMIT_BYTE)
        free = available_memory()
        budget = Budget(limit, free, True) if free is not None and free < share else Budget(limit, share, False)
        if size is not None and per_byte is not None:
            allowed = max(MEMORY_FLOOR, int(size * per_byte))
            if allowed < budget.memory:
                return Budget(limit, allowed, False, size)
        return budget

    def over_limit(self, path: str, what: str) -> ProfileReadError:
        """`what` ("the file is 3,000 MB,", "the trace inflates to") is over the size limit."""
        return ProfileReadError(
            path, f"{what} over the {_mb(self.limit)} limit; raise {MAX_PROFILE_SETTING} to read it"
        )

    def check_size(self, path: str, size: int) -> None:
        if size > self.limit:
            raise self.over_limit(path, f"the file is {_mb(size)},")

    def check(self, path: str, need: float, why: str) -> None:
        """Refuses a file whose reading and analysis would hold about `need` bytes (`why`: of what)."""
        if need <= self.memory:
            return
        if self.size is not None:
            over = (
                f"the {_memory(self.memory)} a file of {_size(self.size)} may take: profilers' files take a few "
                "times their size"
            )
        elif self.free:
            over = f"the {_memory(self.memory)} of memory free"
        else:
            over = (
                f"the {_memory(self.memory)} allowed by the {_mb(self.limit)} size limit; "
                f"raise {MAX_PROFILE_SETTING} to read it"
            )
        raise ProfileReadError(path, f"analysing it would take about {_memory(need)} of memory ({why}), over {over}")


def too_many_lines(lines: int) -> bool:
    """Whether a file of this many lines (threads and streams) is refused, whatever its size."""
    return lines > MAX_LINES


def check_lines(path: str, lines: int) -> None:
    """Refuses a file of more than MAX_LINES lines (threads and streams), whatever its size."""
    if too_many_lines(lines):
        raise ProfileReadError(
            path,
            f"not a profile the advisor reads: it has over {MAX_LINES:,} lines (threads and streams), where "
            "profilers write a few hundred",
        )


@dataclasses.dataclass
class Prefetched:
    """A file's bytes, read, and the work its format started on them (XSpace: the native scan);
    `take` hands them over once, so that nothing here keeps them alive after the file is read."""

    path: str
    data: Data | None
    started: Any

    def take(self) -> tuple[Data, Any] | None:
        if self.data is None or self.started is None:
            return None
        taken = self.data, self.started
        self.data = self.started = None
        return taken


# read(data, path, host, progress, max_bytes, started): the file's Profile; raises ProfileReadError.
# `max_bytes`: the size limit the file was read under (None: the default); `started`: what the
# format's `prefetch` began on these bytes, or None.
Reader = Callable[["Data", str, str, "Progress | None", "int | None", Any], "Profile"]
# prefetch(path, read_bytes): the bytes (read by calling read_bytes) and work started on them, or None
# when the format has nothing to start.
Prefetcher = Callable[[str, Callable[[], "Data"]], "Prefetched | None"]


@dataclasses.dataclass(frozen=True)
class Format:
    """A profile format, as the registry knows it: which files it claims (by name, and where they
    live under a logdir), how its bytes look, and its reader."""

    name: str  # HostFile.kind
    title: str  # for people: "XSpace", "PyTorch trace"
    suffixes: tuple[str, ...]  # the file names it claims
    # run(folder parts under the logdir): the run its files there belong to ("" for the logdir's
    # own), None where its files do not live
    run: Callable[[list[str]], str | None]
    detect: Callable[[bytes], bool]  # whether a file's first bytes (64 suffice) look like this format
    read: Reader
    prefetch: Prefetcher | None = None
    # its folders mark a profile's place even before a file is in them (the Profile tab's rule)
    folder_marks_profile: bool = False
    legacy_suffixes: tuple[str, ...] = ()  # files of old captures it cannot read, kept apart in listings
    # reading holds the interpreter lock for long (JSON parsing): the plugin reads it in a process apart
    reads_apart: bool = False
    modules: tuple[str, ...] = ()  # what `read` imports: the worker processes' fork server loads them first

    def claims(self, file_name: str) -> bool:
        return file_name.endswith(self.suffixes)

    def host_name(self, file_name: str) -> str:
        """The file's name without the format's suffix: `worker0.123.pt.trace.json.gz` -> `worker0.123`."""
        for suffix in sorted(self.suffixes, key=len, reverse=True):
            if file_name.endswith(suffix):
                return file_name[: -len(suffix)]
        return file_name


class OpIndex:
    """The ops of a profile being read, each interned once into `ops`: an op is its name and the type
    it ran as; its shape is the first non-empty one given."""

    def __init__(self, names: StringTable, ops: OpTable) -> None:
        self.names, self.ops = names, ops
        self.index: dict[tuple[str, str], int] = {}

    def find(self, name: str, executed: str) -> int | None:
        return self.index.get((name, executed))

    def intern(self, name: str, executed: str, shape: str = "", type_of: Callable[[str], str] | None = None) -> int:
        """The op's id. `type_of`: the type a user knows for the executed one (classify's
        framework_op_type), asked once per op; without it, the executed type."""
        op = self.index.get((name, executed))
        if op is None:
            op = len(self.ops.name)
            self.index[(name, executed)] = op
            self.ops.name.append(self.names.intern(name))
            self.ops.type.append(self.names.intern(type_of(executed) if type_of is not None else executed))
            self.ops.executed.append(self.names.intern(executed))
            self.ops.shape.append(shape)
        elif shape and not self.ops.shape[op]:
            self.ops.shape[op] = shape
        return op
