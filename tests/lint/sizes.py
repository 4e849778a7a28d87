"""``python -m tests.lint.sizes``: no module of the product is over 600 lines (run by
``make lint``). A module that grows past it is split by concept, as docs/DESIGN.md's layout
says; generated code lives in gen/, outside these packages."""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 600
PACKAGES = ("shared", "infra", "services", "devkit", "mahjong_client")


def too_long(root: Path) -> list[tuple[str, int]]:
    """Each module over :data:`LIMIT` lines under the product's packages, with its length."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > LIMIT:
                found.append((str(path.relative_to(root)), lines))
    return found


def main() -> int:
    found = too_long(Path(__file__).resolve().parents[2])
    for path, lines in found:
        print(f"{path}: {lines} lines, over {LIMIT}: split it by concept", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
