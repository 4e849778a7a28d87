"""The public list of tournaments (``ListTournaments``): those open to join or being played,
newest first, each as a summary any signed-in player may read (a tournament is open to every
player: GetTournament and JoinTournament take any session)."""

from __future__ import annotations

from dataclasses import dataclass

from services.matchmaking.domain.tournaments.records import Header
from services.matchmaking.domain.tournaments.repository import TournamentRepository
from services.matchmaking.domain.tournaments.tournament import FINISHED

MAX_LISTED = 100


@dataclass(frozen=True)
class TournamentSummary:
    """What the list shows of one tournament; ``started_ms``: when its first round started
    (0 before)."""

    tournament_id: str
    name: str
    state: str
    entrant_count: int
    created_ms: int
    started_ms: int
    rounds: int
    current_round: int
    ruleset: str
    stake: int
    entry_silver: int
    entry_match_cards: int


def summary(h: Header) -> TournamentSummary:
    first = h.round_summaries[0] if h.round_summaries else None
    started = (first.started_ms or first.seated_ms) if first is not None else 0
    return TournamentSummary(
        tournament_id=h.tournament_id,
        name=h.name,
        state=h.state,
        entrant_count=h.entrant_count,
        created_ms=int(h.created_at * 1000),
        started_ms=started,
        rounds=h.rounds + h.final_rounds,
        current_round=h.current_round,
        ruleset=h.ruleset,
        stake=h.stake,
        entry_silver=h.entry_silver,
        entry_match_cards=h.entry_match_cards,
    )


def open_tournaments(
    repo: TournamentRepository, limit: int = MAX_LISTED
) -> list[TournamentSummary]:
    """The tournaments not finished (registering, running, stalled), newest first, at most
    ``limit``."""
    live = [h for h in repo.headers() if h.state != FINISHED]
    live.sort(key=lambda h: (-h.created_at, h.tournament_id))
    return [summary(h) for h in live[:limit]]
