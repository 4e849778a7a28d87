"""What a table session is made of: its seats, configuration, ports and counters, the phases it
goes through, and the policy that plays for bots, 托管 and players who left."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from services.gateway.domain.hand.state import Pending
from services.gateway.domain.ports import RulesPort, ScoringPort, WallPort
from shared.ruleset import Ruleset
from shared.table import Action

if TYPE_CHECKING:
    from services.gateway.domain.hand.engine import HandEngine

# A policy chooses an action for the seat of a pending decision, from what that seat may see of
# the hand (a bot builds its own view from HandEngine.snapshot(), hiding other seats' tiles);
# bots, 托管 and stand-ins for players who left use one.
Policy = Callable[[Pending, "HandEngine"], Action]

# An engine step whose service call fails for a transient reason (a service unavailable) is
# retried after RETRY_BACKOFF_MS × attempt, and once RETRY_ATTEMPTS have failed (the table is
# stalled) every RETRY_STALLED_MS until it goes through.
RETRY_ATTEMPTS = 5
RETRY_BACKOFF_MS = 500
RETRY_STALLED_MS = 5_000

WAITING, PLAYING, BETWEEN_HANDS, FINISHED = "waiting", "playing", "between_hands", "finished"
DETACHED = "detached"  # another replica runs the table now: this session does nothing more
HALTED = "halted"  # the engine failed for a reason no retry mends: the table is stopped


@dataclass
class Seat:
    player_id: str = ""
    display_name: str = ""
    bot: bool = False
    joined: bool = False
    left: bool = False
    auto_play: bool = False  # 托管
    timeouts_in_row: int = 0
    chips: int = 0

    @property
    def open(self) -> bool:
        return not self.bot and not self.player_id

    @property
    def played_by_bot(self) -> bool:
        return self.bot or self.left or self.auto_play


@dataclass
class SessionConfig:
    table_id: str
    ruleset: Ruleset
    ruleset_name: str
    overrides: dict[str, str]
    stake: int
    max_hands: int = 0
    max_rounds: int = 0  # 0: no limit in rounds (a 逛花园 ruleset plays garden_rounds)
    tag: str = ""
    first_dealer: int | None = None
    # Timers (ms); None = from the ruleset. Tests shorten them here.
    discard_ms: int | None = None
    claim_ms: int | None = None
    claim_window_floor_ms: int | None = None  # RULES §4 "Claim windows"
    claim_window_jitter_ms: int | None = None
    bot_delay_ms: int = 0  # how long a bot "thinks"
    # At tables with a person seated a bot thinks bot_pace_ms + uniform 0..bot_pace_jitter_ms
    # more (a human pace: `mahjong run`); bots alone play at bot_delay_ms.
    bot_pace_ms: int = 0
    bot_pace_jitter_ms: int = 0
    auto_play_delay_ms: int = 0  # how long 托管 waits before acting
    # At tables with a person seated (RULES §11 "Between hands"); None = the ruleset's
    # timers.between_hands_seconds. A table with no person seated never pauses.
    between_hands_ms: int | None = 0
    # How long the table waits for its open seats before it ends (0 = forever).
    seat_wait_ms: int = 0
    # The table's deadline, Unix ms on the scheduler's clock (0 = none): once it has passed no
    # new hand is dealt (the table ends, reason "deadline"), and every decision prompted in
    # the hand in play gets at most the ruleset's timers.overtime_seconds.
    end_by_ms: int = 0
    # The room service fee (房间服务费 / 台费): chips per hand from each seat a player holds at
    # the deal (never a bot's) to the house, itemized in the hand's result (0 = none).
    fee_per_hand: int = 0
    # A bot's decision prompted while another bot's turn runs is made in the same scheduler
    # callback (with bot_delay_ms 0): for in-process play that has the scheduler to itself
    # (the arena, benchmarks). Off in the gateway, whose table callbacks share worker threads:
    # there a table of bots yields after every decision.
    chain_bot_decisions: bool = False


@dataclass
class Ports:
    wall: WallPort
    rules: RulesPort
    scoring: ScoringPort


@dataclass
class Stats:
    """Counters the server turns into metrics."""

    hands: int = 0
    draws: int = 0
    timeouts: int = 0
    wins_by_hand: dict[str, int] = field(default_factory=dict)
