"""``mahjong score``: JSON lines, --explain tables, and errors named per line."""

from __future__ import annotations

import io
import json

from services.scoring.cli import score_stream
from tests.conftest import VECTORS


def run(text: str, explain: bool = False) -> tuple[int, str]:
    out = io.StringIO()
    status = score_stream(io.StringIO(text), out, explain)
    return status, out.getvalue()


def test_explain_prints_a_table_per_hand():
    text = (VECTORS / "scoring.jsonl").read_text(encoding="utf-8")
    status, out = run(text, explain=True)
    assert status == 0
    assert out.count("payments by seat:") == text.count("\n")
    assert "门清" in out and "concealed hand" in out and "承包" in out


def test_a_bad_line_is_named_and_the_others_still_settle():
    good = (VECTORS / "scoring.jsonl").read_text(encoding="utf-8").splitlines()[0]
    bad = json.dumps({"ruleset": "shanghai-qiaoma", "kind": "escape", "stake": -1, "seat": 0})
    status, out = run("\n".join([good, "not json", bad, ""]))
    lines = [json.loads(x) for x in out.splitlines()]
    assert status == 1
    assert lines[0]["payments"] == [0, 5, 0, -5]
    assert lines[1] == {"error": "line 2: not JSON: Expecting value"}
    assert lines[2]["error"].startswith("line 3: stake -1 must be a positive")


def test_draw_lines():
    status, out = run(json.dumps({"kind": "draw", "stake": 1, "dealer": 3, "dice": [1, 1]}))
    assert status == 0
    got = json.loads(out)
    assert got["payments"] == [0, 0, 0, 0] and got["house"] == 0
    assert [i["amount"] for i in got["breakdown"] if i["code"] == "NEXT_DEALER"] == [3]
