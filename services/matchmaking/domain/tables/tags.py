"""Table tags: the opaque string matchmaking gives the gateway and gets back in every report.

``quick/<match id>``, ``room/<code>``, ``tournament/<id>/round/<n>/table/<i>``. The *group* of a
tag is its first two parts ("tournament/T"), the unit the ledger indexes hands by.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TournamentTable:
    tournament_id: str
    round: int
    table: int


def quick_tag(match_id: str) -> str:
    return f"quick/{match_id}"


def room_tag(code: str) -> str:
    return f"room/{code}"


def tournament_tag(tournament_id: str, round_no: int, table: int) -> str:
    return f"tournament/{tournament_id}/round/{round_no}/table/{table}"


def tournament_group(tournament_id: str) -> str:
    return f"tournament/{tournament_id}"


def tag_group(tag: str) -> str:
    """The first two parts of a tag ("" stays "")."""
    return "/".join(tag.split("/")[:2])


def parse_room(tag: str) -> str | None:
    parts = tag.split("/")
    return parts[1] if len(parts) == 2 and parts[0] == "room" and parts[1] else None


def parse_tournament(tag: str) -> TournamentTable | None:
    """The tournament table a tag names, or None for any other tag."""
    parts = tag.split("/")
    if len(parts) != 6 or parts[0] != "tournament" or parts[2] != "round" or parts[4] != "table":
        return None
    try:
        return TournamentTable(parts[1], int(parts[3]), int(parts[5]))
    except ValueError:
        return None
