"""Matchmaking benchmark: 10,000 queued tickets formed into tables, tables per second; and the
ledger behind real matchmaking processes on PostgreSQL.

Tickets are queued first (not timed); then one ``tick`` forms every table and
creates it through the allocator port (an in-process allocator, so the gateway's own speed is
not measured). Runs on the in-memory store and on SQLite (the embedded default), and times the
pure planning step alone for comparison.

The replicas part (when the test PostgreSQL server is reachable): RecordHand calls per second
over gRPC from 8 client threads (each its own table and players) to 1 matchmaking process,
then to 2 on the same database in the same run; and GetBalances' latency (median) for an
account with 10 entries and one with 10,000 (the balance is one row: it should not grow). The
replicas start first; the readers sign in over gRPC (a player reads their own silver with their
session), and every account is funded before its hands are recorded (a loser pays only what
they hold), none of it timed.

The watchers part (issue 29: a tournament watched by 10,000 players at once): one matchmaking
process (a memory store; its tables go to a fake gateway in a process of its own, which answers
CreateTable at once) on the asyncio server model, then on the threaded one. 10,000 players sign
in over gRPC (TLS; not timed); 1,000 of them join a tournament that bots fill to 2,000 entrants;
every player opens WatchTournament (grpc.aio, many streams on each of 8 connections), in waves
of a few hundred. Printed per model: the streams held (the threaded model, asked for 300,
refuses those past its handler threads, ``RESOURCE_EXHAUSTED``), the replica's RSS per open
stream and its CPU per second while they idle; one change (4 more bots) delivered to every
watcher: the replica's CPU seconds and the time until each watcher had it (p50/p99/max); then
the creator starts the tournament: round one is seated and its 500 tables created on the fake
gateway (in the CPU figure too), the replica's CPU seconds until every watcher saw the round and
every entrant watcher its assignment, and the time until each had (p50/p99/max; a watcher gets
at most one message a second, so a seat that comes soon after the round's first message waits
for that second). Beside the replica's CPU, this process's (the clients reading every stream):
on 2 cores, a slow client delays delivery. ``MAHJONG_BENCH_QUICK=1``: 600 players, 100 entrant
watchers, 400 entrants.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import grpc
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as mpb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as mpb_grpc

from infra.config import ServiceSpec
from infra.interceptor import internal_metadata, stream_limit
from infra.logs import configure_logging
from infra.request_ids import with_request_ids
from infra.store import open_store
from infra.supervisor import DEV_TLS_ROOT, ServiceProcess, run_token
from infra.tls import player_credentials
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HandReport
from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.domain.tables.allocator import TableAllocation, TableRequest
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from services.matchmaking.storage import queue_records
from services.matchmaking.storage.table_records import TableRecords
from tests.bench import concurrent_rate, postgres_url
from tests.doubles.clock import ManualClock
from tests.support.identity import id_token, issuer_config, sign_in, unique_subject
from tests.support.tls import as_player, to_process

TICKETS = 10_000
STAKES = (1, 2, 4, 8)  # four queues of one ruleset, by level


class CountingAllocator:
    """Hands out table ids in memory (the bench measures matchmaking, not the gateway)."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.created = 0

    def create_table(self, request: TableRequest) -> TableAllocation:
        self.created += 1
        table_id = f"t{next(self._ids)}"
        return TableAllocation(table_id, tuple(f"tok-{table_id}-{i}" for i in range(4)), "gw:1")


def run(store_url: str, tickets: int = TICKETS) -> dict[str, float]:
    store = open_store(store_url)
    clock = ManualClock()
    alloc = CountingAllocator()
    mm = Matchmaking(
        store, alloc, clock, MatchmakingConfig(issuers=(issuer_config(),), token_secret=b"bench")
    )
    t0 = time.perf_counter()
    for i in range(tickets):
        # Straight into the queues (registration and level checks are not what is measured).
        stake = STAKES[i % len(STAKES)]
        queues.join(
            mm.queue_records, f"tk-{i}", f"p-{i}", f"player {i}", "shanghai-qiaoma", stake, clock()
        )
        if i % 97 == 0:
            clock.advance(0.01)
    queued = time.perf_counter() - t0
    t1 = time.perf_counter()
    mm.tick()
    formed = time.perf_counter() - t1
    assigned = sum(
        1 for _, rec in store.scan(queue_records.TICKETS) if b'"state":"assigned"' in rec.value
    )
    store.close()
    return {
        "tables": alloc.created,
        "assigned": assigned,
        "seconds": formed,
        "tables_per_s": alloc.created / formed,
        "join_per_s": tickets / queued,
    }


