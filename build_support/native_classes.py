"""Build step: plain dataclasses written out as native classes for mypyc.

A module listed under ``[tool.mahjong] native_classes`` in pyproject.toml declares its values as
bare ``@dataclass`` classes: each field once, with its type and default. That is the source
everyone reads, and what runs as Python (``MAHJONG_PURE_PYTHON=1``). Compiled, a dataclass keeps
the ``__init__`` the dataclasses module writes at import, interpreted (mypyc compiles only the
methods it sees), which on the engine's hot path costs about a quarter of a hand's time. So,
before mypyc runs, :func:`expand` writes a copy of such a module under ``build/native/`` where
every bare ``@dataclass`` class is the same class spelled out: its field declarations without
defaults, then ``__init__`` (same parameters, order and defaults), ``__eq__``/``__ne__``,
``__repr__`` (as the dataclass's), ``__hash__ = None`` and ``__match_args__`` (a ClassVar:
mypyc makes a plain class attribute of a native class a per-instance field). setup.py compiles
that copy as the module; nothing under ``build/`` is edited or kept in git.

Only bare ``@dataclass`` classes are expanded (``frozen=True`` and other options are left as
they are), with plain ``name: type`` or ``name: type = constant`` fields; anything else in the
class body (docstring, methods, class variables) is copied as written. A field declared some
other way (``field(...)``, ``ClassVar``, ``InitVar``) stops the build with the class named.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

BUILD_DIR = Path("build") / "native"


def _is_bare_dataclass(node: ast.ClassDef) -> bool:
    return [ast.unparse(d) for d in node.decorator_list] == ["dataclass"]


def _fields(node: ast.ClassDef, source: str) -> list[tuple[str, str, str | None]]:
    """(name, type, default source or None) of each field, in order."""
    out = []
    for stmt in node.body:
        if not isinstance(stmt, ast.AnnAssign):
            continue
        if not isinstance(stmt.target, ast.Name) or not stmt.simple:
            raise ValueError(f"{node.name}: a field must be a plain name")
        annotation = ast.get_source_segment(source, stmt.annotation) or ""
        if annotation.split("[")[0] in {"ClassVar", "InitVar", "typing.ClassVar"}:
            raise ValueError(f"{node.name}.{stmt.target.id}: {annotation} is not expanded")
        default = None
        if stmt.value is not None:
            if isinstance(stmt.value, ast.Call):
                raise ValueError(f"{node.name}.{stmt.target.id}: only constant defaults")
            default = ast.get_source_segment(source, stmt.value)
        out.append((stmt.target.id, annotation, default))
    return out


def _methods(name: str, fields: list[tuple[str, str, str | None]]) -> list[str]:
    names = [f for f, _, _ in fields]
    params = ", ".join(f"{f}: {t}" + (f" = {d}" if d is not None else "") for f, t, d in fields)
    lines = [
        f"    __match_args__: typing.ClassVar[tuple[str, ...]] = {tuple(names)!r}",
        "    __hash__ = None  # type: ignore[assignment]",
        "",
        f"    def __init__(self, {params}) -> None:",
        *(f"        self.{f} = {f}" for f in names),
        *([] if names else ["        pass"]),
        "",
        "    def __eq__(self, other: object) -> bool:",
        f"        if type(other) is not type(self) or not isinstance(other, {name}):",
        "            return NotImplemented",
        "        return "
        + (" and ".join(f"self.{f} == other.{f}" for f in names) if names else "True"),
        "",
        "    def __ne__(self, other: object) -> bool:",
        "        return not self == other",
        "",
        "    def __repr__(self) -> str:",
        '        return f"' + name + "(" + ", ".join(f"{f}={{self.{f}!r}}" for f in names) + ')"',
    ]
    return lines


def expand_source(source: str) -> str:
    """``source`` with every bare ``@dataclass`` class spelled out as a native class."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out: list[str] = []
    done = 0  # lines of ``source`` copied or replaced so far
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and _is_bare_dataclass(node)):
            continue
        fields = _fields(node, source)
        start = node.decorator_list[0].lineno - 1
        out.extend(lines[done:start])
        out.extend(lines[node.lineno - 1 : node.body[0].lineno - 1])  # the class line(s)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign):
                out.append(
                    "    "
                    + ast.get_source_segment(source, stmt.target)
                    + ": "
                    + ast.get_source_segment(source, stmt.annotation)
                )
            else:
                out.extend(lines[stmt.lineno - 1 : stmt.end_lineno])
                out.append("")
        out.append("")
        out.extend(_methods(node.name, fields))
        done = node.end_lineno or done
    out.extend(lines[done:])
    if done:  # a class was expanded: ClassVar (mypyc makes a plain class attribute a field)
        future = [
            n.end_lineno
            for n in tree.body
            if isinstance(n, ast.ImportFrom) and n.module == "__future__"
        ]
        out.insert(future[-1] if future else 0, "import typing")
    return "\n".join(out) + "\n"


def expand(path: str, root: Path = Path("."), build_dir: Path = BUILD_DIR) -> str:
    """Write the expanded copy of ``path`` (relative to ``root``) under ``build_dir`` at the
    same relative path, with the packages' ``__init__.py`` beside it (mypy names the module by
    them); return the copy's path."""
    target = build_dir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    for package in Path(path).parents:
        if str(package) == ".":
            break
        shutil.copyfile(root / package / "__init__.py", build_dir / package / "__init__.py")
    text = expand_source((root / path).read_text())
    if not target.exists() or target.read_text() != text:
        target.write_text(text)
    return str(target)
