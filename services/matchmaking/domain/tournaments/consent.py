"""Entering a tournament by consent, and its purse (RULES-items §3), on the records of
:mod:`.tournament`.

* Nobody is entered by another's act: the creator's invite (:func:`invite`) only lists the
  player; the player enters by :func:`accept_invite` (or JoinTournament), or declines.
* The pool is shared by final rank by the creator's ``prize_percent`` (default 50 / 30 / 20,
  rounding to rank 1: :func:`prize_split`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from services.matchmaking.domain.tournaments.records import Roll, get_header
from services.matchmaking.domain.tournaments.repository import TournamentRepository
from services.matchmaking.domain.tournaments.tournament import (
    DEFAULT_PRIZE_PERCENT,
    MAX_ENTRANTS,
    MAX_ENTRY_MATCH_CARDS,
    MAX_ENTRY_SILVER,
    MAX_INVITES,
    MAX_PRIZE_RANKS,
    Entrant,
    Tournament,
    added,
    update_roll_open,
)
from shared.errors import FailedPrecondition, InvalidArgument, PermissionDenied


def prize_percent_of(percent: Sequence[int]) -> tuple[int, ...]:
    """The creator's shares of the pool by rank (empty = 50 / 30 / 20); each 0-100, summing to
    100, at most MAX_PRIZE_RANKS ranks; else InvalidArgument."""
    if not percent:
        return DEFAULT_PRIZE_PERCENT
    if len(percent) > MAX_PRIZE_RANKS:
        raise InvalidArgument(
            f"prize_percent has {len(percent)} ranks; at most {MAX_PRIZE_RANKS}",
            field="prize_percent",
        )
    if any(not 0 <= p <= 100 for p in percent) or sum(percent) != 100:
        raise InvalidArgument(
            f"prize_percent {list(percent)} must be shares of 0-100 summing to 100 "
            f"(they sum to {sum(percent)})",
            field="prize_percent",
        )
    return tuple(percent)


def validate_entry(entry_silver: int, entry_match_cards: int) -> None:
    if not 0 <= entry_silver <= MAX_ENTRY_SILVER:
        raise InvalidArgument(
            f"entry_silver {entry_silver} out of range 0-{MAX_ENTRY_SILVER}", field="entry_silver"
        )
    if not 0 <= entry_match_cards <= MAX_ENTRY_MATCH_CARDS:
        raise InvalidArgument(
            f"entry_match_cards {entry_match_cards} out of range 0-{MAX_ENTRY_MATCH_CARDS}",
            field="entry_match_cards",
        )


def prize_split(pool: int, percent: Sequence[int], ranks: int) -> list[int]:
    """The pool shared by rank (rank 1 first) for ``ranks`` ranked entrants: each share rounded
    down, what rounding leaves (and the shares of ranks nobody holds) to rank 1. Sums to
    ``pool`` whenever ``ranks`` ≥ 1."""
    if ranks < 1:
        return []
    n = min(ranks, len(percent))
    shares = [pool * p // 100 for p in percent[:n]]
    shares[0] += pool - sum(shares)
    return shares


def check_invite_ids(player_ids: Sequence[str]) -> None:
    if not player_ids:
        raise InvalidArgument("player_ids is empty", field="player_ids")
    if len(player_ids) > MAX_INVITES:
        raise InvalidArgument(
            f"player_ids has {len(player_ids)} entries; at most {MAX_INVITES}", field="player_ids"
        )
    if any(not p for p in player_ids):
        raise InvalidArgument("a player id is empty", field="player_ids")


def invite(
    store: TournamentRepository, tournament_id: str, creator: str, player_ids: Sequence[str]
):
    """The creator invites players: they are listed as invited, never entered (each enters only
    by :func:`accept_invite`). Already invited or entered ids are skipped."""
    check_invite_ids(player_ids)
    header = get_header(store, tournament_id)
    if header.creator != creator:
        raise PermissionDenied(f"only the creator {header.creator} may invite to {tournament_id}")

    def fn(roll: Roll) -> Roll:
        known = {*roll.invited, *(e.player_id for e in roll.entrants)}
        new = tuple(dict.fromkeys(p for p in player_ids if p not in known))
        if len(roll.invited) + len(new) > MAX_ENTRANTS:
            raise FailedPrecondition(
                f"tournament {tournament_id} has {len(roll.invited)} invites; at most "
                f"{MAX_ENTRANTS}",
                reason="TOO_MANY_INVITES",
            )
        return replace(roll, invited=(*roll.invited, *new))

    return update_roll_open(store, tournament_id, fn)


def require_invited(t: Tournament | Roll, player_id: str) -> None:
    if player_id not in t.invited:
        name = t.tournament_id if isinstance(t, Tournament) else "the tournament"
        raise FailedPrecondition(f"{player_id} has no invite to {name}", reason="NOT_INVITED")


def accept_invite(store: TournamentRepository, tournament_id: str, entrant: Entrant) -> Tournament:
    """The invited player enters (the invite is used up)."""

    def fn(roll: Roll) -> Roll:
        require_invited(roll, entrant.player_id)
        roll = replace(roll, invited=tuple(p for p in roll.invited if p != entrant.player_id))
        return added(roll, tournament_id, [entrant])

    return update_roll_open(store, tournament_id, fn)


def decline_invite(store: TournamentRepository, tournament_id: str, player_id: str) -> Tournament:
    def fn(roll: Roll) -> Roll:
        require_invited(roll, player_id)
        return replace(roll, invited=tuple(p for p in roll.invited if p != player_id))

    return update_roll_open(store, tournament_id, fn)
