"""Only the optional C part of llm-sidecar; everything else is in pyproject.toml.

The refusal model's batch scorer has a compiled form (``sidecar/checks/_refusal_native.c``).
It is optional: without a C compiler the build goes on without it, and the same scores come
from numpy, two to three times as slowly (``llm-sidecar version`` names the scorer in use).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sidecar.checks._refusal_native",
            ["sidecar/checks/_refusal_native.c"],
            optional=True,
        )
    ]
)
