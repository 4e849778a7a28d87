"""Table sessions for unit tests, in-process: a TableSession on a ManualScheduler (time moves
only when the test says so), the gateway's ports as in-process adapters, and what the session
emitted and reported kept in lists; a wall whose hands are seeded from their request ids."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.domain.events import codec
from services.gateway.domain.events.kinds import TableEvent
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.ports import WallHand
from services.gateway.domain.session import Ports, Seat, SessionConfig, TableSession
from services.wall.domain.record import HandWall
from shared.ruleset import resolve_ruleset
from tests.doubles.scheduler import ManualScheduler

RULESET = "shanghai-qiaoma"
# No claim window holds (RULES §4 "Claim windows") unless a test asks for them: the unit tests
# of everything else step a manual clock through windows that close at once.
NO_HOLDS = {"timers.claim_window_floor_ms": "0", "timers.claim_window_jitter_ms": "0"}
# The same for a gateway: its settings in-process, its flags as a process
# (tests.support.stacks; a test of the holds gives its gateway -1, the ruleset's).
NO_HOLD_SETTINGS = {"claim_window_floor_ms": 0, "claim_window_jitter_ms": 0}
# Nor a pause between hands (RULES §11 "Between hands": a test of it sets its own).
NO_PAUSE_SETTINGS = {"between_hands_ms": 0}
NO_PAUSE_FLAGS = ("--between-hands-ms", "0")
NO_HOLD_FLAGS = ("--claim-window-floor-ms", "0", "--claim-window-jitter-ms", "0")


class SeededWall(InProcessWall):
    """The wall domain whose hand is seeded with SHA-256 of ``{seed}/{request_id}``: the same
    seed and request ids deal the same hands, run after run."""

    def __init__(self, seed: str | int) -> None:
        super().__init__()
        self.seed = seed

    def new_hand(self, ruleset_name, overrides, dealer, request_id) -> WallHand:
        ruleset = resolve_ruleset(ruleset_name, overrides)
        seed = hashlib.sha256(f"{self.seed}/{request_id}".encode()).digest()
        hand = HandWall.create(
            "h_" + seed.hex()[:16],
            seed,
            dealer,
            reserved=ruleset.table.reserved_tiles,
            swap_count=ruleset.table.tile_swap_count if ruleset.table.tile_swap else 0,
        )
        self.hands[hand.hand_id] = hand
        return WallHand(hand.hand_id, tuple(hand.dice), hand.commitment.hex(), 144)

    def swap(self, hand_id, seat, buried, number=0, *, epoch=0):
        """换牌 with a request id from its number, as the wall service is called: the same
        numbered call again gets the same tiles."""
        hand = self.hands[hand_id]
        return list(hand.swap(seat, buried, f"{hand_id}/d{number}", epoch).tiles)


def session_config(
    table_id: str, overrides: dict[str, str] | None = None, *, ruleset: str = RULESET, **fields
) -> SessionConfig:
    """A SessionConfig for ``ruleset`` with ``overrides`` (after :data:`NO_HOLDS`, which they
    may override), stake 1; ``fields`` are its other fields (``max_hands``, ``first_dealer``,
    ``discard_ms`` …)."""
    overrides = {**NO_HOLDS, **(overrides or {})}
    return SessionConfig(
        table_id=table_id,
        ruleset=resolve_ruleset(ruleset, overrides),
        ruleset_name=ruleset,
        overrides=overrides,
        stake=1,
        **fields,
    )


def seats(humans: int = 0, prefix: str = "b") -> list[Seat]:
    """Four seats with the player ids ``{prefix}0`` … ``{prefix}3``, the first ``humans`` for
    people and the rest for bots."""
    return [Seat(player_id=f"{prefix}{i}", bot=i >= humans) for i in range(4)]


def inprocess_ports() -> Ports:
    """The gateway's ports to wall, rules and scoring as in-process adapters."""
    return Ports(InProcessWall(), InProcessRules(), InProcessScoring())


@dataclass
class LocalTable:
    """A session with its scheduler and what it emitted and reported, in order."""

    session: TableSession
    scheduler: ManualScheduler
    events: list[tuple[str, dict]]  # (kind, data) as the log's records hold them
    reports: list[tuple[str, dict]]
    typed: list[TableEvent]  # the same events as emitted

    def play_out(self) -> int:
        """Start the session and run every callback its scheduler has, jumping the clock,
        until none is left; returns how many ran."""
        self.session.start()
        return self.scheduler.drain()

    def log(self) -> list[LoggedEvent]:
        """The events as a table's log keeps them (sequence numbers from 1, time 0)."""
        return [LoggedEvent(i + 1, 0, ev) for i, ev in enumerate(self.typed)]


def reraise(exc: Exception) -> None:
    """A test session's ``on_halted``: an error inside an engine callback (an assertion of the
    test's own, a bug) fails the test with its own message instead of halting the table
    quietly."""
    raise exc


def local_table(
    config: SessionConfig,
    seats: list[Seat],
    *,
    policy,
    ports: Ports | None = None,
    rng: random.Random | None = None,
    on_event: Callable[[str, dict], None] | None = None,
    on_step_failed: Callable[[int, Exception], None] | None = None,
    on_halted: Callable[[Exception], None] | None = None,
    hand_answer: Callable[[str], tuple[tuple[int, str], ...] | None] | None = None,
) -> LocalTable:
    """A TableSession (not started) on a new ManualScheduler and ``ports`` (in-process
    adapters unless given); each event it emits is kept, then passed to ``on_event``. An error
    that would halt the table is raised to the test (``on_halted``: :func:`reraise`)."""
    scheduler = ManualScheduler()
    events: list[tuple[str, dict]] = []
    typed: list[TableEvent] = []
    reports: list[tuple[str, dict]] = []

    def emit(event: TableEvent) -> int:
        typed.append(event)
        kind, data = event.KIND, codec.to_json(event)
        events.append((kind, data))
        if on_event is not None:
            on_event(kind, data)
        return len(events)

    session = TableSession(
        config,
        seats,
        ports=ports if ports is not None else inprocess_ports(),
        scheduler=scheduler,
        emit=emit,
        report=lambda kind, data: reports.append((kind, data)),
        policy=policy,
        rng=rng,
        on_step_failed=on_step_failed,
        on_halted=on_halted or reraise,
        hand_answer=hand_answer,
    )
    return LocalTable(session, scheduler, events, reports, typed)
