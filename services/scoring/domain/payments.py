"""Who owes a winner how many shares (RULES §9), before caps.

* Self-draw (自摸, incl. 杠开 and 八花齐): each other player pays 1 share.
* Discard win (冲/点炮): the discarder alone pays 1 share.
* 抢杠: the robbed player pays ``payment.rob_kong_shares`` (3).
* 一炮多响: the discarder pays each winner separately, by that winner's own value.
* 承包: a winner in a relation is paid as :mod:`services.scoring.domain.chengbao` says instead.

Winners of the same hand never pay one another (1炮2响 inside a 承包 relation: the discarder
pays each winner; the liable co-winner pays nothing).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from services.scoring.domain.chengbao import Relation, relation_shares
from services.scoring.domain.model import WinKind
from services.scoring.domain.rules import ScoringRules


class Owed:
    """``payer`` owes ``payee`` ``shares`` of the payee's value; ``code`` names the rule.

    A plain class rather than a dataclass, like :class:`~.breakdown.Item`: compiled, a
    dataclass keeps a Python ``__init__``, and a self-drawn win owes three."""

    __slots__ = ("code", "payee", "payer", "shares", "why")

    def __init__(self, payer: int, payee: int, shares: int, code: str, why: str) -> None:
        self.payer = payer
        self.payee = payee
        self.shares = shares
        self.code = code
        self.why = why

    def __repr__(self) -> str:
        return (
            f"Owed(payer={self.payer!r}, payee={self.payee!r}, shares={self.shares!r}, "
            f"code={self.code!r}, why={self.why!r})"
        )


def base_shares(
    win: WinKind, winner: int, from_seat: int | None, r: ScoringRules
) -> dict[int, tuple[int, str, str]]:
    """Shares owed to ``winner`` with no 承包 relation: payer -> (shares, code, why)."""
    if win is WinKind.DISCARD:
        assert from_seat is not None  # a discard win has its discarder (validated)
        return {from_seat: (1, "PAY_DISCARD", "discarded the winning tile")}
    if win is WinKind.ROB_KONG:
        assert from_seat is not None  # a robbed kong has its declarer (validated)
        return {from_seat: (r.rob_kong_shares, "PAY_ROB_KONG", "the added kong was robbed (抢杠)")}
    why = "八花齐 wins as a self-draw" if win is WinKind.EIGHT_FLOWERS else "self-drawn win"
    return {(winner + s) % 4: (1, "PAY_SELF_DRAW", why) for s in (1, 2, 3)}


def owed_to_winner(
    win: WinKind,
    winner: int,
    from_seat: int | None,
    winners: Collection[int],
    ready: frozenset[int],
    relations: list[Relation],
    r: ScoringRules,
) -> list[Owed]:
    """Every payment owed to ``winner``, in turn order after the winner."""
    if relations:
        merged: dict[int, tuple[int, str, str]] = {}
        for rel in relations:
            table = r.fan_chengbao if rel.reverse else r.chengbao
            shares = relation_shares(rel, table, win, from_seat, ready, r.rob_kong_shares)
            for payer, entry in shares.items():
                if payer not in merged or entry[0] > merged[payer][0]:
                    merged[payer] = entry
    else:
        merged = base_shares(win, winner, from_seat, r)
    return in_turn_order(winner, merged, winners)


def in_turn_order(
    winner: int, by_payer: Mapping[int, tuple[int, str, str]], winners: Collection[int]
) -> list[Owed]:
    """The payments of ``by_payer`` (payer -> (shares, code, why)) owed to ``winner``, in turn
    order after the winner; none from a winner of the same hand, none of 0 shares."""
    out = []
    for step in (1, 2, 3):
        payer = (winner + step) % 4
        entry = by_payer.get(payer)
        if entry is None or payer in winners or entry[0] <= 0:
            continue
        out.append(Owed(payer, winner, *entry))
    return out
