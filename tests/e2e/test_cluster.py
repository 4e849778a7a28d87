"""The cluster test (issue 11's proof): real processes on loopback — 3 gateway, 2 wall, 2 rules,
2 scoring and 2 matchmaking replicas on one PostgreSQL database — run a 16-entrant tournament
(bots and scripted gRPC players, each client calling the gateway replicas in a random order and
resuming on another when its stream breaks) and a few casual tables created directly on the
gateways, while the cluster is hurt: a gateway replica SIGKILLed mid-hand, another SIGSTOPped
for twice the lease and then SIGCONTed, a matchmaking replica (the ticker duty's holder)
SIGKILLed, a wall replica restarted (SIGTERM, then started again: on a new port, which the
gateways learn from the wall's address file, tests/support/cluster.py).

Afterwards, from the store: every table finished (none halted); each table's log is numbered
1..N without a gap or a duplicate; every client received exactly its seat's projection of the
log, each event once, in order, across reconnects; every finished hand replay-verifies (a
stale owner's event would break the replay); every acknowledged action is in the log; every
hand of the tournament is in the ledger once, with the log's payments; the books reconcile
and the balances sum to the grants minus the house."""

from __future__ import annotations

import random
import signal
import time
from collections import Counter

import grpc
import psycopg
import pytest
from mahjong.gateway.v1 import gateway_pb2_grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as mm_pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc

from infra.request_ids import with_request_ids
from infra.store import open_store
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.events.views import project
from services.gateway.domain.replay import export_hand, table_header
from services.gateway.tables import read_table_log
from services.gateway.tables.leases import LEASE_PREFIX
from services.gateway.verify import verify_hand
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tables.tags import tournament_group
from services.matchmaking.storage.duty import PREFIX as DUTY_PREFIX
from services.matchmaking.storage.duty import TICKER
from tests.support import probes
from tests.support.cluster import Cluster, Entrant, Played, SeatThread, player_channel
from tests.support.identity import sign_in
from tests.support.tables import mixed_seats, request_table

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LEASE_MS = 2000
STARTING_SILVER = 1000
ENTRANTS, PEOPLE = 16, 6  # the rest are matchmaking's bots
ROUNDS, HANDS_PER_ROUND = 3, 2
CASUAL_TABLES, CASUAL_HANDS = 3, 3  # the first with a scripted player, the others all bots
PLAY_SECONDS = 300
COMMON = ["--drain-seconds", "0", "--grace-seconds", "1", "--max-workers", "48"]
FLAGS = {
    "wall": COMMON,
    "rules": COMMON,
    "scoring": COMMON,
    "gateway": [
        *COMMON,
        "--lease-ms", str(LEASE_MS), "--bot-delay-ms", "30", "--auto-play-delay-ms", "0",
        "--discard-ms", "4000", "--claim-ms", "2000", "--between-hands-ms", "0",
    ],
    "matchmaking": [
        *COMMON,
        "--lease-ms", str(LEASE_MS), "--tick-seconds", "0.1", "--bot-fill-seconds", "600",
        "--queue-one-per-address", "off",  # every player joins from this machine
        "--starting-silver", str(STARTING_SILVER),
    ],
}  # fmt: skip
TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def wait_for(predicate, timeout: float, what: str, cluster: Cluster):
    return probes.wait_for(predicate, timeout, what, cluster.logs)


# --- the faults ----------------------------------------------------------------------------
def mid_hand(store, table_id: str) -> bool:
    """Whether the table's last event is inside a hand (after its start, before its result)."""
    log = read_table_log(store, table_id)
    for e in reversed(log):
        if isinstance(e.event, K.HandResult | K.TableFinished | K.TableHalted):
            return False
        if isinstance(e.event, K.HandStarted):
            return True
    return False


def busiest_gateway(store, candidates: list[str]) -> tuple[str, list[str]] | None:
    """The replica of ``candidates`` running the most tables that are mid-hand, and those."""
    running: dict[str, list[str]] = {}
    for lease in store.scan_leases(LEASE_PREFIX):
        if lease.held and lease.owner in candidates:
            table_id = lease.name[len(LEASE_PREFIX) :]
            if mid_hand(store, table_id):
                running.setdefault(lease.owner, []).append(table_id)
    if not running:
        return None
    owner = max(running, key=lambda o: len(running[o]))
    return owner, running[owner]


