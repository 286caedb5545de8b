import json
import os
import socket
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# Property tests explore new examples on every local run; CI (CI=true) replays one fixed sequence, so a
# landing's outcome does not depend on the draw (what a local run finds becomes a test of its own).
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, database=None)
    if os.environ.get("CI"):
        _hypothesis_settings.load_profile("ci")
except ImportError:  # hypothesis is a test extra
    pass


def free_port() -> int:
    """A free TCP port on the loopback address, for a server a test starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def convert(data: bytes, tool: str):
    """Run the profile plugin's own converter on bytes, with a scratch path outside any logdir
    (it writes cache files next to the path it is given)."""
    from xprof.convert import raw_to_tool_data

    from tb_gpu_advisor.formats.xplane import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(data)
    host = space.hostnames[0] if space.hostnames else "localhost"  # must match the file name
    with tempfile.TemporaryDirectory() as scratch:
        out, _ = raw_to_tool_data.xspace_to_tools_data_from_byte_string(
            [data], [os.path.join(scratch, f"{host}.xplane.pb")], tool, {}
        )
    if out is None:
        raise AssertionError(f"converter failed on tool {tool}")
    return json.loads(out)


def converter_percent(overview, key: str) -> float:
    props = next(t["p"] for t in overview if key in t.get("p", {}))
    return float(props[key].rstrip("%"))


@pytest.fixture
def converter():
    return convert


# -- every check of the registry must be seen by the section tests both firing and passing ---------

CHECK_TEST_MODULES = (
    "test_checks_capture.py",
    "test_checks_input.py",
    "test_checks_utilisation.py",
    "test_checks_kernels.py",
    "test_checks_precision.py",
    "test_checks_multigpu.py",
    "test_job.py",  # the job checks, on real and writer-made jobs
)
_DESELECTED: list = []


def pytest_deselected(items):
    _DESELECTED.extend(items)


def pytest_collection_modifyitems(session, config, items):
    """The registry test runs after the section tests, whose runs it reads."""
    last = [i for i in items if i.name == "test_every_check_is_seen_firing_and_passing"]
    items[:] = [i for i in items if i not in last] + last


def section_tests_complete(session) -> bool:
    """Whether this session runs every section test (none deselected, every module collected)."""
    files = {os.path.basename(str(i.fspath)) for i in session.items}
    deselected = {os.path.basename(str(i.fspath)) for i in _DESELECTED}
    return set(CHECK_TEST_MODULES) <= files and not deselected & set(CHECK_TEST_MODULES)
