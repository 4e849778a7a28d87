"""A table session (牌桌): four seats and successive hands, one concept per module:

* :mod:`.table` — :class:`TableSession`: the table's life cycle and its hands;
* :mod:`.config` — seats, configuration, ports, phases and counters;
* :mod:`.decisions` — timers, bots and 托管;
* :mod:`.escape` — leaving a table (the escape penalty);
* :mod:`.presence` — 掉线: a player gone past the grace escapes at the hand's end;
* :mod:`.seating` — open seats (空座), their wait, joining;
* :mod:`.deadline` — the table's deadline and the overtime timer;
* :mod:`.claim_windows` — the hold of every claim window (the pause tells nothing);
* :mod:`.bankruptcy` — 破产: matchmaking's answer to a hand, bankrupt seats taken by bots;
* :mod:`.double_cards` — 加倍卡 played for the next hand;
* :mod:`.views` — what each viewer may know now.
"""

from services.gateway.domain.session.config import (
    BETWEEN_HANDS,
    DETACHED,
    FINISHED,
    HALTED,
    PLAYING,
    RETRY_ATTEMPTS,
    RETRY_BACKOFF_MS,
    RETRY_STALLED_MS,
    WAITING,
    Policy,
    Ports,
    Seat,
    SessionConfig,
    Stats,
)
from services.gateway.domain.session.decisions import simple_policy
from services.gateway.domain.session.table import TableSession

__all__ = [
    "BETWEEN_HANDS",
    "DETACHED",
    "FINISHED",
    "HALTED",
    "PLAYING",
    "RETRY_ATTEMPTS",
    "RETRY_BACKOFF_MS",
    "RETRY_STALLED_MS",
    "WAITING",
    "Policy",
    "Ports",
    "Seat",
    "SessionConfig",
    "Stats",
    "TableSession",
    "simple_policy",
]
