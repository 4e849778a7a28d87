"""Where a tournament (比赛) lives in the store: one small record per concern, so that no step of
a 10,000-entrant tournament rewrites what it does not change.

======================================  =======================================================
namespace / key                         what, and who writes it
======================================  =======================================================
``mm_tournaments/<id>``                 :class:`Header`: settings, state, current round, round
                                        progress summary, backoff and stall; small, rewritten
                                        by state changes only
``mm_tournament_entrants/<id>``         :class:`Roll`: entrants and invites, closed at the
                                        start (immutable from then on, so cached in-process)
``mm_tournament_seatings/<id>/r<n>``    :class:`Seating`: round n's tables of four, written
                                        once (``create``: a second seater finds the first's)
``mm_tournament_rounds/<id>/r<n>``      :class:`RoundProgress`: tables created, finished and
                                        settled as bit sets; the round barrier reads this one
                                        record
``mm_tournament_tables/<id>/r<n>/t<i>`` :class:`TableState`: a created table's id, address,
                                        seat tokens, hands played, finished and settled
``mm_tournament_standings/<id>/r<n>``   :class:`Ranking` after round n (``final``: the final
                                        ranking), written once
``mm_tournaments_running/<id>``         the ticker's index of tournaments with work pending
======================================  =======================================================

Every record is compact JSON with a ``version``, kept through the tournaments' repository
(:mod:`.repository`; over the store: :mod:`services.matchmaking.storage.tournament_records`).
Nothing here decides anything: the rules of a tournament are :mod:`.tournament` and
:mod:`.rounds`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from services.matchmaking.domain import records
from shared.errors import NotFound

if TYPE_CHECKING:
    from services.matchmaking.domain.tournaments.repository import TournamentRepository

FINAL = "final"
VERSION = 3

T = TypeVar("T")


# --- records ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Entrant:
    """An entrant; ``entry_ref`` names the ledger transaction that moved its entry into escrow
    ("" for a bot or a free tournament)."""

    player_id: str
    display_name: str
    bot: bool = False
    entry_ref: str = ""


@dataclass(frozen=True, slots=True)
class Roll:
    """Who is entered (registration order) and invited; ``closed`` from the start on."""

    entrants: tuple[Entrant, ...] = ()
    invited: tuple[str, ...] = ()
    closed: bool = False

    def to_json(self) -> bytes:
        rows = [[e.player_id, e.display_name, e.bot, e.entry_ref] for e in self.entrants]
        return records.dump(
            {"version": 1, "entrants": rows, "invited": list(self.invited), "closed": self.closed}
        )

    @staticmethod
    def from_json(raw: bytes | None) -> Roll:
        if raw is None:
            return Roll()
        d = records.load(raw)
        return Roll(
            tuple(Entrant(p, n, bool(b), r) for p, n, b, r in d["entrants"]),
            tuple(d["invited"]),
            bool(d["closed"]),
        )


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
class RoundSummary:
    """A round's progress as the header shows it (copied from :class:`RoundProgress` when
    it changes phase: seated, started, finished, advanced)."""

    round: int
    kind: str
    tables: int
    seated_ms: int
    deadline_ms: int = 0
    started_ms: int = 0
    finished_ms: int = 0
    advanced_ms: int = 0


@dataclass(frozen=True, slots=True)
class Header:
    """The tournament itself, without its entrants and tables."""

    tournament_id: str
    name: str
    creator: str
    ruleset: str
    stake: int
    rounds: int  # Swiss rounds
    hands_per_round: int
    created_at: float
    state: str = "registering"
    current_round: int = 0
    entrant_count: int = 0
    ruleset_options: dict[str, str] = field(default_factory=dict)
    entry_silver: int = 0
    entry_match_cards: int = 0
    prize_percent: tuple[int, ...] = (50, 30, 20)
    house_prizes: tuple[HousePrize, ...] = ()
    prizes: tuple[Prize, ...] = ()
    cancelled: bool = False
    failure: str = ""
    cut_to: int = 0  # after the Swiss rounds, the top cut_to play final_rounds more
    final_rounds: int = 0
    round_seconds: int = 0  # each round's time limit (0 = none)
    round_summaries: tuple[RoundSummary, ...] = ()
    failures: int = 0  # the next step's failures in a row
    retry_at_ms: int = 0  # not tried again before this (backoff)
    stall_reason: str = ""
    purse_done: int = 0  # refunds: how many paid entrants are done (bounded batches)
    version: int = VERSION

    def to_json(self) -> bytes:
        return records.dump(asdict(self))

    @staticmethod
    def from_json(raw: bytes) -> Header:
        d = records.load(raw)
        d["version"] = VERSION
        d["prize_percent"] = tuple(d["prize_percent"])
        d["house_prizes"] = tuple(HousePrize(**h) for h in d["house_prizes"])
        d["prizes"] = tuple(
            Prize(p["rank"], p["player_id"], tuple((a, n) for a, n in p["assets"]))
            for p in d["prizes"]
        )
        d["round_summaries"] = tuple(RoundSummary(**r) for r in d["round_summaries"])
        return Header(**d)


@dataclass(frozen=True, slots=True)
class Seating:
    """A round's tables: ``tables[i]`` the player ids of table i by seat."""

    round: int
    kind: str
    tables: tuple[tuple[str, ...], ...]

    def to_json(self) -> bytes:
        return records.dump(
            {"version": 1, "round": self.round, "kind": self.kind, "tables": self.tables}
        )

    @staticmethod
    def from_json(raw: bytes) -> Seating:
        d = records.load(raw)
        return Seating(d["round"], d["kind"], tuple(tuple(t) for t in d["tables"]))


