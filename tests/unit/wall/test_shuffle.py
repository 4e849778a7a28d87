"""services.wall.domain.shuffle: the committed, language-neutral shuffle and dice."""

from __future__ import annotations

import hashlib
import hmac
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.wall.domain import shuffle as S
from shared import tiles as T

seeds = st.binary(min_size=32, max_size=32)


def fixed_seeds(n: int, tag: str) -> list[bytes]:
    """Deterministic seeds (so statistical tests never flake)."""
    return [hashlib.sha256(f"{tag}-{i}".encode()).digest() for i in range(n)]


def reference_tiles(extras: bool = False, wildcards: bool = False) -> list[int]:
    """The README's starting order, written from the text: 1m×4 … 7z×4, 1f … 8f, then the
    百搭 set's 1a … 4a once each (kinds 42-45) and 1j ×4 (46)."""
    tiles = [k for k in range(34) for _ in range(4)] + list(range(34, 42))
    if extras:
        tiles += [42, 43, 44, 45]
    if wildcards:
        tiles += [46, 46, 46, 46]
    return tiles


def reference_shuffle(
    seed: bytes, start: list[int] | None = None
) -> tuple[list[int], tuple[int, int]]:
    """The README's algorithm written again from the text, independently of the module."""
    blocks = (
        hmac.new(seed, b"mahjong/wall/v1/shuffle" + i.to_bytes(8, "big"), "sha256").digest()
        for i in range(10**6)
    )
    stream = iter(b for block in blocks for b in block)

    def uniform(n: int) -> int:
        while True:
            x = int.from_bytes(bytes(next(stream) for _ in range(4)), "big")
            if x < 2**32 - (2**32 % n):
                return x % n

    tiles = list(start) if start is not None else reference_tiles()
    for i in range(len(tiles) - 1, 0, -1):
        j = uniform(i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles, (1 + uniform(6), 1 + uniform(6))


@settings(max_examples=25, deadline=None)
@given(seeds)
def test_matches_the_documented_algorithm(seed):
    assert S.shuffle_and_dice(seed) == reference_shuffle(seed)


SETS = [(False, False), (True, True), (True, False), (False, True)]


@settings(max_examples=10, deadline=None)
@given(seeds, st.sampled_from(SETS))
def test_every_tile_set_matches_the_documented_algorithm(seed, which):
    extras, wildcards = which
    start = T.canonical_set(extras, wildcards)
    assert start == reference_tiles(extras, wildcards)
    assert S.shuffle_and_dice(seed, start) == reference_shuffle(seed, start)


@pytest.mark.parametrize(
    ("extras", "wildcards", "first", "dice", "jokers"),
    [
        (False, False, "9s7z8s212z61m22s1p1s", (5, 2), []),
        (True, True, "6p1j4z5m7f2p45z566p9s", (2, 3), [1, 103, 124, 137]),
        (True, False, "6m5s5z6f9m5z3m5z4p4s9m2s", (4, 2), []),
        (False, True, "6m5s5z6f9m5z3m5z4p4s9m2s", (4, 2), [18, 19, 88, 132]),
    ],
)
def test_known_answers_for_each_tile_set(extras, wildcards, first, dice, jokers):
    """Seed 00…00 for the 144, 152 and both 148-tile sets (README.md); the 144-tile answer is
    the one it always was."""
    tiles, got_dice = S.shuffle_and_dice(bytes(32), T.canonical_set(extras, wildcards))
    assert T.format_tiles(tiles[:12], sort=False) == first
    assert got_dice == dice
    assert [p for p, k in enumerate(tiles) if k == T.WILDCARD] == jokers
    assert sorted(tiles) == T.canonical_set(extras, wildcards)


def test_known_answer_pins_the_algorithm():
    """A fixed vector: any change to the algorithm (and so to every client's verifier) shows
    up here. Seed 00…00 as used in README.md."""
    tiles, dice = S.shuffle_and_dice(bytes(32))
    assert T.format_tiles(tiles[:10], sort=False) == "9s7z8s212z61m22s"
    assert dice == (5, 2)
    assert S.commitment(bytes(32)).hex() == (
        "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    )


@settings(max_examples=25, deadline=None)
@given(seeds)
def test_same_seed_same_wall_and_dice_and_a_permutation_of_the_set(seed):
    tiles, dice = S.shuffle_and_dice(seed)
    assert S.shuffle_and_dice(seed) == (tiles, dice)
    assert sorted(tiles) == T.canonical_set()
    assert all(1 <= d <= 6 for d in dice)


def test_different_seeds_give_different_walls():
    walls = {tuple(S.shuffle_and_dice(s)[0]) for s in fixed_seeds(200, "distinct")}
    assert len(walls) == 200


def test_new_seeds_are_fresh_and_32_bytes():
    a, b = S.new_seed(), S.new_seed()
    assert len(a) == len(b) == 32 and a != b
    assert S.commitment(a) == hashlib.sha256(a).digest()


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33)])
def test_seeds_must_be_32_bytes(bad):
    with pytest.raises(ValueError, match="a seed is 32 bytes"):
        S.shuffle_and_dice(bad)


