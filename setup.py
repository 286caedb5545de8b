"""tb_gpu_advisor: a TensorBoard plugin (GPU Advisor tab) and a command that walk GPU profiles
through the GPU performance guide's checklist."""
import re
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
VERSION = re.search(r'__version__ = "([^"]+)"', (HERE / "tb_gpu_advisor" / "__init__.py").read_text()).group(1)

setup(
    name="tb_gpu_advisor",
    version=VERSION,
    description="GPU Advisor tab for TensorBoard: checks GPU profiles against the GPU performance guide",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["tb_gpu_advisor", "tb_gpu_advisor.*"]),
    package_data={"tb_gpu_advisor": ["static/*", "xplane/*.proto"]},
    install_requires=[
        "tensorboard>=2.12",
        # The generated xplane_pb2.py uses the builder API of protobuf 4.25+ (gencode 4.25.1).
        "protobuf>=4.25",
        "numpy>=1.23",
        "werkzeug>=2.0",
    ],
    extras_require={
        "test": [
            "pytest>=7",
            "tensorflow-cpu>=2.15",
            "tensorboard-plugin-profile>=2.15",
            "fsspec",  # the remote-logdir test uses its in-memory file system
            "hypothesis",
        ],
    },
    entry_points={
        "tensorboard_plugins": ["gpu_advisor = tb_gpu_advisor.plugin:GpuAdvisorPlugin"],
        "console_scripts": ["tb-gpu-advisor = tb_gpu_advisor.cli:main"],
    },
    classifiers=[
        "Framework :: TensorBoard",
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
