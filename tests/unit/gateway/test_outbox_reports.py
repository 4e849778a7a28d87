"""The outbox's reports are a typed, versioned contract (records.HandReport, FinishedReport)."""

from __future__ import annotations

import json

import pytest

from services.gateway.tables.records import (
    FinishedReport,
    HandReport,
    decode_report,
    encode_report,
)


def test_reports_round_trip_with_their_version():
    hand = HandReport("h1", "t1", "quick/m", ("alice", "bot:1", "b", "c"), (3, -1, -1, -1), 0, 2)
    end = FinishedReport("t1", "quick/m", 8)
    for report in (hand, end):
        raw = encode_report(report)
        assert json.loads(raw)["v"] == 1
        assert decode_report(raw) == report
    assert hand.key() == "t1/h1" and end.key() == "t1/~finished"


def test_rows_written_before_the_version_are_version_one():
    old = {"kind": "hand", "hand_id": "h", "table_id": "t", "tag": "", "player_ids": ["a"] * 4}
    old |= {"payments": [1, -1, 0, 0], "house": 0, "escaped_seat": None}
    assert decode_report(json.dumps(old).encode()) == HandReport(
        "h", "t", "", ("a",) * 4, (1, -1, 0, 0), 0, None
    )


@pytest.mark.parametrize(
    "raw, named",
    [
        (b'{"v": 2, "kind": "hand"}', "version 2"),
        (b'{"v": 1, "kind": "bonus"}', "'bonus'"),
    ],
)
def test_an_unknown_version_or_kind_is_refused_by_name(raw, named):
    with pytest.raises(ValueError, match=named):
        decode_report(raw)
