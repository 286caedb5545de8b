"""Packaging is declared in pyproject.toml; this file adds the native XSpace decoder, the Kineto JSON
tokenizer and the one-pass interval union, built when a C compiler is there (the package works
without them, on the pure-Python readers and NumPy)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tb_gpu_advisor.formats.xplane._xdecode",
            sources=["tb_gpu_advisor/formats/xplane/_xdecode.c"],
            extra_compile_args=["-O3", "-std=c99"],
            optional=True,
        ),
        Extension(
            "tb_gpu_advisor.formats.kineto._kineto",
            sources=["tb_gpu_advisor/formats/kineto/_kineto.c"],
            extra_compile_args=["-O3", "-std=c99"],
            optional=True,
        ),
        Extension(
            "tb_gpu_advisor.model._intervals",
            sources=["tb_gpu_advisor/model/_intervals.c"],
            extra_compile_args=["-O3", "-std=c99"],
            optional=True,
        ),
    ]
)
