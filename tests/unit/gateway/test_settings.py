"""Every gateway setting is declared once (services/gateway/settings.py, the web port's in
infra/web.py): the flags come from the fields, and the flags' defaults read back give the
fields' defaults."""

from __future__ import annotations

import dataclasses

import pytest

from infra.config import parse_config
from infra.settings import declared, from_flags
from infra.web import WebSettings
from services.gateway.server import SPEC
from services.gateway.settings import GatewaySettings, ServerSettings


def _parse(argv: list[str]) -> dict:
    return parse_config(SPEC, argv).extra


def test_the_flags_defaults_are_the_fields_defaults(monkeypatch):
    monkeypatch.delenv("MAHJONG_WALL_ADDR", raising=False)
    derived = {"secret": b"s", "replica_id": "r", "address": "a:1"}
    assert from_flags(GatewaySettings, _parse([]), **derived) == GatewaySettings(**derived)
    defaults = from_flags(ServerSettings, _parse([]))
    assert defaults.wall_addr == "127.0.0.1:50051"
    assert dataclasses.replace(defaults, wall_addr="", rules_addr="", scoring_addr="") == (
        ServerSettings()
    )


def test_a_missing_flag_takes_its_default():
    assert from_flags(GatewaySettings, {}, secret=b"", replica_id="r") == GatewaySettings(
        secret=b"", replica_id="r"
    )


def test_flags_become_settings_in_their_units():
    settings = from_flags(
        GatewaySettings,
        _parse(
            [
                "--seat-wait-seconds", "1.5",
                "--discard-ms", "-1",
                "--claim-ms", "700",
                "--timer-workers", "0",
                "--stream-write-timeout-seconds", "0",
                "--public-tables", "off",
            ]
        ),
        secret=b"",
    )  # fmt: skip
    assert settings.seat_wait_ms == 1500
    assert settings.discard_ms is None and settings.claim_ms == 700
    assert settings.timer_workers == 1 and settings.stream_write_timeout_ms == 1
    assert settings.public_tables is False


def test_every_flag_is_declared_once():
    names = [s.name for s in declared(ServerSettings, GatewaySettings, WebSettings)]
    assert len(names) == len(set(names)) == 35


@pytest.mark.parametrize("flag", ["--max-spectators-per-table", "--public-tables"])
def test_a_bad_value_is_refused(flag):
    with pytest.raises(SystemExit):
        _parse([flag, "-3"])
