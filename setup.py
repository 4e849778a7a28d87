"""Build hook: the engine's hot path compiled to C extensions with mypyc.

The modules listed in pyproject.toml (``[tool.mahjong] compiled``: tile notation, hand
evaluation, the rules domain, the gateway's hand engine, table session, clock and bot policy)
are pure, type-annotated Python; mypyc turns each into an extension module built next to its
source, which Python then imports instead of the .py. The sources stay the truth: with
``MAHJONG_PURE_PYTHON=1`` nothing is compiled and the same modules run as Python. Everything
else about the package is in pyproject.toml.

Of the modules listed under ``[tool.mahjong] native_classes`` (declared as plain dataclasses,
each field once) mypyc compiles a copy with those classes spelled out as native classes,
written under build/native/ first (:mod:`build_support.native_classes`): a dataclass's
``__init__`` would otherwise stay interpreted.
"""

from __future__ import annotations

import os
import sys
import tomllib
from glob import glob
from pathlib import Path

from setuptools import setup

CONFIG = tomllib.loads(Path(__file__).with_name("pyproject.toml").read_text())["tool"]["mahjong"]


def compiled_modules() -> list[str]:
    """The source files pyproject.toml names for compiling, in a stable order; a module with
    native classes to write out (``native_classes``) as its expanded copy under build/."""
    paths = sorted({path for pattern in CONFIG["compiled"] for path in glob(pattern)})
    sys.path.insert(0, str(Path(__file__).parent))  # run by a build backend: not on the path
    from build_support.native_classes import expand

    native = set(CONFIG.get("native_classes", []))
    return [expand(path) if path in native else path for path in paths]


ext_modules = []
if not os.environ.get("MAHJONG_PURE_PYTHON"):
    from mypyc.build import mypycify

    ext_modules = mypycify(
        ["--ignore-missing-imports", "--follow-imports=silent", *compiled_modules()],
        group_name="shared._compiled",  # the runtime library, inside the shared package
        opt_level="3",
    )

setup(ext_modules=ext_modules)
