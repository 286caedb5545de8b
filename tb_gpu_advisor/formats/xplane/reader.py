"""Decode one `<host>.xplane.pb` into a columnar `Profile`.

Every quirk of the file format is handled here and nowhere else: ref-valued stats, stats on event
metadata, both `kernel_details` and `memcpy_details` forms, `tf_op` vs the older `annotation`,
derived lines (kept out of stream activity), idle GPU planes, the time base, and values out of range
(skipped or clamped, and said in `Profile.warnings`).

A decoder (`raw.py`: native when built, else protobuf's objects) turns the bytes into raw columns;
everything below works on those columns, deciding each name, op attribution and details string once
per distinct value and broadcasting the result to the events.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable

import numpy as np

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.base import Data, LocalFile, Progress, in_memory
from tb_gpu_advisor.formats.xplane import detect, raw as rawmod, scan as scan_mod
from tb_gpu_advisor.formats.xplane.lines import MAX_ABS_PS, LineReader
from tb_gpu_advisor.formats.xplane.raw import RawLine, RawPlane, RawSpace
from tb_gpu_advisor.formats.xplane.scan import Scan, native_wanted
from tb_gpu_advisor.formats.xplane.values import Values, meta_value_int
from tb_gpu_advisor.model import extent
from tb_gpu_advisor.model.arrays import Constant, distinct
from tb_gpu_advisor.model.classify import JAX_EVENTS, JAX_THREADS
from tb_gpu_advisor.model.profile import (
    AMD,
    DEVICE_SPEC,
    FIRST_EVENT,
    JAX,
    PROFILE_START,
    TENSORFLOW,
    UNKNOWN,
    Device,
    EventTable,
    HostThread,
    Kind,
    Profile,
    SavedSteps,
    Stream,
    amd_gfx,
    vendor_of,
)

HOST_PLANE = "/host:CPU"
METADATA_PLANE = "/host:metadata"
TASK_ENV_PLANE = "Task Environment"
GPU_PLANE = re.compile(r"^/device:GPU:(\d+)$")
TPU_PLANE = re.compile(r"^/device:TPU:(\d+)$")
STREAM_LINE = re.compile(r"^Stream #(\d+)")
# Lines some files carry that the viewer derives from the streams; never stream activity.
DERIVED_LINES = frozenset(
    {
        "Steps",
        "TensorFlow Ops",
        "Framework Ops",
        "TensorFlow Name Scope",
        "Framework Name Scope",
        "XLA Ops",
        "XLA Modules",
        "Launch Stats",
        "Source code",
        "XLA TraceMe",
        "Async XLA Ops",
    }
)

log = logging.getLogger(__name__)

NORMALISED_NS = 10**15  # timestamps below this (11.6 days) are relative to the profile start, as profilers write them

# --- decoding -------------------------------------------------------------------------------------


def decode(data: Data, scan: Scan | None = None, admit: scan_mod.Admission | None = None) -> RawSpace:
    """The native decoder when it is built (and not turned off by TB_GPU_ADVISOR_PURE_PYTHON=1), else
    protobuf's objects. `scan`: the native scan already started on these bytes (scan.prefetch), with
    its own admission. `admit(census)`: may refuse the file from what it holds, before its header is
    decoded (without the native census, the pure decoder's cost is projected from the file's size)."""
    if native_wanted():
        from tb_gpu_advisor.formats.xplane import native

        return native.decode(data, scan, admit)
    whole = in_memory(data)

    def refuse() -> None:
        if admit is None:
            return
        counted = scan_mod.census(whole)
        if counted is not None:
            admit(counted)
        else:
            admit.without_census()

    return rawmod.decode_python(whole, refuse)


def read_profile_bytes(
    data: Data,
    path: str,
    host: str,
    progress: Callable[[int, int], None] | None = None,
    scan: Scan | None = None,
    limit: int | None = None,
) -> Profile:
    """Decode XSpace bytes into a `Profile`. Raises `ProfileReadError` naming `path`. `limit`: the
    size limit the file is read under (by default the setting): what its reading may cost."""
    if not data:
        raise ProfileReadError(path, "the file is empty")
    if scan is None:
        _refuse_from_head(data, path)
    try:
        space = decode(data, scan, scan_mod.Admission(path, len(data), limit, pure=not native_wanted()))
    except Exception as e:  # noqa: BLE001  (each decoder and protobuf version raises its own types)
        raise _bytes_error(path, e) from None
    if not space.planes:
        raise ProfileReadError(path, "not an XSpace profile: it has no planes")
    try:
        profile = Builder(space, path, host).build(progress)
        space.finish()  # the lines the build did not read may be broken too
        return profile
    except Exception as build_error:
        # an error in the file's bytes comes first, as when every line is decoded before the build
        decode_error = _decode_error(space)
        err = _bytes_error(path, decode_error) if decode_error else _build_error(path, build_error)
        if err is None:  # a bug, not a broken file
            raise
        try:
            raise err from None
        finally:  # this frame (which holds the file's space) is in their tracebacks: no cycle to keep it
            err = decode_error = None


PROBE = 64 << 10  # bytes of a local file decoded alone when it does not start as a profile does


def _refuse_from_head(data: Data, path: str) -> None:
    """A local file that does not start as an XSpace profile does (a plane first: `detect`) is
    decoded on its first PROBE bytes alone: when they break before their end, the whole file breaks
    there too, with the same message, and it is refused without being read whole (a 1.5 GB file of
    zeros took 0.3 s mapped, would take seconds and its size in memory copied)."""
    if not isinstance(data, LocalFile) or len(data) <= PROBE:
        return
    head = bytes(data.read_at(0, PROBE))
    if detect(head[:64]):
        return
    try:
        decode(head)
    except Exception as e:  # noqa: BLE001  (each decoder raises its own types)
        err = _bytes_error(path, e)
        at = _AT_BYTE.search(str(e))
        if _CUT not in err.message and (at is None or int(at.group(1)) < PROBE - 64):
            raise err from None


def _decode_error(space: RawSpace) -> Exception | None:
    try:
        space.finish()
    except Exception as e:  # noqa: BLE001  returned to be reported
        return e
    return None


def _bytes_error(path: str, e: Exception) -> ProfileReadError:
    """The error to report for an exception from decoding a file's bytes."""
    if isinstance(e, ProfileReadError):
        return e
    if isinstance(e, (rawmod.DanglingRef, rawmod.MissingMetadata)):
        return ProfileReadError(path, str(e))
    log.debug("unreadable XSpace bytes in %s", path, exc_info=e)
    m, at = _DECODE_FAILURE.search(str(e)), _AT_BYTE.search(str(e))
    what = _DECODE_REASONS.get(m.group(1) or m.group(2), "") if m else ""
    where = f" (at byte {at.group(1)})" if at else ""
    if what:
        return ProfileReadError(path, f"not a readable XSpace profile: {what}{where}")
    return ProfileReadError(
        path, "not a readable XSpace profile: its bytes are not an XSpace protobuf (damaged, or another kind of file)"
    )


