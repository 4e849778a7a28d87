"""Claim windows that tell nothing (RULES §4 "Claim windows"), on a manual clock: at a table with
a person seated every discard's window is held for floor + jitter, whether a seat may claim it
or not; a table of bots plays at full speed; nobody sees the hold; a replica taking the table
over mid-window ends that window when its first owner would have; hands with holds verify."""

from __future__ import annotations

import random

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project
from services.gateway.domain.replay import export_hand
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import (
    PLAYING,
    Seat,
    TableSession,
    claim_windows,
    simple_policy,
)
from services.gateway.verify import verify_hand
from shared.melds import MeldKind
from tests.doubles.scheduler import ManualScheduler
from tests.support.sessions import inprocess_ports, session_config

FLOOR, JITTER = 600, 400
HOLDS = {"timers.claim_window_floor_ms": str(FLOOR), "timers.claim_window_jitter_ms": str(JITTER)}
TIMERS = {"discard_ms": 20_000, "claim_ms": 20_000, "bot_delay_ms": 0, "auto_play_delay_ms": 0}


def table(seats: list[Seat], log: list[LoggedEvent], *, hands: int = 2, seed: int = 1):
    """A session whose log entries carry the manual clock's time, as a gateway's do."""
    sched = ManualScheduler()

    def emit(ev: K.TableEvent) -> int:
        log.append(LoggedEvent(len(log) + 1, sched.now_ms(), ev))
        return len(log)

    session = TableSession(
        session_config("t-windows", HOLDS, max_hands=hands, first_dealer=0, **TIMERS),
        seats,
        ports=inprocess_ports(),
        scheduler=sched,
        emit=emit,
        report=lambda kind, data: None,
        policy=simple_policy,
        rng=random.Random(seed),
    )
    session.window_rng = random.Random(seed)
    return session, sched


def person_on_auto_play() -> list[Seat]:
    """A person (on 托管: the policy answers at once, as the bots do) and three bots."""
    return [Seat(player_id="p0", auto_play=True), *(Seat(f"b{i}", bot=True) for i in (1, 2, 3))]


def windows(log: list[LoggedEvent]) -> list[tuple[int, int, bool, int]]:
    """Each window: (when it opened, its hold, whether a seat was prompted on it, when the
    hand went on: the next draw, claimed meld, win or drawn hand)."""
    out = []
    opened: tuple[int, int] | None = None
    prompted = False
    for e in log:
        ev = e.event
        added_kong = isinstance(ev, K.MeldDeclared) and ev.meld.kind is MeldKind.ADDED_KONG
        if opened is not None and isinstance(
            ev, (K.TileDrawn, K.MeldDeclared, K.WinDeclared, K.HandDrawn)
        ):
            out.append((*opened, prompted, e.t))
            opened = None
        if isinstance(ev, K.TileDiscarded) or added_kong:
            opened, prompted = (e.t, ev.hold_ms), False
        elif isinstance(ev, K.Prompt) and ev.kind in (K.CLAIM, K.ROB_KONG):
            prompted = True
    return out


def test_every_window_at_a_table_with_a_person_lasts_its_hold_claimable_or_not():
    log: list[LoggedEvent] = []
    session, sched = table(person_on_auto_play(), log)
    session.start()
    sched.drain()
    seen = windows(log)
    assert len(seen) > 100
    assert {p for _, _, p, _ in seen} == {True, False}, "windows both claimable and not"
    for opened, hold, _, went_on in seen:
        assert FLOOR <= hold <= FLOOR + JITTER
        assert went_on - opened == hold  # every seat answered at once: the hold alone
    holds = [h for _, h, _, _ in seen]
    assert len(set(holds)) > 50, "drawn afresh for each window"


