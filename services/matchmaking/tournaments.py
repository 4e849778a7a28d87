"""Tournaments (比赛): many tables at once, several rounds, Swiss seating by chips.

Life of a tournament: created (ruleset, stake, rounds, hands per round, the entry in silver
and 比赛卡, the prize shares) → players enter themselves (JoinTournament) or accept the
creator's invite (AcceptInvite; nobody is entered by another's act) and the creator adds bots
→ started (entrants a multiple of four) → each round every table is created on a
gateway in parallel with tag ``tournament/<id>/round/<n>/table/<i>`` → the gateway reports every
settled hand to the ledger and says when a table finished → when every table of the round is
finished *and* all its reported hands are in the ledger, the standings are taken from the ledger
and the next round is seated (:mod:`.seating`) → after the last round, the final ranking.

Chips are never kept here: standings are always the ledger's sums over the tournament's hands.
Entries and prizes are the ledger's too (:mod:`.tournament_purse`): this record keeps only
who is entered and the reference of each entry's escrow transaction.

The record is versioned (``version``): version 1 (before entries, invites and prizes) reads
with every new field at its default.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

from shared.errors import (
    AlreadyExists,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from shared.store.base import Store
from shared.table import MAX_HANDS, MAX_STAKE

from . import players, records
from .allocator import SeatRequest, TableAllocator, TableRefused, TableRequest
from .queues import Assignment
from .seating import TABLE_SIZE, meetings, seat_round
from .tags import tournament_tag

TOURNAMENTS = "mm_tournaments"
RUNNING_INDEX = "mm_tournaments_running"  # ids of running tournaments (what ticks look at)
REGISTERING, RUNNING, FINISHED = "registering", "running", "finished"
MAX_ENTRANTS = 1024
MAX_ROUNDS = 32
MAX_NAME = 64  # characters of a tournament's name
MAX_INVITES = 100  # ids in one InviteToTournament
MAX_PRIZE_RANKS = 64
DEFAULT_PRIZE_PERCENT = (50, 30, 20)  # RULES-items §3
MAX_ENTRY_SILVER = 10**12
MAX_ENTRY_MATCH_CARDS = 1000
VERSION = 2


@dataclass(frozen=True, slots=True)
class Entrant:
    """An entrant; ``entry_ref`` names the ledger transaction that moved its entry into escrow
    ("" for a bot or a free tournament)."""

    player_id: str
    display_name: str
    bot: bool = False
    entry_ref: str = ""


@dataclass(frozen=True, slots=True)
class Table:
    round: int
    index: int
    seats: tuple[str, ...]  # player ids by seat
    table_id: str = ""
    gateway_address: str = ""
    seat_tokens: tuple[str, ...] = ()
    finished: bool = False
    hands_played: int = 0


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    player_id: str
    display_name: str
    bot: bool
    chips: int


@dataclass(frozen=True, slots=True)
class HousePrize:
    """An operator-funded prize for ``rank``, moved into escrow by the transaction ``ref``."""

    rank: int
    asset: str
    amount: int
    ref: str


@dataclass(frozen=True, slots=True)
class Prize:
    """What the player at ``rank`` received at the end: (asset, amount) pairs."""

    rank: int
    player_id: str
    assets: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Tournament:
    tournament_id: str
    name: str
    creator: str
    ruleset: str
    stake: int
    rounds: int
    hands_per_round: int
    created_at: float
    state: str = REGISTERING
    entrants: tuple[Entrant, ...] = ()
    current_round: int = 0
    tables: tuple[Table, ...] = ()
    standings: tuple[tuple[Standing, ...], ...] = ()  # after each finished round
    final_ranking: tuple[Standing, ...] = ()
    ruleset_options: dict[str, str] = field(default_factory=dict)
    entry_silver: int = 0  # entry fee in silver: the prize pool
    entry_match_cards: int = 0  # entry in 比赛卡, to the house at the start
    prize_percent: tuple[int, ...] = DEFAULT_PRIZE_PERCENT  # shares of the pool by final rank
    invited: tuple[str, ...] = ()  # player ids invited by the creator, not yet accepted
    house_prizes: tuple[HousePrize, ...] = ()  # operator-funded, in escrow
    prizes: tuple[Prize, ...] = ()  # once FINISHED: what each rank received
    cancelled: bool = False  # cancelled by the creator before the first round (FINISHED)
    failure: str = ""  # why it FINISHED early: the gateway refused a table (never retried)
    version: int = VERSION

    def entrant(self, player_id: str) -> Entrant | None:
        return next((e for e in self.entrants if e.player_id == player_id), None)

    def round_tables(self, round_no: int | None = None) -> list[Table]:
        r = self.current_round if round_no is None else round_no
        return [t for t in self.tables if t.round == r]

    def assignment_for(self, player_id: str) -> tuple[Table, Assignment | None] | None:
        """The player's table in the current round (and its seat, once the table exists)."""
        for t in self.round_tables():
            if player_id in t.seats:
                seat = t.seats.index(player_id)
                if not t.table_id:
                    return t, None
                return t, Assignment(t.gateway_address, t.table_id, seat, t.seat_tokens[seat])
        return None

    def to_json(self) -> bytes:
        return records.dump(asdict(self))

    @staticmethod
    def from_json(raw: bytes) -> Tournament:
        d = records.load(raw)
        d["version"] = VERSION  # version 1 lacks the fields below: their defaults
        d["entrants"] = tuple(Entrant(**e) for e in d["entrants"])
        d["prize_percent"] = tuple(d.get("prize_percent", DEFAULT_PRIZE_PERCENT))
        d["invited"] = tuple(d.get("invited", ()))
        d["house_prizes"] = tuple(HousePrize(**h) for h in d.get("house_prizes", ()))
        d["prizes"] = tuple(
            Prize(p["rank"], p["player_id"], tuple((a, n) for a, n in p["assets"]))
            for p in d.get("prizes", ())
        )
        d["tables"] = tuple(
            Table(**{**t, "seats": tuple(t["seats"]), "seat_tokens": tuple(t["seat_tokens"])})
            for t in d["tables"]
        )
        d["standings"] = tuple(tuple(Standing(**s) for s in r) for r in d["standings"])
        d["final_ranking"] = tuple(Standing(**s) for s in d["final_ranking"])
        return Tournament(**d)