# The decoders' failures (`_xdecode.c`, protobuf), said in the user's terms.
_DECODE_FAILURE = re.compile(r"Wire format was corrupt \(([^)]*)\)|String field had (bad UTF-8)")
_AT_BYTE = re.compile(r"at byte (\d+)")
_CUT = "the file ends in the middle of a record (cut short while copied or written?)"
_NOT_XSPACE = "the bytes are not an XSpace protobuf (damaged, or another kind of file)"
_DECODE_REASONS = {
    "truncated varint": _CUT,
    "length beyond the end": _CUT,
    "truncated fixed64": _CUT,
    "truncated fixed32": _CUT,
    "unterminated group": _CUT,
    "varint over 10 bytes": _NOT_XSPACE,
    "bad field number": _NOT_XSPACE,
    "bad wire type": _NOT_XSPACE,
    "groups nested too deep": _NOT_XSPACE,
    "mismatched end group": _NOT_XSPACE,
    "unexpected end group": _NOT_XSPACE,
    "bad UTF-8": "a name or text in it is not valid UTF-8",
    "line changed while read": "the file changed while it was read",
}


def _build_error(path: str, e: Exception) -> ProfileReadError | None:
    """The error to report for an exception from building the tables; None for one that means a bug."""
    if isinstance(e, (ProfileReadError, rawmod.DanglingRef, rawmod.MissingMetadata)):
        return _bytes_error(path, e)
    if isinstance(e, (ValueError, TypeError, KeyError, OverflowError, IndexError, MemoryError)):
        log.debug("unreadable XSpace profile %s", path, exc_info=e)
        return ProfileReadError(path, "malformed profile: a value in it is of the wrong kind or out of range")
    return None


