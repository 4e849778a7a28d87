"""Bot hands over the real processes (48; ``MAHJONG_E2E_BOT_HANDS=200`` for a longer soak):
four seats per table played through the gateway's auto-play (each seat's player never acts,
so after two missed decisions 托管 plays it with the built-in bot), several tables at once.
Every message sent to every seat is collected and checked for information hiding; every hand
is exported from the gateway's store and verified (wall commitment, every action legal, 144
tiles accounted for, payments plus house zero)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2 as mm_pb

from infra.store import open_store
from services.gateway.domain.replay import export_hand, table_header
from services.gateway.tables import read_table_log
from services.gateway.verify import verify_hand
from tests.support.events import json_log
from tests.support.identity import sign_in
from tests.support.tables import request_table, state

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TABLES = 8
HANDS_PER_TABLE = max(1, int(os.environ.get("MAHJONG_E2E_BOT_HANDS", "48")) // TABLES)


def register(mm, n: int) -> list[tuple[str, str]]:
    """Players registered with matchmaking: (player id, player token)."""
    out = []
    for i in range(n):
        player, token = sign_in(mm, f"E2E {i}")
        out.append((player.player_id, token))
    return out


def create(stub, max_hands: int, tag: str = "e2e", players: list[str] | None = None):
    players = players or [f"p{uuid.uuid4().hex[:8]}" for _ in range(4)]
    seats = [pb.SeatAssignment(player_id=p, display_name=f"P{i}") for i, p in enumerate(players)]
    return request_table(stub, seats, max_hands=max_hands, tag=tag)


# Generous deadlines: on a loaded 2-core CI machine the hands take minutes, not seconds; a
# passing run is never slowed by them.
PLAY_SECONDS = 480


def collect(stub, table_id: str, token: str, out: list, timeout: float = PLAY_SECONDS):
    for resp in stub.Subscribe(
        pb.SubscribeRequest(table_id=table_id, seat_token=token), timeout=timeout
    ):
        out.append(resp.event)
        if resp.event.WhichOneof("kind") == "table_finished":
            return


def subscribe_all(stub, tables) -> tuple[dict[tuple[str, int], list], list[threading.Thread]]:
    """A thread per seat of each table collecting its stream: (events by (table, seat), the
    threads, started)."""
    streams: dict[tuple[str, int], list] = {}
    threads = []
    for t in tables:
        for seat, token in enumerate(t.seat_tokens):
            buf: list = []
            streams[(t.table_id, seat)] = buf
            th = threading.Thread(target=collect, args=(stub, t.table_id, token, buf))
            th.start()
            threads.append(th)
    return streams, threads


def check_hiding(seat: int, events: list) -> int:
    """No message to ``seat`` shows another seat's concealed or drawn tiles, or a prompt."""
    checked = 0
    for e in events:
        kind = e.WhichOneof("kind")
        checked += 1
        if kind == "tiles_dealt":
            for h in e.tiles_dealt.hands:
                if h.seat - 1 != seat:
                    assert not h.tiles, f"seat {seat} saw seat {h.seat - 1}'s deal"
                else:
                    assert len(h.tiles) == h.count
        elif kind == "tile_drawn" and e.tile_drawn.seat - 1 != seat:
            assert e.tile_drawn.tile == 0, f"seat {seat} saw another seat's draw"
        elif kind == "flowers_exposed" and e.flowers_exposed.seat - 1 != seat:
            assert not e.flowers_exposed.replacements
        elif kind == "meld_declared" and e.meld_declared.seat - 1 != seat:
            m = e.meld_declared.meld
            if m.kind == common_pb2.MELD_KIND_CONCEALED_KONG:
                assert not m.tiles
        elif kind == "prompt":
            assert e.prompt.seat - 1 == seat, "a prompt for another seat"
        elif kind == "hand_result":
            r = e.hand_result
            if r.outcome == pb.HAND_OUTCOME_WIN and r.winners[0].win_kind != (
                common_pb2.WIN_KIND_DISCARD
            ):
                shown = {h.seat - 1 for h in r.revealed}
                assert shown <= {w.seat - 1 for w in r.winners}
    return checked