def validate_settings(rounds: int, hands_per_round: int, stake: int) -> None:
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


def create(store: Store, tournament: Tournament) -> Tournament:
    validate_settings(tournament.rounds, tournament.hands_per_round, tournament.stake)
    players.validate_display_name(tournament.name, "name", MAX_NAME)
    store.create(TOURNAMENTS, tournament.tournament_id, tournament.to_json())
    return tournament


def get(store: Store, tournament_id: str) -> Tournament:
    rec = store.get(TOURNAMENTS, tournament_id)
    if rec is None:
        raise NotFound(f"no tournament {tournament_id!r}", tournament_id=tournament_id)
    return Tournament.from_json(rec.value)


def list_ids(store: Store) -> list[str]:
    return [k for k, _ in store.scan(TOURNAMENTS)]


def running_ids(store: Store) -> list[str]:
    """Tournaments that may have work pending (tables to create, rounds to advance)."""
    return [k for k, _ in store.scan(RUNNING_INDEX)]


def _mutate(store: Store, tournament_id: str, fn: Callable[[Tournament], Tournament]):
    get(store, tournament_id)

    def tx(raw: bytes | None):
        t = fn(Tournament.from_json(raw))
        return t.to_json(), t

    return store.update(TOURNAMENTS, tournament_id, tx)


def _require_registering(t: Tournament) -> None:
    if t.state != REGISTERING:
        raise FailedPrecondition(
            f"tournament {t.tournament_id} already started (it is {t.state})",
            reason="TOURNAMENT_STARTED",
        )


def register(store: Store, tournament_id: str, entrants: list[Entrant]) -> Tournament:
    """Add entrants (players or bots); nothing is added if any one cannot be."""

    def fn(t: Tournament) -> Tournament:
        _require_registering(t)
        return _added(t, entrants)

    return _mutate(store, tournament_id, fn)


