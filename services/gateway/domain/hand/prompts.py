"""A pending decision as the ``prompt`` event shows it: the options a seat holds, in the
event's terms (:class:`~services.gateway.domain.events.kinds.PromptOptions`)."""

from __future__ import annotations

from typing import Final

from services.gateway.domain.events.kinds import Prompt, PromptOptions
from services.gateway.domain.hand.state import Pending, SwapOptions
from shared.hand.hand_type import HandType
from shared.table import ClaimOptions, OwnTurnOptions

# Enum members as C statics: compiled, ``LastActionKind.DRAW`` and the like are class
# attribute lookups through the enum metaclass's __getattr__ hook on every use.
_HAND_EIGHT_FLOWERS: Final = HandType.EIGHT_FLOWERS


def prompt_options(opts: OwnTurnOptions | ClaimOptions | SwapOptions) -> PromptOptions:
    """The options a prompt carries."""
    if isinstance(opts, SwapOptions):
        return PromptOptions(swap_count=opts.count, pass_=True)
    if isinstance(opts, OwnTurnOptions):
        wins = opts.wins
        eight = bool(wins) and any(w.hand == _HAND_EIGHT_FLOWERS for w in wins)
        return PromptOptions(
            discards=opts.discards,
            ready_discards=opts.ready_discards,
            concealed_kongs=opts.concealed_kongs,
            added_kongs=opts.added_kongs,
            win=bool(wins),
            # 八花齐 is offered: say so, and whether a winning hand is too (Win.eight_flowers)
            win_eight_flowers=eight,
            win_shape=any(w.hand != _HAND_EIGHT_FLOWERS for w in wins),
        )
    win = opts.win is not None
    return PromptOptions(
        win=win,
        win_shape=win,  # a claim's win is always a winning hand (八花齐 is an own-turn win)
        pong=opts.pong,
        exposed_kong=opts.exposed_kong,
        chows=opts.chows,
        pass_=True,
    )


def prompt_event(p: Pending, hand_id: str = "", hand_number: int = 0) -> Prompt:
    """The ``prompt`` event of a pending decision."""
    return Prompt(
        seat=p.seat,
        kind=p.kind,
        options=prompt_options(p.options),
        deadline_ms=p.deadline_ms,
        tile=p.tile,
        from_seat=p.from_seat,
        hand_id=hand_id,
        hand_number=hand_number,
    )
