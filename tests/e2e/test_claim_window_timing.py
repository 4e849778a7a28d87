"""Claim windows leak nothing, measured as a player would (RULES §4 "Claim windows"): wall,
rules, scoring and a gateway as processes; tables of two people (protos-only clients that answer
their prompts after a human-like delay) and two server bots.

On one person's stream, the time from a discard to the next public event of play (a draw, a
claimed meld, a win) is split by the gateway's own log into discards another seat could claim
and discards nobody could. With the windows held (the ruleset's floor and jitter, here scaled
down tenfold with the people's answers: 60 ms + 0..40 ms, answers after 10-50 ms) a two-sample
Kolmogorov–Smirnov test finds no difference; on a control table without holds (floor and jitter
0: the old behaviour) the same test finds the leak. The sequence numbers the person sees across
each window tell nothing either: as many go unseen after every discard on the held table
(prompts, answers and fillers make a constant count), and differs on the control table. A table
of bots with the same holds plays
at full speed."""

from __future__ import annotations

import os
import random
import threading
import time
import uuid

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb

from infra.store import open_store
from infra.supervisor import ServiceProcess, stop_all
from services.gateway.domain.events import kinds as K
from services.gateway.tables import read_table_log
from tests.e2e.players import legal_answer
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.stats import ks_2samp
from tests.support.tables import bot_seats, mixed_seats, request_table
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

FLOOR_MS, JITTER_MS = 60, 40
HELD = {
    "timers.claim_window_floor_ms": str(FLOOR_MS),
    "timers.claim_window_jitter_ms": str(JITTER_MS),
}
UNHELD = {"timers.claim_window_floor_ms": "0", "timers.claim_window_jitter_ms": "0"}
HANDS = int(os.environ.get("MAHJONG_CLAIM_WINDOW_HANDS", "3"))  # more for a soak
CLAIM_ANSWER_S = (0.010, 0.050)  # a person's pass, scaled as the holds are (0.1-0.5 s)
OWN_TURN_S = (0.002, 0.010)
PLAY_SECONDS = 240
GOES_ON = ("tile_drawn", "meld_declared", "win_declared", "hand_drawn")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("windows")
    procs: dict[str, ServiceProcess] = {}
    try:
        start_services(procs, tmp)
        for p in procs.values():
            p.wait_ready()
        flags = [
            *backend_flags(procs),
            "--seat-secret",
            "windows-secret",
            "--bot-delay-ms",
            "20",  # a bot answers a claim within the hold, as a quick person does
            "--discard-ms",
            "10000",
            "--claim-ms",
            "10000",
            "--auto-play-delay-ms",
            "0",
            "--claim-window-floor-ms",  # the ruleset's, each table's own (the tests' gateways
            "-1",  # hold nothing unless told: tests.support.stacks.service_process)
            "--claim-window-jitter-ms",
            "-1",
        ]
        db = tmp / "gateway.db"
        gw = service_process("gateway", tmp, store_url=f"sqlite:///{db}", extra=flags).start()
        procs["gateway"] = gw
        gw.wait_ready()
        from mahjong.gateway.v1 import gateway_pb2_grpc

        yield gateway_pb2_grpc.GatewayServiceStub(as_player(gw.address)), db
    finally:
        stop_all(procs.values())


class Person:
    """A protos-only client: reads its seat's stream (one event per message, each stamped on
    arrival) and answers its prompts after a human-like delay."""

    def __init__(self, stub, table_id: str, token: str, seat: int, seed: int) -> None:
        self.stub, self.table_id, self.token, self.seat = stub, table_id, token, seat
        self.rng = random.Random(seed)
        self.arrivals: list[tuple[float, pb.Event]] = []
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        request = pb.SubscribeRequest(table_id=self.table_id, seat_token=self.token)
        for resp in self.stub.Subscribe(request, timeout=PLAY_SECONDS):
            ev = resp.event
            self.arrivals.append((time.monotonic(), ev))
            kind = ev.WhichOneof("kind")
            if kind == "prompt" and ev.prompt.seat - 1 == self.seat:
                own = ev.prompt.kind == pb.PROMPT_KIND_OWN_TURN
                delay = self.rng.uniform(*(OWN_TURN_S if own else CLAIM_ANSWER_S))
                threading.Timer(delay, self.answer, args=(ev,)).start()
            elif kind in ("table_finished", "table_halted"):
                return

    def answer(self, ev: pb.Event) -> None:
        try:
            self.stub.Act(
                pb.ActRequest(
                    table_id=self.table_id,
                    seat_token=self.token,
                    request_id=uuid.uuid4().hex,
                    last_sequence=ev.sequence,
                    action=legal_answer(ev.prompt),
                ),
                timeout=10,
            )
        except grpc.RpcError as exc:
            self.errors.append(f"{exc.code()}: {exc.details()}")


