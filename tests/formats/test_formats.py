"""The formats' registry: which files each format claims and where, how their bytes look, and that
discovery and the engine need nothing else to find and read a format's files."""

from __future__ import annotations

import dataclasses
import glob
import gzip
import os
import shutil

import pytest

from tb_gpu_advisor import formats
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.discovery import discover, has_profiles
from tb_gpu_advisor.report import engine

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
XSPACE_FILES = sorted(glob.glob(os.path.join(ROOT, "demo_logs", "*", "plugins", "profile", "*", "*.xplane.pb")))
KINETO_FILES = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "pytorch", "*", "*.pt.trace.json*")))
KINETO_FILES += sorted(glob.glob(os.path.join(ROOT, "demo_logs", "*", "*.pt.trace.json*")))


def head(path: str, n: int = 64) -> bytes:
    with open(path, "rb") as f:
        return f.read(n)


def test_the_files_exist():
    assert len(XSPACE_FILES) >= 20 and len(KINETO_FILES) >= 10


@pytest.mark.parametrize("path", XSPACE_FILES + KINETO_FILES, ids=os.path.basename)
def test_each_file_is_claimed_and_detected_by_its_own_format_only(path):
    by_name = formats.for_file(path)
    assert by_name is (formats.XSPACE if path.endswith(".xplane.pb") else formats.KINETO)
    assert [f.name for f in formats.FORMATS if f.detect(head(path))] == [by_name.name]


def test_plain_kineto_text_and_odd_bytes():
    assert formats.detect(b'\n{"traceEvents": []}') is formats.KINETO  # a newline first: not taken for a plane
    assert formats.detect(b'  \t{"schemaVersion": 1}') is formats.KINETO
    # a plane (field 1) of 5 bytes whose first field is its name (field 2)
    assert formats.detect(b"\x0a\x05\x12\x03/ho") is formats.XSPACE
    for garbage in (b"", b"\x00" * 64, b"<html>not a profile</html>", b"PK\x03\x04", b'"a string"', b"\x0a"):
        assert formats.detect(garbage) is None, garbage


@pytest.mark.parametrize(
    "parts,xspace,kineto",
    [
        ([], None, ""),
        (["job", "train"], None, "job/train"),
        (
            ["job", "train", "plugins", "profile", "2026_01_01"],
            "job/train/2026_01_01",
            "job/train/plugins/profile/2026_01_01",
        ),
        (["plugins", "profile", "s1"], "s1", "plugins/profile/s1"),
        (["plugins", "profile"], None, "plugins/profile"),
    ],
)
def test_where_each_format_s_files_live(parts, xspace, kineto):
    assert formats.XSPACE.run(parts) == xspace and formats.KINETO.run(parts) == kineto


@pytest.mark.parametrize(
    "name,host,kind",
    [
        ("gpu-worker-0.xplane.pb", "gpu-worker-0", "xplane"),
        ("/a/b/worker0.1623143089861.pt.trace.json.gz", "worker0.1623143089861", "pytorch"),
        ("C:\\logs\\rank1.17.pt.trace.json", "rank1.17", "pytorch"),
        ("host.trace.json.gz", "host.trace.json.gz", None),  # an old capture's file: no format's
        ("notes.txt", "notes.txt", None),
    ],
)
def test_names_and_hosts(name, host, kind):
    fmt = formats.for_file(name)
    assert (fmt.name if fmt else None) == kind and formats.host_name(name) == host
    if kind:
        assert formats.by_name(kind) is fmt


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="no profile format named 'nsys'"):
        formats.by_name("nsys")


def test_the_registry_is_imported_without_numpy():
    """The command imports it (through discovery) before NumPy, to start reading meanwhile."""
    import subprocess
    import sys

    code = "import sys, tb_gpu_advisor.formats.discovery; print('numpy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT}
    )
    assert out.stdout.strip() == "False", out.stderr


def test_a_file_named_directly_is_read_by_its_name_else_by_its_bytes(tmp_path):
    """engine.read_path: the same Profile whatever the file is called, when its bytes say what it is."""
    for original in (XSPACE_FILES[0], KINETO_FILES[0]):
        renamed = tmp_path / "capture.bin"
        shutil.copy(original, renamed)
        by_name, by_bytes = engine.read_path(original), engine.read_path(str(renamed))
        assert by_bytes.event_count == by_name.event_count > 0
        assert by_bytes.framework == by_name.framework and by_bytes.host == "capture.bin"
    text = tmp_path / "notes.txt"
    text.write_text("not a profile")
    with pytest.raises(ProfileReadError) as e:
        engine.read_path(str(text))
    assert (
        str(e.value)
        == f"{text}: not a profile: neither its name nor its bytes are those of .xplane.pb or .pt.trace.json[.gz]"
    )


def test_a_format_in_the_registry_is_found_and_read_with_no_other_change(tmp_path, monkeypatch):
    """The seam: a third format (here Kineto JSON under its own name and kind, `.toy.json`) added to
    FORMATS is discovered, named and read by discovery and the engine as they stand."""
    toy = dataclasses.replace(formats.KINETO, name="toy", title="Toy trace", suffixes=(".toy.json",))
    monkeypatch.setattr(formats, "FORMATS", (*formats.FORMATS, toy))
    real = KINETO_FILES[0]
    run = tmp_path / "toy_run"
    run.mkdir()
    data = gzip.decompress(open(real, "rb").read()) if real.endswith(".gz") else open(real, "rb").read()
    (run / "rank0.toy.json").write_bytes(data)
    assert has_profiles(str(tmp_path))
    files, legacy = discover(str(tmp_path))
    assert [(f.run, f.host, f.kind) for f in files] == [("toy_run", "rank0", "toy")] and legacy == []
    assert engine.read_file(files[0]).event_count == engine.read_path(real).event_count > 0
