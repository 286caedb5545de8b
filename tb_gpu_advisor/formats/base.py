"""What every format shares that is not classification: the declaration a format makes to the
registry, the bytes a reader is given, and the bounds readers hold values to. No NumPy here: the
command imports the registry, and starts reading its first file, before it imports the analysis."""

from __future__ import annotations

import dataclasses
import mmap
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from tb_gpu_advisor.model.profile import OpTable, Profile, StringTable

Buffer = bytes | bytearray | memoryview | mmap.mmap  # a file's bytes, read or mapped
Progress = Callable[[int, int], None]  # (done, total), in the reader's own units

MAX_DUR_PS = 10**18  # about 11.6 days: a longer event is a broken value, clamped
INT32_MAX = 2**31 - 1


@dataclasses.dataclass
class Prefetched:
    """A file's bytes, read, and the work its format started on them (XSpace: the native scan);
    `take` hands them over once, so that nothing here keeps them alive after the file is read."""

    path: str
    data: Buffer | None
    started: Any

    def take(self) -> tuple[Buffer, Any] | None:
        if self.data is None or self.started is None:
            return None
        taken = self.data, self.started
        self.data = self.started = None
        return taken


# read(data, path, host, progress, max_bytes, started): the file's Profile; raises ProfileReadError.
# `max_bytes`: the size limit the file was read under (None: the default); `started`: what the
# format's `prefetch` began on these bytes, or None.
Reader = Callable[[Buffer, str, str, "Progress | None", "int | None", Any], "Profile"]
# prefetch(path, read_bytes): the bytes (read by calling read_bytes) and work started on them, or None
# when the format has nothing to start.
Prefetcher = Callable[[str, Callable[[], Buffer]], "Prefetched | None"]


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
