"""The events as mypyc compiles them: the declared dataclasses spelled out as native classes
(build_support.native_classes), with the same fields, signatures, equality and repr."""

from __future__ import annotations

import dataclasses
import inspect
import operator
import os
import sys
import tomllib
import types
from pathlib import Path

import pytest
from hypothesis import given, settings

from build_support.native_classes import expand, expand_source
from services.gateway.domain.events import kinds as K
from tests.unit.gateway.events.strategies import any_event

ROOT = Path(__file__).resolve().parents[4]
KINDS_PATH = "services/gateway/domain/events/kinds.py"
DECLARED = (*K.EVENT_CLASSES, K.PromptOptions)


def _load_expanded() -> types.ModuleType:
    module = types.ModuleType("expanded_kinds")
    source = expand_source((ROOT / KINDS_PATH).read_text())
    sys.modules[module.__name__] = module  # dataclasses looks the module up
    try:
        exec(compile(source, "expanded_kinds.py", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module


EXPANDED = _load_expanded()


def _twin(value):
    """``value`` (a declared event or PromptOptions) as an instance of its expanded class."""
    cls = getattr(EXPANDED, type(value).__name__)
    names = [f.name for f in dataclasses.fields(value)] if dataclasses.is_dataclass(value) else []
    names = names or list(type(value).__match_args__)
    return cls(**{name: getattr(value, name) for name in names})


def _parameters(cls: type) -> list[tuple[str, object, object]]:
    """Names, kinds and defaults (compiled, a signature shows no annotations)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]


def test_kinds_is_compiled_with_its_classes_spelled_out():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mahjong"]
    assert KINDS_PATH in config["compiled"] and KINDS_PATH in config["native_classes"]


@pytest.mark.parametrize("declared", DECLARED, ids=lambda c: c.__name__)
def test_each_class_keeps_its_fields_and_signature(declared):
    expanded = getattr(EXPANDED, declared.__name__)
    assert not dataclasses.is_dataclass(expanded)
    assert expanded.__match_args__ == declared.__match_args__
    assert _parameters(expanded) == _parameters(declared)
    assert expanded.__hash__ is None
    if dataclasses.is_dataclass(declared):  # compiled, a class keeps no docstring
        assert expanded.__doc__ == declared.__doc__


@settings(max_examples=200, deadline=None)
@given(any_event)
def test_equality_repr_and_replace_are_the_dataclasses(ev):
    twin = _twin(ev)
    assert repr(twin) == repr(ev)
    assert twin == _twin(ev) and operator.ne(twin, _twin(ev)) is False
    changed = twin.replace(hand_number=ev.hand_number + 1)
    assert changed != twin and operator.eq(changed, twin) is False
    assert repr(changed) == repr(ev.replace(hand_number=ev.hand_number + 1))
    assert twin.__eq__(ev) is NotImplemented and twin != ev
    if isinstance(ev, K.Prompt):
        options = _twin(ev.options)
        assert repr(options) == repr(ev.options) and options == _twin(ev.options)


def test_only_plain_fields_are_expanded():
    source = (
        "from dataclasses import dataclass, field\n\n@dataclass\nclass A:\n"
        "    x: list[int] = field(default_factory=list)\n"
    )
    with pytest.raises(ValueError, match=r"A\.x"):
        expand_source(source)
    frozen = "from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass B:\n    x: int\n"
    assert expand_source(frozen) == frozen


def test_the_copy_is_written_under_build_with_its_packages(tmp_path):
    path = expand(KINDS_PATH, root=ROOT, build_dir=tmp_path)
    assert Path(path) == tmp_path / KINDS_PATH
    assert (tmp_path / "services" / "gateway" / "domain" / "events" / "__init__.py").exists()
    assert (tmp_path / "services" / "__init__.py").exists()


@pytest.mark.skipif(
    bool(os.environ.get("MAHJONG_PURE_PYTHON")), reason="pure Python run: nothing compiled"
)
def test_compiled_the_events_are_the_native_classes():
    assert not dataclasses.is_dataclass(K.TileDrawn)
    assert Path(K.__file__).suffix == ".so"
