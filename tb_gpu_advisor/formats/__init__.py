"""The formats the advisor reads, and the one place that says which: discovery asks the registry
which files are profiles (by name and place), the engine asks it for the reader of a file's kind.
Each format is a package with its declaration (`FORMAT`, a `base.Format`) in its `__init__`; no
format imports another, and what they share is `classify.py` (names) and `base.py`. Adding a
format is a package and one entry in FORMATS (docs/formats.md)."""

from __future__ import annotations

import posixpath

from tb_gpu_advisor.formats import kineto, xplane
from tb_gpu_advisor.formats.base import Format

XSPACE = xplane.FORMAT
KINETO = kineto.FORMAT
FORMATS: tuple[Format, ...] = (XSPACE, KINETO)


def by_name(name: str) -> Format:
    """The format of a HostFile's `kind`."""
    for f in FORMATS:
        if f.name == name:
            return f
    raise ValueError(f"no profile format named {name!r}")


def for_file(file_name: str) -> Format | None:
    """The format that claims a file by its name, or None."""
    base = posixpath.basename(file_name.replace("\\", "/"))
    return next((f for f in FORMATS if f.claims(base)), None)


def detect(head: bytes) -> Format | None:
    """The format whose bytes a file's first bytes look like, or None."""
    return next((f for f in FORMATS if f.detect(head)), None)


def reader_modules() -> list[str]:
    return [m for f in FORMATS for m in f.modules]


def host_name(path: str) -> str:
    """A profile file's host: its name without its format's suffix (the name itself if none claims it)."""
    base = posixpath.basename(path.replace("\\", "/"))
    fmt = for_file(base)
    return fmt.host_name(base) if fmt is not None else base


def described() -> str:
    """The file names the formats claim, for messages: `.xplane.pb or .pt.trace.json[.gz]`."""
    return " or ".join(_shown(f.suffixes) for f in FORMATS)


def _shown(suffixes: tuple[str, ...]) -> str:
    base = min(suffixes, key=len)
    rest = [s[len(base) :] for s in suffixes if s != base]
    return base + "".join(f"[{r}]" for r in rest) if all(s.startswith(base) for s in suffixes) else ", ".join(suffixes)
