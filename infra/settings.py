"""Settings, declared once: each is a field of a settings dataclass that carries its flag.

A field made by :func:`setting` holds a :class:`Setting` in its metadata: the flag's name, its
help, its default (in the flag's own unit), how the flag's text is parsed, and how the flag's
value becomes the field's (seconds into milliseconds, a floor, -1 for "the ruleset's"). From
the declarations, :func:`add_settings` adds the flags of ``mahjong serve NAME``, each with its
environment variables (``MAHJONG_<SERVICE>_<FLAG>``, then ``MAHJONG_<FLAG>``), and
:func:`from_flags` reads the dataclass back from the flags' values (a value missing there takes
the flag's default). The server's own configuration (:class:`infra.config.Config`), the web
port's (:class:`infra.web.WebSettings`) and every service's are declared this way; the
README's configuration tables are checked against them (:func:`markdown_table`).

A default or help that depends on the service (its ports, its web page) is a
:class:`PerService`, computed from the service's spec when its flags are added; a setting that
only some services have says which with ``applies``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

S = TypeVar("S")


@dataclass(frozen=True)
class PerService:
    """A default, a help text or a set of choices computed from the service's spec (anything
    with a ``name``: :class:`infra.config.ServiceSpec`)."""

    of: Callable[[Any], Any]


def switch(text: str) -> bool:
    """A switch's text: ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``."""
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not on or off")


def count(text: str) -> int:
    """A whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative (0 means no limit)")
    return value


def _resolve(value: Any, spec: Any) -> Any:
    if isinstance(value, PerService):
        return value.of(spec)
    return value() if callable(value) else value


@dataclass(frozen=True)
class Setting:
    """One setting as a flag. ``default`` is in the flag's unit: a value, a function of no
    arguments (looked up as the flags are added, e.g. from the environment) or a
    :class:`PerService`; ``parse`` is argparse's ``type`` (None: text); ``to_setting`` turns the
    flag's value into the field's (None: the value as the default's type); ``flag_switch``:
    a flag without a value (``--insecure``), whose environment variable says on or off;
    ``applies``: the services that have it (None: every service that declares it)."""

    name: str
    help: str | PerService
    default: Any
    parse: Callable[[str], Any] | None = None
    to_setting: Callable[[Any], Any] | None = None
    flag_switch: bool = False
    choices: tuple[str, ...] | PerService | None = None
    applies: Callable[[Any], bool] | None = None
    field_default: Any = None

    @property
    def dest(self) -> str:
        """The flag's key in argparse's namespace and in ``Config.extra``."""
        return self.name.removeprefix("--").replace("-", "_")

    def environment(self, service: str) -> tuple[str, str]:
        """The environment variables that set it, the service's first."""
        key = self.dest.upper()
        return f"MAHJONG_{service.upper()}_{key}", f"MAHJONG_{key}"

    def default_for(self, spec: Any) -> Any:
        return _resolve(self.default, spec)

    def help_for(self, spec: Any) -> str:
        return str(_resolve(self.help, spec))

    def applies_to(self, spec: Any) -> bool:
        return self.applies is None or bool(self.applies(spec))

    def value(self, values: Mapping[str, Any]) -> Any:
        """The field's value from the flags' values. Where ``values`` has none: the flag's
        default, or the field's own when the flag's is the service's (:class:`PerService`)."""
        per_service = isinstance(self.default, PerService)
        if self.dest in values:
            raw = values[self.dest]
        elif per_service:
            return self.field_default
        else:
            raw = _resolve(self.default, None)
        if self.to_setting is not None:
            return self.to_setting(raw)
        kind = self.field_default if per_service else _resolve(self.default, None)
        return raw if kind is None or raw is None else type(kind)(raw)


_SAME: Any = object()


def setting(
    default: Any,
    name: str,
    help: str | PerService,
    *,
    flag_default: Any = _SAME,
    parse: Callable[[str], Any] | None = None,
    to_setting: Callable[[Any], Any] | None = None,
    choices: tuple[str, ...] | PerService | None = None,
    applies: Callable[[Any], bool] | None = None,
) -> Any:
    """A dataclass field of ``default`` that is the flag ``name`` (default ``flag_default``,
    else the field's). A boolean field is a switch (``--name`` alone turns it on, the
    environment says on or off) unless ``parse`` reads a value (``--public-tables off``); an
    int or float default is parsed as its type unless ``parse`` says."""
    shown = default if flag_default is _SAME else flag_default
    flag_switch = isinstance(default, bool) and parse is None
    kind = default if isinstance(shown, PerService) else shown
    if parse is None and not isinstance(kind, bool) and isinstance(kind, int | float):
        parse = type(kind)
    declared = Setting(
        name, help, shown, parse, to_setting, flag_switch, choices, applies, field_default=default
    )
    return field(default=default, metadata={"setting": declared})


def declared(*classes: type) -> list[Setting]:
    """The settings of dataclasses, in the order of their fields."""
    return [
        f.metadata["setting"]
        for cls in classes
        for f in dataclasses.fields(cls)
        if "setting" in f.metadata
    ]


def _from_environment(p: argparse.ArgumentParser, s: Setting, service: str) -> Any:
    """The setting's default from the environment, parsed as its flag would be (None: unset)."""
    name, raw = next(
        ((n, os.environ[n]) for n in s.environment(service) if os.environ.get(n)), ("", None)
    )
    if raw is None:
        return None
    try:
        if s.flag_switch:
            return switch(raw)
        return s.parse(raw) if s.parse else raw
    except (ValueError, argparse.ArgumentTypeError) as exc:
        detail = f": {exc}" if isinstance(exc, argparse.ArgumentTypeError) else " is not valid"
        p.error(f"environment value {raw!r} for {s.name} ({name}){detail}")


def add_settings(p: argparse.ArgumentParser, spec: Any, settings: Iterable[Setting]) -> list[str]:
    """Add the flags of ``settings`` that apply to the service ``spec``, their defaults from
    the environment where it sets them; returns their keys (``Setting.dest``)."""
    added = []
    for s in settings:
        if not s.applies_to(spec):
            continue
        env = _from_environment(p, s, spec.name)
        default = s.default_for(spec) if env is None else env
        kwargs: dict[str, Any] = {"default": default, "help": s.help_for(spec)}
        if s.flag_switch:
            kwargs["action"] = "store_true"
        else:
            kwargs["type"] = s.parse
            if s.choices is not None:
                kwargs["choices"] = _resolve(s.choices, spec)
        p.add_argument(s.name, **kwargs)
        added.append(s.dest)
    return added


def from_flags(cls: type[S], values: Mapping[str, Any], **derived: Any) -> S:
    """``cls`` from the flags' values, with the fields that are no flag given."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    found = {f.name: f.metadata["setting"].value(values) for f in fields if "setting" in f.metadata}
    return cls(**found, **derived)


def markdown_table(spec: Any, settings: Iterable[Setting]) -> list[str]:
    """The rows of a README table of ``settings`` for the service ``spec``: flag, environment
    variable, default, help."""
    rows = ["| flag | environment | default | meaning |", "| --- | --- | --- | --- |"]
    for s in settings:
        if not s.applies_to(spec):
            continue
        default = s.default_for(spec)
        shown = (
            "off" if s.flag_switch and not default else f"`{default}`" if default != "" else "empty"
        )
        help_text = s.help_for(spec).replace("|", "\\|")
        rows.append(f"| `{s.name}` | `{s.environment(spec.name)[0]}` | {shown} | {help_text} |")
    return rows
