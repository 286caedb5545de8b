import json

import pytest
import scenarios

from tb_gpu_advisor.cli import main


@pytest.fixture
def logdir(tmp_path):
    scenarios.single_gpu().write(str(tmp_path), run="single", session="s1")
    scenarios.multi_gpu().write(str(tmp_path), run="multi", session="s1")
    return tmp_path


def test_summary_text(logdir, capsys):
    assert main(["summary", str(logdir), "--run", "single/s1"]) == 0
    out = capsys.readouterr().out
    assert "run single/s1  host worker0" in out
    assert "GPU 0: Tesla V100-SXM2-16GB  cc 7.0, 80 SMs" in out
    assert "steps: 3 from host-markers (\"train\"); mean 1.000 ms" in out
    assert "device busy 62.5% of step time" in out
    assert "16-bit compute 63.1% (6 of 9 kernels)" in out
    assert "device compute 0.555" in out and "host input wait 0.100" in out


def test_summary_json(logdir, capsys):
    assert main(["summary", str(logdir), "--json"]) == 0
    reports = json.loads(capsys.readouterr().out)["reports"]
    assert [(r["run"], r["host"]) for r in reports] == [("multi/s1", "worker0"), ("single/s1", "worker0")]
    multi, single = reports
    assert single["steps"]["count"] == 3 and single["steps"]["source"] == "host-markers"
    assert single["steps"]["mean_ms"] == pytest.approx(1.0)
    assert single["headline"]["device_busy_pct"] == pytest.approx(62.5)
    assert single["breakdown_ms"]["memcpy_h2d"] == pytest.approx(0.05)
    assert [d["id"] for d in multi["devices"]] == [0, 1, 2]
    assert [g["device_busy_pct"] for g in multi["headline"]["per_gpu"]] == pytest.approx([70.0, 50.0, 0.0])


def test_errors_exit_2_with_one_line(logdir, capsys, tmp_path_factory):
    assert main(["summary", str(logdir), "--run", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: unknown run 'nope' under {logdir}"
    assert main(["summary", str(logdir), "--run", "single/s1", "--host", "zz"]) == 2
    assert "unknown host 'zz'" in capsys.readouterr().err
    empty = tmp_path_factory.mktemp("empty")
    assert main(["summary", str(empty)]) == 2
    assert "no profile runs" in capsys.readouterr().err


def test_unreadable_file_is_named_and_others_still_reported(logdir, capsys):
    bad = logdir / "bad" / "plugins" / "profile" / "s1"
    bad.mkdir(parents=True)
    (bad / "worker0.xplane.pb").write_bytes(b"\x00garbage\xff" * 10)
    assert main(["summary", str(logdir)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and str(bad / "worker0.xplane.pb") in lines[0]
    assert "run single/s1" in captured.out and "run multi/s1" in captured.out