class Builder(LineReader):
    """The whole space: its planes' lines read, on one time base, within the capture."""

    def build(self, progress: Progress | None) -> Profile:
        space = self.space
        host_planes = [p for p in space.planes if p.name == HOST_PLANE]
        gpu_planes = [p for p in space.planes if GPU_PLANE.match(p.name)]
        tpu = sum(1 for p in space.planes if TPU_PLANE.match(p.name))
        if not host_planes and not gpu_planes and not tpu:
            # device planes named ("/device:TPU:0"); other names not quoted: the bytes of a file that is
            # no profile at all (a link to another protobuf) can read as plane names
            shown = [repr(p.name[:60]) for p in space.planes if p.name.startswith("/")][:5]
            others = len(space.planes) - len(shown)
            names = ", ".join(shown + ([f"{others} not named as devices"] if others else []))
            raise ProfileReadError(self.path, f"no host or GPU plane in the profile (planes: {names})")
        start_ns = _start_time(space)
        lines = [(p, line) for p in host_planes + gpu_planes for line in p.lines]
        origin_ns, time_base, skipped = self._time_base(lines, start_ns)
        total = sum(len(line) for _, line in lines)
        done = 0
        devices: list[Device] = []
        streams: list[Stream] = []
        threads: list[HostThread] = []
        saved: list[SavedSteps] = []
        for p in host_planes + gpu_planes:
            values = Values(space, p, self.warn)
            m = GPU_PLANE.match(p.name)
            dev_id = int(m.group(1)) if m else -1
            if m and dev_id in {d.id for d in devices}:
                self.warn(f"two planes named {p.name!r}: their lines are read as one GPU")
            elif m:
                devices.append(_device_from_plane(p, dev_id))
            for line in p.lines:
                space.ready(line)
                base_ps = (line.timestamp_ns - origin_ns) * 1000
                if id(line) in skipped or abs(base_ps) > MAX_ABS_PS:
                    if id(line) not in skipped:
                        self.warn(f"line {line.name[:60]!r} starts too far from the others; skipped")
                    space.release(line)
                    continue
                name = line.display_name or line.name
                if m:
                    if line.name == "Steps":
                        t = (
                            self.read_device_line(p, line, base_ps, values)
                            if len(line)
                            else EventTable.empty(DEVICE_SPEC)
                        )
                        groups = t.group.copy()
                        labels = [self.names[i] for i in t.name.tolist()]
                        digits = np.array([int(x) if x.isdigit() and len(x) < 18 else -1 for x in labels], np.int64)
                        groups = np.where(groups >= 0, groups, digits) if len(groups) else groups
                        saved.append(SavedSteps(dev_id, t.start_ps, t.dur_ps, groups))
                    elif line.name not in DERIVED_LINES:
                        sm = STREAM_LINE.match(line.name)
                        sid = int(sm.group(1)) if sm else line.id
                        streams.append(Stream(dev_id, sid, name, self.read_device_line(p, line, base_ps, values)))
                else:
                    thread_index = len(threads)
                    threads.append(
                        HostThread(line.id, name, self.read_host_line(p, line, base_ps, values, thread_index))
                    )
                done += len(line)
                space.release(line)  # its raw columns: the table keeps what it needs
                if progress is not None:
                    progress(done, total)
        capture_errors = self._hold_to_capture(space, start_ns, time_base, streams, threads, saved)
        tables = [s.events for s in streams] + [t.events for t in threads]
        if time_base == FIRST_EVENT:  # no profile start to measure from: the earliest event is zero
            firsts = [int(e.start_ps[0]) for e in tables if len(e)]
            firsts += [int(x.start_ps[0]) for x in saved if len(x.start_ps)]
            first = min(firsts, default=0)
            for arr in [e.start_ps for e in tables] + [x.start_ps for x in saved]:
                arr -= first
            origin_ns += first // 1000
        for i, s in enumerate(streams):
            s.events = s.events.with_column("stream", Constant(len(s.events), i, np.int32))
        # An op is placed on the device when device events are attributed to it.
        on_device = np.zeros(len(self.ops), dtype=bool)
        for s in streams:
            ops = s.events.op
            on_device[ops[ops >= 0]] = True
        self.ops.on_device = on_device
        ends = [int((e.start_ps + e.dur_ps).max()) for e in tables if len(e)]  # end_ps is not kept: few read it
        profile = Profile(
            host=self.host,
            path=self.path,
            names=self.names,
            ops=self.ops,
            devices=sorted(devices, key=lambda d: d.id),
            streams=streams,
            threads=threads,
            saved_steps=saved,
            origin_ns=origin_ns,
            end_ps=max(ends) if ends else 0,
            has_xla=self.has_xla,
            time_base=time_base,
            tpu_planes=tpu,
            start_ns=start_ns,
            warnings=self.warnings,
            capture_errors=[str(e) for e in space.errors] + [str(w) for w in space.warnings] + capture_errors,
        )
        profile.framework = _framework(space, profile)
        profile.gpu_signs = _gpu_signs(profile)
        return profile

    def _hold_to_capture(
        self,
        space: RawSpace,
        start_ns: int | None,
        time_base: str,
        streams: list[Stream],
        threads: list[HostThread],
        saved: list[SavedSteps],
    ) -> list[str]:
        """Events starting outside the capture dropped, durations cut at its end (see `extent`);
        the capture error saying what was dropped."""
        stop_ns = _stop_time(space)
        stated = None
        if time_base == PROFILE_START and start_ns is not None and stop_ns is not None and stop_ns > start_ns:
            stated = (0.0, (stop_ns - start_ns) * 1000.0)
        holders: list[Stream | HostThread] = [*streams, *threads]
        starts = [h.events.start_ps for h in holders] + [x.start_ps for x in saved]
        lo, hi, _ = extent.find(np.concatenate(starts) if starts else np.zeros(0), stated)
        dropped = cut = 0
        first = ""
        for h in holders:
            t = h.events
            out = extent.outside(t.start_ps, lo, hi)
            if out.any():
                if not first:
                    at = int(np.argmax(out))
                    first = f"{self.names[int(t.name[at])]!r} on line {h.name[:60]!r} at {_ms(int(t.start_ps[at]))} ms"
                dropped += int(out.sum())
                t = t.take(~out)
            h.events, n = extent.clip(t, hi)
            cut += n
        for x in saved:
            keep = ~extent.outside(x.start_ps, lo, hi)
            x.start_ps, x.group = x.start_ps[keep], x.group[keep]
            x.dur_ps = np.minimum(x.dur_ps[keep], np.maximum(np.int64(min(hi, 2**62)) - x.start_ps, 0))
        if cut:
            self.warn(extent.cut_message(cut))
        if not dropped:
            return []
        return [extent.dropped_message(dropped, first, f"{_ms(lo)}", f"{_ms(hi)} ms from the capture's start")]

    def _time_base(self, lines: list[tuple[RawPlane, RawLine]], start_ns: int | None) -> tuple[int, str, set]:
        """(origin ns, time base, ids of lines skipped). Profilers write line timestamps relative to
        the profile's start; the trace viewer's zero is that start. Files with epoch timestamps are
        measured from their start time (else their first line); a line whose timestamp disagrees with
        the others by more than `NORMALISED_NS` is broken and skipped."""
        with_events = [line for _, line in lines if len(line)]
        stamps = np.array([line.timestamp_ns for line in with_events], np.float64)
        skipped: set = set()
        if not len(stamps):
            return 0, PROFILE_START, skipped
        epoch_like = stamps >= NORMALISED_NS
        if epoch_like.any() and not epoch_like.all():
            # keep the majority; the other lines are broken
            keep_epoch = epoch_like.sum() * 2 > len(stamps)  # a tie keeps the profilers' convention
            for line, e in zip(with_events, epoch_like.tolist()):
                if e != keep_epoch:
                    skipped.add(id(line))
            self.warn(f"{len(skipped)} line(s) with timestamps far from the others were skipped")
            stamps = stamps[epoch_like == keep_epoch]
            epoch_like = epoch_like[epoch_like == keep_epoch]
        if not epoch_like.any():
            return 0, PROFILE_START, skipped
        if start_ns is not None and abs(float(stamps.min()) - start_ns) < NORMALISED_NS:
            return start_ns, PROFILE_START, skipped
        first = min(line.timestamp_ns for line in with_events if id(line) not in skipped)
        return first, FIRST_EVENT, skipped