def hurt(cluster: Cluster, store, rounds_done, timeline: list[str], t0: float) -> None:
    """The faults, one after another while the tables play (``rounds_done()``: how many rounds
    of the tournament are over); ``timeline`` notes each, in seconds since ``t0`` (monotonic:
    the test's start)."""

    def note(text: str) -> None:
        timeline.append(f"{time.monotonic() - t0:6.1f} s  {text}")

    gateways = cluster.names("gateway")
    killed, tables = wait_for(
        lambda: busiest_gateway(store, gateways), 60, "a gateway running a hand", cluster
    )
    cluster.kill(killed)
    note(f"SIGKILL {killed} (mid-hand at {len(tables)} tables)")

    def taken_over() -> bool:
        leases = [store.get_lease(LEASE_PREFIX + t) for t in tables]
        return all(lease is None or lease.owner != killed for lease in leases)

    wait_for(taken_over, 60, f"{killed}'s tables to run elsewhere", cluster)
    note(f"{killed}'s tables run elsewhere")
    alive = [g for g in gateways if g != killed]
    paused, tables = wait_for(
        lambda: busiest_gateway(store, alive), 60, "a live gateway running a hand", cluster
    )
    epochs = {t: store.get_lease(LEASE_PREFIX + t).epoch for t in tables}
    proc = cluster.procs[paused].proc
    proc.send_signal(signal.SIGSTOP)
    note(f"SIGSTOP {paused} (mid-hand at {len(tables)} tables)")

    def moved() -> bool:
        leases = {t: store.get_lease(LEASE_PREFIX + t) for t in epochs}
        return all(v.epoch > epochs[t] and v.owner != paused for t, v in leases.items())

    try:
        time.sleep(2 * LEASE_MS / 1000)
        # Paused until each of its tables runs elsewhere: it wakes up a stale owner of each.
        # (Twice the lease is enough on a quiet machine; a loaded one takes the tables over
        # one by one more slowly.)
        wait_for(lambda: moved() or None, 30, f"{paused}'s tables to be taken over", cluster)
    finally:
        proc.send_signal(signal.SIGCONT)
    note(f"SIGCONT {paused}")
    # Matchmaking dies as it seats the next round: the ticker duty's holder.
    wait_for(lambda: rounds_done() >= 1, PLAY_SECONDS, "round 1 to end", cluster)
    duty = store.get_lease(DUTY_PREFIX + TICKER)
    assert duty is not None and duty.held, duty
    cluster.kill(duty.owner)
    note(f"SIGKILL {duty.owner} (holding the ticker duty, round 1 over)")
    wait_for(lambda: busiest_gateway(store, alive), 60, "a table of round 2 in a hand", cluster)
    away = cluster.restart("wall-1")
    note(f"wall-1 restarted mid-hand (away {away:.1f} s)")


def finished_log(store, table_id: str) -> bool:
    log = read_table_log(store, table_id)
    return bool(log) and isinstance(log[-1].event, K.TableFinished | K.TableHalted)


# --- the checks ----------------------------------------------------------------------------
def check_log(table_id: str, log: list[LoggedEvent]) -> dict[str, K.HandResult]:
    """Numbered 1..N, finished, never halted, every hand replay-verified; the settled hands."""
    assert [e.seq for e in log] == list(range(1, len(log) + 1)), f"{table_id}: gap or repeat"
    assert isinstance(log[-1].event, K.TableFinished), (table_id, log[-1].event.KIND)
    assert not [e for e in log if isinstance(e.event, K.TableHalted)], table_id
    header = table_header(table_id, log)
    hands = [e.event.hand_id for e in log if isinstance(e.event, K.HandStarted)]
    assert len(hands) == len(set(hands)) == log[-1].event.hands_played, table_id
    for hand_id in hands:
        verdict = verify_hand(export_hand(header, log, hand_id))
        assert verdict.ok, (table_id, hand_id, verdict.problems)
    return {e.event.hand_id: e.event for e in log if isinstance(e.event, K.HandResult)}


