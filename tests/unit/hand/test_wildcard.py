"""百搭 wildcard hands (RULES-presets §13.B.3, §13.B.5): the count-array checks of
shared.hand.wildcard and shared.hand.preset_hands against a brute-force reference that tries
every substitution of the 百搭 and judges the natural hand by plain recursion (tests/unit/hand
/brute.py), and the readings scoring picks from."""

from __future__ import annotations

from itertools import combinations_with_replacement

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shared import tiles as T
from shared.hand import HandType
from shared.hand.preset_hands import (
    baida_shapes,
    classify_hand,
    hand_waits,
    is_winning,
    shape_of,
    wildcard_kinds,
)
from shared.hand.wildcard import readings, standard_cost, suit_cost
from shared.melds import Meld, MeldKind
from shared.ruleset import resolve_ruleset
from tests.unit.hand.brute import _splits, shapes

BAIDA = resolve_ruleset("shanghai-baida")
ALLOWED = wildcard_kinds(BAIDA)  # 1m-9s, 1z-4z: dragons are bonus tiles
SUITED_AND_WINDS = list(range(31))


def natural_shapes(tiles: list[int], melds: tuple[Meld, ...]) -> set[HandType]:
    """The baida shapes of a natural hand (any number of copies), from the definitions."""
    out: set[HandType] = set()
    for _pair, sets in shapes(tiles):
        no_chow = all(kind == "P" for kind, _ in sets) and all(
            m.kind is not MeldKind.CHOW for m in melds
        )
        out.add(HandType.PONG_PONG if no_chow else HandType.PING_HU)
    if not melds and len(tiles) == 14:
        kinds = {k: tiles.count(k) for k in set(tiles)}
        if all(n % 2 == 0 for n in kinds.values()):
            out.add(
                HandType.DRAGON_SEVEN_PAIRS
                if any(n >= 4 for n in kinds.values())
                else HandType.SEVEN_PAIRS
            )
    return out


