"""A real TensorBoard with its own plugins and the GPU Advisor only, as `tensorboard.main` runs it
but without the other installed plugins: torch-tb-profiler (a test dependency) starts one process
per trace file, which on a logdir of 1,024 PyTorch traces took all the memory of the machine.

    python scripts/tensorboard_ours.py --logdir LOGDIR --port PORT ...
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from tensorboard import default, main_lib, program  # noqa: E402
from tensorboard.plugins import base_plugin  # noqa: E402

from tb_gpu_advisor.plugin import GpuAdvisorLoader  # noqa: E402


def main() -> None:
    main_lib.global_init()
    tb = program.TensorBoard(plugins=[*default.get_static_plugins(), GpuAdvisorLoader])
    try:
        app.run(tb.main, flags_parser=tb.configure)
    except base_plugin.FlagsError as e:
        print(f"Error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
