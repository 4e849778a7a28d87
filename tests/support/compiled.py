"""The compiled hot path in a working tree (setup.py): extensions older than the sources.

Python imports a built extension instead of its .py, so after an edit a stale extension would
run the old code. ``make`` rebuilds them; a test run started another way is stopped with a
message saying so (tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stale_extensions(root: Path = ROOT) -> list[str]:
    """Sources (relative to ``root``) under shared/, infra/ and services/ edited after the extension
    modules were built: any of them, since an extension builds in what mypyc knew of the modules
    its source imports (the fields of a named tuple are read by position, say)."""
    extensions = [ext for p in ("shared", "infra", "services") for ext in (root / p).rglob("*.so")]
    if not extensions:
        return []
    built = min(ext.stat().st_mtime for ext in extensions)
    return sorted(
        str(source.relative_to(root))
        for p in ("shared", "infra", "services")
        for source in (root / p).rglob("*.py")
        if source.stat().st_mtime > built
    )
