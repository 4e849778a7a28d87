"""Who owes a 户/番 winner how many shares (RULES-presets §13.A.8), before 包输 (§13.A.9).

* Self-draw (自摸, 杠上开花, 海底捞月): each of the three others pays
  ``old_payment.self_draw_shares`` (2).
* Discard, by ``old_payment.discard_payment``:

  - ``chuchong`` 出冲 (default): the discarder pays ``chuchong_discarder_shares`` (2), every
    other player who is neither the discarder nor a winner of this discard pays
    ``chuchong_other_shares`` (1);
  - ``baochong`` 包冲: the discarder alone pays ``baochong_shares`` (4);
  - ``discarder_only``: the discarder alone pays ``discarder_only_shares`` (1).

* 抢杠: as a discard by the robbed player.
* 一炮多响: each winner is paid on its own; a winner never pays another winner of the same
  discard. A payment of 0 shares is not listed.
"""

from __future__ import annotations

from collections.abc import Collection

from services.scoring.domain.model import WinKind
from services.scoring.domain.old.rules import OldRules
from services.scoring.domain.payments import Owed, in_turn_order


def feeder_words(win: WinKind) -> str:
    return "the added kong was robbed (抢杠)" if win is WinKind.ROB_KONG else "discarded it"


def owed_old(
    win: WinKind, winner: int, from_seat: int | None, winners: Collection[int], rules: OldRules
) -> list[Owed]:
    """Every payment owed to ``winner``, in turn order after the winner."""
    by_payer: dict[int, tuple[int, str, str]] = {}
    if win is WinKind.SELF_DRAW:
        for step in (1, 2, 3):
            by_payer[(winner + step) % 4] = (
                rules.self_draw_shares,
                "PAY_SELF_DRAW",
                "self-drawn win: every other player pays",
            )
    else:
        assert from_seat is not None  # checked before
        mode = rules.discard_payment
        fed = feeder_words(win)
        if mode == "chuchong":
            by_payer[from_seat] = (rules.chuchong_discarder_shares, "PAY_CHUCHONG", fed)
            for step in (1, 2, 3):
                payer = (winner + step) % 4
                if payer != from_seat:
                    by_payer[payer] = (
                        rules.chuchong_other_shares,
                        "PAY_CHUCHONG_OTHER",
                        f"出冲: seat {from_seat} {fed}, the others pay their single share",
                    )
        elif mode == "baochong":
            by_payer[from_seat] = (rules.baochong_shares, "PAY_BAOCHONG", f"{fed}: pays for all")
        else:
            by_payer[from_seat] = (rules.discarder_only_shares, "PAY_DISCARD", fed)
    return in_turn_order(winner, by_payer, winners)
