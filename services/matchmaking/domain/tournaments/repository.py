"""The tournaments' repository (比赛): one small record per concern (see :mod:`.records` for the
table of namespaces and keys), declared here, implemented over the store by
:class:`services.matchmaking.storage.tournament_records.TournamentRecords`.

``update_*`` are atomic read-modify-writes whose ``fn`` may run more than once (keep it pure):
it gets the record (None when absent) and returns (the new record or None to leave it,
result); ``add_*_once`` write a record unless its key is taken (whoever races, one stays).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from services.matchmaking.domain.tournaments.records import (
        Header,
        Ranking,
        Roll,
        RoundProgress,
        Seating,
        TableState,
    )

R = TypeVar("R")


class TournamentRepository(Protocol):
    """Headers, rolls, seatings, round progress, tables, rankings and the running index."""

    def header(self, tournament_id: str) -> Header | None: ...

    def add_header(self, header: Header) -> None:
        """Store a new tournament; the store's ``AlreadyExists`` when its id is taken."""

    def update_header(
        self, tournament_id: str, fn: Callable[[Header | None], tuple[Header | None, R]]
    ) -> R: ...

    def roll(self, tournament_id: str) -> Roll:
        """The roll (an empty one when none is stored)."""

    def update_roll(self, tournament_id: str, fn: Callable[[Roll], tuple[Roll | None, R]]) -> R: ...

    def seating(self, tournament_id: str, round_no: int) -> Seating | None: ...

    def add_seating_once(self, tournament_id: str, seating: Seating) -> None: ...

    def progress(self, tournament_id: str, round_no: int) -> RoundProgress | None: ...

    def add_progress_once(self, tournament_id: str, progress: RoundProgress) -> None: ...

    def update_progress(
        self,
        tournament_id: str,
        round_no: int,
        fn: Callable[[RoundProgress | None], tuple[RoundProgress | None, R]],
    ) -> R: ...

    def table(self, tournament_id: str, round_no: int, index: int) -> TableState | None: ...

    def update_table(
        self,
        tournament_id: str,
        round_no: int,
        index: int,
        fn: Callable[[TableState | None], tuple[TableState | None, R]],
    ) -> R: ...

    def round_tables(self, tournament_id: str, round_no: int) -> Sequence[TableState]:
        """The round's created tables (one prefix read)."""

    def ranking(self, tournament_id: str, round_no: int, final: bool) -> Ranking | None: ...

    def add_ranking_once(self, tournament_id: str, ranking: Ranking, final: bool) -> None: ...

    def mark_running(self, tournament_id: str) -> None: ...

    def done_running(self, tournament_id: str) -> None: ...

    def running_ids(self) -> list[str]: ...

    def tournament_ids(self) -> list[str]: ...

    def headers(self) -> list[Header]:
        """Every tournament's header (for the public list of those not finished)."""
        ...
