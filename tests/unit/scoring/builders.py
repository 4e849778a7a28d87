"""Builders for scoring tests: hands are written in the vector format (tests/vectors/README.md),
the same input ``mahjong score`` reads, so every test reads like a worked example."""

from __future__ import annotations

from services.scoring.vector_format import settle_object


def hand_obj(**overrides) -> dict:
    """A won-hand object with table defaults: qiaoma, stake 1, dealer 0, dice 2+5 (no 开宝),
    荒番 0, every seat ready."""
    obj = {
        "ruleset": "shanghai-qiaoma",
        "stake": 1,
        "dealer": 0,
        "dice": [2, 5],
        "huangfan": 0,
        "ready": [0, 1, 2, 3],
        "replacement": False,
    }
    obj.update(overrides)
    return obj


def winner(seat, concealed, win_tile, melds=(), flowers="") -> dict:
    return {
        "seat": seat,
        "concealed": concealed,
        "melds": list(melds),
        "flowers": flowers,
        "win_tile": win_tile,
    }


def meld(kind, tiles, frm=None) -> dict:
    d = {"kind": kind, "tiles": tiles}
    if frm is not None:
        d["from"] = frm
    return d


def pong_pong_3_claims(seat: int, feeder: int, flowers: str = "") -> dict:
    """碰碰胡 of ``seat`` with three pongs claimed from ``feeder`` (a 承包 relation) and a
    concealed South triplet: 2 底分 + 1 花 = 3 points."""
    return winner(
        seat,
        "9s222z",
        "9s",
        [meld("pong", "111s", feeder), meld("pong", "333p", feeder), meld("pong", "555m", feeder)],
        flowers,
    )


def settle(**overrides):
    return settle_object(hand_obj(**overrides))