def _added(t: Tournament, entrants: Sequence[Entrant]) -> Tournament:
    seen = {e.player_id for e in t.entrants}
    for e in entrants:
        if e.player_id in seen:
            raise AlreadyExists(
                f"{e.player_id} is already registered in {t.tournament_id}",
                player_id=e.player_id,
            )
        seen.add(e.player_id)
    if len(seen) > MAX_ENTRANTS:
        raise FailedPrecondition(f"tournament {t.tournament_id} is full ({MAX_ENTRANTS})")
    return replace(t, entrants=(*t.entrants, *entrants))


def withdraw(store: Store, tournament_id: str, player_id: str) -> Tournament:
    def fn(t: Tournament) -> Tournament:
        _require_registering(t)
        if t.entrant(player_id) is None:
            raise NotFound(f"{player_id} is not registered in {tournament_id}")
        return replace(t, entrants=tuple(e for e in t.entrants if e.player_id != player_id))

    return _mutate(store, tournament_id, fn)


def _draw_order(t: Tournament) -> list[str]:
    """Round one: a draw seeded by the tournament id (reproducible, not registration order)."""
    ids = [e.player_id for e in t.entrants]
    seed = int.from_bytes(hashlib.sha256(t.tournament_id.encode()).digest()[:8], "big")
    random.Random(seed).shuffle(ids)
    return ids


def _seat(t: Tournament, round_no: int, order: list[str]) -> Tournament:
    met = set()
    for r in range(1, round_no):
        met |= meetings(tb.seats for tb in t.round_tables(r))
    tables = tuple(Table(round_no, i, seats) for i, seats in enumerate(seat_round(order, met)))
    return replace(t, current_round=round_no, tables=(*t.tables, *tables))


def start(store: Store, tournament_id: str, player_id: str) -> Tournament:
    """The creator starts the tournament: round one is seated (tables are created by
    :func:`allocate_tables`)."""

    def fn(t: Tournament) -> Tournament:
        if t.creator != player_id:
            raise PermissionDenied(f"only the creator {t.creator} may start {tournament_id}")
        _require_registering(t)
        n = len(t.entrants)
        if n < TABLE_SIZE or n % TABLE_SIZE:
            short = TABLE_SIZE - n % TABLE_SIZE if n >= TABLE_SIZE else TABLE_SIZE - n
            raise FailedPrecondition(
                f"{n} entrants do not fill tables of {TABLE_SIZE}; register {short} more "
                "players or bots",
                reason="ENTRANTS_NOT_MULTIPLE_OF_4",
            )
        return _seat(replace(t, state=RUNNING), 1, _draw_order(t))

    store.put(RUNNING_INDEX, tournament_id, b"")  # before the state, so a crash loses no work
    try:
        return _mutate(store, tournament_id, fn)
    except BaseException:
        if get(store, tournament_id).state != RUNNING:
            store.delete(RUNNING_INDEX, tournament_id)
        raise


def fail(store: Store, tournament_id: str, failure: str) -> Tournament:
    """A running tournament whose table the gateway refused (its settings): FINISHED with
    ``failure`` for its players to see and the standings so far as its ranking; no tick asks
    for its tables again. It stays in the running index until its entries are refunded
    (:func:`done_running`, after :func:`.tournament_purse.refund_failed`), so a crash in between
    is finished by the next tick."""

    def fn(t: Tournament) -> Tournament:
        if t.state != RUNNING:
            return t
        ranking = t.standings[-1] if t.standings else ()
        return replace(t, state=FINISHED, failure=failure, final_ranking=ranking)

    return _mutate(store, tournament_id, fn)