def test_a_slow_answer_ends_the_window_when_it_comes_and_a_fast_one_waits_for_the_hold():
    log: list[LoggedEvent] = []
    seats = [Seat(player_id=f"p{i}") for i in range(2)] + [Seat(f"b{i}", bot=True) for i in (2, 3)]
    # Hands until three windows of each kind were answered: how often a person may claim
    # depends on the walls, which are random.
    session, sched = table(seats, log, hands=16)
    session.start()
    fast = slow = 0
    while session.phase == PLAYING and (fast < 3 or slow < 3):
        sched.run_due()
        hand = session.hand
        people = [s for s in (0, 1) if s in hand.pending]
        if not people:
            sched.advance(1)
            continue
        p = hand.pending[people[0]]
        if p.kind == K.OWN_TURN:
            session.act(p.seat, hand.default_action(p.seat))
            continue
        until = hand.window_until_ms
        wait = (until - sched.now_ms()) // 2 if fast <= slow else until - sched.now_ms() + 300
        sched.advance(wait)
        answered = sched.now_ms()
        n = len(log)
        for s in list(hand.pending):  # every prompted person passes now
            if s in (0, 1):
                session.act(s, hand.default_action(s))
        sched.run_due()
        after = [e for e in log[n:] if isinstance(e.event, (K.TileDrawn, K.MeldDeclared))]
        if answered < until:  # the hold is not over: nothing goes on until it is
            assert not after
            sched.advance(until - sched.now_ms() - 1)
            assert not [e for e in log[n:] if isinstance(e.event, K.TileDrawn)]
            sched.advance(1)
            fast += 1
        else:
            slow += 1
        went_on = next(  # the last tile's window ends the hand drawn
            e
            for e in log[n:]
            if isinstance(e.event, (K.TileDrawn, K.MeldDeclared, K.WinDeclared, K.HandDrawn))
        )
        assert went_on.t == max(answered, until)
    assert fast >= 3 and slow >= 3


def test_a_table_of_bots_plays_at_full_speed():
    log: list[LoggedEvent] = []
    session, sched = table([Seat(f"b{i}", bot=True) for i in range(4)], log)
    session.start()
    sched.drain()
    seen = windows(log)
    assert seen and all(hold == 0 and went_on == opened for opened, hold, _, went_on in seen)
    assert log[-1].t == log[0].t, "the whole table at one instant of the manual clock"


def test_no_viewer_sees_a_hold():
    log: list[LoggedEvent] = []
    session, sched = table(person_on_auto_play(), log, hands=1)
    session.start()
    sched.drain()
    holding = [e.event for e in log if getattr(e.event, "hold_ms", 0)]
    assert len(holding) > 20
    for ev in holding:
        for viewer in (None, 0, 1, 2, 3):
            copy = project(ev, viewer)
            assert copy is not None and copy.hold_ms == 0


def test_a_replica_taking_over_mid_window_ends_it_when_the_first_owner_would_have():
    log: list[LoggedEvent] = []
    session, sched = table(person_on_auto_play(), log, hands=1)
    session.start()
    # stop the first owner right after a discard nobody may claim, 100 ms into its hold
    while True:
        sched.run_due()
        last = log[-1].event
        if isinstance(last, K.TileDiscarded) and not session.hand.pending:
            break
        sched.advance(sched.next_due_ms() - sched.now_ms())
    discarded = log[-1]
    hold = discarded.event.hold_ms
    assert FLOOR <= hold <= FLOOR + JITTER
    kept = list(log)
    sched2 = ManualScheduler(start_ms=discarded.t + 100)
    log2 = list(kept)

    def emit(ev: K.TableEvent) -> int:
        log2.append(LoggedEvent(len(log2) + 1, sched2.now_ms(), ev))
        return len(log2)

    restored = restore_session(
        "t-windows",
        kept,
        timers=TIMERS,
        ports=session.ports,
        scheduler=sched2,
        emit=emit,
        report=lambda kind, data: None,
        policy=simple_policy,
    )
    assert restored.hand.copy_state() == session.hand.copy_state()
    assert len(log2) == len(kept), "nothing written while the hold runs"
    sched2.advance(hold - 101)
    assert len(log2) == len(kept)
    sched2.advance(1)
    padding = [e for e in log2[len(kept) :] if isinstance(e.event, K.WindowPadding)]
    assert len(padding) == 6 and {e.t for e in padding} == {discarded.t + hold}
    drawn = log2[len(kept) + len(padding)]
    # the next seat's live draw (a flower drawn is exposed at once: FlowersExposed, draw "live")
    live_draw = isinstance(drawn.event, K.TileDrawn) or (
        isinstance(drawn.event, K.FlowersExposed) and drawn.event.draw == "live"
    )
    assert live_draw and drawn.t == discarded.t + hold
    # the restored table plays on, with holds of its own, and every hand verifies
    sched2.drain()
    assert restored.hands_played == 1
    new = windows(log2[len(kept) :])
    assert new and all(FLOOR <= h <= FLOOR + JITTER for _, h, _, _ in new)
    header = {"table_id": "t-windows", "ruleset": "shanghai-qiaoma", "overrides": HOLDS, "stake": 1}
    hand_id = discarded.event.hand_id
    verdict = verify_hand(export_hand(header, log2, hand_id))
    assert verdict.ok, verdict.problems