def _start_time(space: RawSpace, stat: str = "profile_start_time") -> int | None:
    for p in space.planes:
        if p.name == TASK_ENV_PLANE:
            v = p.stats.get(stat)
            x = meta_value_int(v) if v is not None else -1
            return x if x > 0 else None
    return None


def _stop_time(space: RawSpace) -> int | None:
    return _start_time(space, "profile_stop_time")


def _ms(ps: float) -> str:
    """A time in ps as ms, three decimals."""
    return f"{ps / 1e9:.3f}"


def _framework(space: RawSpace, p: Profile) -> str:
    for plane in space.planes:
        if plane.name == METADATA_PLANE and any(k.startswith("jax") for k in plane.stats):
            return JAX
    # JAX without its metadata: its executor threads, or the PjRt C API's execute call (classify.JAX_THREADS)
    if any(t.name.startswith(JAX_THREADS) for t in p.threads) or any(p.names.get(n) >= 0 for n in JAX_EVENTS):
        return JAX
    tf_names = ("EagerExecute", "ExecutorState::Process", "FunctionRun", "IteratorGetNextOp::DoCompute")
    if any(p.names.get(n) >= 0 for n in tf_names) or any(
        t.name.startswith(("tf_Compute", "tf_data")) for t in p.threads
    ):
        return TENSORFLOW
    return UNKNOWN


