"""services.wall.domain.record: one hand's wall with its history — deal, draws, 换牌, request-id
retries, reveal, storage as a header and rows — and that a refused operation changes nothing."""

from __future__ import annotations

import pytest

from infra.store.memory import MemoryStore
from services.wall.domain.events import DEAL, DRAW, REPLACEMENT, SWAP
from services.wall.domain.record import HandWall
from services.wall.storage.repository import WallRepository
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument

SEED = bytes(range(32))


def dealt(dealer=0, **kw) -> HandWall:
    hand = HandWall.create("h", SEED, dealer, **kw)
    hand.deal()
    return hand


def test_create_from_seed_is_deterministic():
    a, b = HandWall.create("a", SEED, 1), HandWall.create("b", SEED, 1)
    assert a.dice == b.dice and a.wall.tiles == b.wall.tiles
    assert a.commitment == b.commitment and len(a.commitment) == 32
    # the next dealer with the same dice opens the next seat's wall, 18 stacks on
    assert HandWall.create("c", SEED, 2).wall.start == (a.wall.start + 18) % 72


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"dealer": 4}, "dealer seat 4 out of range 0-3"),
        ({"dealer": 0, "reserved": 92}, "reserved tiles 92 out of range 0-91"),
    ],
)
def test_create_rejects_bad_input(kwargs, words):
    with pytest.raises(InvalidArgument, match=words):
        HandWall.create("h", SEED, **kwargs)


def test_deal_events_dealer_first_and_repeatable():
    hand = HandWall.create("h", SEED, 2)
    hands = hand.deal()
    assert [len(h) for h in hands] == [13, 13, 14, 13]
    assert [(e.kind, e.seat) for e in hand.events] == [(DEAL, 2), (DEAL, 3), (DEAL, 0), (DEAL, 1)]
    assert hand.deal() == hands and len(hand.events) == 4


def test_draws_before_the_deal_are_refused():
    hand = HandWall.create("h", SEED, 0)
    with pytest.raises(FailedPrecondition, match="not dealt yet") as err:
        hand.draw(0)
    assert err.value.reason == "NOT_DEALT"
    with pytest.raises(FailedPrecondition):
        hand.draw_replacement(0)


def test_draw_events_are_numbered_and_seat_checked():
    hand = dealt()
    e = hand.draw(1)
    assert (e.sequence, e.kind, e.seat, len(e.tiles)) == (5, DRAW, 1, 1)
    r = hand.draw_replacement(1)
    assert (r.sequence, r.kind) == (6, REPLACEMENT)
    with pytest.raises(InvalidArgument, match="seat 4 out of range"):
        hand.draw(4)


def test_a_retried_request_id_returns_the_same_tile():
    hand = dealt()
    first = hand.draw(1, "req-1")
    assert hand.draw(1, "req-1") == first
    assert hand.wall.live_drawn == 54  # no second tile left the wall
    second = hand.draw(1, "req-2")
    assert second.sequence == first.sequence + 1
    with pytest.raises(InvalidArgument, match="request id 'req-1' was used for a draw by seat 1"):
        hand.draw_replacement(1, "req-1")
    with pytest.raises(InvalidArgument):
        hand.draw(2, "req-1")


def test_revealed_hand_takes_no_more_draws_and_retries_still_answer():
    hand = dealt()
    first = hand.draw(0, "r")
    hand.reveal()
    for op in (lambda: hand.draw(0), lambda: hand.draw_replacement(0)):
        with pytest.raises(FailedPrecondition, match="is revealed") as err:
            op()
        assert err.value.reason == "HAND_REVEALED"
    assert hand.draw(0, "r") == first  # an answer already given is not a new draw
    undealt = HandWall.create("u", SEED, 0)
    undealt.reveal()
    with pytest.raises(FailedPrecondition, match="is revealed"):
        undealt.deal()


def test_exhaustion_through_the_record():
    hand = dealt(reserved=10)
    for _ in range(144 - 53 - 10):
        hand.draw(0)
    with pytest.raises(FailedPrecondition, match="exhausted") as err:
        hand.draw(0)
    assert err.value.reason == "WALL_EXHAUSTED"
    assert len(hand.events) == 4 + 81


# --- 换牌 ------------------------------------------------------------------------------------
def non_flowers(hand: HandWall, seat: int, n: int = 5) -> list[int]:
    return [k for k in hand.received(seat) if not T.is_flower(k)][:n]


def test_swap_buries_held_tiles_and_takes_as_many():
    hand = dealt(swap_count=5)
    before = sorted(hand.received(1))
    buried = non_flowers(hand, 1)
    event = hand.swap(1, buried, "s1")
    assert (event.kind, event.seat, list(event.buried), len(event.tiles)) == (SWAP, 1, buried, 5)
    after = sorted(hand.received(1))
    expected = list(before)
    for k in buried:
        expected.remove(k)
    assert after == sorted(expected + list(event.tiles))
    assert hand.wall.remaining == 91
    assert hand.swap(1, buried, "s1") == event  # retry
    assert len(hand.events) == 5


def test_swap_is_deterministic_from_the_seed_and_event_order():
    a, b = dealt(swap_count=5), dealt(swap_count=5)
    for h in (a, b):
        h.swap(0, non_flowers(h, 0))
        h.swap(3, non_flowers(h, 3))
    assert a.events == b.events and a.wall.tiles == b.wall.tiles


@pytest.mark.parametrize(
    ("setup", "seat", "buried", "error", "words"),
    [
        ("off", 0, None, FailedPrecondition, "does not allow 换牌"),
        ("on", 0, [0, 1], InvalidArgument, "exactly 5 tiles, got 2"),
        ("on", 0, "foreign", InvalidArgument, "does not hold"),
        ("on", 0, "flower", InvalidArgument, "cannot be buried"),
        ("twice", 0, None, FailedPrecondition, "already swapped"),
        ("late", 0, None, FailedPrecondition, "before the first draw"),
    ],
)
def test_swap_refusals_change_nothing(setup, seat, buried, error, words):
    hand = dealt(swap_count=0 if setup == "off" else 5)
    if setup == "twice":
        hand.swap(seat, non_flowers(hand, seat))
    if setup == "late":
        hand.draw(seat)
    if buried is None:
        buried = non_flowers(hand, seat)
    elif buried == "foreign":
        held = hand.received(seat)
        missing = next(k for k in range(34) if held.count(k) == 0)
        buried = [*non_flowers(hand, seat, 4), missing]
    elif buried == "flower":
        buried = [*non_flowers(hand, seat, 4), 34]
    snapshot = hand.copy()
    with pytest.raises(error, match=words):
        hand.swap(seat, buried)
    assert hand == snapshot


def test_storage_round_trip_keeps_everything():
    repo = WallRepository(MemoryStore())
    hand_id = repo.new_hand(3, seed=SEED, swap_count=5, reserved=4).hand_id
    _, hand, _ = repo.deal(hand_id)
    repo.swap(hand_id, 2, non_flowers(hand, 2), "s")
    repo.draw_replacement(hand_id, 3, "x")
    repo.draw(hand_id, 3)
    hand = repo.reveal(hand_id)
    again = WallRepository(repo.store).get(hand_id)  # its header and rows, replayed
    assert again == hand
    assert again.revealed and again.swapped == {2} and again.request_ids == hand.request_ids


def test_events_json_round_trip():
    hand = dealt(swap_count=5)
    hand.swap(0, non_flowers(hand, 0))
    for event in hand.events:
        assert type(event).from_json(event.to_json()) == event
