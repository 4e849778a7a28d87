"""``mahjong replay verify`` accepts hands exported before the typed event log: these files were
exported by the gateway of the commit before it (records without ``"v"``: version 1), one
plain hand and one with 换牌, each played by planning bots on a seeded wall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.cli import main
from services.gateway.domain.events import kinds as K
from services.gateway.domain.replay import read_export
from services.gateway.verify import verify_hand

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EXPORTS = sorted(FIXTURES.glob("replay-v1-*.jsonl"))


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_earlier_exports_are_there():
    assert [p.name for p in EXPORTS] == ["replay-v1-plain.jsonl", "replay-v1-tile-swap.jsonl"]


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem)
def test_an_earlier_export_reads_as_typed_events_and_verifies(path):
    recs = records(path)
    assert all("v" not in r for r in recs[1:]), "written before the version field"
    events = [e.event for e in read_export(recs)]
    assert isinstance(events[0], K.HandStarted) and isinstance(events[-1], K.SeedRevealed)
    if "tile-swap" in path.name:
        assert any(isinstance(e, K.TilesSwapped) for e in events)
    verdict = verify_hand(recs)
    assert verdict.ok, verdict.problems
    assert verdict.actions > 40


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem)
def test_the_command_verifies_an_earlier_export(path, capsys):
    assert main(["replay", "verify", str(path)]) == 0
    assert capsys.readouterr().out.startswith("OK: hand ")


def test_a_tampered_earlier_export_fails(tmp_path):
    recs = records(EXPORTS[0])
    drawn = next(r for r in recs[1:] if r["kind"] == "tile_drawn")
    drawn["data"]["tile"] = "9m" if drawn["data"]["tile"] != "9m" else "1m"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in recs))
    assert main(["replay", "verify", str(bad)]) == 1