def plan_only(tickets: int = TICKETS) -> dict[str, float]:
    waiting = [(f"t{i}", i * 0.001) for i in range(tickets)]
    t0 = time.perf_counter()
    reps = 20
    for _ in range(reps):
        tables = queues.plan_tables(waiting, 1e9, 30.0)
    seconds = (time.perf_counter() - t0) / reps
    return {"tables": len(tables), "seconds": seconds, "tables_per_s": len(tables) / seconds}


CLIENTS = 8
BIG = 10_000
FUNDS = 10**9  # silver granted to each bench account before the hands
NO_SYNC_COMMIT = "options=-c%20synchronous_commit%3Doff"


def _table(i: int) -> tuple[str, str, tuple[str, ...]]:
    return f"bench-t{i}", f"quick/bench{i}", tuple(f"bench-p{i}-{s}" for s in range(4))


def _replica(url: str, log_dir: Path, name: str):
    from tests.support.stacks import service_process

    args = ["--gateway-addr", "127.0.0.1:1", "--replica-id", name, "--drain-seconds", "0"]
    args += ["--log-level", "warning", "--max-workers", "32"]
    args += ["--flood-player-rate", "0", "--flood-address-rate", "0"]  # one player reads 300x
    return service_process("matchmaking", log_dir, store_url=url, extra=args, log_name=name)


def record_hand_rate(procs: list[ServiceProcess], run: str) -> float:
    """RecordHand calls per second, ``CLIENTS`` threads spread over ``procs``, each calling as
    the gateway does (its certificate on the internal port, and the internal token)."""
    metadata = internal_metadata(run_token())
    counter = itertools.count()

    def worker(i: int):
        channel = to_process(procs[i % len(procs)], "gateway")
        stub = mpb_grpc.MatchmakingServiceStub(channel)
        table_id, tag, ids = _table(i)

        def one() -> int:
            n = next(counter)
            pay = [-1, -1, -1, -1]
            pay[n % 4] = 3
            req = mpb.RecordHandRequest(
                hand_id=f"{run}-{n}", table_id=table_id, tag=tag, player_ids=ids, payments=pay
            )
            stub.RecordHand(req, timeout=10, metadata=metadata)
            return 1

        return one

    return concurrent_rate(worker, CLIENTS)


def balance_latency_us(address: str, reader: tuple[str, str], reads: int = 300) -> float:
    """GetBalances' median latency for a player reading their own silver with their session."""
    channel = as_player(address)  # a player's read, on the public port (server TLS)
    stub = mpb_grpc.MatchmakingServiceStub(channel)
    player_id, session = reader
    req = mpb.GetBalancesRequest(session_token=session, player_ids=[player_id])
    (own,) = stub.GetBalances(req, timeout=10).balances
    assert own.own and own.silver > 0, own
    times = []
    for _ in range(reads):
        t0 = time.perf_counter()
        stub.GetBalances(req, timeout=10)
        times.append(time.perf_counter() - t0)
    channel.close()
    return statistics.median(times) * 1e6


