"""One hand of Shanghai Mahjong as a state machine, one concept per module:

* :mod:`.engine` — the hand loop (:class:`HandEngine`): start, steps, acting, drawing;
* :mod:`.state` — what a hand holds (seats' tiles, decisions owed, its configuration);
* :mod:`.deal` — the deal and 补花;
* :mod:`.swap` — 换牌;
* :mod:`.checks` — an action checked against the options held;
* :mod:`.claims` — the claim window and its resolution;
* :mod:`.settlement` — settlement, reveal and the hand's result;
* :mod:`.prompts` — a pending decision as its ``prompt`` event.

The events themselves and their log records are :mod:`services.gateway.domain.events`.
"""

from services.gateway.domain.events.kinds import CLAIM, OWN_TURN, ROB_KONG, SWAP
from services.gateway.domain.hand.engine import HandEngine
from services.gateway.domain.hand.prompts import prompt_event, prompt_options
from services.gateway.domain.hand.state import HandConfig, Pending, SeatHand, SwapOptions

__all__ = [
    "CLAIM",
    "OWN_TURN",
    "ROB_KONG",
    "SWAP",
    "HandConfig",
    "HandEngine",
    "Pending",
    "SeatHand",
    "SwapOptions",
    "prompt_event",
    "prompt_options",
]
