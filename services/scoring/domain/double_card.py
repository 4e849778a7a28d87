"""加倍卡 (double card, RULES-items §2): what a double card played for a hand does to its payments.

* It acts after the hand's value and the table cap (RULES §8), on what each payer owes each
  payee: a payment between a seat that doubled and any other seat is doubled, both ways (the
  doubled seat paying or being paid); a payment between two seats that both doubled is ×4;
  payments between two seats that did not double are unchanged.
* The loss cap (RULES §9) applies after, per payer (:mod:`.collect`): the payer's own cap is
  doubled when the payer doubled, so a player who did not double never loses more than the
  usual cap.
* Escape penalties and the house's share never double: an escape is settled without debts
  (:mod:`.escape`), so nothing here sees it.
* Each doubling is its own breakdown line (code ``DOUBLE_CARD``): a ×4 payment has two, one per
  card, the amount being the payment's chips after that doubling.

Pure functions on the payment arrays; no side effects.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from services.scoring.domain.breakdown import Item, Unit, item

Debts = dict[int, list[tuple[int, int]]]  # payer -> [(payee, chips)]


def factor(payer: int, payee: int, doubled: Collection[int]) -> int:
    """The multiplier of a payment from ``payer`` to ``payee``: 1, 2 or 4."""
    return (2 if payer in doubled else 1) * (2 if payee in doubled else 1)


def double_debts(
    debts: Mapping[int, Sequence[tuple[int, int]]], doubled: Collection[int]
) -> tuple[Debts, list[Item]]:
    """Every debt between a doubled seat and another multiplied by :func:`factor`, with one
    DOUBLE_CARD line per doubling (payer's card first, then the payee's). Debts come back in
    the same order; with no doubled seat they come back unchanged and without lines."""
    out: Debts = {}
    items: list[Item] = []
    for payer, amounts in debts.items():
        rows = []
        for payee, chips in amounts:
            now = chips
            for card in (payer, payee):
                if card not in doubled or not chips:
                    continue
                before, now = now, now * 2
                role = "pays" if card == payer else "is paid by"
                other = payee if card == payer else payer
                items.append(
                    item(
                        "DOUBLE_CARD",
                        now,
                        Unit.CHIPS,
                        payer,
                        payee,
                        detail=f"seat {card} played 加倍卡 and {role} seat {other}: "
                        f"{before} → {now} chips",
                    )
                )
            rows.append((payee, now))
        out[payer] = rows
    return out, items


def payer_cap(cap: int | None, payer: int, doubled: Collection[int]) -> int | None:
    """The loss cap of ``payer`` (chips; None = none): doubled when the payer doubled."""
    if cap is None:
        return None
    return cap * 2 if payer in doubled else cap
