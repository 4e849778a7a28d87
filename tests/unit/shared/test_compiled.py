"""The compiled hot path: what `make install` builds is what runs, and a stale build is seen."""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path

import pytest

from tests.support.compiled import stale_extensions

ROOT = Path(__file__).resolve().parents[3]


def test_a_source_edited_after_the_extensions_were_built_is_stale(tmp_path):
    """Its own source, or any other module (mypyc builds in what it knew of the imports)."""
    pkg = tmp_path / "shared" / "hand"
    pkg.mkdir(parents=True)
    (pkg / "waits.py").write_text("x = 1\n")
    (tmp_path / "shared" / "table.py").write_text("y = 1\n")
    (pkg / "waits.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (tmp_path / "shared" / "_compiled__mypyc.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    earlier = time.time() - 10
    for source in (pkg / "waits.py", tmp_path / "shared" / "table.py"):
        os.utime(source, (earlier, earlier))
    assert stale_extensions(tmp_path) == []
    later = time.time() + 10
    os.utime(tmp_path / "shared" / "table.py", (later, later))
    assert stale_extensions(tmp_path) == ["shared/table.py"]
    os.utime(pkg / "waits.py", (later, later))
    assert stale_extensions(tmp_path) == ["shared/hand/waits.py", "shared/table.py"]


def test_no_extensions_nothing_stale(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "tiles.py").write_text("x = 1\n")
    assert stale_extensions(tmp_path) == []


@pytest.mark.skipif(
    bool(os.environ.get("MAHJONG_PURE_PYTHON")), reason="pure Python run: nothing compiled"
)
@pytest.mark.parametrize(
    "module",
    [
        "shared.tiles",
        "shared.hand.waits",
        "services.rules.domain.claims",
        "services.scoring.domain.qiaoma",
        "services.scoring.domain.old.settle",
        "services.scoring.domain.baida.settle",
        "services.wall.domain.wall",
        "services.wall.domain.events",
        "services.wall.domain.record",
        "services.gateway.domain.events.kinds",
        "services.gateway.domain.hand.engine",
        "services.gateway.domain.hand.claims",
        "services.gateway.domain.session.table",
        "services.gateway.domain.session.decisions",
        "services.gateway.domain.clock",
        "services.gateway.bots.policy",
    ],
)
def test_the_hot_path_runs_compiled(module):
    """`make install` builds the extensions (a plain .py import here would mean the build did
    not happen and the benchmarks would measure the pure-Python engine)."""
    path = Path(importlib.import_module(module).__file__)
    assert path.suffix == ".so", f"{module} imported from {path.relative_to(ROOT)}"


@pytest.mark.parametrize(
    "module",
    [
        "services.scoring.domain.model",
        "services.scoring.domain.validate",
        "services.scoring.domain.garden",
        "services.scoring.domain.old.check",
        "services.scoring.domain.baida.check",
    ],
)
def test_the_scoring_inputs_and_their_checks_run_as_python(module):
    """Compiled, a wrongly typed field of a request would raise TypeError when the input is
    built or first read, where these checks answer InvalidArgument naming the field."""
    path = Path(importlib.import_module(module).__file__)
    assert path.suffix == ".py", f"{module} imported from {path.relative_to(ROOT)}"
