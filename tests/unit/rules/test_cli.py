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


FLIPPED = '"ruleset": "shanghai-baida", "options": {"baida_tiles.wildcards": "flipped"}'


def test_judge_derives_the_flipped_wild_kind_from_wild_indicator():
    # 123m 456p 789s 222z and 5p 9m: with 5p wild (indicator 4p, flipped_wild "next") the 5p
    # pairs the 9m; with 4p wild (indicator 3p) the 5p is natural and the hand no win
    hand = '"concealed": "123m456p789s5p222z9m"'
    same = '"baida_tiles.flipped_wild": "same"'
    lines = [
        f'{{{FLIPPED}, "wild_indicator": "4p", {hand}}}',
        f'{{{FLIPPED}, "wild_indicator": "3p", {hand}}}',
        '{"ruleset": "shanghai-baida", "options": {"baida_tiles.wildcards": "flipped", '
        f'{same}}}, "wild_indicator": "5p", {hand}}}',
        f'{{{FLIPPED}, "wild_indicator": "4p", "concealed": "123m456p789s5p222z"}}',
    ]
    run = judge([], stdin="\n".join(lines))
    assert run.returncode == 0, run.stdout
    out = [json.loads(line) for line in run.stdout.splitlines()]
    assert out[:3] == [{"hand": "ping_hu"}, {"hand": None}, {"hand": "ping_hu"}]
    # one 百搭 beside four sets waits on every playing kind, the wild 5p among them
    assert out[3] == {"waits": "123456789m123456789p123456789s1234z"}


def test_judge_names_a_missing_or_bad_wild_indicator():
    hand = '"concealed": "123m456p789s5p222z9m"'
    lines = [
        f"{{{FLIPPED}, {hand}}}",
        f'{{{FLIPPED}, "wild_indicator": "5z", {hand}}}',
        f'{{{FLIPPED}, "wild_indicator": "4p4p", {hand}}}',
        f'{{"ruleset": "shanghai-baida", "wild_indicator": "4p", {hand}}}',
        f'{{{FLIPPED}, "wild_indicator": "1m", "concealed": "111m456p789s5p222z1m"}}',
    ]
    run = judge([], stdin="\n".join(lines))
    assert run.returncode == 1
    errors = [json.loads(line)["error"] for line in run.stdout.splitlines()]
    assert "flips a 百搭 indicator (翻百搭): wild_indicator is required" in errors[0]
    assert "wild indicator 5z is not a playing tile" in errors[1]
    assert "wild_indicator must be one tile" in errors[2]
    assert "has no flipped 百搭, but a wild indicator 4p is given" in errors[3]
    assert "holds 4 1m, but the indicator, one of them, is out of play" in errors[4]


def test_judge_counts_visible_tiles_when_no_fifth_copy_is_allowed():
    capped = '"ruleset": "shanghai-baida", "options": {"baida_tiles.wildcard_fifth_copy": false}'
    hand = '"concealed": "111m234p567p12s99s1j"'  # the 百搭 can only be the 3s of 123s
    lines = [
        f'{{{capped}, {hand}, "visible": "333s"}}',
        f'{{{capped}, {hand}, "visible": "3333s"}}',
        f'{{"ruleset": "shanghai-baida", {hand}, "visible": "3333s"}}',
        f'{{{capped}, "concealed": "111m234p567p12s99s", "visible": "333s"}}',
        f'{{{capped}, "concealed": "111m234p567p12s99s", "visible": "3333s"}}',
        f'{{{capped}, {hand}, "visible": "5z"}}',
        f'{{{capped}, {hand}, "visible": "99999s"}}',
    ]
    run = judge([], stdin="\n".join(lines))
    out = [json.loads(line) for line in run.stdout.splitlines()]
    assert out[:5] == [
        {"hand": "ping_hu"},
        {"hand": None},  # all four 3s seen: a 百搭 3s would be a fifth
        {"hand": "ping_hu"},  # fifth copies allowed (the default)
        {"waits": "3s1j"},
        {"waits": ""},  # every 3s is seen: none can be drawn, and a 百搭 may not be one
    ]
    assert "visible[0] is 5z, which is no playing tile" in out[5]["error"]
    assert "more than the 4 copies" in out[6]["error"]
