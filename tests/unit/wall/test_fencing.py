"""Fenced wall operations (HandWall's docstring; DrawRequest.owner_epoch): a former owner of the
table, resumed after its lease, is refused; a new owner's call under a number the wall has seen
voids what was never logged and is made again from the hand as it was; a plain retry is
answered as before; rows replay the same way on another replica (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import pytest

from services.wall.domain.record import HandWall, StaleOwner
from services.wall.storage.repository import LOG_PREFIX, WallRepository
from services.wall.storage.rows import WallOp
from shared.errors import FailedPrecondition, InvalidArgument

SEED = bytes(range(32))


def dealt(seed: bytes = SEED, dealer: int = 0) -> HandWall:
    hand = HandWall.create("h_fenced", seed, dealer)
    hand.deal()
    return hand


def test_a_stale_epoch_is_refused_and_changes_nothing():
    hand = dealt()
    hand.draw(0, "d1", epoch=2)
    before = hand.copy()
    with pytest.raises(StaleOwner, match="owner epoch 1 is older than 2"):
        hand.draw(1, "d2", epoch=1)
    with pytest.raises(StaleOwner):
        hand.reveal(epoch=1)
    assert hand.events == before.events and not hand.revealed
    assert hand.epoch == 2


def test_a_retry_under_the_same_epoch_is_answered_as_before():
    hand = dealt()
    first = hand.draw(0, "d1", epoch=3)
    again = hand.draw(0, "d1", epoch=3)
    assert again == first and len(hand.events) == 5 and hand.voided_from == 0


def test_a_new_owner_voids_what_the_former_owner_never_logged():
    """Epoch 1 drew d1, d2 (a live draw) and d3, but its log only ever held d1; the new owner
    (epoch 2) asks d2 as a replacement draw: d2 and d3 are void, and d2 is the replacement
    tile a fresh hand gives after d1."""
    hand = dealt()
    hand.draw(0, "d1", epoch=1)
    hand.draw(1, "d2", epoch=1)
    hand.draw(2, "d3", epoch=1)
    got = hand.draw_replacement(1, "d2", epoch=2)
    reference = dealt()
    reference.draw(0)
    expected = reference.draw_replacement(1)
    assert got == expected and hand.voided_from == 6
    assert [e.kind for e in hand.events[4:]] == ["draw", "replacement"]
    assert hand.wall.live_drawn == reference.wall.live_drawn
    assert hand.wall.replacements_drawn == 1 and "d3" not in hand.request_ids
    assert hand.event_epochs[4:] == [1, 2] and hand.epoch == 2
    with pytest.raises(StaleOwner):  # the former owner's next call
        hand.draw(3, "d4", epoch=1)


def test_the_same_call_under_a_new_epoch_gets_the_same_tile_and_drops_the_rest():
    hand = dealt()
    first = hand.draw(0, "d1", epoch=1)
    hand.draw(1, "d2", epoch=1)
    again = hand.draw(0, "d1", epoch=2)
    assert again.tiles == first.tiles and again.sequence == first.sequence
    assert len(hand.events) == 5 and "d2" not in hand.request_ids


def test_a_reveal_never_logged_is_voided_by_the_owners_next_call():
    hand = dealt()
    hand.draw(0, "d1", epoch=1)
    hand.reveal(epoch=1)  # a hand end the former owner never logged
    got = hand.draw(1, "d2", epoch=2)
    assert not hand.revealed and got.sequence == 6 and hand.voided_from == 6
    hand.reveal(epoch=2)
    hand.reveal(epoch=2)  # a retry: nothing changes
    assert hand.revealed and hand.voided_from == 0


def test_a_reveal_voids_what_the_callers_log_never_got():
    """The new owner's log ends before the former owner's draw d2, and its hand ends there
    (a win on the discard): its Reveal names d2 as its next call, so d2 is void."""
    hand = dealt()
    hand.draw(0, "d1", epoch=1)
    hand.draw(1, "d2", epoch=1)  # never logged
    hand.reveal(epoch=2, next_request_id="d2")
    assert hand.revealed and len(hand.events) == 5 and hand.voided_from == 6
    reference = dealt()
    reference.draw(0)
    assert hand.wall.live_drawn == reference.wall.live_drawn


def test_what_an_unfenced_caller_was_handed_is_never_voided():
    """A fleet mixing gateways that fence and gateways that do not: an unfenced owner's draw,
    which it may have logged, is not a fenced caller's to void (its tile would go out twice)."""
    hand = dealt()
    hand.draw(0, "d0", epoch=2)
    logged = hand.draw(1, "d1")  # an unfenced owner's, maybe logged
    with pytest.raises(StaleOwner, match="unfenced"):
        hand.draw_replacement(1, "d1", epoch=2)
    assert hand.draw(2, "d2").tiles != logged.tiles
    hand.reveal()  # an unfenced reveal (an operator's) is not undone by a fenced draw either
    with pytest.raises(FailedPrecondition, match="revealed"):
        hand.draw(3, "d3", epoch=2)


def test_unfenced_calls_keep_request_id_idempotency():
    hand = dealt()
    hand.draw(0, "d1")
    with pytest.raises(InvalidArgument, match="was used for a draw by seat 0"):
        hand.draw_replacement(0, "d1")
    with pytest.raises(InvalidArgument, match="negative"):
        hand.draw(0, "d2", epoch=-1)


def rows(repo: WallRepository, hand_id: str) -> list[WallOp]:
    return [WallOp.from_bytes(raw) for _, raw in repo.store.read_log(LOG_PREFIX + hand_id)]


def test_replicas_agree_on_a_takeover_through_the_store(backend):
    """The former owner draws on replica A, the new owner on replica B: B's calls void A's
    unlogged ones in the store, A's late call is refused, and a third replica reading the rows
    from scratch gets exactly B's hand."""
    a, b = WallRepository(backend.open()), WallRepository(backend.open())
    hand = a.new_hand(2, seed=SEED)
    a.deal(hand.hand_id)
    a.draw(hand.hand_id, 2, "d1", epoch=1)
    a.draw(hand.hand_id, 3, "d2", epoch=1)  # never logged by the table
    swapped, _ = b.draw_replacement(hand.hand_id, 3, "d2", epoch=2)
    with pytest.raises(StaleOwner):
        a.draw(hand.hand_id, 0, "d3", epoch=1)
    a.draw(hand.hand_id, 0, "d3", epoch=2)  # on the new owner's replica; never logged
    b.reveal(hand.hand_id, epoch=2, next_request_id="d3")  # its hand ended before d3
    fresh = WallRepository(backend.open()).get(hand.hand_id)
    assert fresh.events == b.get(hand.hand_id).events == a.get(hand.hand_id).events
    assert fresh.events[-1] == swapped and fresh.revealed and fresh.epoch == 2
    ops = rows(a, hand.hand_id)
    assert [(op.kind, op.epoch, op.void_from) for op in ops] == [
        ("deal", 0, 0),
        ("draw", 1, 0),
        ("draw", 1, 0),
        ("replacement", 2, 6),
        ("draw", 2, 0),
        ("reveal", 2, 7),
    ]