def allocate_tables(store: Store, allocator: TableAllocator, tournament_id: str) -> int:
    """Create the current round's tables that have none yet; returns how many were created
    (not those another replica created meanwhile). A table the gateway cannot create now (or
    that another replica is creating) stays pending and is retried on the next call; one it
    refuses fails the tournament (:func:`fail`)."""
    t = get(store, tournament_id)
    if t.state != RUNNING:
        return 0
    names = {e.player_id: e for e in t.entrants}
    created = 0
    for tb in t.round_tables():
        if tb.table_id:
            continue
        request = TableRequest(
            request_id=f"tournament-{t.tournament_id}-r{tb.round}-t{tb.index}",
            ruleset=t.ruleset,
            ruleset_options=dict(t.ruleset_options),
            stake=t.stake,
            seats=tuple(SeatRequest(p, names[p].display_name, names[p].bot) for p in tb.seats),
            max_hands=t.hands_per_round,
            tag=tournament_tag(t.tournament_id, tb.round, tb.index),
        )
        try:
            alloc = allocator.create_table(request)
        except TableRefused as refused:  # never asked again: the tournament ends, with why
            fail(store, tournament_id, refused.message)
            return created
        except DomainError:
            continue

        def fn(cur: Tournament, tb=tb, alloc=alloc) -> Tournament:
            tables = tuple(
                replace(
                    x,
                    table_id=alloc.table_id,
                    gateway_address=alloc.gateway_address,
                    seat_tokens=tuple(alloc.seat_tokens),
                )
                if (x.round, x.index) == (tb.round, tb.index) and not x.table_id
                else x
                for x in cur.tables
            )
            return replace(cur, tables=tables)

        _mutate(store, tournament_id, fn)
        created += not alloc.reused  # another replica's table: counted there
    return created


def table_finished(
    store: Store, tournament_id: str, round_no: int, index: int, table_id: str, hands: int
) -> Tournament:
    """The gateway says a table of the tournament finished after ``hands`` hands."""

    def fn(t: Tournament) -> Tournament:
        found = False
        tables = []
        for x in t.tables:
            if (x.round, x.index) == (round_no, index):
                if x.table_id and x.table_id != table_id:
                    raise FailedPrecondition(
                        f"table {table_id} is not round {round_no} table {index} of "
                        f"{tournament_id} ({x.table_id} is)"
                    )
                found = True
                x = replace(x, finished=True, hands_played=max(hands, x.hands_played))
            tables.append(x)
        if not found:
            raise NotFound(f"tournament {tournament_id} has no round {round_no} table {index}")
        return replace(t, tables=tuple(tables))

    return _mutate(store, tournament_id, fn)


def rank(t: Tournament, chips: Mapping[str, int]) -> tuple[Standing, ...]:
    """Standings: most chips first; ties keep registration order."""
    order = sorted(enumerate(t.entrants), key=lambda ie: (-chips.get(ie[1].player_id, 0), ie[0]))
    return tuple(
        Standing(r + 1, e.player_id, e.display_name, e.bot, chips.get(e.player_id, 0))
        for r, (_, e) in enumerate(order)
    )


def advance(
    store: Store,
    tournament_id: str,
    chips: Callable[[], Mapping[str, int]],
    hands_recorded: Callable[[str], int],
) -> Tournament:
    """When every table of the round is finished and its hands are all in the ledger, record
    the standings and seat the next round (or rank the tournament after its last round)."""
    t = get(store, tournament_id)
    if t.state != RUNNING:
        return t
    tables = t.round_tables()
    if not tables or not all(
        x.finished and x.table_id and hands_recorded(x.table_id) >= x.hands_played for x in tables
    ):
        return t
    totals = dict(chips())

    def fn(cur: Tournament) -> Tournament:
        if cur.state != RUNNING or cur.current_round != t.current_round:
            return cur  # another replica advanced it
        standing = rank(cur, totals)
        cur = replace(cur, standings=(*cur.standings, standing))
        if cur.current_round >= cur.rounds:
            return replace(cur, state=FINISHED, final_ranking=standing)
        return _seat(cur, cur.current_round + 1, [s.player_id for s in standing])

    return _mutate(store, tournament_id, fn)


def done_running(store: Store, tournament_id: str) -> None:
    """A finished tournament whose purse is settled leaves the running index (ticks stop)."""
    store.delete(RUNNING_INDEX, tournament_id)


def new_id() -> str:
    return "t-" + uuid.uuid4().hex[:12]
