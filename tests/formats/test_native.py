"""The native decoder and the pure-Python one give identical profiles: on every profile the tests make
(demo runs, real captures, writer scenarios, generated ones), on broken bytes, and under mutation. A
file either reads to the same tables with both, or both refuse it."""

import glob
import os
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from support import scenarios
from support.hypothesis_profiles import profiles

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.xplane import native, reader, scan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, "demo_logs", "*", "plugins", "profile", "*", "*.xplane.pb")))
FILES += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "*", "plugins", "profile", "*", "*.xplane.pb")))

pytestmark = pytest.mark.skipif(not scan.available(), reason="the native decoder is not built")


def read(data: bytes, pure: bool):
    old = os.environ.get("TB_GPU_ADVISOR_PURE_PYTHON")
    os.environ["TB_GPU_ADVISOR_PURE_PYTHON"] = "1" if pure else "0"
    try:
        return reader.read_profile_bytes(data, "f.xplane.pb", "h")
    except ProfileReadError as e:
        return e
    finally:
        if old is None:
            os.environ.pop("TB_GPU_ADVISOR_PURE_PYTHON", None)
        else:
            os.environ["TB_GPU_ADVISOR_PURE_PYTHON"] = old


def same(data: bytes) -> None:
    a, b = read(data, False), read(data, True)
    if isinstance(a, ProfileReadError) or isinstance(b, ProfileReadError):
        assert isinstance(a, ProfileReadError) and isinstance(b, ProfileReadError), (a, b)
        return
    equal_profiles(a, b)


def equal_profiles(a, b) -> None:
    assert a.names.strings == b.names.strings
    assert [(o, t, s) for o, t, s in zip(a.ops.name, a.ops.type, a.ops.shape)] == [
        (o, t, s) for o, t, s in zip(b.ops.name, b.ops.type, b.ops.shape)
    ]
    assert [d.to_json() for d in a.devices] == [d.to_json() for d in b.devices]
    assert [(s.device_id, s.stream_id, s.name) for s in a.streams] == [
        (s.device_id, s.stream_id, s.name) for s in b.streams
    ]
    assert [t.name for t in a.threads] == [t.name for t in b.threads]
    for x, y in zip(a.streams + a.threads, b.streams + b.threads):
        assert set(x.events.columns) == set(y.events.columns)
        for k, col in x.events.columns.items():
            assert np.array_equal(col, y.events.columns[k], equal_nan=True), (x.name, k)
    for x, y in zip(a.saved_steps, b.saved_steps):
        assert np.array_equal(x.start_ps, y.start_ps) and np.array_equal(x.dur_ps, y.dur_ps)
    for f in ("origin_ns", "end_ps", "has_xla", "framework", "time_base", "tpu_planes", "gpu_signs", "start_ns",
              "warnings", "capture_errors"):  # fmt: skip
        assert getattr(a, f) == getattr(b, f), f


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, ROOT).split(os.sep)[1])
def test_identical_on_every_committed_profile(path):
    same(open(path, "rb").read())


@pytest.mark.parametrize("make", [lambda: scenarios.single_gpu("new"), lambda: scenarios.single_gpu("old"),
                                  lambda: scenarios.multi_gpu("new"), lambda: scenarios.multi_gpu("old"),
                                  scenarios.bert_8gpu])  # fmt: skip
def test_identical_on_writer_scenarios(make):
    same(make().to_bytes())


