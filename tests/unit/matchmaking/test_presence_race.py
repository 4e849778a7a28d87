"""One table at a time under concurrency, on the real SQLite store: a player racing to join a
queue, join a room and open a room from many threads at once (two replicas on one file) ends
up in exactly one of them; every other call is refused with FAILED_PRECONDITION naming the
conflict (the exclusion was a check followed by a separate write, so two
concurrent calls could both pass the check and seat the player in a queue and a room)."""

from __future__ import annotations

import sys
import threading

from infra.store.sqlite import SqliteStore
from services.matchmaking.domain.rooms import private as rooms
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from services.matchmaking.storage import room_records
from shared.errors import DomainError, FailedPrecondition
from tests.doubles.clock import ManualClock
from tests.support.identity import issuer_config, sign_in
from tests.unit.matchmaking.mm_fakes import FakeAllocator

PLAYERS = 12
THREADS = 9  # per player: three each of join_queue, join_room, open_room
CONFLICTS = {"ALREADY_QUEUED", "IN_QUEUE", "IN_ROOM", "ALREADY_IN_ROOM", "IN_ANOTHER_ROOM"}


def _replicas(tmp_path, n=2) -> list[Matchmaking]:
    clock = ManualClock()
    cfg = MatchmakingConfig(
        issuers=(issuer_config(),), token_secret=b"test-secret", free_room_cards=3
    )
    return [
        Matchmaking(SqliteStore(tmp_path / "mm.db"), FakeAllocator(), clock, cfg) for _ in range(n)
    ]


def test_racing_queue_and_room_calls_seat_a_player_in_exactly_one(tmp_path):
    mms = _replicas(tmp_path)
    mm = mms[0]
    owners = [sign_in(mm, f"Owner{i}")[1] for i in range(PLAYERS)]
    codes = [mm.open_room(tok, "", 0).code for tok in owners]
    racers = [sign_in(mm, f"Racer{i}")[1] for i in range(PLAYERS)]

    results: list[list] = [[] for _ in range(PLAYERS)]
    barrier = threading.Barrier(THREADS * PLAYERS)

    def run(i: int, k: int) -> None:
        replica, token = mms[k % len(mms)], racers[i]
        calls = (
            lambda: replica.join_queue(token, "", 0),
            lambda: replica.join_room(token, codes[i]),
            lambda: replica.open_room(token, "", 0),
        )
        barrier.wait()
        try:
            results[i].append(("ok", k % 3, calls[k % 3]()))
        except DomainError as exc:
            results[i].append(("err", k % 3, exc))

    threads = [
        threading.Thread(target=run, args=(i, k)) for i in range(PLAYERS) for k in range(THREADS)
    ]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so the calls really interleave
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(interval)

    for i, outcome in enumerate(results):
        pid = mm.authenticate(racers[i]).player_id
        wins = [r for r in outcome if r[0] == "ok"]
        assert len(outcome) == THREADS
        assert len(wins) == 1, f"{pid}: {len(wins)} calls succeeded: {wins}"
        _, kind, won = wins[0]
        held = won.ticket_id if kind == 0 else won.code
        for _, _, exc in (r for r in outcome if r[0] == "err"):
            assert isinstance(exc, FailedPrecondition), exc
            assert exc.reason in CONFLICTS, exc
            assert held in exc.message, exc.message
        # The store agrees: the player is where the winning call put it, and nowhere else.
        ticket_id, code = mm.whereabouts(pid)
        assert (ticket_id, code) == ((held, "") if kind == 0 else ("", held))
        in_rooms = [
            c
            for c, rec in mm.store.scan(room_records.ROOMS)
            if rooms.Room.from_json(rec.value).member(pid) is not None
        ]
        assert in_rooms == ([] if kind == 0 else [held])
        cards = mm.account(pid).room_cards
        assert cards == (2 if kind == 2 else 3)  # only a room actually opened spends a card