def _gpu_signs(p: Profile) -> bool:
    """Signs on the host that the job used a GPU: GPU threads, CUDA API calls, GPU allocators."""
    if any(re.search(r"gpu", t.name, re.I) for t in p.threads):
        return True
    return any(
        bool((t.events.kind == Kind.LAUNCH).any()) or bool((t.events.allocator >= 0).any() and _gpu_allocator(p, t))
        for t in p.threads
    )


def _gpu_allocator(p: Profile, t: HostThread) -> bool:
    ids = distinct(t.events.allocator[t.events.allocator >= 0]).tolist()
    return any("gpu" in p.names[i].lower() for i in ids)


def _device_from_plane(p: RawPlane, device_id: int) -> Device:
    s = p.stats

    def num(key: str, cast: Callable[[Any], Any] = int) -> Any:
        v = s.get(key)
        try:
            x = cast(v) if v is not None else None
        except (TypeError, ValueError, OverflowError):
            return None
        if x is not None and (x != x or abs(x) > 2**62):  # NaN or absurd
            return None
        return x

    major, minor = num("compute_cap_major"), num("compute_cap_minor")
    name = s.get("gpu_device_name") or s.get("device_name") or p.name
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    vendor = vendor_of(str(s.get("device_vendor") or ""), str(name))
    if vendor == AMD:
        major = minor = None  # ROCm's major/minor are the gfx generation, not a CUDA compute capability
    return Device(
        id=device_id,
        name=str(name)[:200],
        plane_name=p.name,
        compute_capability=(major, minor or 0) if major is not None and 0 <= major < 100 else None,
        sm_count=num("core_count"),
        clock_khz=num("clock_rate"),
        memory_bytes=num("memory_size"),
        memory_bandwidth=num("memory_bandwidth", float),
        vendor=vendor,
        gfx=amd_gfx(str(name)) if vendor == AMD else None,
    )