def candidate_kinds(naturals: list[int]) -> list[int]:
    """The kinds a 百搭 is tried as: every allowed kind that could share a group with a
    natural tile (the same honor, or a suited kind at most two ranks away in its suit), plus
    two kinds no natural tile is near: a 百搭 standing for any other kind is in a group of
    百搭 only (a pong, the pair or a 七对 pair), and an unused kind stands for it as well."""
    near = set()
    for k in naturals:
        if k < 27:
            near.update(x for x in range(k - 2, k + 3) if x // 9 == k // 9)
        else:
            near.add(k)
    far = [k for k in ALLOWED if k not in near][:2]
    return sorted(near & set(ALLOWED)) + far


def brute_shapes(naturals: list[int], jokers: int, melds=()) -> set[HandType]:
    """Every shape some substitution of the 百搭 (fifth copies allowed) makes: tried one
    substitution at a time."""
    out: set[HandType] = set()
    for sub in combinations_with_replacement(candidate_kinds(naturals), jokers):
        out |= natural_shapes(naturals + list(sub), tuple(melds))
    return out


def counts(tiles: list[int]) -> list[int]:
    return T.to_counts(tiles)


@st.composite
def wild_hands(draw, max_jokers: int = 3, size: int = 14):
    """(naturals, jokers): a complete natural hand of sets and a pair (often one suit, often
    pongs, sometimes seven pairs) with some tiles turned into 百搭 and sometimes one tile
    changed; ``size=13`` drops one more tile."""
    jokers = draw(st.integers(0, max_jokers))
    style = draw(st.sampled_from(["mixed", "one_suit", "pongs", "pairs"]))
    suit = draw(st.integers(0, 2))
    pool = list(range(9 * suit, 9 * suit + 9)) if style == "one_suit" else SUITED_AND_WINDS
    tiles: list[int] = []
    if style == "pairs":
        for _ in range(7):
            k = draw(st.sampled_from(pool))
            tiles += [k, k]
    else:
        for _ in range(4):
            k = draw(st.sampled_from(pool))
            chow = style != "pongs" and k < 27 and k % 9 <= 6 and draw(st.booleans())
            tiles += [k, k + 1, k + 2] if chow else [k, k, k]
        k = draw(st.sampled_from(pool))
        tiles += [k, k]
    tiles.sort()
    order = draw(st.permutations(range(14)))
    naturals = [tiles[i] for i in order[jokers:]]
    if draw(st.integers(0, 3)) == 0:
        naturals[0] = draw(st.sampled_from(SUITED_AND_WINDS))
    if size == 13:
        naturals.pop()
    assume(all(naturals.count(k) <= 4 for k in naturals))
    return sorted(naturals), jokers


@settings(max_examples=200, deadline=None)
@given(wild_hands())
def test_a_wildcard_hand_wins_iff_some_substitution_wins_naturally(hand):
    naturals, jokers = hand
    expected = brute_shapes(naturals, jokers)
    got = set(baida_shapes(counts(naturals), jokers, (), BAIDA))
    # 平胡 is left out when the hand also reads as 对对胡 (never the better reading)
    if HandType.PONG_PONG in expected:
        expected.discard(HandType.PING_HU)
    assert got == expected, (T.format_tiles(naturals), jokers)
    assert (classify_hand(counts(naturals), (), BAIDA, jokers) is not None) == bool(expected)


@settings(max_examples=30, deadline=None)
@given(wild_hands(max_jokers=2, size=13))
def test_waits_are_exactly_the_tiles_whose_addition_wins(hand):
    naturals, jokers = hand
    got = hand_waits(counts(naturals), (), BAIDA, jokers)
    expected = [
        k for k in ALLOWED if naturals.count(k) < 4 and brute_shapes([*naturals, k], jokers)
    ]
    if brute_shapes(naturals, jokers + 1):
        expected.append(T.WILDCARD)
    assert got == expected, (T.format_tiles(naturals), jokers)


def test_four_wildcards_fill_a_pair_and_a_pong():
    naturals = T.parse("123m456p789s2z")  # 10 naturals + 4 百搭
    assert standard_cost(counts(naturals)) == 1  # the pair needs one; three make a pong
    assert classify_hand(counts(naturals), (), BAIDA, 4) is HandType.PING_HU
    assert HandType.PING_HU in brute_shapes(naturals, 4)


def test_a_fifth_copy_can_make_1j_the_only_wait():
    c = counts(T.parse("1111m222333444p"))  # 1m is held four times: 1j is the only wait
    assert hand_waits(c, (), BAIDA, 0) == [T.WILDCARD]


def test_without_fifth_copies_a_wildcard_may_not_be_a_fifth_1m():
    capped = resolve_ruleset("shanghai-baida", {"baida_tiles.wildcard_fifth_copy": "false"})
    c = counts(T.parse("1111m234p567p789p"))  # wins only with the 百搭 as a fifth 1m
    assert classify_hand(c, (), BAIDA, 1) is HandType.PING_HU
    assert classify_hand(c, (), capped, 1) is None
    assert hand_waits(counts(T.parse("1111m222333444p")), (), capped, 0) == []
    ok = counts(T.parse("111m234p567p789p2s"))
    assert classify_hand(ok, (), capped, 1) is HandType.PING_HU


def brute_suit_cost(nine: list[int], pair: bool) -> int:
    """Fewest 百搭 (as ranks of this suit) that make the nine counts split: brute force."""
    tiles = [r for r, n in enumerate(nine) for _ in range(n)]
    for j in range(5):
        if (len(tiles) + j) % 3 != (2 if pair else 0):
            continue
        for sub in combinations_with_replacement(range(9), j):
            full = tuple(sorted(tiles + list(sub)))
            if shapes(list(full)) if pair else _splits(full):
                return j
    return 5


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=9, max_size=9).filter(lambda c: sum(c) <= 10))
def test_suit_costs_match_brute_force(nine):
    for pair in (False, True):
        assert suit_cost(nine, pair) == brute_suit_cost(nine, pair), (nine, pair)


