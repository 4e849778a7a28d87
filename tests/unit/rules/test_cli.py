"""``mahjong judge`` over the rule vectors, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import VECTORS, load_vectors

MAHJONG = [sys.executable, "-m", "services.cli"]
ROOT = Path(__file__).resolve().parents[3]


def judge(args, stdin=None):
    return subprocess.run(
        [*MAHJONG, "judge", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


@pytest.mark.parametrize("name", ["rules.jsonl", "presets-rules.jsonl"])
def test_judge_answers_every_rule_vector(name):
    vectors = load_vectors(name)
    run = judge([str(VECTORS / name)])
    assert run.returncode == 0, run.stderr
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert answers == [v["expect"] for v in vectors]


def test_judge_refuses_the_baida_tiles_under_another_preset_naming_the_field():
    lines = "\n".join(
        [
            '{"concealed": "123m456p789s1j222z", "melds": []}',
            '{"ruleset": "shanghai-baida", "concealed": "123m456p789s1j555z", "melds": []}',
        ]
    )
    run = judge([], stdin=lines)
    assert run.returncode == 1
    out = [json.loads(line) for line in run.stdout.splitlines()]
    assert "concealed[9] is 1j, which is not a tile of the standard set" in out[0]["error"]
    assert "dragons are bonus tiles" in out[1]["error"]


def test_judge_reads_stdin_and_names_bad_lines():
    lines = "\n".join(
        [
            '{"concealed": "1112345678999m", "melds": []}',
            "not json",
            '{"concealed": "11111m23456789p", "melds": []}',
            '{"concealed": "123m456p789s1122z3f"}',
            '{"concealed": "1234567m", "melds": [{"kind": "chow", "tiles": "1m2p3s", "from": 1},'
            ' {"kind": "pong", "tiles": "111z", "from": 2}]}',
            '{"concealed": "1112345678999m", "ruleset": "no-such-rules"}',
        ]
    )
    run = judge(["-"], stdin=lines)
    assert run.returncode == 1
    out = [json.loads(line) for line in run.stdout.splitlines()]
    assert out[0] == {"waits": "123456789m"}
    assert "not JSON" in out[1]["error"]
    assert "5 copies of 1m" in out[2]["error"]
    assert "flower 3f" in out[3]["error"]
    assert "1m2p3s is not a run of three in one suit" in out[4]["error"]
    assert "unknown ruleset 'no-such-rules'" in out[5]["error"]


def test_judge_missing_file():
    run = judge(["/nonexistent/rules.jsonl"])
    assert run.returncode == 2 and "cannot read" in run.stderr
