"""The compiled hot path: what `make install` builds is what runs, and a stale build is seen."""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path

import pytest

from tests.support.compiled import stale_extensions

ROOT = Path(__file__).resolve().parents[3]


def test_a_source_edited_after_its_extension_was_built_is_stale(tmp_path):
    pkg = tmp_path / "shared" / "hand"
    pkg.mkdir(parents=True)
    (pkg / "waits.py").write_text("x = 1\n")
    ext = pkg / "waits.cpython-311-x86_64-linux-gnu.so"
    ext.write_bytes(b"")
    (tmp_path / "shared" / "_compiled__mypyc.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    assert stale_extensions(tmp_path) == []
    later = time.time() + 10
    os.utime(pkg / "waits.py", (later, later))
    assert stale_extensions(tmp_path) == ["shared/hand/waits.py"]


@pytest.mark.skipif(
    bool(os.environ.get("MAHJONG_PURE_PYTHON")), reason="pure Python run: nothing compiled"
)
@pytest.mark.parametrize(
    "module",
    [
        "shared.tiles",
        "shared.hand.waits",
        "services.rules.domain.claims",
        "services.gateway.domain.hand",
    ],
)
def test_the_hot_path_runs_compiled(module):
    """`make install` builds the extensions (a plain .py import here would mean the build did
    not happen and the benchmarks would measure the pure-Python engine)."""
    path = Path(importlib.import_module(module).__file__)
    assert path.suffix == ".so", f"{module} imported from {path.relative_to(ROOT)}"
