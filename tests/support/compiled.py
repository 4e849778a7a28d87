"""The compiled hot path in a working tree (setup.py): extensions older than their source.

Python imports a built extension instead of its .py, so after an edit a stale extension would
run the old code. ``make`` rebuilds them; a test run started another way is stopped with a
message saying so (tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stale_extensions(root: Path = ROOT) -> list[str]:
    """Sources (relative to ``root``) edited after their extension module was built."""
    stale = []
    for package in ("shared", "services"):
        for ext in (root / package).rglob("*.so"):
            source = ext.with_name(ext.name.split(".", 1)[0] + ".py")
            if source.exists() and source.stat().st_mtime > ext.stat().st_mtime:
                stale.append(str(source.relative_to(root)))
    return sorted(stale)