@settings(max_examples=100, deadline=None)
@given(wild_hands())
def test_every_reading_is_a_natural_win_with_its_substitution(hand):
    naturals, jokers = hand
    found = list(readings(counts(naturals), jokers, (), allowed=ALLOWED))
    assert bool(found) == bool(brute_shapes(naturals, jokers))
    for r in found:
        assert len(r.wild) == jokers
        assert all(k in ALLOWED for k in r.wild)
        substituted = naturals + list(r.wild)
        if r.decomposition is None:
            assert sorted(substituted) == sorted(k for p in r.pairs for k in (p, p))
        else:
            d = r.decomposition
            tiles = [d.pair, d.pair] + [k for s in d.sets for k in s.tiles]
            assert sorted(tiles) == sorted(substituted)
    assert len(set(found)) == len(found)


def test_readings_with_melds_keep_the_melds_and_never_put_a_wildcard_in_them():
    pong = Meld(MeldKind.PONG, (T.EAST,) * 3, 1)
    c = counts(T.parse("123m456p789s9s"))  # 9s single: 百搭 makes 99s
    found = list(readings(c, 1, (pong,), allowed=ALLOWED))
    assert found and all(r.decomposition.sets[0].first == T.EAST for r in found)
    assert {r.wild for r in found} == {(T.parse("9s")[0],)}


def test_flush_and_hand_names_of_the_vectors():
    def name(text):
        t = T.parse(text)
        h = classify_hand(T.to_counts(t), (), BAIDA, T.count_wildcards(t))
        return h.label if h else None

    assert name("111m222p333s44z55s1j") == "pong_pong"
    assert name("11m22m33p44p55s66s1z1j") == "seven_pairs"
    assert name("1112345678999m1j") == "full_flush"
    assert name("11223344556677p") == "full_flush_seven_pairs"
    assert name("11112233445566p") == "full_flush_dragon_seven_pairs"
    assert name("1122334455661p1j") == "full_flush_dragon_seven_pairs"  # 百搭 as a 1p: 龙
    assert name("111222333444z5z"[:-2] + "1j1j") is not None
    assert shape_of(HandType.FULL_FLUSH) is HandType.PING_HU


def test_seven_pairs_values_of_zero_make_them_no_win():
    none = resolve_ruleset(
        "shanghai-baida",
        {"baida_scoring.seven_pairs": "0", "baida_scoring.dragon_seven_pairs": "0"},
    )
    c = counts(T.parse("11m22m33p44p55s66s1z"))
    assert classify_hand(c, (), BAIDA, 1) is HandType.SEVEN_PAIRS
    assert classify_hand(c, (), none, 1) is None


CAPPED = resolve_ruleset("shanghai-baida", {"baida_tiles.wildcard_fifth_copy": "false"})


def brute_capped_shapes(naturals: list[int], jokers: int, visible: list[int]) -> set[HandType]:
    """The shapes some substitution makes in which no kind is held or visible five times:
    every allowed kind tried for every 百搭."""
    out: set[HandType] = set()
    for sub in combinations_with_replacement(ALLOWED, jokers):
        full = naturals + list(sub)
        if all(full.count(k) + visible[k] <= T.COPIES for k in set(sub)):
            out |= natural_shapes(full, ())
    return out


@st.composite
def seen_tiles(draw, naturals: list[int]):
    """Visible counts beside the hand: some of its kinds seen up to the fourth copy."""
    visible = [0] * T.NUM_KINDS
    for k in draw(st.lists(st.sampled_from(sorted(set(naturals) | {0, 30})), max_size=4)):
        room = T.COPIES - naturals.count(k)
        visible[k] = draw(st.integers(1, room)) if room else 0
    return visible


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_without_fifth_copies_a_hand_wins_iff_a_substitution_stays_within_four(data):
    naturals, jokers = data.draw(wild_hands(max_jokers=2))
    visible = data.draw(seen_tiles(naturals))
    expected = brute_capped_shapes(naturals, jokers, visible)
    got = set(baida_shapes(counts(naturals), jokers, (), CAPPED, visible))
    # where the caps cannot bind, 平胡 is left out beside 对对胡 as with fifth copies
    if HandType.PONG_PONG in expected:
        expected.discard(HandType.PING_HU)
        got.discard(HandType.PING_HU)
    assert got == expected, (T.format_tiles(naturals), jokers, visible)
    assert is_winning(counts(naturals), (), CAPPED, jokers, visible) == bool(expected)
