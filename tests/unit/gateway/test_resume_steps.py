"""Engine steps survive a failed service call: the step is retried from the call that failed,
on the state it left, for as long as it fails. A hand whose wall draw, replacement draw, rules
call (own-turn options, claim options, claim resolution), scoring settlement or wall reveal
fails once or many times — a request lost, or for the wall an answer lost after it handed out
the tile — plays out exactly as the same hand without failures: the same events (none twice,
no tile skipped), 144 tiles accounted for, and its replay verifies. In-process ports with
injected failures; the wall is the wall domain with request ids, as the wall service is."""

from __future__ import annotations

import pytest

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.domain.hand import HandEngine, Pending
from services.gateway.domain.ports import WallDraw, WallHand
from services.gateway.domain.replay import export_hand, table_header
from services.gateway.domain.session import (
    FINISHED,
    RETRY_ATTEMPTS,
    RETRY_STALLED_MS,
    Ports,
    Seat,
)
from services.gateway.verify import verify_hand
from shared import tiles as T
from shared.errors import Unavailable
from shared.table import (
    Action,
    ClaimOptions,
    ConcealedKong,
    ExposedKong,
    OwnTurnOptions,
    Pass,
    Pong,
    Win,
)
from tests.support.events import records_log
from tests.support.sessions import SeededWall, local_table, session_config


class Faults:
    """Which call fails: the ``at``-th call of ``target`` once play has begun, ``times`` times
    in a row; ``lost``: the call is made, then its answer is lost."""

    def __init__(
        self,
        target: str = "",
        at: int = 0,
        times: int = 0,
        lost: bool = False,
        from_start: bool = False,
    ):
        self.target, self.at, self.times, self.lost = target, at, times, lost
        self.armed = from_start  # else from the first discard on
        self.calls = 0  # calls of target while armed (retries included)
        self.failed = 0

    def call(self, name: str, fn, *args, **kw):
        if not self.armed or name != self.target:
            return fn(*args, **kw)
        self.calls += 1
        if self.calls >= self.at and self.failed < self.times:
            self.failed += 1
            if self.lost:
                fn(*args, **kw)
            raise Unavailable(f"{name} down")
        return fn(*args, **kw)


class Wall(SeededWall):
    """The wall domain, a fixed seed per hand, request ids as the wall service makes them."""

    def __init__(self, faults: Faults, seed: int) -> None:
        super().__init__(seed)
        self.faults = faults

    def new_hand(self, ruleset_name, overrides, dealer, request_id) -> WallHand:
        return self.faults.call(
            "new_hand", super().new_hand, ruleset_name, overrides, dealer, request_id
        )

    def _draw(self, hand_id, seat, number, replacement, epoch=0):
        hand = self.hands[hand_id]
        rid = f"{hand_id}/d{number}"
        take = hand.draw_replacement if replacement else hand.draw
        ev = take(seat, rid, epoch)
        return WallDraw(ev.tiles[0], hand.wall.remaining)

    def deal(self, hand_id):
        return self.faults.call("deal", super().deal, hand_id)

    def draw(self, hand_id, seat, number=0, *, epoch=0):
        return self.faults.call("draw", self._draw, hand_id, seat, number, False, epoch)

    def draw_replacement(self, hand_id, seat, number=0, *, epoch=0):
        return self.faults.call("draw_replacement", self._draw, hand_id, seat, number, True, epoch)

    def reveal(self, hand_id, number=0, *, epoch=0):
        return self.faults.call("reveal", super().reveal, hand_id, number, epoch=epoch)


class Rules(InProcessRules):
    def __init__(self, faults: Faults) -> None:
        super().__init__()
        self.faults = faults

    def own_turn_options(self, snapshot, seat):
        return self.faults.call("own_turn_options", super().own_turn_options, snapshot, seat)

    def claim_options(self, snapshot):
        return self.faults.call("claim_options", super().claim_options, snapshot)

    def resolve_claims(self, snapshot, claims):
        return self.faults.call("resolve_claims", super().resolve_claims, snapshot, claims)


class Scoring(InProcessScoring):
    def __init__(self, faults: Faults) -> None:
        super().__init__()
        self.faults = faults

    def settle_win(self, facts):
        return self.faults.call("settle", super().settle_win, facts)

    def settle_draw(self, facts):
        return self.faults.call("settle", super().settle_draw, facts)


def greedy(p: Pending, hand: HandEngine) -> Action:
    """Wins, kongs and pongs whenever it may (claims, replacement draws and resolutions)."""
    opts = p.options
    if isinstance(opts, OwnTurnOptions):
        if opts.wins:
            return Win()
        if opts.concealed_kongs:
            return ConcealedKong(opts.concealed_kongs[0])
        return hand.default_action(p.seat)
    assert isinstance(opts, ClaimOptions)
    if opts.win is not None:
        return Win()
    if opts.exposed_kong:
        return ExposedKong()
    if opts.pong:
        return Pong()
    return Pass()


