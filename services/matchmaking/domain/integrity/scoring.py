"""Ranking ordered pairs of players by how unlikely their record together is by chance.

For each signal of a pair ``(a, b)`` — a's wins off b's discards, a's claims (碰 / 明杠) of b's
discards, a's 吃 of b's discards, a's wins passed on b's discards, and their quick-match tables
joined at the same moment — the
count ``k`` is set against ``E``, what it would be if a treated b as a treats everyone else and
b were treated as everyone else treats b:

* a's rate per hand of the act (a win off a discard, a claim, a pass) and b's rate per hand of
  being its source are each taken **outside** the pair's own hands, and each is shrunk toward the
  population's rate with the weight of :attr:`Prior.rate_hands` hands (empirical Bayes with a
  beta prior: a player with few hands elsewhere gets the population's rate);
* of a's acts on a discard, the share from b is b's source rate against the two other seats at
  the population's rate: ``E = hands · rate_a · rate_b / (rate_b + 2 · population)``;
* a 吃 comes only from the seat's 上家, so it is expected over the hands b sat as a's 上家:
  ``E = upstream hands · rate_a · rate_b / population`` (each rate over the hands outside that
  seating);
* the queue signal expects the population's share of tables joined at the same moment.

Each signal's evidence is a z-score with a prior, ``z = (k − E) / sqrt(E + τ)``: the Poisson
spread of the count (``E``) plus ``τ`` (:attr:`Prior.count`), a prior count added to the spread.
It is the score of a pair whose counts are drawn toward what the population predicts by ``τ``
pseudo-events: with few hands together both ``k`` and ``E`` are small and ``τ`` dominates, so a
pair never ranks high on a handful of hands (one claim in one hand scores about 0.4), while a
large count far from its expectation still stands out. It was chosen over a beta-binomial
posterior because the expectation of a pair is a product of two players' shrunk rates, not one
proportion, and the z form keeps each signal's evidence readable (seen, expected, z).

A pair's score is the length of its evidence vector in the directions collusion takes: wins
off the partner both ways (too few: soft play, never winning off the partner; too many: chips
dumped to the partner), claims and passed wins and same-moment queueing only upward. An honest
population's scores stay below :data:`THRESHOLD` (measured by ``python -m tests.bench
collusion``: see the README's fair-play section).
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterable
from dataclasses import dataclass

from services.matchmaking.domain import records
from services.matchmaking.domain.integrity.counts import (
    IntegrityRepository,
    PairCounts,
    PlayerCounts,
    add,
)
from shared.errors import InvalidArgument

THRESHOLD = 4.0  # a score above this is reported as suspicious
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
WINS, CLAIMS, PASSED, QUEUED = "wins_off_discard", "claims", "passed_wins", "queued_together"
CHOWS = "chows"


@dataclass(frozen=True, slots=True)
class Prior:
    rate_hands: float = 50.0  # a player's rate is shrunk toward the population's by this many
    count: float = 4.0  # τ: the prior count added to each signal's spread


@dataclass(frozen=True, slots=True)
class Evidence:
    signal: str
    observed: int
    expected: float
    z: float


@dataclass(frozen=True, slots=True)
class PairScore:
    a: str
    b: str
    hands: int
    score: float
    evidence: tuple[Evidence, ...]
    suspicious: bool


@dataclass(frozen=True, slots=True)
class Population:
    """Per player-hand rates of each act, and the share of tables joined at the same moment."""

    wins: float
    claims: float
    passed: float
    queued: float
    chows: float = 0.0

    @staticmethod
    def of(players: Iterable[PlayerCounts], pairs: Iterable[PairCounts]) -> Population:
        p = PlayerCounts()
        for c in players:
            p = add(p, c)
        tables = together = 0
        for c in pairs:
            tables += c.tables
            together += c.queued_together
        hands = p.hands or 1
        return Population(
            p.discard_wins / hands,
            p.claims / hands,
            p.passed / hands,
            together / tables if tables else 0.0,
            p.chows / hands,
        )


def _rate(total: int, in_pair: int, hands: int, pair_hands: int, pop: float, prior: Prior):
    """A player's rate per hand outside the pair's hands, shrunk toward ``pop``."""
    outside = max(hands - pair_hands, 0)
    return (max(total - in_pair, 0) + prior.rate_hands * pop) / (outside + prior.rate_hands)


def _expected(hands: int, rate_a: float, rate_b: float, pop: float) -> float:
    spread = rate_b + 2 * pop
    share = rate_b / spread if spread > 0 else 1 / 3
    return hands * rate_a * share


def _z(observed: int, expected: float, prior: Prior) -> float:
    return (observed - expected) / math.sqrt(expected + prior.count)


def score_pair(
    a: str,
    b: str,
    pair: PairCounts,
    pa: PlayerCounts,
    pb: PlayerCounts,
    pop: Population,
    prior: Prior = Prior(),
    threshold: float = THRESHOLD,
) -> PairScore:
    """The score of ``(a, b)`` and its evidence (see the module's docstring)."""
    n = pair.hands
    signals = (
        (WINS, pair.wins, pa.discard_wins, pair.a_discard_wins, pb.dealt_in, pair.b_dealt_in),
        (CLAIMS, pair.claims, pa.claims, pair.a_claims, pb.claimed_from, pair.b_claimed_from),
        (PASSED, pair.passed, pa.passed, pair.a_passed, pb.passed_on, pair.b_passed_on),
    )
    rates = {WINS: pop.wins, CLAIMS: pop.claims, PASSED: pop.passed}
    evidence = []
    for name, k, a_total, a_in, b_total, b_in in signals:
        r = rates[name]
        rate_a = _rate(a_total, a_in, pa.hands, n, r, prior)
        rate_b = _rate(b_total, b_in, pb.hands, n, r, prior)
        expected = _expected(n, rate_a, rate_b, r)
        evidence.append(Evidence(name, k, expected, _z(k, expected, prior)))
    up = pair.upstream_hands
    rate_a = _rate(pa.chows, pair.chows, pa.hands, up, pop.chows, prior)
    rate_b = _rate(pb.chowed_from, pair.chows, pb.hands, up, pop.chows, prior)
    expected_c = up * rate_a * rate_b / pop.chows if pop.chows > 0 else 0.0
    evidence.append(Evidence(CHOWS, pair.chows, expected_c, _z(pair.chows, expected_c, prior)))
    seen_q, expected_q = pair.queued_together, pair.tables * pop.queued
    evidence.append(Evidence(QUEUED, seen_q, expected_q, _z(seen_q, expected_q, prior)))
    # wins both ways; the others only upward
    parts = [e.z if e.signal == WINS else max(e.z, 0.0) for e in evidence]
    score = math.sqrt(sum(x * x for x in parts))
    return PairScore(a, b, n, score, tuple(evidence), score > threshold)


def score_all(repo: IntegrityRepository, prior: Prior = Prior(), threshold: float = THRESHOLD):
    """Every ordered pair's score, highest first (ties: more hands together, then the ids)."""
    players = dict(repo.players())
    pairs = list(repo.pairs())
    pop = Population.of(players.values(), (c for _, _, c in pairs))
    empty = PlayerCounts()
    scored = [
        score_pair(a, b, c, players.get(a, empty), players.get(b, empty), pop, prior, threshold)
        for a, b, c in pairs
    ]
    scored.sort(key=lambda s: (-s.score, -s.hands, s.a, s.b))
    return scored, pop


def _token(offset: int) -> str:
    return base64.urlsafe_b64encode(records.dump({"o": offset})).decode().rstrip("=")


def _offset(token: str) -> int:
    if not token:
        return 0
    try:
        data = records.load(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        offset = data["o"]
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ValueError(token)
        return offset
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise InvalidArgument(
            "page_token is not one this service gave", field="page_token"
        ) from None


def suspicious_pairs(
    repo: IntegrityRepository,
    limit: int,
    page_token: str = "",
    only_suspicious: bool = False,
    prior: Prior = Prior(),
    threshold: float = THRESHOLD,
) -> tuple[list[PairScore], str, int]:
    """A page of the ranking (``limit`` 1-500, 0 = 50), the next page's token ("" on the last)
    and how many pairs are ranked. ``only_suspicious``: the pairs above the threshold only.
    InvalidArgument for a negative or too large limit or a token this service did not give."""
    if limit < 0 or limit > MAX_LIMIT:
        raise InvalidArgument(f"limit {limit} is not in 0-{MAX_LIMIT}", field="limit")
    offset = _offset(page_token)
    size = limit or DEFAULT_LIMIT
    ranked, _ = score_all(repo, prior, threshold)
    if only_suspicious:
        ranked = [s for s in ranked if s.suspicious]
    page = ranked[offset : offset + size]
    more = offset + size < len(ranked)
    return page, _token(offset + size) if more else "", len(ranked)
