"""户 hu points of one arrangement (RULES-presets §13.A.5), counted for the winner only.

=========================  ==================================================================
``win``                    every winning hand (和底)
``self_draw``              the winning tile self-drawn (杠上开花 and 海底捞月 too; not 抢杠)
``only_wait``              the hand before the winning tile waited on exactly one kind
``flower``                 each bonus tile (坐花一张计2户, seed 003)
``pair_dragon``            the pair is a dragon
``pair_seat_wind``         the pair is the winner's seat wind
``pong_*`` / ``kong_*``    by simple (2-8) or terminal (1, 9, honor), exposed or concealed
=========================  ==================================================================

A chow scores nothing. An added kong is exposed. 七对 scores no set or pair 户, only ``win``,
``self_draw``, ``only_wait`` and ``flower``. Options worth 0 add no line.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.scoring.domain.old.arrangement import Arrangement
from services.scoring.domain.old.lines import Line
from services.scoring.domain.old.rules import OldRules
from shared import tiles as T
from shared.hand.decomposition import HandSet, SetKind


@dataclass(frozen=True, slots=True)
class OldSituation:
    """What the 户 and 番 items of one winner need besides the arrangement."""

    seat_wind: int  # kind 1z-4z
    self_drawn: bool  # 自摸, incl. 杠上开花 and 海底捞月
    only_wait: bool
    flowers: tuple[int, ...]
    menqing: bool
    big_hanging: bool
    replacement: bool  # 杠上开花, as the options count it
    last_tile: bool  # 海底捞月
    rob_kong: bool


def seat_wind(seat: int, dealer: int) -> int:
    """门风: the dealer is 东, its 下家 南, opposite 西, 上家 北."""
    return T.EAST + (seat - dealer) % 4


def is_terminal(k: int) -> bool:
    """幺九: a 1, a 9 or any honor."""
    return T.is_honor(k) or T.rank_of(k) in (1, 9)


def set_option(s: HandSet) -> str | None:
    """The [old_hu] option of a set: ``pong_terminal_exposed`` …; None for a chow."""
    if s.kind is SetKind.CHOW:
        return None
    size = "kong" if s.kind is SetKind.KONG else "pong"
    kind = "terminal" if is_terminal(s.first) else "simple"
    return f"{size}_{kind}_{'concealed' if s.concealed else 'exposed'}"


def hu_lines(arr: Arrangement, situ: OldSituation, rules: OldRules) -> list[Line]:
    """The 户 items of ``arr`` for a winner in ``situ``."""
    hu = rules.hu
    out = [Line("win", hu["win"], "和底")]
    if situ.self_drawn:
        out.append(Line("self_draw", hu["self_draw"], "the winning tile was self-drawn"))
    if situ.only_wait:
        out.append(Line("only_wait", hu["only_wait"], "the hand waited on this one kind"))
    if situ.flowers:
        n = len(situ.flowers)
        out.append(
            Line(
                "flower",
                n * hu["flower"],
                f"{n} × {hu['flower']}: {T.format_tiles(situ.flowers)}",
            )
        )
    if not arr.seven_pairs:
        pair = arr.pair
        assert pair is not None  # a standard arrangement has its pair
        shown = T.format_tiles((pair, pair))
        if T.is_dragon(pair):
            out.append(Line("pair_dragon", hu["pair_dragon"], f"pair {shown}"))
        elif pair == situ.seat_wind:
            out.append(Line("pair_seat_wind", hu["pair_seat_wind"], f"pair {shown}"))
        for s in arr.sets:
            option = set_option(s)
            if option is not None:
                out.append(Line(option, hu[option], str(s)))
    return [line for line in out if line.amount]
