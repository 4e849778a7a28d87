"""The README's tables of every service's own settings, made from their declarations.

``make settings-doc`` (``python -m devkit.settings_table README.md``) writes them between the
README's two markers; ``--check`` only says whether they are current (a test runs it). Each
table lists what ``mahjong serve NAME`` takes beyond the server's common settings
(:class:`infra.config.Config`, the README's table above them): flag, environment variable,
default and help, as :mod:`infra.settings` declares them. Defaults are shown as a fresh checkout
without ``MAHJONG_*`` variables has them.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from infra.addresses import SERVICE_ORDER
from infra.settings import declared, markdown_table

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- the services' own settings: made by `make settings-doc` from their declarations -->"
END = "<!-- end of the services' own settings -->"


@contextlib.contextmanager
def _no_mahjong_environment() -> Iterator[None]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MAHJONG_")}
    with mock.patch.dict(os.environ, clean, clear=True):
        yield


def tables() -> str:
    """The Markdown of every service's table, in the order ``mahjong run`` starts them."""
    from services.cli import servable

    modules = servable()
    out: list[str] = []
    with _no_mahjong_environment():
        for name in SERVICE_ORDER:
            if name not in modules:
                continue
            spec = modules[name].SPEC  # type: ignore[attr-defined]
            settings = [s for s in declared(*spec.settings) if s.applies_to(spec)]
            if not settings:
                out += [f"`mahjong serve {name}` has no settings of its own.", ""]
                continue
            out += [f"`mahjong serve {name}`:", "", *markdown_table(spec, settings), ""]
    return "\n".join(out).replace(f"{ROOT}/", "").rstrip() + "\n"


def with_tables(readme: str) -> str:
    """``readme`` with the generated part between the markers made again."""
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    return f"{readme[:start]}\n{tables()}{readme[end:]}"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    path = Path(next((a for a in argv if not a.startswith("--")), ROOT / "README.md"))
    text = path.read_text()
    new = with_tables(text)
    if check:
        if new != text:
            print(
                f"{path}: the settings tables are stale; run `make settings-doc`", file=sys.stderr
            )
            return 1
        return 0
    if new != text:
        path.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
