"""Who may replay a hand and what they see (services/gateway/domain/seat_replay.py): the seat
its player held when the hand was dealt (an open seat taken by JoinSeat counts), each event as
that seat saw it, and nothing until the hand itself is over (an escape's result is not its end)."""

import pytest

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.seat_replay import seat_replay
from shared.errors import FailedPrecondition, NotFound, PermissionDenied

H = "h1"


def _log(*events: K.TableEvent) -> list[LoggedEvent]:
    return [LoggedEvent(i + 1, 1000 + i, ev) for i, ev in enumerate(events)]


def _result(outcome: str, **kw) -> K.HandResult:
    return K.HandResult(outcome, (), (0, 0, 0, 0), 0, (), (), 0, 0, hand_id=H, **kw)


STARTED = K.TableStarted(
    "shanghai-qiaoma",
    {},
    1,
    tuple(K.SeatAssignment(p, p.upper(), p.startswith("b")) for p in ("b0", "", "b2", "b3")),
    1,
    0,
    "",
)
JOINED = K.SeatChanged(seat=1, player_id="alice", bot=False, reason="joined")
DEALT = K.HandStarted(0, (1, 2), "c", False, 0, hand_id=H)
OWN_DRAW = K.TileDrawn(1, 5, False, 80, hand_id=H)
OTHER_DRAW = K.TileDrawn(2, 7, False, 79, hand_id=H)


def test_the_seat_taken_by_join_replays_the_hand_as_it_saw_it():
    log = _log(STARTED, JOINED, DEALT, OWN_DRAW, OTHER_DRAW, _result("escape", escaped_seat=2),
               _result("win"))  # fmt: skip
    got = seat_replay(log, "alice", H)
    assert got.seat == 1 and got.names == ("B0", "", "B2", "B3")
    seen = [ev for _, ev in got.events]
    assert seen[1] == OWN_DRAW  # its own draw, with the tile
    assert seen[2].seat == 2 and seen[2].tile is None  # another seat's: no tile
    assert [lg.seq for lg, _ in got.events] == [3, 4, 5, 6, 7]  # the hand's only


def test_others_unknown_hands_and_hands_in_play_are_refused():
    log = _log(STARTED, JOINED, DEALT, OWN_DRAW, _result("win"))
    with pytest.raises(PermissionDenied):
        seat_replay(log, "mallory", H)
    with pytest.raises(NotFound):
        seat_replay(log, "alice", "h2")
    # a seat's escape ends no hand: still in play
    running = _log(STARTED, JOINED, DEALT, OWN_DRAW, _result("escape", escaped_seat=1))
    with pytest.raises(FailedPrecondition):
        seat_replay(running, "alice", H)
    # who joined after the deal held no seat at it
    late = _log(STARTED, DEALT, JOINED, OWN_DRAW, _result("win"))
    with pytest.raises(PermissionDenied):
        seat_replay(late, "alice", H)