def table(seed: int, faults: Faults, *, humans: int = 0):
    """A table of bots (and ``humans`` players who never act: their timers run out) playing
    one hand with the failures of ``faults``, started: the session, its scheduler, its events
    and the attempt of each failure seen."""
    failures: list[int] = []

    def arm(kind, data):
        if kind == "tile_discarded":
            faults.armed = True

    t = local_table(
        session_config(
            "t-resume", max_hands=1, first_dealer=seed % 4, discard_ms=1_000, claim_ms=500
        ),
        [Seat(player_id=f"p{i}") if i < humans else Seat(bot=True) for i in range(4)],
        ports=Ports(Wall(faults, seed), Rules(faults), Scoring(faults)),
        policy=greedy,
        on_event=arm,
        on_step_failed=lambda attempt, exc: failures.append(attempt),
    )
    t.session.start()
    return t.session, t.scheduler, t.events, failures


def play(seed: int, faults: Faults, *, humans: int = 0):
    """The hand of :func:`table` played out: the session, its events and failures seen."""
    session, sched, events, failures = table(seed, faults, humans=humans)
    sched.drain()
    return session, events, failures


def comparable(events):
    def strip(d):
        return {k: v for k, v in d.items() if k != "deadline_ms"}

    return [(k, strip(d)) for k, d in events]


TARGETS = [
    "draw",
    "draw_replacement",
    "own_turn_options",
    "claim_options",
    "resolve_claims",
    "settle",
    "reveal",
]


