"""The 百搭 sets on the wall (RULES-presets §13.B.1, §13.B.2, §13.B.9): 152/148 tiles, 补花 of
every bonus tile of the preset, the flipped 百搭 indicator, storage and verification."""

from __future__ import annotations

import pytest

from infra.store.memory import MemoryStore
from services.wall.domain.events import INDICATOR
from services.wall.domain.record import HandWall
from services.wall.domain.verify import record_of, verify_record
from services.wall.storage.repository import WallRepository
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument
from shared.ruleset import resolve_ruleset
from shared.tile_set import tile_set_of

SEED = bytes(range(32))


def baida(**overrides: str):
    return tile_set_of(resolve_ruleset("shanghai-baida", overrides))


def test_a_baida_hand_shuffles_all_152_tiles_and_deals_from_them():
    hand = HandWall.create("h", SEED, 1, tile_set=baida())
    assert sorted(hand.wall.tiles) == T.canonical_set(True, True)
    hands = hand.deal()
    assert [len(h) for h in hands] == [13, 14, 13, 13]
    assert hand.wall.remaining == 152 - 53


def test_dragons_and_extras_are_bonus_tiles_of_the_baida_set_only():
    ts = baida()
    assert all(ts.is_bonus(k) for k in T.parse("567z12345678f1234a"))
    assert not ts.is_bonus(T.WILDCARD) and not ts.is_bonus(T.EAST)
    kept = baida(**{"baida_tiles.dragons_are_flowers": "false"})
    assert not kept.is_bonus(T.RED) and kept.is_bonus(42)


def test_swap_refuses_to_bury_a_dragon_in_baida():
    hand = HandWall.create("h", bytes(32), 0, swap_count=1, tile_set=baida())
    for seed_byte in range(256):  # find a seed whose dealer holds a dragon
        hand = HandWall.create("h", bytes([seed_byte]) * 32, 0, swap_count=1, tile_set=baida())
        dragons = [k for k in hand.deal()[0] if T.is_dragon(k)]
        if dragons:
            break
    before = hand.copy()
    with pytest.raises(InvalidArgument, match=f"bonus tile {T.format_tile(dragons[0])}"):
        hand.swap(0, [dragons[0]])
    assert hand == before


def flipped_hand(seed: bytes = SEED, **overrides: str) -> HandWall:
    ts = baida(**{"baida_tiles.wildcards": "flipped", **overrides})
    hand = HandWall.create("h", seed, 0, tile_set=ts)
    hand.deal()
    return hand


def test_the_flipped_set_has_no_1j_and_turns_the_next_replacement_tile():
    hand = flipped_hand()
    assert len(hand.wall.tiles) == 148 and T.WILDCARD not in hand.wall.tiles
    tail = 2 * (hand.wall.start - 1) % len(hand.wall.tiles)  # the next replacement position
    event = hand.flip_indicator("rid-1")
    assert event.kind == INDICATOR and event.seat == 0
    assert event.tiles[0] == hand.wall.tiles[tail]
    *aside, indicator = event.tiles
    assert all(hand.tile_set.is_bonus(k) for k in aside)
    assert not hand.tile_set.is_bonus(indicator)
    assert hand.wild_kind() == hand.tile_set.next_kind(indicator)
    assert hand.flip_indicator() == event and hand.flip_indicator("rid-1") == event
    assert hand.wall.replacements_drawn == len(event.tiles)


def test_bonus_tiles_turned_up_are_set_aside_until_a_playing_tile_shows():
    for b in range(200):
        hand = flipped_hand(bytes([b]) * 32)
        event = hand.flip_indicator()
        if len(event.tiles) > 1:
            break
    else:
        pytest.fail("no seed turned a bonus tile up first")
    assert all(hand.tile_set.is_bonus(k) for k in event.tiles[:-1])


def test_same_makes_the_indicator_itself_wild():
    hand = flipped_hand(**{"baida_tiles.flipped_wild": "same"})
    assert hand.wild_kind() is None
    event = hand.flip_indicator()
    assert hand.wild_kind() == event.tiles[-1]


def test_flip_refusals():
    with pytest.raises(FailedPrecondition, match="no flipped 百搭"):
        dedicated = HandWall.create("h", SEED, 0, tile_set=baida())
        dedicated.deal()
        dedicated.flip_indicator()
    hand = flipped_hand()
    for _ in range(3):
        hand.draw(0)
    with pytest.raises(FailedPrecondition, match="before the first draw of play"):
        hand.flip_indicator()
    fresh = HandWall.create("h", SEED, 0, tile_set=flipped_hand().tile_set)
    with pytest.raises(FailedPrecondition, match="not dealt"):
        fresh.flip_indicator()


@pytest.mark.parametrize(
    "overrides",
    [{}, {"baida_tiles.extra_bonus_tiles": "false"}, {"baida_tiles.wildcards": "flipped"}],
)
def test_storage_and_verification_keep_the_tile_set(overrides):
    repo = WallRepository(MemoryStore())
    hand_id = repo.new_hand(2, seed=SEED, tile_set=baida(**overrides)).hand_id
    _, hand, _ = repo.deal(hand_id)
    if hand.tile_set.flipped_wildcard:
        repo.flip_indicator(hand_id)
    for i in range(10):
        repo.draw(hand_id, i % 4)
        _, hand = repo.draw_replacement(hand_id, i % 4)
    again = WallRepository(repo.store).get(hand_id)  # its header and rows, replayed
    assert again == hand and again.tile_set == hand.tile_set == baida(**overrides)
    record = record_of(hand)
    assert record["tile_set"]["dragons_bonus"] is True
    verdict = verify_record(record)
    assert verdict.ok, verdict.problems
    record["events"][-1]["tiles"] = "1j" if record["events"][-1]["tiles"] != "1j" else "1m"
    assert not verify_record(record).ok
    del record["tile_set"]  # the standard set gives another wall: every tile differs
    assert not verify_record(record).ok


def test_a_record_with_a_bad_tile_set_is_a_named_error():
    from services.wall.domain.verify import RecordError

    record = record_of(HandWall.create("h", SEED, 0, tile_set=baida()))
    record["tile_set"]["jokers"] = True
    with pytest.raises(RecordError, match="unknown keys jokers"):
        verify_record(record)
    record["tile_set"] = {"extras": "yes"}
    with pytest.raises(RecordError, match=r"tile_set\.extras must be true or false"):
        verify_record(record)