SECRET_KINDS = ("claim", "rob_kong")


def check_claims_hidden(seat: int, events: list, log: list) -> int:
    """No message to ``seat`` tells that another seat was prompted on a claim or 抢杠: no
    timed_out of another seat's missed claim, no 托管 it started (the event right after it in
    the table's log), no count of missed decisions of another seat. Returns how many of the
    other seats' missed claims were withheld (from the log, which holds everything)."""
    missed = {
        q: d for q, _, k, d in json_log(log) if k == "timed_out" and d["kind"] in SECRET_KINDS
    }
    received = {e.sequence for e in events}
    for e in events:
        kind = e.WhichOneof("kind")
        if kind == "timed_out" and e.timed_out.seat - 1 != seat:
            assert e.timed_out.kind == pb.PROMPT_KIND_OWN_TURN, (
                f"seat {seat} told of seat {e.timed_out.seat - 1}'s missed claim"
            )
            assert e.timed_out.in_a_row == 0, "another seat's count of missed decisions"
        elif kind == "seat_changed" and e.sequence - 1 in missed:
            assert missed[e.sequence - 1]["seat"] == seat, (
                f"seat {seat} told of 托管 started by another seat's missed claim"
            )
    others = [q for q, d in missed.items() if d["seat"] != seat]
    assert not received & set(others)
    return len(others)


def check_refusal(seat: int, message: str) -> None:
    """A refused action's message names no other seat but the one whose turn it is."""
    assert "claim" not in message and "deciding" not in message, message
    for m in re.finditer(r"seats? (\d)('s turn)?", message):
        assert int(m[1]) == seat or m[2], f"seat {seat} was told about seat {m[1]}: {message}"


def poll_views(stub, table, seat: int, checked: list) -> None:
    """GetTableState during play: the seat sees its own concealed tiles, never another's, and
    a deadline only for a decision that is its own or public (an own turn). A pass sent while
    the view shows no prompt is refused (never applied: it is stale if a prompt came since)
    without a word about who else decides."""
    while True:
        view = state(stub, table, seat)
        playing = view.phase == pb.TABLE_PHASE_PLAYING and not view.hand.finished
        if playing and not view.HasField("prompt"):
            assert view.hand.to_act or not view.hand.deadline_unix_ms, (
                f"seat {seat} sees a deadline of a claim window it is not in"
            )
            try:
                stub.Act(
                    pb.ActRequest(
                        table_id=table.table_id,
                        seat_token=table.seat_tokens[seat],
                        request_id=uuid.uuid4().hex,
                        last_sequence=view.last_sequence,
                        action=pb.Action(**{"pass": pb.Pass()}),
                    ),
                    timeout=5,
                )
                raise AssertionError(f"seat {seat}'s pass without a prompt was accepted")
            except grpc.RpcError as exc:
                assert exc.code() in (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.ABORTED,
                ), exc
                check_refusal(seat, exc.details())
        for s in view.seats:
            if s.seat - 1 != seat:
                assert not s.concealed and not s.drawn, f"seat {seat} saw seat {s.seat - 1}"
                for m in s.melds:
                    if m.kind == common_pb2.MELD_KIND_CONCEALED_KONG and not view.hand.finished:
                        assert not m.tiles
            elif view.phase == pb.TABLE_PHASE_PLAYING and not view.hand.finished:
                assert len(s.concealed) == s.concealed_count
        if view.HasField("prompt"):
            assert view.prompt.seat - 1 == seat
        checked[0] += 1
        if view.phase == pb.TABLE_PHASE_FINISHED:
            return
        time.sleep(0.2)


def read_log(db, table_id: str):
    """The table's event log from the gateway's SQLite store (the process keeps writing it)."""
    store = open_store(f"sqlite:///{db}")
    try:
        return read_table_log(store, table_id)
    finally:
        store.close()


