"""Collusion signals: counting per ordered pair as hands are recorded, and the score's
shrinkage (a small sample never ranks high; a clear colluder does)."""

from __future__ import annotations

import random

import pytest

from infra.store.memory import MemoryStore
from services.matchmaking.domain.integrity import counts, scoring
from services.matchmaking.domain.integrity.facts import HandFacts, validate_facts
from services.matchmaking.storage.integrity_records import RecordsIntegrity
from shared.errors import InvalidArgument


def repo() -> RecordsIntegrity:
    return RecordsIntegrity(MemoryStore())


def test_one_hand_counts_each_ordered_pair_and_player():
    r = repo()
    facts = HandFacts(1, discard_wins=((0, 1),), claims=((2, 1), (2, 3)), passed_wins=((3, 1),))
    assert counts.record_hand(r, "h1", ("a", "b", "c", "bot-x-3"), facts)
    assert not counts.record_hand(r, "h1", ("a", "b", "c", "bot-x-3"), facts)  # once per hand
    pairs = {(a, b): c for a, b, c in r.pairs()}
    assert set(pairs) == {(x, y) for x in "abc" for y in "abc" if x != y}  # no bot
    assert pairs[("a", "b")].wins == 1 and pairs[("a", "b")].hands == 1
    assert pairs[("b", "a")].wins == 0
    assert pairs[("c", "b")].claims == 1
    assert pairs[("a", "c")].a_discard_wins == 1
    assert pairs[("c", "a")].b_dealt_in == 0 and pairs[("a", "b")].b_dealt_in == 1
    assert r.player("b") == counts.PlayerCounts(hands=1, dealt_in=1, claimed_from=1, passed_on=1)
    assert r.player("c").claims == 2


def test_tables_joined_at_the_same_moment():
    r = repo()
    assert counts.record_table(r, "t1", [("a", 10.0), ("b", 10.4), ("c", 30.0), ("bot-1", 0)])
    assert not counts.record_table(r, "t1", [("a", 10.0), ("b", 10.4)])
    pairs = {(a, b): c for a, b, c in r.pairs()}
    assert pairs[("a", "b")].queued_together == 1 and pairs[("b", "a")].tables == 1
    assert pairs[("a", "c")].queued_together == 0 and pairs[("a", "c")].tables == 1


def test_facts_are_checked():
    validate_facts(HandFacts())
    for bad in (
        HandFacts(2, claims=((0, 1),)),
        HandFacts(1, claims=((0, 0),)),
        HandFacts(1, discard_wins=((4, 1),)),
    ):
        with pytest.raises(InvalidArgument):
            validate_facts(bad)


def honest_hands(r, players, n, rng, start=0):
    """Random honest hands: a win off a random discarder 60% of the time, a claim or two."""
    for h in range(start, start + n):
        seats = rng.sample(players, 4)
        wins, claims = [], []
        if rng.random() < 0.6:
            w, d = rng.sample(range(4), 2)
            wins.append((w, d))
        for _ in range(rng.randrange(3)):
            c, d = rng.sample(range(4), 2)
            claims.append((c, d))
        counts.record_hand(r, f"h{h}", tuple(seats), HandFacts(1, tuple(wins), tuple(claims)))


def test_a_small_sample_never_ranks_high():
    r = repo()
    rng = random.Random(1)
    honest_hands(r, [f"p{i}" for i in range(20)], 2000, rng)
    # a new pair: two hands together, each a claim and a passed win of x on y's discard
    for h in range(2):
        facts = HandFacts(1, claims=((0, 1),), passed_wins=((0, 1),))
        counts.record_hand(r, f"new{h}", ("x", "y", "p0", "p1"), facts)
    ranked, _ = scoring.score_all(r)
    new = next(s for s in ranked if (s.a, s.b) == ("x", "y"))
    assert new.score < scoring.THRESHOLD
    assert not any(s.suspicious for s in ranked)
    assert ranked.index(new) > 10  # not near the top on two hands


def test_a_clear_colluder_ranks_first_with_its_evidence():
    r = repo()
    rng = random.Random(2)
    players = [f"p{i}" for i in range(20)]
    honest_hands(r, players, 3000, rng)
    # x and y, 40 hands together: x claims y's discards, passes wins on them, never wins off y
    for h in range(40):
        facts = HandFacts(1, claims=((0, 1), (0, 1)), passed_wins=((0, 1),) if h % 3 == 0 else ())
        counts.record_hand(r, f"c{h}", ("x", "y", *rng.sample(players, 2)), facts)
    page, token, total = scoring.suspicious_pairs(r, 3)
    assert (page[0].a, page[0].b) == ("x", "y") and page[0].suspicious
    evidence = {e.signal: e for e in page[0].evidence}
    assert evidence[scoring.CLAIMS].observed == 80
    assert evidence[scoring.PASSED].observed == 14
    assert evidence[scoring.CLAIMS].expected < 80 / 4
    assert token and total == len(list(r.pairs()))
    nxt, _, _ = scoring.suspicious_pairs(r, 3, token)
    assert nxt[0].score <= page[-1].score
    only, _, n = scoring.suspicious_pairs(r, 10, only_suspicious=True)
    assert n == len(only) and ("x", "y") in {(s.a, s.b) for s in only}


def test_bad_paging_is_refused():
    r = repo()
    with pytest.raises(InvalidArgument):
        scoring.suspicious_pairs(r, -1)
    with pytest.raises(InvalidArgument):
        scoring.suspicious_pairs(r, scoring.MAX_LIMIT + 1)
    for token in ("nonsense!", "e30", "eyJvIjotMX0"):  # {} and {"o":-1}
        with pytest.raises(InvalidArgument):
            scoring.suspicious_pairs(r, 5, token)


def test_counts_of_an_older_record_read_padded():
    assert counts.from_list(counts.PairCounts, [3, 1]) == counts.PairCounts(hands=3, wins=1)


def test_chows_count_against_the_hands_sat_downstream():
    r = repo()
    facts = HandFacts(1, chows=((1, 0), (2, 1)))
    counts.record_hand(r, "h1", ("a", "b", "c", "d"), facts)
    pairs = {(a, b): c for a, b, c in r.pairs()}
    assert pairs[("b", "a")].chows == 1 and pairs[("b", "a")].upstream_hands == 1
    assert pairs[("a", "b")].upstream_hands == 0 and pairs[("a", "d")].upstream_hands == 1
    assert r.player("a").chowed_from == 1 and r.player("b").chows == 1
    with pytest.raises(InvalidArgument):
        validate_facts(HandFacts(1, chows=((1, 3),)))  # seat 1 chows only from seat 0


def test_a_pair_feeding_chows_ranks_first():
    r = repo()
    rng = random.Random(4)
    players = [f"p{i}" for i in range(20)]
    for h in range(3000):
        seats = rng.sample(players, 4)
        chows = tuple((s, (s - 1) % 4) for s in range(4) if rng.random() < 0.3)
        counts.record_hand(r, f"h{h}", tuple(seats), HandFacts(1, chows=chows))
    for h in range(60):  # y sits as x's 上家 and x chows from it twice a hand
        facts = HandFacts(1, chows=((1, 0), (1, 0)))
        counts.record_hand(r, f"c{h}", ("y", "x", *rng.sample(players, 2)), facts)
    ranked, _ = scoring.score_all(r)
    assert (ranked[0].a, ranked[0].b) == ("x", "y") and ranked[0].suspicious
    assert sum(s.suspicious for s in ranked) == 1
