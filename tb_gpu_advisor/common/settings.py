"""The advisor's settings from its environment, read in one place.

| variable | what | default |
|---|---|---|
| `TB_GPU_ADVISOR_PURE_PYTHON=1` | the native decoders (XSpace, Kineto JSON) and interval code off (the Python fallbacks) | off |
| `TB_GPU_ADVISOR_PROCESSES` | worker processes for the files of a job; 0: none (in the caller) | cores, as memory allows |
| `TB_GPU_ADVISOR_THREADS` | threads for one analysis (one GPU, one check each); 1: none | up to 4 |
| `TB_GPU_ADVISOR_MAX_PROFILE_MB` | profiles larger than this (a gzip: what it inflates to) are refused, and analyses projected to hold over 3x it; TensorBoard's `--gpu_advisor_max_profile_mb` overrides it | 2048 |
| `TB_GPU_ADVISOR_MALLOC=default` | the command leaves glibc's malloc as it is | tuned |
| `TB_GPU_ADVISOR_WHATIF=0` | no step graph: each saving is its check's own local estimate (docs/whatif.md) | on |
| `TB_GPU_ADVISOR_CONFINE=DIR` | files are read, and symbolic links followed, only where they resolve inside DIR (the real path of the file opened); `tb-gpu-advisor mcp` sets it to its logdir | none |

Read when asked, not at import: a test or a caller may set them at any time. This module imports
nothing heavy (the command reads settings before NumPy is imported).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Any, Callable, Iterator, Mapping

DEFAULT_MAX_PROFILE_MB = 2048.0
CONFINE_ENV = "TB_GPU_ADVISOR_CONFINE"
# The one setting of the size limit, as messages name it (the plugin's flag overrides the variable).
MAX_PROFILE_SETTING = "TB_GPU_ADVISOR_MAX_PROFILE_MB (TensorBoard: --gpu_advisor_max_profile_mb)"


@dataclasses.dataclass(frozen=True)
class Settings:
    pure_python: bool = False
    threads: int = 0  # 0: the default (min(4, cores)); below 1: one
    processes: int | None = None  # None: the default (ranks.processes decides)
    max_profile_mb: float = DEFAULT_MAX_PROFILE_MB
    tune_malloc: bool = True
    whatif: bool = True
    confine: str | None = None  # a real path (or a URL) files must resolve inside

    @staticmethod
    def from_env(env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        return Settings(
            pure_python=env.get("TB_GPU_ADVISOR_PURE_PYTHON") == "1",
            threads=_number(env.get("TB_GPU_ADVISOR_THREADS"), 0, int),
            processes=_number(env.get("TB_GPU_ADVISOR_PROCESSES"), None, int),
            max_profile_mb=_number(env.get("TB_GPU_ADVISOR_MAX_PROFILE_MB"), DEFAULT_MAX_PROFILE_MB, float),
            tune_malloc=env.get("TB_GPU_ADVISOR_MALLOC") != "default",
            whatif=env.get("TB_GPU_ADVISOR_WHATIF") != "0",
            confine=env.get(CONFINE_ENV) or None,
        )


def _number(text: str | None, default: Any, kind: Callable[[str], Any]) -> Any:
    """A number from the environment; an unreadable one is the default (a setting never stops a run)."""
    try:
        return kind(text) if text not in (None, "") else default
    except ValueError:
        return default


def settings() -> Settings:
    return Settings.from_env()


def use_threads(threads: int) -> None:
    """This process's analyses use `threads` threads (a worker process given its share of the cores)."""
    os.environ["TB_GPU_ADVISOR_THREADS"] = str(threads)


def confine_to(root: str) -> None:
    """This process, and the worker processes it starts from now on, read files only where they
    resolve inside `root` (a real path, or a URL): the MCP server's logdir."""
    os.environ[CONFINE_ENV] = root


@contextlib.contextmanager
def import_path_of(folder: str | None) -> Iterator[None]:
    """While it lasts, a Python interpreter started from this process (the worker processes' fork
    server) leaves the working directory off its import path (PYTHONSAFEPATH, Python 3.11 and later)
    and looks in `folder` first (PYTHONPATH): it imports the package's code, never a file of the
    caller's folder named like a module (an `inspect.py` there broke every worker, issue 51)."""
    saved = {k: os.environ.get(k) for k in ("PYTHONSAFEPATH", "PYTHONPATH")}
    os.environ["PYTHONSAFEPATH"] = "1"
    if folder:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (folder, saved["PYTHONPATH"]) if p)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def single_threaded_blas() -> None:
    """NumPy's OpenBLAS starts no worker thread, unless the user set its count (no command does linear
    algebra; the idle thread spun beside the analysis). Effective only before NumPy is imported."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