def scenario(target: str) -> tuple[int, int]:
    """A seed whose hand makes ``target`` calls in play, and a call in the middle of them."""
    for seed in range(40):
        count = Faults(target)
        play(seed, count)
        if count.calls:
            return seed, max(1, count.calls // 2)
    raise AssertionError(f"no hand of the first 40 seeds calls {target} in play")


def assert_played_as_without_failures(seed: int, faults: Faults, times: int) -> None:
    """The hand of ``seed`` played with ``faults`` saw ``times`` failures, each retried
    (attempts 1, 2, …), and ended as it does without them: the same events, every tile
    accounted for, a replay that verifies."""
    _, expected, _ = play(seed, Faults())
    session, events, failures = play(seed, faults)
    assert faults.failed == times
    assert failures == list(range(1, times + 1))
    assert session.phase == FINISHED
    hand = session.hand
    assert hand is not None and hand.finished
    assert hand.tiles_accounted() == T.WALL_SIZE
    assert comparable(events) == comparable(expected)  # nothing twice, nothing skipped
    log = records_log(events)
    verdict = verify_hand(export_hand(table_header("t-resume", log), log, hand.hand_id))
    assert verdict.ok, verdict.problems


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("times", [1, RETRY_ATTEMPTS + 2])
def test_a_failed_call_is_retried_from_that_call(target, times):
    seed, at = scenario(target)
    assert_played_as_without_failures(seed, Faults(target, at, times), times)


@pytest.mark.parametrize("target", ["draw", "draw_replacement"])
def test_a_draw_whose_answer_was_lost_gets_the_same_tile_again(target):
    """The wall handed the tile out and the answer was lost: the retry has the same number
    (request id), so the wall answers it again; no tile of the wall is skipped."""
    seed, at = scenario(target)
    _, expected, _ = play(seed, Faults())
    faults = Faults(target, at, 2, lost=True)
    session, events, _ = play(seed, faults)
    assert faults.failed == 2
    assert comparable(events) == comparable(expected)
    hand = session.hand
    assert hand is not None and hand.tiles_accounted() == T.WALL_SIZE


def test_failures_with_a_player_waiting_on_timers():
    """A human seat's own-turn options fail: the prompt comes once the call goes through, its
    timer then plays the seat, and the hand ends as it would have."""
    seed, at = scenario("own_turn_options")
    _, expected, _ = play(seed, Faults(), humans=1)
    faults = Faults("own_turn_options", at, 3)
    session, events, _ = play(seed, faults, humans=1)
    assert faults.failed == 3
    assert session.phase == FINISHED
    assert comparable(events) == comparable(expected)


def test_a_stalled_table_keeps_retrying_every_stalled_interval():
    """After RETRY_ATTEMPTS failures the step is retried every RETRY_STALLED_MS, not dropped;
    it goes on as soon as the service answers."""
    seed, at = scenario("claim_options")
    faults = Faults("claim_options", at, 10**9)
    session, sched, _, failures = table(seed, faults)
    sched.run_due()
    for _ in range(RETRY_ATTEMPTS + 3):
        sched.advance(RETRY_STALLED_MS)
    n = len(failures)
    assert n >= RETRY_ATTEMPTS + 3
    sched.advance(RETRY_STALLED_MS)
    assert len(failures) == n + 1  # one more attempt per stalled interval
    faults.times = 0  # the service is back
    sched.drain()
    assert session.phase == FINISHED
    assert session.hand is not None and session.hand.tiles_accounted() == T.WALL_SIZE


class EscapeScoring(InProcessScoring):
    down = False

    def settle_escape(self, *args, **kwargs):
        if self.down:
            raise Unavailable("scoring down")
        return super().settle_escape(*args, **kwargs)


def two_humans(scoring: InProcessScoring, huangfan: int = 0):
    t = local_table(
        session_config("t-leave", max_hands=2, first_dealer=0, discard_ms=1_000, claim_ms=500),
        [Seat(player_id="p0"), Seat(player_id="p1"), Seat(bot=True), Seat(bot=True)],
        ports=Ports(Wall(Faults(), 3), InProcessRules(), scoring),
        policy=greedy,
    )
    t.session.huangfan = huangfan
    t.session.start()
    t.scheduler.run_due()
    return t.session, t.scheduler, t.events


def test_a_leave_whose_escape_settlement_fails_changes_nothing_and_can_be_retried():
    scoring = EscapeScoring()
    session, _, events = two_humans(scoring)
    before = (len(events), [s.chips for s in session.seats], session.huangfan)
    scoring.down = True
    with pytest.raises(Unavailable):
        session.leave(0)
    assert not session.seats[0].left
    assert (len(events), [s.chips for s in session.seats], session.huangfan) == before
    scoring.down = False
    penalty = session.leave(0)  # the retry is the leave, not SEAT_LEFT
    assert penalty > 0 and session.seats[0].left
    kinds = [k for k, _ in events[before[0] :]]
    assert kinds[:2] == ["hand_result", "seat_changed"]


def test_the_result_of_a_hand_a_player_left_tells_the_reset_huangfan():
    """The 荒番 counter is reset by the leave: the hand's result says next_huangfan 0 (what the
    next hand starts with), and the hand's replay, which sees the leave, verifies."""
    session, sched, events = two_humans(InProcessScoring(), huangfan=2)
    session.leave(0)
    sched.drain()
    results = [d for k, d in events if k == "hand_result" and d["outcome"] != "escape"]
    starts = [d for k, d in events if k == "hand_started"]
    assert results[0]["next_huangfan"] == 0
    assert starts[0]["huangfan"] == 2 and starts[1]["huangfan"] == 0
    log = records_log(events)
    first = starts[0]["hand_id"]
    verdict = verify_hand(export_hand(table_header("t-leave", log), log, first))
    assert verdict.ok, verdict.problems


def flowers_at_the_deal() -> int:
    """A seed whose deal holds flowers (replaced from the tail before play)."""
    for seed in range(40):
        _, events, _ = play(seed, Faults())
        if any(k == "flowers_exposed" and d["draw"] == "deal" for k, d in events):
            return seed
    raise AssertionError("no deal of the first 40 seeds holds a flower")


@pytest.mark.parametrize("target", ["new_hand", "deal", "draw_replacement"])
@pytest.mark.parametrize("times", [1, RETRY_ATTEMPTS + 2])
@pytest.mark.parametrize("lost", [False, True])
def test_a_failed_call_at_the_start_of_a_hand_is_retried_from_that_call(target, times, lost):
    """NewHand, the deal and the 补花 draws after it fail (or their answers are lost): the hand
    starts once the wall answers, from the call that failed: the same events, nothing twice,
    no tile skipped, and the table plays on."""
    seed = flowers_at_the_deal()
    faults = Faults(target, 1, times, lost=lost, from_start=True)
    assert_played_as_without_failures(seed, faults, times)


def test_a_detached_session_stops_retrying():
    """Another replica took the table over: a step that keeps failing is not tried again here
    (no service call, no event), as nothing else of the session runs."""
    seed, at = scenario("own_turn_options")
    faults = Faults("own_turn_options", at, 1_000)
    session, sched, events, failures = table(seed, faults)
    sched.advance(60_000)
    assert failures, "the step is being retried"
    calls, seen = faults.calls, len(events)
    session.detach()
    sched.advance(10 * 60_000)
    assert faults.calls == calls and len(events) == seen


def test_leaving_while_the_start_of_a_hand_is_retried_is_no_escape():
    """The wall is down at the start of a hand: nothing is dealt yet, so a player who leaves
    pays no escape penalty and reports no hand (its id would be empty)."""
    seed = flowers_at_the_deal()
    faults = Faults("new_hand", 1, 1_000, from_start=True)
    session, sched, events, _ = table(seed, faults, humans=1)
    sched.advance(5_000)
    assert session.hand is not None and not session.hand.hand_id
    assert session.leave(0) == 0
    assert not any(k == "hand_result" for k, _ in events)