def check_client(played: Played, log: list[LoggedEvent]) -> None:
    """The client got its seat's projection of the log, once each, in order; each action the
    gateway acknowledged is a decision of that seat in the log, in the window it was sent."""
    p = played.player
    seen = [e.seq for e in log if project(e.event, played.seat) is not None]
    where = f"{played.table_id} seat {played.seat} ({p.name}, resumed {len(p.log.subscribes)}x)"
    assert p.log.sequences == seen, where
    decisions = {
        e.event.request_id: e.seq
        for e in log
        if isinstance(e.event, K.ActionTaken) and e.event.seat == played.seat and not e.event.auto
    }
    unused = set(decisions)
    for ack in p.acks:
        # the answer names the last event the seat sees once its action was applied (never a
        # number it does not see: a claim window's other prompts), so a decision of the log
        # made after what the seat had seen, and at or after the number it was answered
        q = decisions.get(ack.request_id)
        assert q is not None and ack.request_id in unused, (where, ack, decisions)
        assert ack.last_sequence < q and ack.sequence in seen, (where, ack, q)
        assert max(s for s in seen if s <= q) <= ack.sequence, (where, ack, q)
        unused.remove(ack.request_id)
    # A decision applied with no acknowledgement: only an answer lost with its connection.
    lost = [r for r in p.log.rejections if r.code in TRANSIENT]
    assert len(unused) <= len(lost), (where, unused, p.log.rejections)


def check_books(store, url: str, tournament, tables: dict[str, dict], people, casual) -> None:
    group = tournament_group(tournament.tournament_id)
    reports = ledger.hand_reports(store, group)
    ids = Counter(r.hand_id for r in reports)
    assert all(n == 1 for n in ids.values()), ids
    settled = {h: (tid, r) for tid in tables for h, r in tables[tid].items()}
    tournament_hands = {h for h, (tid, _) in settled.items() if tid not in casual}
    assert set(ids) == tournament_hands
    for report in reports:
        table_id, result = settled[report.hand_id]
        assert report.table_id == table_id
        assert (report.payments, report.house) == (tuple(result.payments), result.house)
    for table_id, results in tables.items():
        want = 0 if table_id in casual else len(results)
        assert ledger.hands_of_table(store, table_id) == want, table_id
    assert ledger.reconcile(store) == []
    with psycopg.connect(url) as conn:
        balances = dict(
            conn.execute(
                "SELECT account, sum(balance) FROM ledger_accounts WHERE asset = 'silver' "
                "GROUP BY account"
            ).fetchall()
        )
        (grants,) = conn.execute(
            "SELECT coalesce(sum(amount), 0) FROM ledger_entries "
            "WHERE kind = %s AND asset = 'silver' AND account <> %s",
            (ledger.GRANT, ledger.HOUSE),
        ).fetchone()
    assert grants == len(people) * STARTING_SILVER
    # All silver came from the house (grants), and the bots' sides are the house's: what the
    # people hold is what the house is short.
    house = balances.pop(ledger.HOUSE, 0)
    assert sum(balances.values()) == -house, (balances, grants, house)
    entrants = {e.player_id for e in tournament.entrants}
    assert set(balances) <= entrants | {pid for pid, _ in people}
    chips = {s.player_id: s.chips for s in tournament.final_ranking}
    from_ledger = ledger.chips_by_player(store, group)
    assert chips == {p: from_ledger.get(p, 0) for p in entrants}
    for pid, _ in people:
        assert ledger.balance(store, pid) == STARTING_SILVER + chips[pid], pid