def _bits(value: str) -> int:
    return int(value, 16)


@dataclass(frozen=True, slots=True)
class RoundProgress:
    """A round's barrier: bit i of ``created`` / ``finished`` / ``settled`` (hex) is table i's.
    Settled = finished with every hand it played in the ledger."""

    round: int
    kind: str
    tables: int
    seated_ms: int
    deadline_ms: int = 0
    created: str = "0"
    finished: str = "0"
    settled: str = "0"
    started_ms: int = 0
    finished_ms: int = 0
    advanced_ms: int = 0
    version: int = 1

    def count(self, which: str) -> int:
        return _bits(getattr(self, which)).bit_count()

    def has(self, which: str, index: int) -> bool:
        return bool(_bits(getattr(self, which)) >> index & 1)

    def missing(self, which: str) -> list[int]:
        bits = _bits(getattr(self, which))
        return [i for i in range(self.tables) if not bits >> i & 1]

    def with_bits(self, which: str, indexes: Iterable[int]) -> RoundProgress:
        bits = _bits(getattr(self, which))
        for i in indexes:
            bits |= 1 << i
        return replace(self, **{which: format(bits, "x")})

    def summary(self) -> RoundSummary:
        return RoundSummary(
            self.round,
            self.kind,
            self.tables,
            self.seated_ms,
            self.deadline_ms,
            self.started_ms,
            self.finished_ms,
            self.advanced_ms,
        )

    def to_json(self) -> bytes:
        return records.dump(asdict(self))

    @staticmethod
    def from_json(raw: bytes) -> RoundProgress:
        return RoundProgress(**records.load(raw))


@dataclass(frozen=True, slots=True)
class TableState:
    """A round's table once the gateway created it (or reported it)."""

    round: int
    index: int
    seats: tuple[str, ...]
    table_id: str = ""
    gateway_address: str = ""
    seat_tokens: tuple[str, ...] = ()
    finished: bool = False
    hands_played: int = 0
    settled: bool = False
    finished_ms: int = 0  # when the gateway said it finished
    version: int = 1

    def to_json(self) -> bytes:
        return records.dump(asdict(self))

    @staticmethod
    def from_json(raw: bytes) -> TableState:
        d = records.load(raw)
        d["seats"], d["seat_tokens"] = tuple(d["seats"]), tuple(d["seat_tokens"])
        return TableState(**d)


@dataclass(frozen=True, slots=True)
class Ranking:
    """Standings as (player id, chips), best first (names and bots come from the roll)."""

    round: int
    rows: tuple[tuple[str, int], ...]

    def to_json(self) -> bytes:
        return records.dump({"version": 1, "round": self.round, "rows": self.rows})

    @staticmethod
    def from_json(raw: bytes) -> Ranking:
        d = records.load(raw)
        return Ranking(d["round"], tuple((p, int(c)) for p, c in d["rows"]))


# --- keys ------------------------------------------------------------------------------------
# --- an in-process cache of what never changes once written --------------------------------
class _Frozen:
    """Closed rolls, seatings and rankings, by (repository, kind, key): written once, so a
    process reads each from the store once (10,000 watchers of a round share one copy)."""

    def __init__(self, size: int = 256) -> None:
        self._items: OrderedDict[tuple[int, str, str], object] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def get(
        self,
        store: object,
        ns: str,
        key: str,
        load: Callable[[], T | None],
        keep: Callable[[T], bool] = lambda _: True,
    ) -> T | None:
        """The cached value, else ``load()``'s, kept when not None and ``keep`` says so."""
        k = (id(store), ns, key)
        with self._lock:
            if k in self._items:
                self._items.move_to_end(k)
                return self._items[k]  # type: ignore[return-value]
        value = load()
        if value is not None and keep(value):
            with self._lock:
                self._items[k] = value
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
        return value


