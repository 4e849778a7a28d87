"""Tournaments (比赛): many tables at once, several rounds, Swiss seating by chips, an optional
cut to the top N for final rounds, and a round time limit.

Life of a tournament: created (ruleset, stake, Swiss rounds, hands per round, the entry in
silver and 比赛卡, the prize shares, the cut and the round time limit) → players enter
themselves (JoinTournament) or accept the creator's invite (AcceptInvite; nobody is entered by
another's act) and the creator adds bots → started (entrants a multiple of four): the roll is
closed → each round is seated, its tables created on the gateways in bounded batches, and the
gateway reports every settled hand to the ledger and says when a table finished → when every
table of the round has settled (finished with all its hands in the ledger) the standings are
taken and the next round seated (:mod:`.rounds`) → after the last round, the final
ranking and the prizes (:mod:`.purse`).

Chips are never kept here: standings are always the ledger's sums over the tournament's hands.
This module holds the tournament's own state changes on its header and roll
(:mod:`.records`); rounds and tables are :mod:`.rounds`'.

A tournament whose next step fails again and again is retried with backoff
(:func:`step_failed`: 1 s, 2 s, 4 s … at most :data:`MAX_BACKOFF_S`) and is STALLED, with the
reason, from the :data:`STALL_AFTER`-th failure in a row until a try succeeds
(:func:`step_succeeded`); an operator may retry it at once (:func:`retry_now`) or end it
(:func:`abort`: every entry refunded).
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from services.matchmaking.domain.players import accounts as players
from services.matchmaking.domain.tournaments.records import (
    Entrant,
    Header,
    HousePrize,
    Prize,
    Roll,
    get_header,
    get_roll,
    mark_running,
    update_header,
    update_roll,
)
from services.matchmaking.domain.tournaments.repository import TournamentRepository
from services.matchmaking.domain.tournaments.seating import TABLE_SIZE
from shared.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from shared.table import MAX_HANDS, MAX_STAKE

__all__ = ["Entrant", "HousePrize", "Prize", "Tournament"]

REGISTERING, RUNNING, STALLED, FINISHED = "registering", "running", "stalled", "finished"
ACTIVE = (RUNNING, STALLED)  # seated and playing (a STALLED one still records its tables)
SWISS, FINAL = "swiss", "final"
MAX_ENTRANTS = 16_384
MAX_ROUNDS = 32  # Swiss and final rounds together
MAX_ROUND_SECONDS = 86_400
MAX_NAME = 64  # characters of a tournament's name
MAX_INVITES = 100  # ids in one InviteToTournament
MAX_PRIZE_RANKS = 64
DEFAULT_PRIZE_PERCENT = (50, 30, 20)  # RULES-items §3
MAX_ENTRY_SILVER = 10**12
MAX_ENTRY_MATCH_CARDS = 1000
STALL_AFTER = 5  # failures in a row that make a tournament STALLED (about 15 s of backoff)
MAX_BACKOFF_S = 60


@dataclass(frozen=True, slots=True)
class Tournament:
    """A tournament as read: its :class:`.records.Header` (whose fields read as
    this object's: ``t.state``, ``t.current_round`` …) and its roll of entrants."""

    header: Header
    roll: Roll

    def __getattr__(self, name: str) -> Any:
        return getattr(self.header, name)

    @property
    def entrants(self) -> tuple[Entrant, ...]:
        return self.roll.entrants

    @property
    def invited(self) -> tuple[str, ...]:
        return self.roll.invited

    @property
    def total_rounds(self) -> int:
        return self.header.rounds + self.header.final_rounds

    def entrant(self, player_id: str) -> Entrant | None:
        return next((e for e in self.roll.entrants if e.player_id == player_id), None)

    def round_kind(self, round_no: int) -> str:
        return SWISS if round_no <= self.header.rounds else FINAL

    def deadline_ms(self, seated_ms: int) -> int:
        return seated_ms + self.header.round_seconds * 1000 if self.header.round_seconds else 0


def validate_settings(
    rounds: int,
    hands_per_round: int,
    stake: int,
    cut_to: int = 0,
    final_rounds: int = 0,
    round_seconds: int = 0,
) -> None:
    if not 1 <= rounds <= MAX_ROUNDS:
        raise InvalidArgument(f"rounds {rounds} out of range 1-{MAX_ROUNDS}", field="rounds")
    if not 1 <= hands_per_round <= MAX_HANDS:
        raise InvalidArgument(
            f"hands_per_round {hands_per_round} out of range 1-{MAX_HANDS} (the most a gateway "
            "table plays)",
            field="hands_per_round",
        )
    if not 0 < stake <= MAX_STAKE:
        raise InvalidArgument(f"stake {stake} out of range 1-{MAX_STAKE}", field="stake")
    if cut_to < 0 or cut_to % TABLE_SIZE or cut_to > MAX_ENTRANTS:
        raise InvalidArgument(
            f"cut_to {cut_to} must be 0 (no cut) or a multiple of {TABLE_SIZE} up to "
            f"{MAX_ENTRANTS}",
            field="cut_to",
        )
    if (cut_to == 0) != (final_rounds == 0) or final_rounds < 0:
        raise InvalidArgument(
            f"final_rounds {final_rounds} must be at least 1 with a cut and 0 without one "
            f"(cut_to {cut_to})",
            field="final_rounds",
        )
    if rounds + final_rounds > MAX_ROUNDS:
        raise InvalidArgument(
            f"{rounds} Swiss and {final_rounds} final rounds: at most {MAX_ROUNDS} in all",
            field="final_rounds",
        )
    if not 0 <= round_seconds <= MAX_ROUND_SECONDS:
        raise InvalidArgument(
            f"round_seconds {round_seconds} out of range 0-{MAX_ROUND_SECONDS}",
            field="round_seconds",
        )


def create(store: TournamentRepository, header: Header) -> Tournament:
    validate_settings(
        header.rounds,
        header.hands_per_round,
        header.stake,
        header.cut_to,
        header.final_rounds,
        header.round_seconds,
    )
    players.validate_display_name(header.name, "name", MAX_NAME)
    store.add_header(header)
    return Tournament(header, Roll())


def get(store: TournamentRepository, tournament_id: str) -> Tournament:
    return Tournament(get_header(store, tournament_id), get_roll(store, tournament_id))


def _mutate(
    store: TournamentRepository, tournament_id: str, fn: Callable[[Header], Header]
) -> Tournament:
    return Tournament(update_header(store, tournament_id, fn), get_roll(store, tournament_id))


def _started(t: Header) -> FailedPrecondition:
    return FailedPrecondition(
        f"tournament {t.tournament_id} already started (it is {t.state})",
        reason="TOURNAMENT_STARTED",
    )


def require_registering(t: Header) -> None:
    if t.state != REGISTERING:
        raise _started(t)


def _closed(tournament_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        f"tournament {tournament_id} already started or ended: its entries are closed",
        reason="TOURNAMENT_STARTED",
    )


def update_roll_open(
    store: TournamentRepository, tournament_id: str, fn: Callable[[Roll], Roll]
) -> Tournament:
    """Change the roll while registration is open (the start closes it in the same record, so
    no entrant is added after the seating was drawn); the header's count follows."""
    header = get_header(store, tournament_id)
    require_registering(header)

    def guarded(roll: Roll) -> Roll:
        if roll.closed:
            raise _closed(tournament_id)
        return fn(roll)

    roll = update_roll(store, tournament_id, guarded)
    count = len(roll.entrants)
    header = update_header(store, tournament_id, lambda h: replace(h, entrant_count=count))
    return Tournament(header, roll)


def added(roll: Roll, tournament_id: str, entrants: Sequence[Entrant]) -> Roll:
    seen = {e.player_id for e in roll.entrants}
    for e in entrants:
        if e.player_id in seen:
            raise AlreadyExists(
                f"{e.player_id} is already registered in {tournament_id}",
                player_id=e.player_id,
            )
        seen.add(e.player_id)
    if len(seen) > MAX_ENTRANTS:
        raise FailedPrecondition(f"tournament {tournament_id} is full ({MAX_ENTRANTS})")
    return replace(roll, entrants=(*roll.entrants, *entrants))


def register(
    store: TournamentRepository, tournament_id: str, entrants: list[Entrant]
) -> Tournament:
    """Add entrants (players or bots); nothing is added if any one cannot be."""
    return update_roll_open(store, tournament_id, lambda r: added(r, tournament_id, entrants))


def withdraw(store: TournamentRepository, tournament_id: str, player_id: str) -> Tournament:
    def fn(roll: Roll) -> Roll:
        if not any(e.player_id == player_id for e in roll.entrants):
            raise NotFound(f"{player_id} is not registered in {tournament_id}")
        return replace(roll, entrants=tuple(e for e in roll.entrants if e.player_id != player_id))

    return update_roll_open(store, tournament_id, fn)


def draw_order(tournament_id: str, entrants: Sequence[Entrant]) -> list[str]:
    """Round one: a draw seeded by the tournament id (reproducible, not registration order)."""
    ids = [e.player_id for e in entrants]
    seed = int.from_bytes(hashlib.sha256(tournament_id.encode()).digest()[:8], "big")
    random.Random(seed).shuffle(ids)
    return ids


def start(store: TournamentRepository, tournament_id: str, player_id: str) -> Tournament:
    """The creator starts the tournament: the roll is closed and the tournament RUNNING at
    round 0; round one is seated by :func:`.rounds.seat_next` (at once by the
    caller, or by the next tick after a crash)."""
    header = get_header(store, tournament_id)
    if header.creator != player_id:
        raise PermissionDenied(f"only the creator {header.creator} may start {tournament_id}")
    require_registering(header)
    roll = get_roll(store, tournament_id)
    n = len(roll.entrants)
    if n < TABLE_SIZE or n % TABLE_SIZE:
        short = TABLE_SIZE - n % TABLE_SIZE if n >= TABLE_SIZE else TABLE_SIZE - n
        raise FailedPrecondition(
            f"{n} entrants do not fill tables of {TABLE_SIZE}; register {short} more "
            "players or bots",
            reason="ENTRANTS_NOT_MULTIPLE_OF_4",
        )
    if header.cut_to and header.cut_to >= n:
        raise FailedPrecondition(
            f"the cut to {header.cut_to} needs more entrants than that ({n} are registered)",
            reason="CUT_TOO_LARGE",
        )

    def close(r: Roll) -> Roll:
        if r.closed:  # a start that stopped half-way (a crash): it goes on from here
            return r
        if len(r.entrants) != n:
            raise FailedPrecondition(
                f"the entrants of {tournament_id} changed while starting; start again",
                reason="ENTRANTS_CHANGED",
            )
        return replace(r, closed=True, invited=())

    mark_running(store, tournament_id)  # before the state, so a crash loses no work
    roll = update_roll(store, tournament_id, close)
    # and again once the roll is closed: a tick that read the roll open just before may have
    # taken the first mark away (it drops a registering tournament's mark: a start refused
    # half-way), and would leave a running tournament that no tick looks at
    mark_running(store, tournament_id)

    def run(h: Header) -> Header:
        return replace(h, state=RUNNING, entrant_count=len(roll.entrants))

    return Tournament(update_header(store, tournament_id, run), roll)


def cancel(store: TournamentRepository, tournament_id: str, player_id: str) -> Tournament:
    """The creator cancels before the first round: FINISHED, ``cancelled``, nobody ranked (the
    entries are refunded by the caller, from the roll returned)."""
    header = get_header(store, tournament_id)
    if header.creator != player_id:
        raise PermissionDenied(f"only the creator {header.creator} may cancel {tournament_id}")
    require_registering(header)
    roll = update_roll(store, tournament_id, lambda r: replace(r, closed=True, invited=()))

    def fn(h: Header) -> Header:
        require_registering(h)
        return replace(h, state=FINISHED, cancelled=True)

    mark_running(store, tournament_id)  # the refunds are the ticker's until done
    return Tournament(update_header(store, tournament_id, fn), roll)


def fail(
    store: TournamentRepository, tournament_id: str, failure: str, *, cancelled: bool = False
) -> Tournament:
    """End a tournament early with ``failure`` for its players to see (a table the gateway
    refused, or an operator's AbortTournament: ``cancelled``): FINISHED with no prizes, every
    entry refunded by the ticker in batches (it stays in the running index until then)."""
    roll = update_roll(store, tournament_id, lambda r: replace(r, closed=True, invited=()))

    def fn(h: Header) -> Header:
        if h.state == FINISHED:
            return h
        return replace(h, state=FINISHED, failure=failure[:500], cancelled=cancelled)

    mark_running(store, tournament_id)
    return Tournament(update_header(store, tournament_id, fn), roll)


# --- a step's failures: backoff and STALLED -----------------------------------------------
def backoff_s(failures: int) -> int:
    """Seconds before the next try after ``failures`` failures in a row: 1, 2, 4 … 60."""
    return min(2 ** max(failures - 1, 0), MAX_BACKOFF_S)


def step_failed(
    store: TournamentRepository, tournament_id: str, reason: str, now_ms: int
) -> Header:
    """Count a failure of the tournament's next step: retried after the backoff, STALLED from
    the :data:`STALL_AFTER`-th in a row (a finished one's refunds or prizes: counted, it stays
    FINISHED)."""

    def fn(h: Header) -> Header:
        if h.state not in (*ACTIVE, FINISHED):
            return h
        failures = h.failures + 1
        stalls = failures >= STALL_AFTER and h.state in ACTIVE
        state = STALLED if stalls else h.state
        return replace(
            h,
            failures=failures,
            retry_at_ms=now_ms + backoff_s(failures) * 1000,
            stall_reason=reason[:500],
            state=state,
        )

    return update_header(store, tournament_id, fn)


def is_stalled(h: Header) -> bool:
    """STALLED, or finished with its refunds or prizes failing as long (the alert's count)."""
    return h.state == STALLED or h.failures >= STALL_AFTER


def step_succeeded(store: TournamentRepository, tournament_id: str) -> Header:
    """A step went through: no backoff, and a STALLED tournament runs again."""

    def fn(h: Header) -> Header:
        if not h.failures and h.state != STALLED:
            return h
        state = RUNNING if h.state == STALLED else h.state
        return replace(h, failures=0, retry_at_ms=0, stall_reason="", state=state)

    return update_header(store, tournament_id, fn)


def retry_now(store: TournamentRepository, tournament_id: str) -> Tournament:
    """An operator's retry: the next tick tries the step at once (it stays STALLED until a
    try succeeds)."""
    mark_running(store, tournament_id)
    return _mutate(store, tournament_id, lambda h: replace(h, retry_at_ms=0))


# --- the purse's records ----------------------------------------------------------------------
def add_house_prize(
    store: TournamentRepository, tournament_id: str, prize: HousePrize
) -> Tournament:
    """An operator's prize, already in escrow (repeats of its ``ref`` add nothing)."""

    def fn(h: Header) -> Header:
        if any(x.ref == prize.ref for x in h.house_prizes):
            return h
        if h.state == FINISHED:
            raise FailedPrecondition(
                f"tournament {tournament_id} is finished", reason="TOURNAMENT_FINISHED"
            )
        return replace(h, house_prizes=(*h.house_prizes, prize))

    return _mutate(store, tournament_id, fn)


def record_prizes(
    store: TournamentRepository, tournament_id: str, prizes: Sequence[Prize]
) -> Tournament:
    """What each rank received (once: a record that has them keeps them)."""
    return _mutate(
        store, tournament_id, lambda h: h if h.prizes else replace(h, prizes=tuple(prizes))
    )


def record_purse_progress(store: TournamentRepository, tournament_id: str, done: int) -> Tournament:
    return _mutate(store, tournament_id, lambda h: replace(h, purse_done=max(done, h.purse_done)))


def new_id() -> str:
    return "t-" + uuid.uuid4().hex[:12]
