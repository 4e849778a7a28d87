"""A tournament's standings (排名): chips from the ledger, ranked.

Chips are never kept by matchmaking: a round's chips are the sums of its recorded hands (read
from the ledger by the round's tag prefix, ``tournament/<id>/round/<n>/table/``), and the
standings after round n are those after round n-1 plus round n's chips, written once as a
ranking record once every table of the round settled (:func:`ranking_after`). So taking the
standings reads one round's hands, never the whole tournament's. Mid-round standings add the
current round's hands so far to the last ranking (:func:`live_ranking`, cached per process for
:data:`LIVE_TTL_S`).

Ranking: most chips first, ties in registration order. After the cut (RULES.md, tournament
format) the finalists come first, by chips (ties: their place at the cut), then everyone else
as they stood at the cut.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tables.tags import tournament_group, tournament_tag
from services.matchmaking.domain.tournaments.records import (
    Ranking,
    create_ranking,
    get_ranking,
    get_seating,
)
from services.matchmaking.domain.tournaments.tournament import FINISHED, SWISS, Tournament
from shared.errors import FailedPrecondition, NotFound

LIVE_TTL_S = 1.0  # mid-round standings are recomputed at most this often per tournament


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    player_id: str
    display_name: str
    bot: bool
    chips: int


def _standings(t: Tournament, ranking: Ranking) -> tuple[Standing, ...]:
    names = {e.player_id: e for e in t.entrants}
    out = []
    for i, (pid, chips) in enumerate(ranking.rows):
        e = names.get(pid)
        out.append(Standing(i + 1, pid, e.display_name if e else pid, bool(e and e.bot), chips))
    return tuple(out)


def standings(store, t: Tournament, round_no: int) -> tuple[Standing, ...]:
    """The standings after ``round_no`` (empty before it is over)."""
    ranking = get_ranking(store, t.tournament_id, round_no)
    return _standings(t, ranking) if ranking else ()


def all_standings(store, t: Tournament) -> list[tuple[Standing, ...]]:
    """After each finished round, in order."""
    out = []
    for r in range(1, t.current_round + 1):
        s = standings(store, t, r)
        if not s:
            break
        out.append(s)
    return out


def final_ranking(store, t: Tournament) -> tuple[Standing, ...]:
    ranking = get_ranking(store, t.tournament_id, final=True)
    return _standings(t, ranking) if ranking else ()


def standings_page(
    store, books, t: Tournament, round_no: int, offset: int, size: int
) -> tuple[tuple[Standing, ...], int, bool]:
    """Ranks ``offset + 1`` to ``offset + size`` of the standings after ``round_no`` (0: now,
    or the final ranking once finished), how many are ranked, and whether it is final."""
    if round_no:
        if round_no > t.current_round:
            raise NotFound(f"tournament {t.tournament_id} has no round {round_no} yet")
        ranking = get_ranking(store, t.tournament_id, round_no)
        if ranking is None:
            raise FailedPrecondition(
                f"round {round_no} of {t.tournament_id} is not over yet",
                reason="ROUND_NOT_FINISHED",
            )
        final = False
    else:
        ranking = live_ranking(store, books, t)
        final = t.state == FINISHED
    rows = Ranking(ranking.round, ranking.rows[offset : offset + size])
    page = _standings(t, rows)
    return tuple(replace(s, rank=s.rank + offset) for s in page), len(ranking.rows), final


# --- standings from the ledger ----------------------------------------------------------------
def round_prefix(tournament_id: str, round_no: int) -> str:
    return tournament_tag(tournament_id, round_no, 0).rsplit("/table/", 1)[0] + "/table/"


def round_chips(books, tournament_id: str, round_no: int) -> dict[str, int]:
    """Net chips per player over the round's recorded hands (``books``: the ledger's store)."""
    return ledger.chips_by_player(
        books, tournament_group(tournament_id), round_prefix(tournament_id, round_no)
    )


def _rank(t: Tournament, totals: Mapping[str, int], order: Sequence[str]) -> list[str]:
    """Players most chips first; ties keep ``order``'s order."""
    at = {p: i for i, p in enumerate(order)}
    return sorted(order, key=lambda p: (-totals.get(p, 0), at[p]))


def _ranking_after(
    t: Tournament, round_no: int, prev: Ranking | None, chips: Mapping[str, int], store
) -> Ranking:
    """Standings after ``round_no`` from those before it and the round's chips. Before the cut
    every entrant is ranked by chips (ties: registration order); after it the finalists come
    first by chips (ties: their place at the cut), then everyone else as they stood at the cut."""
    totals = dict(prev.rows) if prev else {}
    for p, c in chips.items():
        totals[p] = totals.get(p, 0) + c
    if t.round_kind(round_no) == SWISS:
        order = _rank(t, totals, [e.player_id for e in t.entrants])
    else:
        cut = get_ranking(store, t.tournament_id, t.rounds)
        assert cut is not None, "the ranking at the cut is written before the final rounds"
        at_cut = [p for p, _ in cut.rows]
        finalists = set(_finalists(store, t))
        top = _rank(t, totals, [p for p in at_cut if p in finalists])
        order = top + [p for p in at_cut if p not in finalists]
    return Ranking(round_no, tuple((p, totals.get(p, 0)) for p in order))


def _finalists(store, t: Tournament) -> list[str]:
    seating = get_seating(store, t.tournament_id, t.rounds + 1)
    return [p for table in seating.tables for p in table] if seating else []


def ranking_after(store, books, t: Tournament, round_no: int) -> Ranking:
    """The standings after a settled round, written once (the ledger no longer changes for
    it: every hand of its tables is in)."""
    found = get_ranking(store, t.tournament_id, round_no)
    if found is not None:
        return found
    prev = ranking_after(store, books, t, round_no - 1) if round_no > 1 else None
    ranking = _ranking_after(
        t, round_no, prev, round_chips(books, t.tournament_id, round_no), store
    )
    create_ranking(store, t.tournament_id, ranking)
    found = get_ranking(store, t.tournament_id, round_no)
    assert found is not None
    return found


_live: dict[tuple[int, str], tuple[float, Ranking]] = {}
_live_lock = threading.Lock()


def live_ranking(
    store, books, t: Tournament, clock: Callable[[], float] = time.monotonic
) -> Ranking:
    """Standings now: after the last finished round plus the current round's hands so far
    (cached for :data:`LIVE_TTL_S` per tournament, so many callers cost one ledger read)."""
    if t.state == FINISHED:
        final = get_ranking(store, t.tournament_id, final=True)
        if final is not None:
            return final
    key = (id(store), t.tournament_id)
    now = clock()
    with _live_lock:
        hit = _live.get(key)
    if hit and now - hit[0] < LIVE_TTL_S and hit[1].round == t.current_round:
        return hit[1]
    r = t.current_round
    done = get_ranking(store, t.tournament_id, r)
    if done is not None:
        ranking = done
    elif r <= 0:
        ranking = Ranking(0, tuple((e.player_id, 0) for e in t.entrants))
    else:
        prev = get_ranking(store, t.tournament_id, r - 1) if r > 1 else None
        ranking = _ranking_after(t, r, prev, round_chips(books, t.tournament_id, r), store)
    with _live_lock:
        _live[key] = (now, ranking)
        if len(_live) > 1024:
            _live.pop(next(iter(_live)))
    return ranking


def live_standings(store, books, t: Tournament) -> tuple[Standing, ...]:
    return _standings(t, live_ranking(store, books, t))
