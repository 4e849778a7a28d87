"""services.wall.cli offline commands: ``mahjong verify-wall`` and ``mahjong wall show``."""

from __future__ import annotations

import io
import json

import pytest

from services.cli import main
from services.wall.domain.record import HandWall
from services.wall.domain.verify import record_of


@pytest.fixture
def record(tmp_path):
    hand = HandWall.create("h", bytes(32), 0)
    hand.deal()
    hand.draw(0)
    path = tmp_path / "record.json"
    data = record_of(hand)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, data


def test_verify_wall_ok(record, capsys):
    path, _ = record
    assert main(["verify-wall", str(path)]) == 0
    assert capsys.readouterr().out.startswith("OK: commitment matches")


def test_verify_wall_tampered_exits_1(record, capsys):
    path, data = record
    data["events"][-1]["tiles"] = "1m" if data["events"][-1]["tiles"] != "1m" else "2m"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["verify-wall", str(path)]) == 1
    assert "events[4] (draw by seat 0)" in capsys.readouterr().out


def test_verify_wall_reads_stdin(record, capsys, monkeypatch):
    _, data = record
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(data)))
    assert main(["verify-wall", "-"]) == 0


@pytest.mark.parametrize("content", ["not json", '{"seed": "00"}'])
def test_verify_wall_unreadable_exits_2(tmp_path, capsys, content):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    assert main(["verify-wall", str(path)]) == 2
    assert "cannot read the record" in capsys.readouterr().err
    assert main(["verify-wall", str(tmp_path / "missing.json")]) == 2


def test_wall_show(capsys):
    assert main(["wall", "show", "--seed", "00" * 32, "--dealer", "1"]) == 0
    out = capsys.readouterr().out
    assert "commitment  66687aadf862bd77" in out
    assert "dice        5 + 2 = 7" in out
    assert "opened      wall of seat 3" in out
    assert "seat 1 (dealer)" in out
    assert out.count(" top ") == 4


def test_wall_show_bad_seed(capsys):
    assert main(["wall", "show", "--seed", "abc"]) == 2
    assert "bad seed" in capsys.readouterr().err
