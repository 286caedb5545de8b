"""The advisor's time zero is the trace viewer's: on every demo run, the committed JAX capture and a
real tensorflow-cpu capture made here, the first event of every stream and thread sits at the same
time (within 1 µs) in the profile plugin's own `trace_viewer` conversion of the file and in the
advisor's tables. A file whose zero differed (the first version was 128.69 ms off on a real capture)
fails here on every line."""

import glob
import os

import numpy as np
import pytest
from conftest import convert
from test_real_capture import _capture

from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, "demo_logs", "*", "plugins", "profile", "*", "*.xplane.pb")))
FILES += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "*", "plugins", "profile", "*", "*.xplane.pb")))
US = 1e6  # picoseconds per µs


def lines(converted: dict) -> dict[tuple[str, str], list[tuple[float, str]]]:
    """(process, thread) -> [(ts µs, name)] of the complete events of each thread the converter
    shows, in time order."""
    ev = converted["traceEvents"]
    process = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    thread = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
    out: dict = {}
    for e in ev:
        if e.get("ph") == "X" and (e["pid"], e.get("tid")) in thread:
            out.setdefault((process.get(e["pid"], ""), thread[(e["pid"], e["tid"])]), []).append((e["ts"], e["name"]))
    return {k: sorted(v) for k, v in out.items()}


def offsets(data: bytes) -> list[tuple[str, float]]:
    """For each stream and thread both show: the converter's first event there that the advisor
    also has (the advisor leaves out runtime plumbing such as ThreadpoolListener::Region, the
    converter memory events), and how far the advisor's nearest event of that name is, in µs."""
    p = read_profile_bytes(data, "f.xplane.pb", "h")
    ours = {(f"/device:GPU:{s.device_id}", s.name): s.events for s in p.streams}
    ours.update({("/host:CPU", t.name): t.events for t in p.threads})
    out = []
    for key, events in lines(convert(data, "trace_viewer")).items():
        table = ours.get(key)
        if table is None or not len(table):
            continue  # a line the converter derives (Steps, Framework Ops, ...)
        present = {p.names[i] for i in np.unique(table.name).tolist()}
        for ts, name in events[:200]:
            # the converter shows a step marker "train" as "train 0"
            match = [n for n in present if n == name or name.startswith(n + " ")]
            if match:
                ids = [p.names.get(n) for n in match]
                same = table.start_ps[np.isin(table.name, ids)]
                out.append((f"{key[0]} {key[1]} {name!r}", float(np.abs(same - ts * US).min()) / US))
                break
    return out


def assert_same_zero(data: bytes, at_least: int) -> None:
    found = offsets(data)
    assert len(found) >= at_least, found
    if read_profile_bytes(data, "f.xplane.pb", "h").streams:  # GPU streams are compared too
        assert any(line.startswith("/device:GPU") for line, _ in found), found
    assert all(delta < 1.0 for _, delta in found), [x for x in found if x[1] >= 1.0]


@pytest.mark.parametrize("path", FILES, ids=lambda f: os.path.relpath(f, ROOT).split(os.sep)[1])
def test_demo_and_committed_captures_share_the_viewer_zero(path):
    with open(path, "rb") as f:
        data = f.read()
    # every demo run has a GPU stream and a host thread at least
    assert_same_zero(data, at_least=2)


def test_real_tensorflow_capture_shares_the_viewer_zero(tmp_path_factory):
    f = _capture(tmp_path_factory, "tf_time_base", "--slow-map-ms", "5")
    with open(f.path, "rb") as fh:
        data = fh.read()
    assert_same_zero(data, at_least=2)


def test_the_check_fails_on_a_shifted_zero(monkeypatch):
    """The comparison itself can fail: with the advisor's times moved by 128.69 ms it does."""
    import tb_gpu_advisor.formats.xplane.reader as reader

    real = reader.read_profile_bytes

    def shifted(*a, **k):
        p = real(*a, **k)
        for t in [s.events for s in p.streams] + [t.events for t in p.threads]:
            t.column("start_ps")[:] += 128_690_000_000
        return p

    monkeypatch.setattr(__import__(__name__), "read_profile_bytes", shifted)
    with open(FILES[0], "rb") as f:
        found = offsets(f.read())
    assert found and all(abs(delta - 128_690) < 1 for _, delta in found)
