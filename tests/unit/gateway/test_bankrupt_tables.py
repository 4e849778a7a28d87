"""破产 through a gateway's TableManager (no matchmaking: the test writes the answers an
outbox sender would keep): a reporting table waits for its last hand's stored answer before it
deals, seats the bot the answer names, and reports it there; the bankrupt seat's token acts no
more (PERMISSION_DENIED SEAT_BANKRUPT), its Leave is a no-op, and it still watches the table —
its stream goes on as a spectator's from the ``seat_bankrupt`` event, hiding the bot's tiles. A
table that reports nothing never waits."""

from __future__ import annotations

import threading
import time

import pytest

from infra.store.memory import MemoryStore
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.views import project
from services.gateway.domain.session import Seat
from services.gateway.tables import OUTBOX
from services.gateway.tables.records import ANSWERS, HandAnswerRecord, decode_report
from shared.errors import PermissionDenied
from shared.table import ResumePlay
from tests.support.sessions import inprocess_ports
from tests.support.stacks import table_manager, table_spec

BOT = "bot-t-s0"
FAST = {"discard_ms": 10, "claim_ms": 10, "auto_play_delay_ms": 0, "bot_delay_ms": 0}


def wait_for(pred, timeout: float = 30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(0.01)
    raise AssertionError("timed out")


def rows(store):
    return [(k, decode_report(r.value)) for k, r in store.scan(OUTBOX) if "~" not in k]


@pytest.fixture
def manager():
    m = table_manager(MemoryStore(), inprocess_ports(), seed=3, report_to_matchmaking=True, **FAST)
    yield m
    m.close()


def test_a_reporting_table_waits_for_the_answer_then_seats_the_bot(manager):
    store = manager.store
    seats = [Seat(player_id="p0"), Seat(player_id="p1"), *(Seat(f"b{i}", bot=True) for i in (2, 3))]
    tid, tokens = manager.create_table(table_spec(seats, report_hands=True, max_hands=3), "")
    seen: list = []
    done = threading.Event()

    def watch():
        for logged, ev in manager.subscribe(tid, tokens[0], 0, lambda: not done.is_set()):
            seen.append((logged, ev))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    ((key, first),) = wait_for(lambda: rows(store))
    time.sleep(0.5)  # no answer: no deal, however long
    table = manager.table(tid)
    assert table.session.hands_played == 1 and table.session.phase == "between_hands"
    assert first.player_ids[0] == "p0"

    store.put(ANSWERS, key, HandAnswerRecord(((0, BOT),)).encode())
    wait_for(lambda: table.session.hands_played >= 2 or None)
    # the bankrupt seat's token: no more acting, Leave changes nothing, watching as spectators
    with pytest.raises(PermissionDenied, match="went bankrupt") as err:
        manager.act(tid, tokens[0], None, "r1", table.head, ResumePlay())
    assert err.value.reason == "SEAT_BANKRUPT"
    assert manager.leave(tid, tokens[0], "r2") == 0
    assert manager.view(tid, tokens[0], None)["viewer"] is None
    assert table.session.seats[0].bot and table.session.seats[0].player_id == BOT

    answered = {key}

    def answer_the_rest():  # every later hand's answer, once, none bankrupt
        for k, _ in rows(store):
            if k not in answered:
                answered.add(k)
                store.put(ANSWERS, k, HandAnswerRecord().encode())
        return not table.live

    wait_for(answer_the_rest)
    reports = sorted((r for _, r in rows(store)), key=lambda r: r.hand_number)
    assert len(reports) == 3 and reports[0].player_ids[0] == "p0"
    assert all(r.player_ids[0] == BOT for r in reports[1:])  # the bot's, the house's side
    watcher.join(10)
    done.set()

    # the stream: the seat's own view until seat_bankrupt (included), a spectator's after it
    at = next(i for i, (_, ev) in enumerate(seen) if isinstance(ev, K.SeatBankrupt))
    assert seen[at][1] == K.SeatBankrupt(0, "p0", BOT, 1)
    before = [ev for _, ev in seen[:at]]
    assert any(isinstance(ev, K.Prompt) for ev in before)  # seat 0's own prompts
    after = seen[at + 1 :]
    assert after and all(ev == project(logged.event, None) for logged, ev in after)
    assert not any(isinstance(ev, K.Prompt) for _, ev in after)
    assert store.get(ANSWERS, key) is None  # the answers go with the table's end


def test_a_table_that_reports_nothing_never_waits(manager):
    seats = [Seat(player_id="p0"), *(Seat(f"b{i}", bot=True) for i in (1, 2, 3))]
    tid, _ = manager.create_table(table_spec(seats, report_hands=False, max_hands=2), "")
    table = manager.table(tid)
    wait_for(lambda: not table.live)
    assert table.session.hands_played == 2 and not list(manager.store.scan(OUTBOX))