# --- the scenario --------------------------------------------------------------------------
def casual_tables(cluster: Cluster, rng: random.Random):
    """Casual tables made on the gateways (not matchmaking's), the first with a scripted
    player in seat 0 (played in a thread that keeps its error), the others all bots."""
    channel = player_channel(cluster.player_target("gateway", rng))
    stub = gateway_pb2_grpc.GatewayServiceStub(channel)
    made, threads = [], []
    for i in range(CASUAL_TABLES):
        seats = mixed_seats(1 if i == 0 else 0, f"casual{i}-")
        t = request_table(stub, seats, max_hands=CASUAL_HANDS, tag=f"casual/{i}")
        made.append(t.table_id)
        if i == 0:
            threads.append(SeatThread(channel, t.table_id, t.seat_tokens[0], 0, "casual"))
            threads[-1].start()
    return channel, made, threads


def failure(thread) -> str:
    """What ended a scripted client's play (an Entrant, a SeatThread), for the test's report."""
    what = f"{thread.label}: {thread.error!r}"
    player = getattr(thread, "player", None)
    if player is not None:
        log = player.log
        what += (
            f" (table {player.table_id}, last event {player.last_sequence}, resumed after "
            f"{log.subscribes}, rejections {[(r.code.name, r.message) for r in log.rejections]})"
        )
    return what


def latest_deliveries(every_played, logs, began_wall: float, top: int = 3) -> list[str]:
    """The scripted clients' latest deliveries: an event received long after it was written
    (a stream that went quiet), with the client's subscriptions, for the test's report."""
    worst = []
    for p in every_played:
        log = logs[p.table_id]
        for at, seq in p.player.received:
            worst.append((at - log[seq - 1].t / 1000, at, seq, p))
    worst.sort(key=lambda w: w[0], reverse=True)
    out = []
    for lag, at, seq, p in worst[:top]:
        subs = [(round(t - began_wall, 2), after) for t, after in p.player.subscribed]
        out.append(
            f"  {lag:5.1f} s late: {p.player.name} at {p.table_id} event {seq} (received at "
            f"{at - began_wall:.1f} s; subscribed at, after: {subs})"
        )
    return out


def check_everyone_played(final, people, entrants: list[Entrant], began_wall: float) -> None:
    """Every person played every tournament table it was seated at (a client that reached a
    table too late finds it played by its timers: named here with its entrant's trace)."""
    label_of = {pid: f"P{i}" for i, (pid, _) in enumerate(people)}
    seated = {
        (x.table_id, label_of[p]) for x in final.tables for p in x.player_ids if p in label_of
    }
    played = {(p.table_id, e.label) for e in entrants for p in e.played}
    by_label = {e.label: e for e in entrants}
    missing = [
        f"{who} never played {table_id}; its trace:\n"
        + "\n".join(f"  {t - began_wall:7.2f} s  {what}" for t, what in by_label[who].trace)
        for table_id, who in sorted(seated - played)
    ]
    assert not missing, "\n".join(missing)


