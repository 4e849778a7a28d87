"""services.wall.domain.verify: the verifier library — commitment, dice and every dealt or drawn
tile checked against the wall rebuilt from the seed; a tampered record fails."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.wall.domain.record import HandWall
from services.wall.domain.verify import RecordError, record_of, verify_record
from shared import tiles as T

SEED = bytes.fromhex("5a" * 32)


def played_record(swap: bool = True) -> dict:
    hand = HandWall.create("h", SEED, 1, swap_count=5 if swap else 0, reserved=2)
    hand.deal()
    for seat in (1, 2):
        flowers = [k for k in hand.received(seat) if T.is_flower(k)]
        for _ in flowers:
            hand.draw_replacement(seat)
    if swap:
        hand.swap(3, [k for k in hand.received(3) if not T.is_flower(k)][:5])
    for i in range(20):
        hand.draw((1 + i) % 4)
    hand.draw_replacement(2)
    hand.reveal()
    return record_of(hand)


def test_an_honest_record_verifies():
    record = played_record()
    result = verify_record(record)
    assert result.ok, result.problems
    assert result.events_checked == len(record["events"])
    assert result.tiles_checked == sum(len(T.parse(e["tiles"])) for e in record["events"])
    assert "OK" in result.summary()


def test_a_tampered_tile_fails_and_is_named():
    record = played_record()
    i = next(i for i, e in enumerate(record["events"]) if e["kind"] == "draw")
    real = T.parse(record["events"][i]["tiles"])[0]
    record["events"][i]["tiles"] = T.format_tile((real + 1) % 34)
    result = verify_record(record)
    assert not result.ok
    assert f"events[{i}] (draw by seat" in result.problems[0]
    assert f"the wall gives {T.format_tile(real)}" in result.problems[0]
    assert "FAILED" in result.summary()


def test_a_tampered_deal_fails():
    record = played_record(swap=False)
    deal = record["events"][0]
    tiles = T.parse(deal["tiles"])
    i = next(i for i, k in enumerate(tiles) if k != tiles[0])
    tiles[0], tiles[i] = tiles[i], tiles[0]  # the same tiles, taken in another order
    deal["tiles"] = T.format_tiles(tiles, sort=False)
    problems = verify_record(record).problems
    assert len(problems) == 1 and problems[0].startswith("events[0] (deal by seat 1)")


def test_a_different_seed_fails_the_commitment_and_the_tiles():
    record = played_record()
    record["seed"] = "5b" + "5a" * 31
    problems = verify_record(record).problems
    assert "commitment does not match" in problems[0]
    assert len(problems) > 1  # and the wall it gives is another one


def test_a_wrong_commitment_or_dice_fails():
    record = played_record()
    record["commitment"] = "00" * 32
    assert "commitment" in verify_record(record).problems[0]
    record = played_record()
    good = record["dice"]
    record["dice"] = [good[1] % 6 + 1, good[0]]
    assert any("dice" in p for p in verify_record(record).problems)


def test_a_client_verifies_only_what_it_saw():
    """Seat 2's view: its own deal and draws; others' tiles unknown (no "tiles")."""
    record = played_record()
    for e in record["events"]:
        if e["seat"] != 2:
            e.pop("tiles", None)
    record["events"] = [e for e in record["events"] if e["kind"] != "deal" or e["seat"] == 2]
    result = verify_record(record)
    assert result.ok, result.problems
    assert 13 <= result.tiles_checked < 53


def test_the_wall_refusing_a_recorded_event_is_a_problem():
    record = played_record(swap=False)
    record["events"] += [{"kind": "draw", "seat": 0}] * 200  # more draws than tiles
    result = verify_record(record)
    assert not result.ok and "refuses it" in result.problems[-1]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda r: r.pop("seed"), "seed is missing"),
        (lambda r: r.update(seed="zz" * 32), "seed is not hex"),
        (lambda r: r.update(seed="00" * 31), "seed has 31 bytes"),
        (lambda r: r.update(dealer=4), "dealer must be an integer 0-3"),
        (lambda r: r.update(dealer="0"), "dealer must be an integer"),
        (lambda r: r.update(events={}), "events must be a list"),
        (lambda r: r["events"].append(7), r"events\[\d+\] is not an object"),
        (lambda r: r["events"].append({"kind": "steal", "seat": 0}), "kind 'steal'"),
        (lambda r: r["events"].append({"kind": "draw"}), "seat is missing"),
        (lambda r: r["events"].append({"kind": "draw", "seat": 0, "tiles": "1x"}), "'x'"),
        (lambda r: r["events"].append({"kind": "deal", "seat": 0}), "deal events must come"),
        (lambda r: r["events"].append({"kind": "swap", "seat": 0}), "buried is missing"),
    ],
)
def test_malformed_records_are_named_errors(change, words):
    record = copy.deepcopy(played_record(swap=False))
    record.pop("tile_swap_count")
    change(record)
    with pytest.raises(RecordError, match=words):
        verify_record(record)


def test_record_is_not_an_object():
    with pytest.raises(RecordError, match="JSON object"):
        verify_record([])


@settings(max_examples=30, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    dealer=st.integers(0, 3),
    ops=st.lists(
        st.tuples(st.sampled_from(["draw", "replacement"]), st.integers(0, 3)), max_size=60
    ),
    swappers=st.sets(st.integers(0, 3), max_size=4),
    victim=st.integers(0, 10_000),
)
def test_any_played_hand_verifies_and_any_changed_tile_fails(seed, dealer, ops, swappers, victim):
    hand = HandWall.create("p", seed, dealer, swap_count=5)
    hand.deal()
    for seat in sorted(swappers):
        hand.swap(seat, [k for k in hand.received(seat) if not T.is_flower(k)][:5])
    for kind, seat in ops:
        (hand.draw if kind == "draw" else hand.draw_replacement)(seat)
    record = record_of(hand)
    assert verify_record(record).ok

    event = record["events"][victim % len(record["events"])]
    tiles = T.parse(event["tiles"])
    i = victim % len(tiles)
    tiles[i] = (tiles[i] + 1) % T.NUM_TILE_KINDS
    event["tiles"] = T.format_tiles(tiles, sort=False)
    assert not verify_record(record).ok
