"""逛花园 "strolling the garden" (RULES §9, seeds 002/003): every player starts with
``payment.garden_stack`` chips; a player at 0 pays nothing more and can still win chips back,
for ``garden_rounds`` rounds (圈).

In a hand, a player pays at most the chips it has left: when it owes more, its payments are
scaled down exactly like the loss cap (:mod:`services.scoring.domain.loss_cap`). The caller
passes each seat's stack before the hand and gets the stacks after it.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.errors import InvalidArgument
from shared.ruleset import Ruleset


def check_garden_stacks(ruleset: Ruleset, stacks: Sequence[int] | None) -> None:
    """Stacks are required exactly when the ruleset plays 逛花园: 4 counts, none negative."""
    if not ruleset.payment.garden:
        if stacks is not None:
            raise InvalidArgument(
                "garden stacks given but the ruleset does not play 逛花园 (payment.garden=false)",
                field="garden_stacks",
            )
        return
    if stacks is None:
        raise InvalidArgument(
            "the ruleset plays 逛花园 (payment.garden): garden stacks of all 4 seats are required",
            field="garden_stacks",
        )
    if len(stacks) != 4:
        raise InvalidArgument(
            f"garden stacks: {len(stacks)} given, one per seat (4) needed", field="garden_stacks"
        )
    for seat, chips in enumerate(stacks):
        if not isinstance(chips, int) or isinstance(chips, bool) or chips < 0:
            raise InvalidArgument(
                f"garden stack of seat {seat} is {chips!r}; a stack is 0 or more chips",
                field="garden_stacks",
            )


def garden_limit(stacks: Sequence[int] | None, payer: int) -> int | None:
    """The most ``payer`` can pay under 逛花园 (its chips left); None without 逛花园."""
    return None if stacks is None else stacks[payer]


def stacks_after(stacks: Sequence[int], payments: Sequence[int]) -> tuple[int, ...]:
    """Each seat's chips after the hand's payments."""
    return tuple(s + p for s, p in zip(stacks, payments, strict=True))