def start_people(stub, options: dict[str, str], seed: int):
    t = request_table(stub, mixed_seats(2, "w"), options=options, max_hands=HANDS, first_dealer=1)
    people = [Person(stub, t.table_id, t.seat_tokens[s], s, seed + s) for s in (0, 1)]
    for p in people:
        p.thread.start()
    return t, people


def read_log(db, table_id: str):
    store = open_store(f"sqlite:///{db}")
    try:
        return read_table_log(store, table_id)
    finally:
        store.close()


def delays(viewer: Person, log) -> tuple[list[float], list[float], list[int], dict[bool, set]]:
    """(ms to the next event of play after each discard another seat could claim, the same
    after each discard nobody could, the holds of the log's discards, and how many sequence
    numbers the viewer did not see across the same windows, split the same way), on
    ``viewer``'s stream; windows the viewer itself was prompted on are left out (it knows of
    those)."""
    claimable: dict[int, bool] = {}  # discard's sequence -> another seat was prompted
    mine: set[int] = set()
    holds = []
    window: int | None = None
    for e in log:
        ev = e.event
        if isinstance(ev, K.TileDiscarded):
            window = e.seq
            claimable[window] = False
            holds.append(ev.hold_ms)
        elif window is not None and isinstance(ev, K.Prompt) and ev.kind == K.CLAIM:
            if ev.seat == viewer.seat:
                mine.add(window)
            else:
                claimable[window] = True
        elif isinstance(ev, (K.TileDrawn, K.MeldDeclared, K.WinDeclared, K.HandDrawn)):
            window = None
    yes: list[float] = []
    no: list[float] = []
    gaps: dict[bool, set[int]] = {True: set(), False: set()}
    opened: tuple[float, int] | None = None
    shown = 0  # events the viewer saw since the discard (a flower exposed, a ready declared)
    for at, ev in viewer.arrivals:
        kind = ev.WhichOneof("kind")
        if kind == "tile_discarded":
            opened, shown = (at, ev.sequence), 0
        elif kind in GOES_ON and opened is not None:
            start, seq = opened
            opened = None
            if seq in mine or seq not in claimable:
                continue
            (yes if claimable[seq] else no).append((at - start) * 1000)
            gaps[claimable[seq]].add(ev.sequence - seq - 1 - shown)  # numbers it never saw
        elif opened is not None:
            shown += 1
    return yes, no, holds, gaps


def finished(db, people: list[Person], table_id: str):
    for p in people:
        p.thread.join(PLAY_SECONDS)
    log = read_log(db, table_id)
    assert log[-1].kind == "table_finished", log[-1].kind
    for p in people:
        assert not p.errors, p.errors
    return log


def test_the_pause_after_a_discard_does_not_tell_whether_anyone_could_claim(gateway):
    stub, db = gateway
    bots = request_table(stub, bot_seats("wb"), options=HELD, max_hands=2, first_dealer=0)
    held, held_people = start_people(stub, HELD, 11)
    control, control_people = start_people(stub, UNHELD, 23)

    log = finished(db, held_people, held.table_id)
    yes, no, holds, gaps = delays(held_people[0], log)
    # nor do the numbers: every held window takes as many (prompts, answers, fillers)
    assert gaps[True] == gaps[False] == {6}, gaps
    assert len(yes) >= 15 and len(no) >= 60, (len(yes), len(no))
    assert all(FLOOR_MS <= h <= FLOOR_MS + JITTER_MS for h in holds)
    d, p = ks_2samp(yes, no)
    med_yes, med_no = sorted(yes)[len(yes) // 2], sorted(no)[len(no) // 2]
    print(
        f"held: claimable n={len(yes)} median {med_yes:.1f} ms mean {sum(yes) / len(yes):.1f}, "
        f"not n={len(no)} median {med_no:.1f} ms mean {sum(no) / len(no):.1f}: D={d:.3f} p={p:.3g}"
    )
    assert med_no >= FLOOR_MS and med_yes >= FLOOR_MS, "the hold shows on the wire"
    assert p > 0.001, f"the pause tells who could claim: D={d:.3f} p={p:.3g}"

    log = finished(db, control_people, control.table_id)
    yes, no, holds, gaps = delays(control_people[0], log)
    assert not any(holds)
    assert gaps[True] - gaps[False], f"the test cannot see the numbers' leak: {gaps}"
    d, p = ks_2samp(yes, no)
    print(f"control (no holds): claimable n={len(yes)}, not n={len(no)}: D={d:.3f} p={p:.3g}")
    assert p < 0.001, f"the test cannot see the leak it looks for: D={d:.3f} p={p:.3g}"

    # a table of bots with the same holds in its ruleset: no hold at all, full speed
    deadline = time.monotonic() + PLAY_SECONDS
    while read_log(db, bots.table_id)[-1].kind != "table_finished":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    log = read_log(db, bots.table_id)
    discards = [e for e in log if isinstance(e.event, K.TileDiscarded)]
    assert len(discards) > 60 and not any(e.event.hold_ms for e in discards)
