"""The collusion counts (:mod:`services.matchmaking.domain.integrity.counts`) as records of the
service's store, on every backend (memory, SQLite, PostgreSQL): one record per player and per
ordered pair, each added to by one atomic update, and a mark per hand and per table counted."""

from __future__ import annotations

from collections.abc import Iterator

from services.matchmaking.domain import records
from services.matchmaking.domain.integrity.counts import (
    PairCounts,
    PlayerCounts,
    add,
    from_list,
    to_list,
)
from services.matchmaking.domain.ports import Records
from services.matchmaking.storage.writes import create_once

PLAYERS = "mm_integrity_players"
PAIRS = "mm_integrity_pairs"
COUNTED = "mm_integrity_counted"


def _pair_key(a: str, b: str) -> str:
    return f"{len(a)}:{a}|{b}"


class RecordsIntegrity:
    """:class:`~services.matchmaking.domain.integrity.counts.IntegrityRepository` over
    :class:`~services.matchmaking.domain.ports.Records`."""

    def __init__(self, store: Records) -> None:
        self.store = store

    def _claim(self, key: str) -> bool:
        return create_once(self.store, COUNTED, key, b"1")[1]

    def claim_hand(self, hand_id: str) -> bool:
        return self._claim("hand/" + hand_id)

    def claim_table(self, table_id: str) -> bool:
        return self._claim("table/" + table_id)

    def _add(self, namespace: str, key: str, head: dict, kind, delta) -> None:
        def fn(raw: bytes | None):
            old = records.load(raw) or {**head, "c": []}
            old["c"] = to_list(add(from_list(kind, old["c"]), delta))
            return records.dump(old), None

        self.store.update(namespace, key, fn)

    def add_player(self, player_id: str, delta: PlayerCounts) -> None:
        self._add(PLAYERS, player_id, {"p": player_id}, PlayerCounts, delta)

    def add_pair(self, a: str, b: str, delta: PairCounts) -> None:
        self._add(PAIRS, _pair_key(a, b), {"a": a, "b": b}, PairCounts, delta)

    def player(self, player_id: str) -> PlayerCounts:
        rec = self.store.get(PLAYERS, player_id)
        data = records.load(rec.value) if rec else None
        return from_list(PlayerCounts, data["c"] if data else None)

    def players(self) -> Iterator[tuple[str, PlayerCounts]]:
        for _, rec in self.store.scan(PLAYERS):
            data = records.load(rec.value)
            yield data["p"], from_list(PlayerCounts, data["c"])

    def pairs(self) -> Iterator[tuple[str, str, PairCounts]]:
        for _, rec in self.store.scan(PAIRS):
            data = records.load(rec.value)
            yield data["a"], data["b"], from_list(PairCounts, data["c"])