def test_stream_words_are_the_hmac_blocks_read_big_endian():
    seed = bytes(32)
    block0 = hmac.new(seed, S.SWAP_LABEL + bytes(8), "sha256").digest()
    stream = S.ByteStream(seed, S.SWAP_LABEL)
    assert [stream.word() for _ in range(8)] == [
        int.from_bytes(block0[i : i + 4], "big") for i in range(0, 32, 4)
    ]
    assert stream.position == 32


def test_stream_is_resumable_and_labels_separate_streams():
    whole = S.ByteStream(bytes(32), S.SWAP_LABEL)
    words = [whole.word() for _ in range(25)]
    for cut in (0, 3, 8, 16, 21):
        first = S.ByteStream(bytes(32), S.SWAP_LABEL)
        head = [first.word() for _ in range(cut)]
        assert first.position == 4 * cut
        rest = S.ByteStream(bytes(32), S.SWAP_LABEL, first.position)
        assert head + [rest.word() for _ in range(25 - cut)] == words
    other = S.ByteStream(bytes(32), S.SHUFFLE_LABEL)
    assert [other.word() for _ in range(25)] != words
    with pytest.raises(ValueError, match="multiple of 4"):
        S.ByteStream(bytes(32), S.SWAP_LABEL, 6)


def test_uniform_rejects_words_above_the_limit():
    """With n = 3·2^30 + 1 almost half of all words are rejected; the result is still in
    range and the stream advances by whole words."""
    stream = S.ByteStream(bytes(32), S.SHUFFLE_LABEL)
    n = 3 * 2**30 + 1
    values = [stream.uniform(n) for _ in range(50)]
    assert all(0 <= v < n for v in values)
    assert stream.position > 200  # about half the words were rejected
    with pytest.raises(ValueError):
        stream.uniform(0)
    assert 0 <= stream.uniform(2**32) < 2**32


# --- statistics ------------------------------------------------------------------------------
def chi_square(observed: list[int], expected: list[float]) -> float:
    return sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))


def critical(df: int, z: float = 3.719) -> float:
    """Chi-square critical value for p = 1e-4 (Wilson–Hilferty approximation)."""
    h = 2 / (9 * df)
    return df * (1 - h + z * math.sqrt(h)) ** 3


N = 4000


@pytest.fixture(scope="module")
def shuffles() -> list[tuple[list[int], tuple[int, int]]]:
    return [S.shuffle_and_dice(s) for s in fixed_seeds(N, "chi")]


def test_a_unique_tile_lands_on_every_position_uniformly(shuffles):
    for flower in (34, 41):  # 1f and 8f: one copy each
        positions = Counter(tiles.index(flower) for tiles, _ in shuffles)
        observed = [positions[p] for p in range(144)]
        stat = chi_square(observed, [N / 144] * 144)
        assert stat < critical(143), (flower, stat)


def test_every_position_holds_each_kind_in_proportion(shuffles):
    """The kind at positions 0, 71 and 143: 4/144 for a suited or honor kind, 1/144 for a
    flower (42 bins)."""
    expected = [N * T.copies_of(k) / 144 for k in range(42)]
    for position in (0, 71, 143):
        kinds = Counter(tiles[position] for tiles, _ in shuffles)
        stat = chi_square([kinds[k] for k in range(42)], expected)
        assert stat < critical(41), (position, stat)


def test_dice_are_uniform_and_independent(shuffles):
    pairs = Counter(dice for _, dice in shuffles)
    observed = [pairs[(a, b)] for a in range(1, 7) for b in range(1, 7)]
    assert chi_square(observed, [N / 36] * 36) < critical(35)
    for i in (0, 1):
        faces = Counter(dice[i] for _, dice in shuffles)
        assert chi_square([faces[f] for f in range(1, 7)], [N / 6] * 6) < critical(5)


def test_the_statistic_would_catch_a_biased_shuffle():
    """The bound is not vacuous: the same test rejects a shuffle with modulo bias (one stream
    byte taken mod i + 1, without rejection sampling)."""
    positions = Counter()
    for seed in fixed_seeds(N, "biased"):
        stream = S.ByteStream(seed, S.SHUFFLE_LABEL)
        order = list(range(144))
        for i in range(143, 0, -1):
            j = (stream.word() & 0xFF) % (i + 1)
            order[i], order[j] = order[j], order[i]
        positions[order[143]] += 1  # which original tile ends on the last position
    observed = [positions[p] for p in range(144)]
    assert chi_square(observed, [N / 144] * 144) > critical(143)