FROZEN = _Frozen()


# --- reading and writing (through the tournaments' repository) -------------------------------
def _changed(fn: Callable[[T], T]) -> Callable[[T], tuple[T | None, T]]:
    """An update writing ``fn``'s record only when it differs."""

    def tx(before: T) -> tuple[T | None, T]:
        after = fn(before)
        return (None if after == before else after), after

    return tx


def get_header(store: TournamentRepository, tournament_id: str) -> Header:
    header = store.header(tournament_id)
    if header is None:
        raise NotFound(f"no tournament {tournament_id!r}", tournament_id=tournament_id)
    return header


def update_header(
    store: TournamentRepository, tournament_id: str, fn: Callable[[Header], Header]
) -> Header:
    """Atomic read-modify-write of the header (``fn`` may raise: nothing is written)."""
    get_header(store, tournament_id)
    return store.update_header(tournament_id, _changed(fn))  # type: ignore[arg-type]


def get_roll(store: TournamentRepository, tournament_id: str) -> Roll:
    def load() -> Roll:
        return store.roll(tournament_id)

    roll = FROZEN.get(store, "roll", tournament_id, load, keep=lambda r: r.closed)
    assert roll is not None
    return roll


def update_roll(
    store: TournamentRepository, tournament_id: str, fn: Callable[[Roll], Roll]
) -> Roll:
    return store.update_roll(tournament_id, _changed(fn))


def get_seating(store: TournamentRepository, tournament_id: str, round_no: int) -> Seating | None:
    return FROZEN.get(
        store,
        "seating",
        f"{tournament_id}/{round_no}",
        lambda: store.seating(tournament_id, round_no),
    )


def create_seating(store: TournamentRepository, tournament_id: str, seating: Seating) -> Seating:
    """Write a round's seating once; a seating already there (another replica's, or this
    one's before a crash) is kept and returned."""
    store.add_seating_once(tournament_id, seating)
    found = get_seating(store, tournament_id, seating.round)
    assert found is not None
    return found


def get_progress(
    store: TournamentRepository, tournament_id: str, round_no: int
) -> RoundProgress | None:
    return store.progress(tournament_id, round_no)


def create_progress(
    store: TournamentRepository, tournament_id: str, progress: RoundProgress
) -> None:
    store.add_progress_once(tournament_id, progress)


def update_progress(
    store: TournamentRepository,
    tournament_id: str,
    round_no: int,
    fn: Callable[[RoundProgress], RoundProgress],
) -> RoundProgress:
    def tx(before: RoundProgress | None) -> tuple[RoundProgress | None, RoundProgress]:
        if before is None:
            raise NotFound(f"tournament {tournament_id} has no round {round_no}")
        after = fn(before)
        return (None if after == before else after), after

    return store.update_progress(tournament_id, round_no, tx)


def get_table(
    store: TournamentRepository, tournament_id: str, round_no: int, index: int
) -> TableState | None:
    return store.table(tournament_id, round_no, index)


def update_table(
    store: TournamentRepository,
    tournament_id: str,
    round_no: int,
    index: int,
    fn: Callable[[TableState | None], TableState],
) -> TableState:
    def tx(before: TableState | None) -> tuple[TableState | None, TableState]:
        after = fn(before)
        return (None if after == before else after), after

    return store.update_table(tournament_id, round_no, index, tx)


def round_table_states(
    store: TournamentRepository, tournament_id: str, round_no: int
) -> dict[int, TableState]:
    """The round's created tables by index (one prefix read)."""
    return {t.index: t for t in store.round_tables(tournament_id, round_no)}


def get_ranking(
    store: TournamentRepository, tournament_id: str, round_no: int = 0, *, final: bool = False
) -> Ranking | None:
    """The standings after ``round_no`` (or the final ranking), None before they exist."""
    key = f"{tournament_id}/{FINAL}" if final else f"{tournament_id}/{round_no}"
    return FROZEN.get(store, "ranking", key, lambda: store.ranking(tournament_id, round_no, final))


def create_ranking(
    store: TournamentRepository, tournament_id: str, ranking: Ranking, *, final: bool = False
):
    store.add_ranking_once(tournament_id, ranking, final)


def mark_running(store: TournamentRepository, tournament_id: str) -> None:
    store.mark_running(tournament_id)


def done_running(store: TournamentRepository, tournament_id: str) -> None:
    store.done_running(tournament_id)


def running_ids(store: TournamentRepository) -> list[str]:
    return store.running_ids()


def list_ids(store: TournamentRepository) -> list[str]:
    return store.tournament_ids()
