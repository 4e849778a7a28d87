"""The counts the collusion signals are made of, kept per player and per ORDERED pair of players
who sat together, and updated as each hand is recorded (never a rescan of the hands).

* :class:`PlayerCounts`: a player's hands, and how often the player won off a discard, dealt in
  (a discard of theirs was won off), claimed a discard (碰 / 明杠), had a discard claimed, passed
  a win on a discard (漏胡 by choice), had a win passed on their discard, chowed (吃) and was
  chowed from.
* :class:`PairCounts` of ``(a, b)``: the same seen between a and b: hands together, a's wins off
  b's discards, a's claims of b's discards, a's wins passed on b's discards, a's 吃 of b's
  discards and the hands b sat as a's 上家 (the only seat a chows from), and, for the
  expectation of each, what a did to anyone and what anyone did to b in those hands (so a
  pair's own hands can be taken out of "their rates with everyone else"); and the quick-match
  tables they were seated at together, and how many of those they joined the queue for at the
  same moment (within :data:`SAME_MOMENT_SECONDS`).

Only players are counted: bots (``bot-…``) have no stake of their own to share.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Protocol

from services.matchmaking.domain.integrity.facts import HandFacts

SAME_MOMENT_SECONDS = 1.0  # two tickets created this close "queued at the same moment"
BOT_PREFIX = "bot-"


@dataclass(frozen=True, slots=True)
class PlayerCounts:
    hands: int = 0
    discard_wins: int = 0  # wins off anyone's discard
    dealt_in: int = 0  # own discards won off
    claims: int = 0  # discards claimed (吃/碰/明杠)
    claimed_from: int = 0  # own discards claimed
    passed: int = 0  # wins passed on a discard
    passed_on: int = 0  # wins passed on own discards
    chows: int = 0  # 吃 (always of the 上家's discard)
    chowed_from: int = 0  # own discards chowed (by the 下家)


@dataclass(frozen=True, slots=True)
class PairCounts:
    """What ``a`` did to ``b`` in their hands together (an ordered pair)."""

    hands: int = 0
    wins: int = 0  # a won off b's discard
    claims: int = 0  # a claimed b's discard
    passed: int = 0  # a passed a win on b's discard
    a_discard_wins: int = 0  # a's wins off anyone's discard, in these hands
    b_dealt_in: int = 0  # b's discards won off by anyone, in these hands
    a_claims: int = 0
    b_claimed_from: int = 0
    a_passed: int = 0
    b_passed_on: int = 0
    tables: int = 0  # quick-match tables they were seated at together
    queued_together: int = 0  # of those, joined within SAME_MOMENT_SECONDS
    chows: int = 0  # a chowed b's discard
    upstream_hands: int = 0  # hands b sat as a's 上家


def add(x, y):
    """Field-wise sum of two counts of one type."""
    return type(x)(*(getattr(x, f.name) + getattr(y, f.name) for f in fields(x)))


def to_list(counts) -> list[int]:
    return [getattr(counts, f.name) for f in fields(counts)]


def from_list(kind, values: Sequence[int] | None):
    """Counts from a stored list; a shorter list (an older release's) is padded with zeros."""
    values = list(values or ())
    n = len(fields(kind))
    return kind(*(values[:n] + [0] * (n - len(values[:n]))))


class IntegrityRepository(Protocol):
    """Where the counts live (:mod:`services.matchmaking.storage.integrity_records`).

    ``claim_hand``/``claim_table`` mark a hand or a table counted, once (True for the call that
    marked it: only it adds); ``add_player``/``add_pair`` add field-wise, atomically."""

    def claim_hand(self, hand_id: str) -> bool: ...

    def claim_table(self, table_id: str) -> bool: ...

    def add_player(self, player_id: str, delta: PlayerCounts) -> None: ...

    def add_pair(self, a: str, b: str, delta: PairCounts) -> None: ...

    def player(self, player_id: str) -> PlayerCounts: ...

    def players(self) -> Iterator[tuple[str, PlayerCounts]]: ...

    def pairs(self) -> Iterator[tuple[str, str, PairCounts]]: ...


def is_player(pid: str) -> bool:
    return bool(pid) and not pid.startswith(BOT_PREFIX)


def hand_deltas(
    player_ids: Sequence[str], facts: HandFacts
) -> tuple[dict[str, PlayerCounts], dict[tuple[str, str], PairCounts]]:
    """What one hand adds: per player, and per ordered pair of the players seated (0-3)."""

    def tally(pairs: Iterable[tuple[int, int]]):
        by_actor, by_source, between = [0] * 4, [0] * 4, {}
        for actor, source in pairs:
            by_actor[actor] += 1
            by_source[source] += 1
            between[(actor, source)] = between.get((actor, source), 0) + 1
        return by_actor, by_source, between

    wins, dealt, win_pairs = tally(facts.discard_wins)
    claims, claimed, claim_pairs = tally(facts.claims)
    passed, passed_on, pass_pairs = tally(facts.passed_wins)
    chows, chowed, chow_pairs = tally(facts.chows)
    seats = [s for s in range(4) if is_player(player_ids[s])]
    per_player = {
        player_ids[s]: PlayerCounts(
            1,
            wins[s],
            dealt[s],
            claims[s],
            claimed[s],
            passed[s],
            passed_on[s],
            chows[s],
            chowed[s],
        )
        for s in seats
    }
    per_pair = {}
    for a in seats:
        for b in seats:
            if a == b:
                continue
            per_pair[(player_ids[a], player_ids[b])] = PairCounts(
                hands=1,
                wins=win_pairs.get((a, b), 0),
                claims=claim_pairs.get((a, b), 0),
                passed=pass_pairs.get((a, b), 0),
                a_discard_wins=wins[a],
                b_dealt_in=dealt[b],
                a_claims=claims[a],
                b_claimed_from=claimed[b],
                a_passed=passed[a],
                b_passed_on=passed_on[b],
                chows=chow_pairs.get((a, b), 0),
                upstream_hands=int(b == (a - 1) % 4),
            )
    return per_player, per_pair


def record_hand(
    repo: IntegrityRepository, hand_id: str, player_ids: Sequence[str], facts: HandFacts
) -> bool:
    """Count one recorded hand, once per hand id (True when this call counted it). A crash
    between the mark and the adds loses that hand's counts (never counts one twice)."""
    if not repo.claim_hand(hand_id):
        return False
    per_player, per_pair = hand_deltas(player_ids, facts)
    for pid, delta in per_player.items():
        repo.add_player(pid, delta)
    for (a, b), delta in per_pair.items():
        repo.add_pair(a, b, delta)
    return True


def table_deltas(joined: Sequence[tuple[str, float]]) -> dict[tuple[str, str], PairCounts]:
    """What one quick-match table adds: per ordered pair of its players (``(player, joined
    at)``), a table together, and whether they joined within :data:`SAME_MOMENT_SECONDS`."""
    out = {}
    people = [(p, t) for p, t in joined if is_player(p)]
    for a, ta in people:
        for b, tb in people:
            if a != b:
                same = int(abs(ta - tb) <= SAME_MOMENT_SECONDS)
                out[(a, b)] = PairCounts(tables=1, queued_together=same)
    return out


def record_table(
    repo: IntegrityRepository, table_id: str, joined: Sequence[tuple[str, float]]
) -> bool:
    """Count one table formed from a queue, once per table id."""
    deltas = table_deltas(joined)
    if not deltas or not repo.claim_table(table_id):
        return False
    for (a, b), delta in deltas.items():
        repo.add_pair(a, b, delta)
    return True