def _signed_in(address: str, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(player_id, session_token)`` of each name, signed in over gRPC as a new identity."""
    channel = with_request_ids(as_player(address))
    stub = mpb_grpc.MatchmakingServiceStub(channel)
    try:
        out = []
        for name in names:
            player, session = sign_in(stub, name)
            out.append((player.player_id, session))
        return out
    finally:
        channel.close()


def _hands(store, prefix: str, ids: tuple[str, ...], count: int) -> None:
    """``count`` settled hands of the four players (seat 0 wins 3), not timed."""
    for j in range(count):
        report = HandReport(f"{prefix}-{j}", "t", "x", ids, (3, -1, -1, -1))
        ledger.record_hand(store, report, 1.0)


def replicas_figures(url: str, log_dir: Path) -> dict[str, float]:
    store = open_store(url, pool_size=2)
    lazy = open_store(f"{url}?{NO_SYNC_COMMIT}", pool_size=4)
    procs = []
    try:
        for i in range(CLIENTS):
            table_id, tag, ids = _table(i)
            allocated_tables.record(
                TableRecords(store), allocated_tables.AllocatedTable(table_id, tag, ids, "")
            )
            for pid in ids:  # a loser pays only what they hold: every seat is funded
                ledger.grant(store, pid, "bench", FUNDS, 1.0)
        procs = [_replica(url, log_dir, n).start() for n in ("mm-a", "mm-b")]
        for p in procs:
            p.wait_ready(60)
        a = procs[0].address
        # Players sign in over gRPC (GetBalances needs a session; a player sees their own
        # silver), then are funded and given their hands (not timed).
        few = _signed_in(a, tuple(f"bench-f{s}" for s in range(4)))
        many = _signed_in(a, tuple(f"bench-m{s}" for s in range(4)))
        for pid, _ in few + many:
            ledger.grant(lazy, pid, "bench", FUNDS, 1.0)
        _hands(lazy, "few", tuple(pid for pid, _ in few), 10)
        _hands(lazy, "many", tuple(pid for pid, _ in many), BIG)  # 10,000 entries to read
        out = {
            "RecordHand/s, 1 replica": record_hand_rate(procs[:1], "one"),
            "RecordHand/s, 2 replicas": record_hand_rate(procs, "two"),
            "balance, 10 entries (us)": balance_latency_us(a, few[0]),
            f"balance, {BIG:,} entries (us)": balance_latency_us(a, many[0]),
        }
        assert ledger.balance(store, many[0][0]) > FUNDS  # seat 0 won every hand
        assert len(ledger.entries(store, many[0][0])) >= BIG  # + the grants
        assert all(ledger.hands_of_table(store, _table(i)[0]) for i in range(CLIENTS))
        assert ledger.reconcile(store) == []
        return out
    finally:
        for p in procs:
            p.stop()
        lazy.close()
        store.close()


# --- WatchTournament held by 10,000 players (issue 29) ----------------------------------------
QUICK = os.environ.get("MAHJONG_BENCH_QUICK") == "1"
WATCHERS = 600 if QUICK else 10_000  # signed-in players, one WatchTournament each
ENTRANT_WATCHERS = 100 if QUICK else 1_000  # of them, entered in the tournament
ENTRANTS = 400 if QUICK else 2_000  # the tournament's size (bots make up the rest)
THREADS_WATCHERS = 300  # streams asked of the threaded model (it holds stream_limit(256))
WATCH_CHANNELS = 8
WAVE = 250  # streams opened at once (as players arrive)
CALLS_AT_ONCE = 32  # sign-ins and joins in flight
CLK_TCK = os.sysconf("SC_CLK_TCK")
QUIET_S = 1.2  # past a watcher's one message a second before each change


class _Tables(gateway_pb2_grpc.GatewayServiceServicer):
    """A gateway that creates every table at once (the bench measures matchmaking)."""

    def CreateTable(self, request, context):
        return gateway_pb2.CreateTableResponse(
            table_id=f"tbl-{request.request_id}",
            seat_tokens=[f"seat-{i}" for i in range(4)],
            gateway_address="gw.bench:1",
        )


def _serve_tables(conn) -> None:
    """A child process (``multiprocessing`` spawn): the fake gateway until told to stop, its
    internal address sent first (apart from the clients' process, whose streams would slow its
    answers)."""
    configure_logging("warning")
    with _fake_gateway() as (gateway, _channel):
        conn.send(gateway.internal_address)
        conn.recv()


@contextlib.contextmanager
def _fake_gateway_process():
    """The fake gateway in a process of its own: yields its internal address."""
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_serve_tables, args=(there,), daemon=True)
    child.start()
    try:
        if not here.poll(60):
            raise TimeoutError("the fake gateway did not start")
        yield here.recv()
    finally:
        with contextlib.suppress(OSError):
            here.send("stop")
        child.join(10)
        if child.is_alive():
            child.kill()


def _fake_gateway():
    from tests.support.grpc_server import serving

    spec = ServiceSpec(
        name="gateway",
        default_port=0,
        default_metrics_port=0,
        add_to_server=lambda server, _cfg: gateway_pb2_grpc.add_GatewayServiceServicer_to_server(
            _Tables(), server
        ),
        service_names=["mahjong.gateway.v1.GatewayService"],
        default_internal_port=1,  # two ports, as the gateway (matchmaking calls the internal one)
    )
    return serving(spec, max_workers=32)


def _proc_cpu(pid: int) -> float:
    """utime + stime of a process (every thread), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _proc_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclass
class _Watch:
    """One watcher's stream: when its messages came (time.perf_counter())."""

    token: str
    entrant: bool
    call: object = None
    first: float = 0.0
    bots: float = 0.0  # the message with the 4 bots added
    seated: float = 0.0  # the message of round one
    assigned: float = 0.0  # the message with its seat
    error: str = ""


async def _watch(stub, tid: str, w: _Watch, entrants: int, opened: asyncio.Future) -> None:
    w.call = call = stub.WatchTournament(
        mpb.WatchTournamentRequest(tournament_id=tid, session_token=w.token), timeout=900
    )
    try:
        async for msg in call:
            now = time.perf_counter()
            if not w.first:
                w.first = now
                opened.set_result(None)
            t = msg.tournament
            if not w.bots and t.entrant_count == entrants:
                w.bots = now
            if not w.seated and t.current_round >= 1:
                w.seated = now
            if not w.assigned and msg.HasField("assignment"):
                w.assigned = now
    except grpc.aio.AioRpcError as exc:
        w.error = exc.code().name
    except asyncio.CancelledError:
        pass
    finally:
        if not opened.done():
            opened.set_result(None)


async def _until(predicate, seconds: float, what: str, ws: list[_Watch]) -> None:
    deadline = time.perf_counter() + seconds
    while not predicate():
        if time.perf_counter() > deadline:
            ended = Counter(w.error for w in ws if w.error)
            raise TimeoutError(
                f"no {what} within {seconds:.0f} s: of {len(ws)} watchers {ended or 'none'} "
                f"ended; {sum(1 for w in ws if w.bots)} had the change, "
                f"{sum(1 for w in ws if w.seated)} round one, "
                f"{sum(1 for w in ws if w.assigned)} a seat"
            )
        await asyncio.sleep(0.05)


def _spread(times: list[float]) -> str:
    if not times:
        return "(none)"
    q = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else times * 99
    return f"p50 {q[49]:6.2f} s  p99 {q[98]:6.2f} s  max {max(times):6.2f} s"


async def _watched_round(proc: ServiceProcess, watchers: int, entrants: int) -> dict:
    """The watchers part against one matchmaking process (see the module's docstring)."""
    pid = proc.proc.pid  # type: ignore[union-attr]
    creds = player_credentials(str(DEV_TLS_ROOT / "ca.crt"))
    own = [("grpc.use_local_subchannel_pool", 1)]  # a connection each
    channels = [
        grpc.aio.secure_channel(proc.address, creds, options=own) for _ in range(WATCH_CHANNELS)
    ]
    stubs = [mpb_grpc.MatchmakingServiceStub(c) for c in channels]
    stub = stubs[0]
    out: dict = {}
    try:
        gate = asyncio.Semaphore(CALLS_AT_ONCE)

        async def signed_in(i: int) -> str:
            name = f"w{i}"
            async with gate:
                r = await stubs[i % WATCH_CHANNELS].SignIn(
                    mpb.SignInRequest(
                        id_token=id_token(name, unique_subject(name)),
                        display_name=name,
                        request_id=uuid.uuid4().hex,
                    ),
                    timeout=120,
                )
            return r.session.session_token

        t0 = time.perf_counter()
        creator = await signed_in(-1)
        tokens = await asyncio.gather(*(signed_in(i) for i in range(watchers)))
        out["sign_in_s"] = time.perf_counter() - t0
        tid = (
            await stub.CreateTournament(
                mpb.CreateTournamentRequest(
                    session_token=creator,
                    name="Watched",
                    stake=1,
                    rounds=1,
                    hands_per_round=1,
                    request_id=uuid.uuid4().hex,
                ),
                timeout=60,
            )
        ).tournament.tournament_id

        async def joined(token: str) -> None:
            async with gate:
                await stub.JoinTournament(
                    mpb.JoinTournamentRequest(
                        session_token=token, tournament_id=tid, request_id=uuid.uuid4().hex
                    ),
                    timeout=120,
                )

        t0 = time.perf_counter()
        joining = min(ENTRANT_WATCHERS, watchers)
        await asyncio.gather(*(joined(tok) for tok in tokens[:joining]))

        async def bots(count: int) -> None:
            await stub.AddTournamentBots(
                mpb.AddTournamentBotsRequest(
                    session_token=creator,
                    tournament_id=tid,
                    count=count,
                    request_id=uuid.uuid4().hex,
                ),
                timeout=300,
            )

        await bots(entrants - joining - 4)  # the last 4: the change measured below
        out["entered_s"] = time.perf_counter() - t0
        out["joined"] = joining

        # Every player watches: opened in waves, each wave's first messages awaited.
        ws = [_Watch(tok, i < joining) for i, tok in enumerate(tokens)]
        loop = asyncio.get_running_loop()
        rss0 = _proc_rss(pid)
        t0 = time.perf_counter()
        tasks = []
        for start in range(0, len(ws), WAVE):
            firsts = []
            for i in range(start, min(len(ws), start + WAVE)):
                opened = loop.create_future()
                firsts.append(opened)
                tasks.append(
                    asyncio.create_task(
                        _watch(stubs[i % WATCH_CHANNELS], tid, ws[i], entrants, opened)
                    )
                )
            await asyncio.gather(*firsts)
        out["open_s"] = time.perf_counter() - t0
        held = [w for w in ws if w.first and not w.error]
        out["held"] = len(held)
        out["refused"] = sorted({w.error for w in ws if w.error})
        await asyncio.sleep(2.0)  # settled: what the replica holds for them
        out["rss_per_stream"] = (_proc_rss(pid) - rss0) / max(1, len(held))
        cpu0 = _proc_cpu(pid)
        await asyncio.sleep(5.0)
        out["idle_cpu_per_s"] = (_proc_cpu(pid) - cpu0) / 5.0

        # One change (4 more bots: the tournament's message changes) to every watcher.
        cpu0, t0, mine = _proc_cpu(pid), time.perf_counter(), time.process_time()
        await bots(4)
        await _until(lambda: all(w.bots for w in held), 120, "change to every watcher", held)
        out["change_cpu_s"] = _proc_cpu(pid) - cpu0
        out["change_client_cpu_s"] = time.process_time() - mine
        out["change_times"] = [w.bots - t0 for w in held]

        # The round: seated, its tables created, every entrant watcher told its seat.
        await asyncio.sleep(QUIET_S)
        seated = [w for w in held if w.entrant]
        cpu0, t0, mine = _proc_cpu(pid), time.perf_counter(), time.process_time()
        await stub.StartTournament(
            mpb.StartTournamentRequest(
                session_token=creator, tournament_id=tid, request_id=uuid.uuid4().hex
            ),
            timeout=120,
        )
        out["start_s"] = time.perf_counter() - t0
        await _until(
            lambda: all(w.seated for w in held) and all(w.assigned for w in seated),
            180,
            "round seen by every watcher and every entrant watcher's seat",
            held,
        )
        out["round_cpu_s"] = _proc_cpu(pid) - cpu0
        out["round_client_cpu_s"] = time.process_time() - mine
        out["round_s"] = time.perf_counter() - t0
        out["assigned_times"] = [w.assigned - t0 for w in seated]
        out["seated_times"] = [w.seated - t0 for w in held]
        out["entrant_watchers"] = len(seated)
        out["ended"] = sum(1 for w in held if w.error)
        for w in held:
            w.call.cancel()  # type: ignore[attr-defined]
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for c in channels:
            await c.close()
    return out


def _watch_replica(gateway_address: str, log_dir: Path, model: str) -> ServiceProcess:
    from tests.support.stacks import service_process

    args = ["--gateway-addr", gateway_address, "--server-model", model]
    args += ["--log-level", "warning", "--drain-seconds", "0", "--grace-seconds", "1"]
    # every player calls from this one address: no per-address limits
    args += ["--flood-player-rate", "0", "--flood-address-rate", "0", "--streams-per-address", "0"]
    args += ["--max-streams-per-address", "0", "--max-connections-per-address", "0"]
    return service_process("matchmaking", log_dir, extra=args, log_name=f"mm-{model}")


def watchers_figures(log_dir: Path) -> dict[str, dict]:
    """The watchers part on each server model (asyncio: all watchers; threads: as many as it
    holds of :data:`THREADS_WATCHERS`)."""
    results = {}
    with _fake_gateway_process() as gateway_address:
        for model, watchers in (("asyncio", WATCHERS), ("threads", THREADS_WATCHERS)):
            proc = _watch_replica(gateway_address, log_dir, model).start()
            try:
                proc.wait_ready(60)
                results[model] = asyncio.run(_watched_round(proc, watchers, ENTRANTS))
                results[model]["asked"] = watchers
            finally:
                proc.stop()
    return results


def print_watchers(results: dict[str, dict]) -> None:
    for model, r in results.items():
        held, asked = r["held"], r["asked"]
        refused = f", the rest refused {'/'.join(r['refused'])}" if r["refused"] else ""
        print(f"  {model} model: {held:,} of {asked:,} WatchTournament streams held{refused}")
        print(
            f"    set-up: {asked:,} sign-ins {r['sign_in_s']:.1f} s, {r['joined']:,} joins "
            f"+ bots to {ENTRANTS - 4:,} entrants {r['entered_s']:.1f} s, streams opened in "
            f"{r['open_s']:.1f} s"
        )
        print(
            f"    RSS per open stream {r['rss_per_stream'] / 1024:8.1f} KiB   "
            f"CPU while they idle {r['idle_cpu_per_s']:.3f} s/s"
        )
        print(
            f"    a change (4 bots) to {held:,} watchers: {r['change_cpu_s']:.2f} CPU s "
            f"(the client's {r['change_client_cpu_s']:.2f}), delivered {_spread(r['change_times'])}"
        )
        print(
            f"    round 1 seated ({ENTRANTS:,} entrants, {ENTRANTS // 4:,} tables): "
            f"{r['round_cpu_s']:.2f} CPU s (the client's {r['round_client_cpu_s']:.2f}) until "
            f"all {held:,} watchers had it and the {r['entrant_watchers']:,} entrant watchers "
            f"their seats ({r['round_s']:.1f} s)"
        )
        print(f"    StartTournament answered in {r['start_s']:.2f} s (round one seated)")
        print(f"    a watcher's first message of round one:  {_spread(r['seated_times'])}")
        print(f"    an entrant watcher's assignment:         {_spread(r['assigned_times'])}")
    a, t = results.get("asyncio"), results.get("threads")
    if a and t:
        print(
            f"  streams one replica holds: asyncio {a['held']:,}, threads {t['held']:,} "
            f"(stream_limit(256) = {stream_limit(256)})"
        )


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.bench.bench_matchmaking [TICKETS]``; the bench runner calls main()."""
    tickets = int(argv[0]) if argv else TICKETS
    configure_logging("warning")  # one info line per table would be measured too
    print(f"matchmaking: {tickets} queued tickets in {len(STAKES)} queues formed into tables")
    pure = plan_only(tickets)
    print(
        f"  planning only (pure)      {pure['tables']:>6} tables  {pure['seconds'] * 1000:8.2f} ms"
        f"  {pure['tables_per_s']:>12,.0f} tables/s"
    )
    results = {"memory": run("memory://", tickets)}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = run(f"sqlite:///{Path(tmp) / 'bench.db'}", tickets)
    for name, r in results.items():
        assert r["assigned"] == tickets, r
        print(
            f"  {name:<6} store, full path {r['tables']:>6} tables  {r['seconds'] * 1000:8.1f} ms"
            f"  {r['tables_per_s']:>12,.0f} tables/s   (queueing {r['join_per_s']:,.0f} tickets/s)"
        )
    mem, sql = results["memory"]["tables_per_s"], results["sqlite"]["tables_per_s"]
    print(
        f"  ratio memory/sqlite {mem / sql:.1f}x; "
        f"pure planning is {pure['tables_per_s'] / mem:.0f}x the full path on memory"
    )
    print(f"matchmaking replicas on PostgreSQL: RecordHand over gRPC, {CLIENTS} client threads")
    with postgres_url() as url, tempfile.TemporaryDirectory() as logs:
        if url is not None:
            r = replicas_figures(url, Path(logs))
            for name, value in r.items():
                print(f"  {name:<30}{value:>12,.0f}")
            one, two = r["RecordHand/s, 1 replica"], r["RecordHand/s, 2 replicas"]
            few, many = r["balance, 10 entries (us)"], r[f"balance, {BIG:,} entries (us)"]
            print(f"  RecordHand 2 replicas / 1: {two / one:.2f}x")
            print(f"  balance read with {BIG:,} entries / with 10: {many / few:.2f}x")
    print(
        f"matchmaking: WatchTournament held by {WATCHERS:,} signed-in players on one replica "
        f"(memory store, a fake gateway)"
    )
    with tempfile.TemporaryDirectory() as logs:
        print_watchers(watchers_figures(Path(logs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