def test_bot_hands_over_real_processes(stack):
    stub = stack["stub"]
    players = register(stack["mm"], 4 * TABLES)
    tables = [
        create(stub, HANDS_PER_TABLE, players=[p for p, _ in players[4 * i : 4 * i + 4]])
        for i in range(TABLES)
    ]
    streams, threads = subscribe_all(stub, tables)
    views_checked = [0]
    polls = [
        threading.Thread(target=poll_views, args=(stub, t, seat, views_checked))
        for t in tables[:1]
        for seat in range(4)
    ]
    for th in polls:
        th.start()
    for th in threads + polls:
        th.join(PLAY_SECONDS + 30)
    assert views_checked[0] > 20
    hands = withheld = 0
    for t in tables:
        log = read_log(stack["db"], t.table_id)
        assert log[-1].kind == "table_finished", "the table did not finish"
        header = table_header(t.table_id, log)
        hand_ids = [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]
        assert len(hand_ids) == HANDS_PER_TABLE
        for hid in hand_ids:
            verdict = verify_hand(export_hand(header, log, hid))
            assert verdict.ok, f"{t.table_id} {hid}: {verdict.problems}"
            hands += 1
        for seat in range(4):
            events = streams[(t.table_id, seat)]
            assert events[-1].WhichOneof("kind") == "table_finished"
            assert check_hiding(seat, events) > 0
            withheld += check_claims_hidden(seat, events, log)
            seqs = [e.sequence for e in events]
            assert seqs == sorted(set(seqs)), "sequence numbers rise strictly"
    assert hands == TABLES * HANDS_PER_TABLE
    assert withheld > 0, "no claim timed out: the claim hiding check proved nothing"
    check_reported(stack, tables, players)
    check_cli(stack, tables[0].table_id)


def check_cli(stack, table_id: str) -> None:
    """``mahjong replay export`` then ``mahjong replay verify``, as an operator would; a
    tampered export fails."""
    cli = [sys.executable, "-m", "services.cli", "replay"]
    url = f"sqlite:///{stack['db']}"
    export = subprocess.run(
        [*cli, "export", "--store-url", url, table_id], capture_output=True, text=True, timeout=60
    )
    assert export.returncode == 0, export.stderr
    ok = subprocess.run(
        [*cli, "verify", "-"], input=export.stdout, capture_output=True, text=True, timeout=60
    )
    assert ok.returncode == 0 and ok.stdout.startswith("OK"), ok.stdout + ok.stderr
    lines = export.stdout.splitlines()
    i = next(n for n, line in enumerate(lines) if '"kind":"tile_drawn"' in line)
    rec = json.loads(lines[i])
    rec["data"]["tile"] = "9m" if rec["data"]["tile"] != "9m" else "1m"
    lines[i] = json.dumps(rec)
    bad = subprocess.run(
        [*cli, "verify", "-"], input="\n".join(lines), capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 1 and "FAILED" in bad.stdout


def check_reported(stack, tables, players) -> None:
    """These tables were created directly on the gateway's public port (as any player may),
    not by matchmaking's certificate on its internal port, so they are casual: the gateway's
    outbox ends empty (their hands are never reported) and no player's silver moved in
    matchmaking's ledger. (Hands of matchmaking's own tables reaching the ledger:
    tests/integration/test_matchmaking_stack.py.)"""
    deadline = time.monotonic() + 20
    store = open_store(f"sqlite:///{stack['db']}")
    try:
        while any(True for _ in store.scan("gateway-outbox")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(True for _ in store.scan("gateway-outbox")), "reports left unsent"
    finally:
        store.close()
    for i, t in enumerate(tables):
        log = read_log(stack["db"], t.table_id)
        chips = next(d for _, _, k, d in json_log(log) if k == "table_finished")["chips"]
        assert any(chips), "the table moved no chips: the check below would prove nothing"
        for seat in range(4):
            _, token = players[4 * i + seat]
            ledger = stack["mm"].ListLedgerEntries(
                mm_pb.ListLedgerEntriesRequest(session_token=token), timeout=5
            )
            assert [e for e in ledger.entries if e.tag == "e2e"] == []
            assert ledger.balance == 1000  # the starting grant only
