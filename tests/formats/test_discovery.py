import os
import time

import pytest
from support import hostile_profile, scenarios

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


def test_deep_folders_beside_a_run_do_not_hide_it(tmp_path):
    """Issue 51: 1,100 nested folders overflowed the walk's recursion (os.walk: RecursionError, so no
    run was listed, the tab answered 500), and at depth 900 a listing took 17 s. The walk goes down
    MAX_DEPTH folders at most, without recursion; the run beside the folders is listed."""
    scenarios.single_gpu().write(str(tmp_path), run="real", session="s")
    hostile_profile.nested_folders(str(tmp_path / "deep"), 1100)
    try:
        t = time.monotonic()
        files, _ = discover(str(tmp_path))
        assert [f.run for f in files] == ["real/s"] and time.monotonic() - t < 5
    finally:
        hostile_profile.remove_nested(str(tmp_path / "deep"))
    # a run as deep as the bound allows is found, one folder deeper is not
    from tb_gpu_advisor.formats.discovery import MAX_DEPTH

    for depth, found in ((MAX_DEPTH - 3, True), (MAX_DEPTH - 2, False)):
        d = tmp_path / f"at{depth}"
        run = "/".join(["r"] * depth)
        scenarios.single_gpu().write(str(d), run=run, session="s")
        assert any(f.run == f"{run}/s" for f in discover(str(d))[0]) is found, depth


def test_links_to_a_folder_holding_the_logdir_are_not_walked(tmp_path):
    """A link to `/` inside the logdir walked the whole file system on every listing (20.7 s). A link
    to a folder that holds the logdir is not followed (it leads back to the logdir and all beside it);
    other links are, as the Profile tab's documented behaviour has it."""
    logdir = tmp_path / "logs"
    scenarios.single_gpu().write(str(logdir), run="a", session="s")
    scenarios.single_gpu().write(str(tmp_path / "other"), run="b", session="s")
    os.symlink("/", logdir / "root")
    os.symlink(tmp_path, logdir / "up")
    os.symlink(tmp_path / "other", logdir / "other")
    t = time.monotonic()
    files, _ = discover(str(logdir))
    assert [f.run for f in files] == ["a/s", "other/b/s"] and time.monotonic() - t < 5


def test_confined_walks_follow_links_only_inside(tmp_path):
    """The MCP server's walk (settings' confine, TB_GPU_ADVISOR_CONFINE): a link to a folder outside
    the logdir is not followed (without confine, it is)."""
    logdir = tmp_path / "logs"
    scenarios.single_gpu().write(str(logdir), run="a", session="s")
    scenarios.single_gpu().write(str(tmp_path / "other"), run="b", session="s")
    os.symlink(tmp_path / "other", logdir / "out")
    assert [f.run for f in discover(str(logdir), os.path.realpath(logdir))[0]] == ["a/s"]
    assert [f.run for f in discover(str(logdir))[0]] == ["a/s", "out/b/s"]


def test_a_local_file_url_is_its_path_and_unknown_schemes_are_named():
    from tb_gpu_advisor.formats.discovery import NoFileSystem, check_scheme, local_path

    assert local_path("file:///a/b") == "/a/b" and local_path("file://localhost/a") == "/a"
    assert local_path("gs://b/x") == "gs://b/x" and local_path("/a") == "/a"
    with pytest.raises(NoFileSystem, match=r"^nosuch://x: no file system here reads nosuch://"):
        check_scheme("nosuch://x")
    check_scheme("memory://x")  # fsspec's (the test extra installs it)
