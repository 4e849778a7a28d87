"""The gateway's records in the store besides the event log, each a typed, versioned value.

Namespaces (the tables' leases are the store's own, :mod:`.leases`): ``gateway-request``
(``<table>/<seat>/<request id>`` -> :class:`RequestRecord`), ``gateway-create`` (CreateTable
request id -> :class:`CreateRecord`), ``gateway-join`` (``<table>/<player>`` -> the JoinSeat
request id that took an open seat), ``gateway-table`` (table id -> its seats, :class:`SeatRecord`
list), ``gateway-reported`` (table id -> ``b"1"``/``b"0"``: whether its hands go to matchmaking's
ledger) and ``gateway-outbox`` (``<table>/<hand id>`` -> :class:`HandReport`,
``<table>/~finished`` -> :class:`FinishedReport`: reports for matchmaking, sent by
:mod:`services.gateway.outbox`), ``gateway-hand-answer`` (``<table>/<hand id>`` ->
:class:`HandAnswerRecord`: matchmaking's answer to a hand's report, which the table waits for
before its next deal) and ``gateway-spectator`` (``<table>/<spectator id>`` -> when
the spectator joined, in ms: the spectators a table admits, :mod:`.spectators`).

Each JSON record carries ``"v"``; records written before the field existed are version 1 (the
same fields). A record of an unknown version is refused by name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from infra.store import Store
from services.gateway.domain.hand_facts import HandFacts
from shared.errors import InvalidArgument, Refusal

REQUESTS = "gateway-request"
CREATES = "gateway-create"
JOINS = "gateway-join"
TABLES = "gateway-table"
REPORTED = "gateway-reported"
OUTBOX = "gateway-outbox"
SPECTATORS = "gateway-spectator"
ANSWERS = "gateway-hand-answer"

VERSION = 1


def _dump(d: dict[str, Any]) -> bytes:
    return json.dumps({"v": VERSION, **d}, separators=(",", ":")).encode()


def _load(raw: bytes, what: str) -> dict[str, Any]:
    d = json.loads(raw)
    if not isinstance(d, dict):
        raise ValueError(f"a {what} record is a JSON object, not {type(d).__name__}")
    v = d.pop("v", 1)
    if v != VERSION:
        raise ValueError(f"{what} record of version {v}: this release reads version {VERSION}")
    return d


@dataclass(frozen=True)
class RequestRecord:
    """The first result of a seat's request id: a value (an accepted action's sequence number,
    a Leave's penalty) or a refusal, and the table's last sequence number when it was made
    (``at``: records of hands before the previous one are dropped)."""

    at: int
    result: int | None = None
    refusal: Refusal | None = None

    def replay(self) -> int:
        """The result again, or the refusal raised again."""
        if self.refusal is not None:
            self.refusal.raise_again()
        assert self.result is not None
        return self.result

    def encode(self) -> bytes:
        d: dict[str, Any] = {"at": self.at}
        if self.refusal is not None:
            d["refused"] = self.refusal.as_dict()
        else:
            d["result"] = self.result
        return _dump(d)

    @staticmethod
    def decode(raw: bytes) -> RequestRecord:
        d = _load(raw, "request")
        refused = d.get("refused")
        if refused is not None:
            return RequestRecord(int(d["at"]), refusal=Refusal.from_dict(refused))
        return RequestRecord(int(d["at"]), result=int(d["result"]))


@dataclass(frozen=True)
class CreateRecord:
    """The table a CreateTable request id made, and the fingerprint of that request."""

    table_id: str
    fingerprint: str

    def encode(self) -> bytes:
        return _dump({"table_id": self.table_id, "fingerprint": self.fingerprint})

    @staticmethod
    def decode(raw: bytes) -> CreateRecord:
        d = _load(raw, "create")
        return CreateRecord(d["table_id"], d["fingerprint"])


@dataclass(frozen=True)
class SpectatorRecord:
    """A spectator a table admits (its id is the record's key): when it joined."""

    joined_ms: int

    def encode(self) -> bytes:
        return _dump({"joined_ms": self.joined_ms})

    @staticmethod
    def decode(raw: bytes) -> SpectatorRecord:
        return SpectatorRecord(int(_load(raw, "spectator")["joined_ms"]))


@dataclass(frozen=True)
class SeatRecord:
    """A seat as stored at creation: its player (empty: open) and whether a bot plays it."""

    player_id: str
    bot: bool


def encode_seats(seats: list[SeatRecord]) -> bytes:
    """Version 1 of the seats record is a bare JSON list (a later version would be an object
    with ``"v"``)."""
    return json.dumps([{"player_id": s.player_id, "bot": s.bot} for s in seats]).encode()


def decode_seats(raw: bytes) -> list[SeatRecord]:
    d = json.loads(raw)
    if not isinstance(d, list):
        raise ValueError("a seats record of version 1 is a JSON list")
    return [SeatRecord(s["player_id"], bool(s["bot"])) for s in d]


MAX_ID = 128


def check_id(value: str, field_name: str, *, required: bool = True) -> str:
    """A request, table or player id: non-empty (when required), printable, bounded."""
    if not value:
        if required:
            raise InvalidArgument(f"{field_name} is empty", field=field_name)
        return value
    if len(value) > MAX_ID or not value.isprintable():
        raise InvalidArgument(
            f"{field_name} must be printable and at most {MAX_ID} characters", field=field_name
        )
    return value


@dataclass(frozen=True)
class HandReport:
    """A settled hand for matchmaking's ledger: chips by seat (``payments``, with ``house``
    summing to zero), the players by seat (``bot:<seat>`` for a bot) and the seat that escaped
    (逃跑), if one did."""

    hand_id: str
    table_id: str
    tag: str
    player_ids: tuple[str, ...]
    payments: tuple[int, ...]
    house: int
    escaped_seat: int | None = None
    hand_number: int = 0  # the hand's number at its table: its held 加倍卡's key
    doubled_seats: tuple[int, ...] = ()  # seats that played a 加倍卡 for the hand
    fees: tuple[int, ...] = ()  # 台费 each seat paid the house, by seat (empty = none)
    facts: HandFacts | None = None  # for the collusion signals; None in rows written before

    kind = "hand"

    def key(self) -> str:
        return f"{self.table_id}/{self.hand_id}"


@dataclass(frozen=True)
class FinishedReport:
    """A table's end, after its last hand's report."""

    table_id: str
    tag: str
    hands_played: int

    kind = "finished"

    def key(self) -> str:
        return f"{self.table_id}/~finished"


Report = HandReport | FinishedReport


def _facts_dict(facts: HandFacts) -> dict[str, Any]:
    return {
        "version": facts.version,
        "discard_wins": [list(p) for p in facts.discard_wins],
        "claims": [list(p) for p in facts.claims],
        "passed_wins": [list(p) for p in facts.passed_wins],
        "chows": [list(p) for p in facts.chows],
    }


def _facts_of(d: dict[str, Any] | None) -> HandFacts | None:
    if d is None:
        return None

    def pairs(name: str) -> tuple[tuple[int, int], ...]:
        return tuple((int(a), int(b)) for a, b in d.get(name, ()))

    return HandFacts(
        int(d["version"]),
        pairs("discard_wins"),
        pairs("claims"),
        pairs("passed_wins"),
        pairs("chows"),
    )


def encode_report(report: Report) -> bytes:
    d = {k: getattr(report, k) for k in report.__dataclass_fields__}
    if isinstance(report, HandReport):
        if report.facts is None:
            del d["facts"]
        else:
            d["facts"] = _facts_dict(report.facts)
    return _dump({"kind": report.kind, **d})


def decode_report(raw: bytes) -> Report:
    """An outbox row (rows written before ``"v"`` existed are version 1, the same fields)."""
    d = _load(raw, "outbox")
    kind = d.pop("kind", None)
    if kind == "hand":
        esc = d.get("escaped_seat")
        return HandReport(
            hand_id=str(d["hand_id"]),
            table_id=str(d["table_id"]),
            tag=str(d.get("tag", "")),
            player_ids=tuple(str(p) for p in d["player_ids"]),
            payments=tuple(int(x) for x in d["payments"]),
            house=int(d["house"]),
            escaped_seat=None if esc is None else int(esc),
            hand_number=int(d.get("hand_number", 0)),
            doubled_seats=tuple(int(x) for x in d.get("doubled_seats", ())),
            fees=tuple(int(x) for x in d.get("fees", ())),
            facts=_facts_of(d.get("facts")),
        )
    if kind == "finished":
        return FinishedReport(
            table_id=str(d["table_id"]),
            tag=str(d.get("tag", "")),
            hands_played=int(d["hands_played"]),
        )
    raise ValueError(f"outbox record of kind {kind!r}: this release knows 'hand' and 'finished'")


@dataclass(frozen=True)
class HandAnswerRecord:
    """Matchmaking's answer to a hand's report, kept by the outbox sender that got it (any
    replica) for the table, which deals its next hand only once it is in: the seats whose
    player went bankrupt (破产) and the bot taking each, ``((seat, bot id), ...)``. ``refused``:
    matchmaking refused the report for good (dropped, :mod:`services.gateway.outbox`), so
    nobody's seat changes and the table goes on."""

    bankrupt: tuple[tuple[int, str], ...] = ()
    refused: bool = False

    def encode(self) -> bytes:
        return _dump({"bankrupt": [[s, b] for s, b in self.bankrupt], "refused": self.refused})

    @staticmethod
    def decode(raw: bytes) -> HandAnswerRecord:
        d = _load(raw, "hand answer")
        return HandAnswerRecord(
            tuple((int(s), str(b)) for s, b in d.get("bankrupt", ())),
            bool(d.get("refused", False)),
        )


def answer_key(table_id: str, hand_id: str) -> str:
    """The key of a hand's answer: the key of its outbox row (:meth:`HandReport.key`)."""
    return f"{table_id}/{hand_id}"


def forget_answers(store: Store, table_id: str) -> None:
    """A finished table's hand answers leave the store (best effort: called after its end is
    written)."""
    for key, _ in list(store.scan(ANSWERS, table_id + "/")):
        store.delete(ANSWERS, key)
