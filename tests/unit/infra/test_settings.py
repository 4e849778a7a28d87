"""Settings are declared once (infra/settings.py): the flags, their environment variables and
defaults come from the declarations, and the README's configuration tables agree with them."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from devkit import settings_table
from infra.config import Config, ServiceSpec, parse_config
from infra.settings import PerService, add_settings, declared, from_flags, setting
from services.cli import servable

README = Path(__file__).resolve().parents[3] / "README.md"


def _common_table() -> list[list[str]]:
    """The rows of the README's table of the common settings (the first under Configuration)."""
    text = README.read_text()
    section = text[text.index("## Configuration") :]
    rows = []
    for line in section.splitlines():
        if rows and not line.startswith("|"):
            break
        if line.startswith("| `--"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_readme_table_lists_every_common_setting_and_no_other():
    listed = [flag for row in _common_table() for flag in re.findall(r"`(--[a-z-]+)`", row[0])]
    assert sorted(listed) == sorted(s.name for s in declared(Config))


def test_the_readme_table_names_each_settings_environment_variable():
    for row in _common_table():
        first = re.findall(r"`(--[a-z-]+)`", row[0])[0]
        key = first.removeprefix("--").replace("-", "_").upper()
        assert re.search(rf"MAHJONG_(\w+_)?{key}\b", row[1]), row


def test_the_readme_tables_of_the_services_own_settings_are_current():
    assert settings_table.main(["--check", str(README)]) == 0


@pytest.mark.parametrize("name", sorted(servable()))
def test_a_service_declares_each_flag_once(name):
    spec = servable()[name].SPEC
    flags = [s.name for s in declared(Config, *spec.settings) if s.applies_to(spec)]
    assert len(flags) == len(set(flags))
    parse_config(spec, [])  # argparse would refuse a flag added twice


@dataclass(frozen=True)
class _Probe:
    seconds_ms: int = setting(
        1500, "--seconds", "a duration", flag_default=1.5, to_setting=lambda s: round(s * 1000)
    )
    per_service: int = setting(0, "--per-service", "a port", flag_default=PerService(lambda s: 7))
    on: bool = setting(False, "--on", "a switch")


def test_a_setting_reads_its_flag_in_the_flags_unit_and_a_missing_one_takes_its_default():
    assert from_flags(_Probe, {}) == _Probe()
    assert from_flags(_Probe, {"seconds": 0.25, "per_service": 9, "on": True}) == _Probe(
        250, 9, True
    )


def test_environment_then_flag(monkeypatch):
    spec = ServiceSpec("probe", 1, 2, lambda s, c: None, [], (_Probe,))
    monkeypatch.setenv("MAHJONG_PER_SERVICE", "5")
    monkeypatch.setenv("MAHJONG_PROBE_ON", "yes")
    assert parse_config(spec, []).extra == {"seconds": 1.5, "per_service": 5, "on": True}
    extra = parse_config(spec, ["--per-service", "6", "--seconds", "2"]).extra
    assert from_flags(_Probe, extra) == _Probe(2000, 6, True)
    monkeypatch.setenv("MAHJONG_PROBE_SECONDS", "soon")
    with pytest.raises(SystemExit):
        parse_config(spec, [])


def test_a_per_service_default_is_the_services():
    spec = ServiceSpec("probe", 1, 2, lambda s, c: None, [], (_Probe,))
    p = argparse.ArgumentParser()
    add_settings(p, spec, declared(_Probe))
    assert p.parse_args([]).per_service == 7
