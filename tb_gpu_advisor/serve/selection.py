"""Which profile files a command's path and --run/--host name: a logdir, a run folder at any depth, or
one file; errors in the user's words (`UsageError`)."""

from __future__ import annotations

import os

from tb_gpu_advisor import formats
from tb_gpu_advisor.formats.discovery import (
    HostFile,
    NoFileSystem,
    check_scheme,
    discover,
    local_path,
    worker_and_cycle,
)


class UsageError(Exception):
    pass


def suggest(word: str, choices: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, choices, n=3, cutoff=0.5)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def listing(kind: str, names: list[str], limit: int = 20) -> str:
    shown = ", ".join(names[:limit]) + (f", … ({len(names) - limit} more)" if len(names) > limit else "")
    return f"\n{kind}: {shown}"


def run_folder(run: str) -> str:
    """The TensorBoard run of a profile run (`<run folder>/<session>`): the part before the session."""
    return run.rsplit("/", 1)[0] if "/" in run else ""


EMPTY_LOGDIR = """no profiles found. Looked for:
  TensorFlow and JAX: <run>/plugins/profile/<session>/<host>.xplane.pb, written by Keras'
    TensorBoard(log_dir, profile_batch=(10, 15)) under log_dir/train, by
    tf.profiler.experimental.start(logdir) and by jax.profiler.trace(logdir);
  PyTorch: <run>/<worker>.<span>.pt.trace.json or .pt.trace.json.gz, written by torch.profiler's
    on_trace_ready=tensorboard_trace_handler(logdir/run).
Give the logdir, a run folder or a profile file."""


def profile_file(path: str) -> HostFile:
    """A profile named directly: its run as the Profile tab would name it (`<run>/<session>` for a file in
    `<run>/plugins/profile/<session>/`, else its folder's name) and its host."""
    name = os.path.basename(path)
    folders = os.path.abspath(path).replace("\\", "/").split("/")[:-1]
    fmt = formats.for_file(name)
    if fmt is None:
        raise UsageError(f"{path}: not a profile ({formats.described()})")
    st = os.stat(path)
    run = fmt.run(folders[-4:]) if fmt.folder_marks_profile else None
    return HostFile(run or folders[-1], fmt.host_name(name), path, st.st_size, st.st_mtime, fmt.name)


def _profile_root(folder: str) -> str | None:
    """For a folder inside a capture's `plugins/profile` (the `profile` folder or a session in it), the
    folder that holds `plugins`: what TensorBoard's logdir, or a Keras log_dir's `train`, is."""
    parts = os.path.abspath(folder).replace("\\", "/").rstrip("/").split("/")
    if parts[-1] == "plugins":
        return "/".join(parts[:-1]) or "/"
    for k in (len(parts) - 1, len(parts) - 2):  # .../plugins/profile or .../plugins/profile/<session>
        if k >= 1 and parts[k - 1 : k + 1] == ["plugins", "profile"]:
            return "/".join(parts[: k - 1]) or "/"
    return None


def select(logdir: str, run: str | None, host: str | None, confine: bool = False) -> list[HostFile]:
    """The host files to analyse. `logdir` is a logdir, a run folder at any depth (a Keras log_dir or
    its `train` folder, a capture's `plugins/profile` folder or one session in it) or one profile file;
    a local `file://` URL is its path. `run` is a run as the Profile tab names it (`<folder>/<session>`),
    or a run folder that holds one session. With `confine`, symbolic links are followed only to what
    lies inside `logdir` (the MCP server)."""
    shown, logdir = logdir, local_path(logdir)
    if "://" in logdir:
        try:
            check_scheme(logdir)
        except NoFileSystem as e:
            raise UsageError(str(e)) from None
    elif not os.path.exists(logdir):
        raise UsageError(f"{shown}: no such file or directory")
    for bad, what in ((run, "run"), (host, "host")):
        if bad is not None and "\x00" in bad:
            raise UsageError(f"{what} {bad!r}: a name does not hold a NUL character")
    if "://" not in logdir and os.path.isfile(logdir):
        files = [profile_file(logdir)]
        legacy: list = []
    else:
        within = os.path.realpath(logdir) if confine and "://" not in logdir else None
        files, legacy = discover(logdir, within)
        root = _profile_root(logdir) if "://" not in logdir and not files else None
        if root is not None:  # inside plugins/profile: found from the folder that holds it, this part only
            inside = os.path.abspath(logdir).rstrip("/") + "/"
            files = [f for f in discover(root, within)[0] if os.path.abspath(f.path).startswith(inside)]
    if not files:
        if legacy:
            raise UsageError(
                f"{shown}: only old-format profiles ({legacy[0].run}: *.trace.json.gz and similar); "
                "capture again with a current profiler to get .xplane.pb files"
            )
        raise UsageError(f"{shown}: {EMPTY_LOGDIR}")
    runs = sorted({f.run for f in files})
    if run is not None:
        name = run.strip("/")
        chosen = [f for f in files if f.run == name]
        if not chosen:
            sessions = sorted({f.run for f in files if run_folder(f.run) == name})
            if len(sessions) == 1:
                chosen = [f for f in files if f.run == sessions[0]]
            elif sessions:
                raise UsageError(
                    f"run folder {run!r} holds {len(sessions)} sessions; name one" + listing("sessions", sessions)
                )
        if not chosen:
            folders = sorted({run_folder(r) for r in runs} - {""})
            raise UsageError(
                f"unknown run {run!r} under {shown}{suggest(name, runs + folders)}" + listing("runs", runs)
            )
        files = chosen
    if host is not None:
        hosts = sorted({f.host for f in files})
        files = [f for f in files if f.host == host]
        if not files:
            where = f" in run {run!r}" if run else ""
            raise UsageError(f"unknown host {host!r}{where}{suggest(host, hosts)}" + listing("hosts", hosts))
    return files


def pick(path: str, run: str | None, host: str | None, which: str) -> list[HostFile]:
    """The files of one side of `diff`: a profile file, the one run and host a logdir or run folder
    holds (selected with --run/--host), or the files of one job (its ranks and profiling cycles)."""
    if "://" not in local_path(path) and os.path.isfile(local_path(path)):
        return [profile_file(local_path(path))]

    files = select(path, run, host)
    if len({worker_and_cycle(f)[0] for f in files}) > 1:
        listed = ", ".join(f"{f.run} {f.host}" for f in files[:10]) + (" …" if len(files) > 10 else "")
        flags = "--run/--host" if which == "before" else "--new-run/--new-host"
        raise UsageError(f"{path} holds {len(files)} profiles; name the {which} one with {flags}: {listed}")
    return files
