"""Only the optional C part of llm-sidecar; everything else is in pyproject.toml.

The refusal and attack models' batch scorers have a compiled form
(``sidecar/checks/_refusal_native.c``). It is optional: without a C compiler the build goes on
without it, and the same scores come from numpy, two to four times as slowly
(``llm-sidecar version`` names the scorer in use).
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

SOURCE = "sidecar/checks/_refusal_native.c"
# Compiled into the module, so that a test can tell a build of an older version of the file
# (an editable install keeps the module it built until it is installed again).
DIGEST = hashlib.sha256((Path(__file__).parent / SOURCE).read_bytes()).hexdigest()

setup(
    ext_modules=[
        Extension(
            "sidecar.checks._refusal_native",
            [SOURCE],
            define_macros=[("SOURCE_SHA256", f'"{DIGEST}"')],
            optional=True,
        )
    ]
)