def test_identical_or_both_refused_on_broken_bytes():
    data = open(FILES[0], "rb").read()
    rng = random.Random(11)
    cases = [
        b"",
        b"\x00",
        b"not a profile",
        data[:1],
        data[: len(data) // 2],
        data[:-1],
        bytes(rng.randrange(256) for _ in range(500)),
    ]
    cases += [data[: rng.randrange(len(data))] for _ in range(40)]
    for _ in range(150):  # a few bytes changed
        b = bytearray(data)
        for _ in range(rng.randrange(1, 6)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        cases.append(bytes(b))
    for case in cases:
        same(case)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profiles())
def test_identical_on_generated_profiles(w):
    same(w.to_bytes())


@pytest.mark.parametrize("path", FILES[:6], ids=lambda p: os.path.relpath(p, ROOT).split(os.sep)[1])
def test_lines_decoded_one_by_one_equal_one_pass(path):
    """The lazy decode (line headers first, each line's events later, on a worker thread) gives the
    columns and string ids of the one-pass decode (the described stats in the descriptions)."""
    from tb_gpu_advisor.formats.xplane import _xdecode
    from tb_gpu_advisor.formats.xplane.raw import DESCRIBED, WANTED_STATS

    data = open(path, "rb").read()
    planes, _, _, _, strings = _xdecode.decode(data, WANTED_STATS)
    lazy = native.decode(data)
    lazy.finish()
    assert list(lazy.strings) == [s.decode("utf-8", "replace") for s in strings]
    for (_, _, _, _, _, lines), plane in zip(planes, lazy.planes, strict=True):
        for (_, _, _, _, n, mid, off, dur, stats), line in zip(lines, plane.lines, strict=True):
            assert len(line) == n == len(line.mid)
            assert line.mid.tobytes() == bytes(mid) and line.off.tobytes() == bytes(off)
            assert line.dur.tobytes() == bytes(dur)
            got = {k: (v.kind.tobytes(), v.val.tobytes()) for k, v in line.stats.items()}
            if line.desc is not None:  # the described stats come per description: spread over the events
                for j, k in enumerate(DESCRIBED):
                    kind, val = line.desc_rows[line.desc, 1 + 2 * j], line.desc_rows[line.desc, 2 + 2 * j]
                    if kind.any():
                        got[WANTED_STATS[k]] = (kind.astype(np.int8).tobytes(), val.tobytes())
            assert {WANTED_STATS[k]: (bytes(a), bytes(b)) for k, (a, b) in stats.items()} == got


def test_broken_bytes_in_a_later_line_come_before_a_build_error_in_an_earlier_one():
    """A file whose first line names missing metadata and whose second line holds a string that is
    not UTF-8: the bytes are reported (as when every line is decoded before the build), by both
    decoders, while the worker thread is still decoding when the build fails."""
    from tb_gpu_advisor.formats.xplane import xplane_pb2

    space = xplane_pb2.XSpace()
    p = space.planes.add(id=1, name="/host:CPU")
    p.stat_metadata[1].id, p.stat_metadata[1].name = 1, "tf_op"
    p.event_metadata[1].id, p.event_metadata[1].name = 1, "op"
    first = p.lines.add(id=1, name="python")
    first.events.add(metadata_id=99, offset_ps=0, duration_ps=5)  # no metadata 99
    second = p.lines.add(id=2, name="worker")
    for i in range(2000):
        ev = second.events.add(metadata_id=1, offset_ps=i * 10, duration_ps=5)
        ev.stats.add(metadata_id=1, str_value="OK%04d" % i if i != 1999 else "MARK")
    data = space.SerializeToString().replace(b"MARK", b"\xff\xfe\xff\xfe")
    for pure in (False, True):
        err = read(data, pure)
        assert isinstance(err, ProfileReadError), err
        assert "not a readable XSpace profile" in err.message, err.message
    fixed = space.SerializeToString()  # the same file without the bad bytes: the build's own error
    for pure in (False, True):
        err = read(fixed, pure)
        assert isinstance(err, ProfileReadError) and "metadata 99" in err.message, err


@pytest.mark.parametrize("offset", [70_000, 1 << 40])
def test_stat_ids_beyond_the_lookup_table(offset):
    """Stat ids are small in the profilers' files (the scanner looks them up in a table then); large
    ones take the binary search and read to the same profile."""
    from tb_gpu_advisor.formats.xplane import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(open(FILES[0], "rb").read())

    def shift(stats):
        for st in stats:
            st.metadata_id += offset
            if st.WhichOneof("value") == "ref_value":
                st.ref_value += offset

    for plane in space.planes:
        old = {k: v for k, v in plane.stat_metadata.items()}
        plane.stat_metadata.clear()
        for k, v in old.items():
            plane.stat_metadata[k + offset].CopyFrom(v)
            plane.stat_metadata[k + offset].id = v.id + offset
        shift(plane.stats)
        for md in plane.event_metadata.values():
            shift(md.stats)
        for line in plane.lines:
            for ev in line.events:
                shift(ev.stats)
    data = space.SerializeToString()
    same(data)
    a, b = read(open(FILES[0], "rb").read(), False), read(data, False)
    assert a.names.strings == b.names.strings
    for x, y in zip(a.streams + a.threads, b.streams + b.threads):
        for k, col in x.events.columns.items():
            assert np.array_equal(col, y.events.columns[k], equal_nan=True), (x.name, k)


@pytest.mark.parametrize(
    "stat, value",
    [
        (bytes([0x08, 0x7E, 0x20, 0x07, 0x20, 0x09]), 9),  # a value, then another: the last one wins
        (bytes([0x20, 0x07, 0x08, 0x7E]), 7),  # the value before the metadata id
        (bytes([0x08, 0xAC, 0x02, 0x20, 0x07]), 7),  # a two-byte metadata id (300)
        (bytes([0x08, 0x7E, 0x11]) + bytes(8) + bytes([0x20, 0x05]), 5),  # a double, then an int
        (bytes([0x08, 0x7E, 0x2A, 0x01, 0xFF]), None),  # a string that is not UTF-8: refused
        (bytes([0x08, 0x7E, 0x20, 0x80, 0x80]), None),  # a truncated value: refused
    ],
    ids=["repeated", "value-first", "two-byte-id", "double-then-int", "bad-utf8", "truncated"],
)
def test_stats_laid_out_otherwise_read_alike(stat, value):
    """The scanner reads the usual stat layout (a one-byte metadata id, then one value) straight;
    every other layout by the general path, as protobuf does. Each case replaces one stat of a real
    profile with bytes of the same length."""
    from tb_gpu_advisor.formats.xplane import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(open(FILES[0], "rb").read())
    plane = next(p for p in space.planes if p.name.startswith("/device:GPU:") and any(ln.events for ln in p.lines))
    for sid in (126, 300):
        plane.stat_metadata[sid].id = sid
        plane.stat_metadata[sid].name = "correlation_id"
    line = next(ln for ln in plane.lines if ln.events)
    ev = line.events.add()
    ev.CopyFrom(line.events[-2])
    del ev.stats[:]
    placeholder = xplane_pb2.XStat(metadata_id=126, bytes_value=b"\x9d" * (len(stat) - 4)).SerializeToString()
    ev.stats.add().ParseFromString(placeholder)
    data = space.SerializeToString()
    assert len(placeholder) == len(stat) and data.count(placeholder) == 1
    data = data.replace(placeholder, stat)
    same(data)
    p = read(data, False)
    if value is None:
        assert isinstance(p, ProfileReadError)
        return
    corr = [s.events.corr for s in p.streams if len(s.events) and s.device_id == int(plane.name.rsplit(":", 1)[1])]
    assert any(value in c.tolist() for c in corr)


def test_lines_with_more_event_descriptions_than_the_scanner_numbers(monkeypatch):
    """Over DESCRIPTION_LIMIT distinct descriptions in a line the scanner stops numbering them and the
    reader groups the columns itself: the same profile either way."""
    from tb_gpu_advisor.formats.xplane import native

    path = next(f for f in FILES if "12_multi_gpu" in f)
    data = open(path, "rb").read()
    numbered = read(data, False)
    space = native.decode(data)
    assert all(space.ready(line).desc is not None for p in space.planes for line in p.lines)
    monkeypatch.setattr(scan, "DESCRIPTION_LIMIT", 2)
    space = native.decode(data)
    lines = [space.ready(line) for p in space.planes for line in p.lines]
    assert any(line.desc is None for line in lines if len(line)) and any(line.desc is not None for line in lines)
    equal_profiles(numbered, read(data, False))


def test_identical_with_thousands_of_event_descriptions():
    """3,000 distinct (op, shape, launch) descriptions in one line: the scanner's table grows."""
    from support.xplane_writer import GPU_SPECS, ProfileWriter

    w = ProfileWriter("worker0")
    stream = w.gpu(0, GPU_SPECS["V100"]).stream(7, "Compute")
    w.thread("python", 1)
    for k in range(3000):
        stream.kernel(f"k{k % 7}", k * 10.0, 5.0, op=f"layer{k % 1500}/MatMul", shape=f"[{k % 40},{k % 3}]",
                      grid=(k % 5 + 1, 1, 1))  # fmt: skip
    data = w.to_bytes()
    same(data)
    p = read(data, False)
    assert len({int(o) for s in p.streams for o in s.events.op}) == 1500


def test_a_described_stat_referring_to_missing_metadata_is_refused_by_both():
    """kernel_details as a reference (the new format) to stat metadata that is not there: the
    scanner keeps described stats in its descriptions, and still refuses the dangling reference."""
    from tb_gpu_advisor.formats.xplane import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(scenarios.single_gpu("new").to_bytes())
    plane = next(p for p in space.planes if p.name.startswith("/device:GPU:"))
    target = next(k for k, v in plane.stat_metadata.items() if v.name.startswith("regs:"))
    del plane.stat_metadata[target]
    data = space.SerializeToString()
    same(data)
    assert isinstance(read(data, False), ProfileReadError)