def test_a_tournament_and_casual_tables_survive_faults_across_replicas(tmp_path, postgres_url):
    began, began_wall = time.monotonic(), time.time()
    rng = random.Random(11)
    cluster = Cluster(tmp_path, postgres_url, flags=FLAGS)
    store = open_store(postgres_url, pool_size=2)
    channels: list[grpc.Channel] = []
    try:
        cluster.start()
        up = time.monotonic() - began
        mm_channel = player_channel(cluster.player_target("matchmaking", rng))
        channels.append(mm_channel)
        mm = mm_grpc.MatchmakingServiceStub(with_request_ids(mm_channel))
        people = []
        for i in range(PEOPLE):
            player, token = sign_in(mm, f"P{i}")
            people.append((player.player_id, token))
        creator = people[0][1]
        t = mm.CreateTournament(
            mm_pb.CreateTournamentRequest(
                session_token=creator, name="Cluster Cup", stake=1, rounds=ROUNDS,
                hands_per_round=HANDS_PER_ROUND, bots=ENTRANTS - PEOPLE,
            ),
            timeout=10,
        ).tournament  # fmt: skip
        tid = t.tournament_id
        for _, token in people:  # each person enters themselves
            join = mm_pb.JoinTournamentRequest(session_token=token, tournament_id=tid)
            t = mm.JoinTournament(join, timeout=10).tournament
        assert len(t.entrants) == ENTRANTS
        deadline = time.monotonic() + PLAY_SECONDS
        entrants = [
            Entrant(
                cluster.player_target("matchmaking", rng),
                tid,
                tok,
                f"P{i}",
                deadline,
                gateway=cluster.player_target("gateway", rng),
            )
            for i, (_, tok) in enumerate(people)
        ]
        for e in entrants:
            e.start()
        mm.StartTournament(
            mm_pb.StartTournamentRequest(session_token=creator, tournament_id=tid), timeout=10
        )
        gw_channel, casual, casual_threads = casual_tables(cluster, rng)
        channels.append(gw_channel)

        def rounds_done() -> int:
            got = mm.GetTournament(
                mm_pb.GetTournamentRequest(tournament_id=tid, session_token=creator), timeout=10
            )
            return len(got.tournament.standings)

        timeline: list[str] = []
        hurt(cluster, store, rounds_done, timeline, began)

        def finished():
            got = mm.GetTournament(
                mm_pb.GetTournamentRequest(tournament_id=tid, session_token=creator), timeout=10
            )
            done = got.tournament.state == mm_pb.TOURNAMENT_STATE_FINISHED
            return got.tournament if done else None

        final = wait_for(finished, PLAY_SECONDS, "the tournament's final ranking", cluster)
        for table_id in casual:
            wait_for(
                lambda table_id=table_id: finished_log(store, table_id),
                PLAY_SECONDS,
                f"casual table {table_id} to finish",
                cluster,
            )
        for th in [*entrants, *casual_threads]:
            th.join(60)
            assert not th.is_alive(), f"{th.name} still playing"
        errors = [failure(th) for th in [*entrants, *casual_threads] if th.error is not None]
        assert not errors, "\n".join(errors)
        played_at = time.monotonic() - began

        assert len(final.tables) == ENTRANTS // 4 * ROUNDS
        assert all(x.finished and x.hands_played == HANDS_PER_ROUND for x in final.tables)
        table_ids = [x.table_id for x in final.tables] + casual
        logs = {table_id: read_table_log(store, table_id) for table_id in table_ids}
        for table_id in casual:
            assert logs[table_id][-1].event.hands_played == CASUAL_HANDS
        settled = {table_id: check_log(table_id, log) for table_id, log in logs.items()}
        every_played = [p for th in [*entrants, *casual_threads] for p in th.played]
        check_everyone_played(final, people, entrants, began_wall)
        assert len(every_played) == PEOPLE * ROUNDS + 1
        for played in every_played:
            assert played.player.log.table_finished is not None, played.table_id
            check_client(played, logs[played.table_id])
        check_books(store, postgres_url, final, settled, people, set(casual))

        resumed = sum(len(p.player.log.subscribes) - 1 for p in every_played)
        # How late the scripted clients were: to a table once it started, and to an event once
        # it was written (a client later than a table's timers would miss its seat).
        joined = max(p.player.began - logs[p.table_id][0].t / 1000 for p in every_played)
        late = latest_deliveries(every_played, logs, began_wall)
        acks = sum(len(p.player.acks) for p in every_played)
        events = sum(len(log) for log in logs.values())
        hands = sum(len(s) for s in settled.values())
        print(
            f"\ncluster test: {len(logs)} tables, {hands} hands, {events} events, "
            f"{len(every_played)} scripted seats ({acks} actions acknowledged, "
            f"{resumed} streams resumed, {sum(e.watches for e in entrants)} tournament "
            f"watches); up in {up:.1f} s, played in {played_at:.1f} s, "
            f"total {time.monotonic() - began:.1f} s; the latest client joined a table "
            f"{joined:.1f} s after it started"
        )
        print("\n".join(timeline))
        print("latest deliveries:\n" + "\n".join(late))
    finally:
        for c in channels:
            c.close()
        for p in cluster.procs.values():  # a paused replica must not outlive the test
            if p.proc and p.proc.poll() is None:
                p.proc.send_signal(signal.SIGCONT)
        cluster.stop()
        store.close()
