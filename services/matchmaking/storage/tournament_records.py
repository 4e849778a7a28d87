"""The tournaments' repository over the service's store
(:class:`~services.matchmaking.domain.tournaments.repository.TournamentRepository`): the
namespaces, keys and encodings listed in :mod:`services.matchmaking.domain.tournaments.records`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.tournaments.records import (
    Header,
    Ranking,
    Roll,
    RoundProgress,
    Seating,
    TableState,
)
from services.matchmaking.storage.writes import create_once

R = TypeVar("R")

HEADERS = "mm_tournaments"
ROLLS = "mm_tournament_entrants"
SEATINGS = "mm_tournament_seatings"
ROUNDS = "mm_tournament_rounds"
TABLES = "mm_tournament_tables"
RANKINGS = "mm_tournament_standings"
RUNNING_INDEX = "mm_tournaments_running"  # ids of tournaments with work pending
FINAL = "final"


def round_key(tournament_id: str, round_no: int) -> str:
    return f"{tournament_id}/r{round_no:03d}"


def table_key(tournament_id: str, round_no: int, index: int) -> str:
    return f"{round_key(tournament_id, round_no)}/t{index:05d}"


def _ranking_key(tournament_id: str, round_no: int, final: bool) -> str:
    return f"{tournament_id}/{FINAL}" if final else round_key(tournament_id, round_no)


def _apply(load, fn):
    """A store update function over decoded records: ``fn`` gets ``load(raw)``."""

    def tx(raw: bytes | None):
        after, result = fn(load(raw))
        return (None if after is None else after.to_json()), result

    return tx


def _or_none(cls):
    return lambda raw: None if raw is None else cls.from_json(raw)


class TournamentRecords:
    """Tournaments in ``store``."""

    def __init__(self, store: Records) -> None:
        self.store = store

    def header(self, tournament_id: str) -> Header | None:
        rec = self.store.get(HEADERS, tournament_id)
        return None if rec is None else Header.from_json(rec.value)

    def add_header(self, header: Header) -> None:
        self.store.create(HEADERS, header.tournament_id, header.to_json())

    def update_header(
        self, tournament_id: str, fn: Callable[[Header | None], tuple[Header | None, R]]
    ) -> R:
        return self.store.update(HEADERS, tournament_id, _apply(_or_none(Header), fn))

    def roll(self, tournament_id: str) -> Roll:
        rec = self.store.get(ROLLS, tournament_id)
        return Roll.from_json(None if rec is None else rec.value)

    def update_roll(self, tournament_id: str, fn: Callable[[Roll], tuple[Roll | None, R]]) -> R:
        return self.store.update(ROLLS, tournament_id, _apply(Roll.from_json, fn))

    def seating(self, tournament_id: str, round_no: int) -> Seating | None:
        rec = self.store.get(SEATINGS, round_key(tournament_id, round_no))
        return None if rec is None else Seating.from_json(rec.value)

    def add_seating_once(self, tournament_id: str, seating: Seating) -> None:
        key = round_key(tournament_id, seating.round)
        create_once(self.store, SEATINGS, key, seating.to_json())

    def progress(self, tournament_id: str, round_no: int) -> RoundProgress | None:
        rec = self.store.get(ROUNDS, round_key(tournament_id, round_no))
        return None if rec is None else RoundProgress.from_json(rec.value)

    def add_progress_once(self, tournament_id: str, progress: RoundProgress) -> None:
        key = round_key(tournament_id, progress.round)
        create_once(self.store, ROUNDS, key, progress.to_json())

    def update_progress(
        self,
        tournament_id: str,
        round_no: int,
        fn: Callable[[RoundProgress | None], tuple[RoundProgress | None, R]],
    ) -> R:
        key = round_key(tournament_id, round_no)
        return self.store.update(ROUNDS, key, _apply(_or_none(RoundProgress), fn))

    def table(self, tournament_id: str, round_no: int, index: int) -> TableState | None:
        rec = self.store.get(TABLES, table_key(tournament_id, round_no, index))
        return None if rec is None else TableState.from_json(rec.value)

    def update_table(
        self,
        tournament_id: str,
        round_no: int,
        index: int,
        fn: Callable[[TableState | None], tuple[TableState | None, R]],
    ) -> R:
        key = table_key(tournament_id, round_no, index)
        return self.store.update(TABLES, key, _apply(_or_none(TableState), fn))

    def round_tables(self, tournament_id: str, round_no: int) -> list[TableState]:
        prefix = round_key(tournament_id, round_no) + "/"
        return [TableState.from_json(rec.value) for _, rec in self.store.scan(TABLES, prefix)]

    def ranking(self, tournament_id: str, round_no: int, final: bool) -> Ranking | None:
        rec = self.store.get(RANKINGS, _ranking_key(tournament_id, round_no, final))
        return None if rec is None else Ranking.from_json(rec.value)

    def add_ranking_once(self, tournament_id: str, ranking: Ranking, final: bool) -> None:
        key = _ranking_key(tournament_id, ranking.round, final)
        create_once(self.store, RANKINGS, key, ranking.to_json())

    def mark_running(self, tournament_id: str) -> None:
        self.store.put(RUNNING_INDEX, tournament_id, b"")

    def done_running(self, tournament_id: str) -> None:
        self.store.delete(RUNNING_INDEX, tournament_id)

    def running_ids(self) -> list[str]:
        return [k for k, _ in self.store.scan(RUNNING_INDEX)]

    def tournament_ids(self) -> list[str]:
        return [k for k, _ in self.store.scan(HEADERS)]

    def headers(self) -> list[Header]:
        return [Header.from_json(rec.value) for _, rec in self.store.scan(HEADERS)]
