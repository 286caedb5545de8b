import os

import pytest
from support import scenarios

from tb_gpu_advisor.formats.discovery import discover, has_profiles


def _snapshot(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            st = os.stat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def test_runs_named_as_the_profile_tab(tmp_path):
    w = scenarios.single_gpu()
    w.write(str(tmp_path), run="", session="2026_01_01_00_00_00")
    w.write(str(tmp_path), run="train", session="2026_01_02_00_00_00")
    w.write(str(tmp_path), run="job/a/b", session="2026_01_03_00_00_00")
    other = scenarios.multi_gpu()
    other.host = "worker1"
    other.write(str(tmp_path), run="train", session="2026_01_02_00_00_00")
    (tmp_path / "train" / "events.out.tfevents.1").write_bytes(b"")
    legacy = tmp_path / "old" / "plugins" / "profile" / "2019_01_01"
    legacy.mkdir(parents=True)
    (legacy / "host.trace.json.gz").write_bytes(b"x")
    before = _snapshot(tmp_path)
    files, old = discover(str(tmp_path))
    assert [(f.run, f.host) for f in files] == [
        ("2026_01_01_00_00_00", "worker0"),
        ("job/a/b/2026_01_03_00_00_00", "worker0"),
        ("train/2026_01_02_00_00_00", "worker0"),
        ("train/2026_01_02_00_00_00", "worker1"),
    ]
    assert all(f.size == os.path.getsize(f.path) and f.mtime > 0 for f in files)
    assert [r.run for r in old] == ["old/2019_01_01"]
    assert has_profiles(str(tmp_path))
    assert _snapshot(tmp_path) == before  # read-only


def test_empty_and_missing_logdirs(tmp_path):
    assert discover(str(tmp_path)) == ([], [])
    assert discover(str(tmp_path / "nope")) == ([], [])
    assert not has_profiles(str(tmp_path))
    assert not has_profiles(str(tmp_path / "nope"))


@pytest.mark.parametrize("tensorflow_loaded", [False, True])
def test_remote_logdir_through_tensorboards_file_system_layer(tensorflow_loaded):
    """A non-local logdir (fsspec's in-memory file system, as gs:// and s3:// go through the same layer),
    read the same whether or not something loaded TensorFlow first (the profile plugin does; TF's gfile
    has no `memory://`, and this test once failed when it ran after one that imported the plugin)."""
    import fsspec

    if tensorflow_loaded:
        pytest.importorskip("tensorflow")

    from tb_gpu_advisor.report.engine import read_path as read_profile

    fs = fsspec.filesystem("memory")
    with fs.open("/remote_logs/job/train/plugins/profile/s1/worker0.xplane.pb", "wb") as f:
        f.write(scenarios.single_gpu().to_bytes())
    try:
        files, _ = discover("memory://remote_logs")
        assert [(f.run, f.host) for f in files] == [("job/train/s1", "worker0")]
        assert files[0].size > 0 and has_profiles("memory://remote_logs")
        p = read_profile(files[0].path)
        # 45 events written, and the 3 FunctionRun and 3 ExecutorState::Process events that group the steps
        assert len(p.devices) == 1 and p.event_count == 51
    finally:
        fs.rm("/remote_logs", recursive=True)