def test_the_gateways_settings_override_the_rulesets_holds():
    log: list[LoggedEvent] = []
    session, sched = table(person_on_auto_play(), log, hands=1)
    assert claim_windows.window_timing(session) == (FLOOR, JITTER)
    session.config.claim_window_floor_ms, session.config.claim_window_jitter_ms = 5, 0
    log2: list[LoggedEvent] = []
    seats = person_on_auto_play()
    overridden = TableSession(
        session.config,
        seats,
        ports=inprocess_ports(),
        scheduler=sched,
        emit=lambda ev: log2.append(LoggedEvent(len(log2) + 1, sched.now_ms(), ev)) or len(log2),
        report=lambda kind, data: None,
        policy=simple_policy,
        rng=random.Random(1),
    )
    overridden.start()
    sched.drain()
    seen = windows(log2)
    assert seen and all(hold == 5 and went_on - opened == 5 for opened, hold, _, went_on in seen)


def test_the_numbers_a_viewer_sees_after_a_discard_do_not_tell_who_could_claim():
    """Each prompted seat's prompt and answer take numbers nobody else sees: a held window is
    closed with fillers, so every viewer not prompted sees the same gap after every discard."""
    log: list[LoggedEvent] = []
    session, sched = table(person_on_auto_play(), log, hands=1)
    session.start()
    sched.drain()
    unseen: dict[bool, set[int]] = {True: set(), False: set()}
    held = 0
    for i, e in enumerate(log):
        if not (isinstance(e.event, K.TileDiscarded) and e.event.hold_ms):
            continue
        held += 1
        span = []
        for later in log[i + 1 :]:
            if isinstance(later.event, (K.TileDrawn, K.MeldDeclared, K.WinDeclared, K.HandDrawn)):
                break
            span.append(later.event)
        prompted = {ev.seat for ev in span if isinstance(ev, K.Prompt)}
        for viewer in (None, 0, 1, 2, 3):
            if viewer not in prompted:  # a prompted seat knows it was
                hidden = sum(1 for ev in span if project(ev, viewer) is None)
                unseen[bool(prompted)].add(hidden)
    assert held > 30
    assert unseen == {True: {6}, False: {6}}, unseen


def test_a_table_of_bots_pads_no_window():
    log: list[LoggedEvent] = []
    session, sched = table([Seat(f"b{i}", bot=True) for i in range(4)], log, hands=1)
    session.start()
    sched.drain()
    assert not [e for e in log if isinstance(e.event, K.WindowPadding)]


def test_a_viewer_is_told_only_numbers_it_sees():
    """GetTableState, a join, an Act's answer and the checks of Subscribe and Act name the last
    event the viewer sees, never the log's head: during a window the head counts the prompts
    and answers of other seats (services.gateway.tables.live.LiveTable.last_seen)."""
    from services.gateway.tables.live import LiveTable

    log: list[LoggedEvent] = []
    session, sched = table(person_on_auto_play(), log, hands=1)
    session.start()
    sched.drain()
    live = LiveTable("t-windows", "tag")
    for e in log:
        live.keep(e)
    checked = 0
    for e in log:
        if not isinstance(e.event, K.WindowPadding):
            continue
        for viewer in (None, 0, 1, 2, 3):
            shown = live.last_seen(viewer, e.seq)
            assert project(log[shown - 1].event, viewer) is not None
            assert all(project(x.event, viewer) is None for x in log[shown : e.seq])
            checked += 1
    assert checked > 100
    # the running step's events count too (an Act's answer is made before they are written)
    live.unwritten = [(0, K.WindowPadding()), (0, K.HandDrawn(tiles_left=0))]
    assert live.last_seen(2, live.head + 2) == live.head + 2
    assert live.last_seen(2, live.head + 1) == live.last_seen(2, live.head)
