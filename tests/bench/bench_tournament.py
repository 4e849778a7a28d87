"""A large tournament through a real cluster (issue 29, "Measure").

The cluster: 2 wall, 2 rules, 1 scoring, 3 gateway and 2 matchmaking replicas as real
processes on loopback (tests/support/cluster.py: mutual TLS between the services, the internal
token, address files), all on ONE throw-away PostgreSQL database; the gateways' bots at full
speed (``--bot-delay-ms 0``, no pause between hands). Through the matchmaking protos only — a
creator signed in through the development issuer, CreateTournament with ``bots = N``, 3 rounds
of one hand, then StartTournament — a Swiss tournament of N = 4,096 entrants
(``MAHJONG_BENCH_QUICK=1``: 256; ``MAHJONG_BENCH_TOURNAMENT_ENTRANTS`` sets N) runs to its end.

Checked, through the paged RPCs (a tournament of more than 256 entrants carries no lists in its
Tournament message): every entrant seated exactly once per round (ListTournamentTables of each
round, every table finished with its hand), the final ranking holding every entrant once
(GetStandings, round 0, once FINISHED), its chips summing to zero and agreeing with the ledger
(read from PostgreSQL, which also holds every hand once), the state FINISHED, not cancelled, no
failure.

Printed per round, from Tournament.round_progress (the matchmaker's clock) and the tables' logs
in the store (the gateways' clock, the same machine's): the time to seat it (from the previous
round's last table settled, or from the StartTournament call), from seated to round_progress's
started_at and to the last table's first event in its log (created), to the last table's last
event and to round_progress's finished_at (settled), the barrier (finished_at to advanced_at)
and a table's time from its first to its last event (median, slowest); then the total wall
time and the entrants seated per second. Per act (the gateways'
``mahjong_gateway_actions_total``): the bench database's committed transactions
(``pg_stat_database.xact_commit``, read once the cluster stopped) and PostgreSQL's CPU (utime +
stime in /proc: the backends connected to the bench database, and the whole server), with the
acts per second one PostgreSQL core would carry; and the CPU seconds of every service process.

Guard rails: an overall timeout (``MAHJONG_BENCH_TOURNAMENT_TIMEOUT`` seconds; by default about
40 minutes for 4,096 entrants) and a watchdog (no table started or finished, no round moved
and no act applied for ``MAHJONG_BENCH_TOURNAMENT_STALL`` seconds, default 300): then it prints
where the tournament stood (state, round, round_progress, stall_reason, the matchmakers' logs)
and fails. The processes stop and the database is dropped whatever happens (SIGTERM and Ctrl-C
included); the services' logs are kept when it fails. :func:`run_tournament` is the core (the
sanity test, tests/integration/test_bench_tournament.py, runs it at 16 entrants)."""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import grpc
import psycopg
from mahjong.matchmaking.v1 import matchmaking_pb2 as mm_pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc

from infra.request_ids import with_request_ids
from tests.support import postgres
from tests.support.cluster import Cluster, player_channel
from tests.support.identity import sign_in
from tests.support.probes import fetch_metrics, metric_value
from tests.support.stacks import service_process

QUICK = os.environ.get("MAHJONG_BENCH_QUICK") == "1"
ROUNDS = 3
HANDS_PER_ROUND = 1
REPLICAS = {"wall": 2, "rules": 2, "scoring": 1, "gateway": 3, "matchmaking": 2}
ACTIONS = "mahjong_gateway_actions_total"
STORE_OPS = "mahjong_store_operation_seconds_count"
STORED = ("gateway", "matchmaking", "wall")  # the services that use the store here
CLK_TCK = os.sysconf("SC_CLK_TCK")
COMMON = ["--drain-seconds", "0", "--grace-seconds", "1"]
QUIET = ["--log-level", "warning"]
FLAGS = {
    "wall": [*COMMON, *QUIET],
    "rules": [*COMMON, *QUIET],
    "scoring": [*COMMON, *QUIET],
    "gateway": [
        *COMMON, *QUIET, "--bot-delay-ms", "0", "--auto-play-delay-ms", "0",
        "--between-hands-ms", "0",
    ],
    # info: its tournament_started / tournament_advanced / tournament_step_failed lines
    "matchmaking": [*COMMON, "--log-level", "info"],
}  # fmt: skip
STATE = mm_pb.TournamentState.Name
POLL_S = 0.5


def build_state() -> str:
    """How the services' hot path will run: compiled (``make install``) or, with no extension
    or extensions older than their sources (a rebuild under way, say), partly as Python."""
    from tests.support.compiled import ROOT, stale_extensions

    built = sum(1 for d in ("shared", "services") for _ in (ROOT / d).rglob("*.so"))
    stale = stale_extensions()
    if not built:
        return "WARNING: no compiled extensions: the services run as pure Python"
    if stale:
        return (
            f"WARNING: {built} compiled extensions, older than {len(stale)} sources "
            f"({', '.join(stale[:3])} …): `make install` rebuilds them"
        )
    return f"{built} compiled extensions (mypyc), none older than its sources"


def default_entrants() -> int:
    return int(os.environ.get("MAHJONG_BENCH_TOURNAMENT_ENTRANTS", "256" if QUICK else "4096"))


def default_timeout(entrants: int) -> float:
    """About 40 minutes for 4,096 entrants, never under 5: on the two shared cores this was
    written on, 1,024 took 6-7.5 minutes and 4,096 took 28-30 (140-170 acts/s, about 83 acts
    a hand, every table of a round playing at once); the time grows with the entrants. A
    tournament that stops moving is given up long before (``stall_s``)."""
    env = os.environ.get("MAHJONG_BENCH_TOURNAMENT_TIMEOUT")
    return float(env) if env else max(300.0, 0.6 * entrants)


# --- the cluster --------------------------------------------------------------------------------
@dataclass
class BenchCluster(Cluster):
    """tests/support/cluster.py's cluster with the replica counts of ``replicas`` and /metrics
    on every process."""

    replicas: dict[str, int] = field(default_factory=lambda: dict(REPLICAS))

    def names(self, service: str) -> list[str]:
        return [f"{service}-{i}" for i in range(1, self.replicas[service] + 1)]

    def process(self, name: str):
        service = name.rsplit("-", 1)[0]
        return service_process(
            service,
            self.tmp,
            store_url=self.url,
            extra=self._args(service, name),
            metrics=True,
            log_name=name,
        )

    def start(self) -> BenchCluster:
        for service in self.replicas:  # in order: each calls the ones before it
            names = self.names(service)
            for name in names:
                self.procs[name] = self.process(name).start()
            for name in names:
                self.book.list(name, self.procs[name].wait_ready(90))
        return self

    def dead(self) -> list[str]:
        return [
            n for n, p in self.procs.items() if p.proc is not None and p.proc.poll() is not None
        ]

    def metric(self, service: str, sample: str) -> float:
        return sum(
            metric_value(fetch_metrics(self.procs[n].ports.metrics), sample)
            for n in self.names(service)
        )

    def store_ops(self, service: str) -> Counter[str]:
        """Store operations the service's replicas counted, by operation."""
        ops: Counter[str] = Counter()
        for n in self.names(service):
            for line in fetch_metrics(self.procs[n].ports.metrics).splitlines():
                if line.startswith(STORE_OPS + "{"):
                    op = line.split('operation="', 1)[1].split('"', 1)[0]
                    ops[op] += int(float(line.rsplit(" ", 1)[1]))
        return ops

    def log_tail(self, name: str, chars: int) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""


# --- CPU from /proc -----------------------------------------------------------------------------
def proc_stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, own utime+stime, reaped children's cutime+cstime) in clock ticks; None when the
    process is gone or unreadable."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = raw[raw.rindex(")") + 2 :].split()  # fields 3.. (the name may hold spaces)
    return int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])


def process_ticks(pid: int) -> int:
    s = proc_stat(pid)
    return 0 if s is None else s[1] + s[2]


def server_ticks(postmaster: int) -> int:
    """CPU ticks of the whole PostgreSQL server: the postmaster, its live children and (in its
    cutime/cstime) every child it reaped — backends that exited included."""
    own = proc_stat(postmaster)
    if own is None:
        return 0
    total = own[1] + own[2]
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            s = proc_stat(int(entry.name))
            if s is not None and s[0] == postmaster:
                total += s[1]
    return total


class PgCpu:
    """PostgreSQL's CPU over a run: the whole server (when /proc shows it: a server on this
    machine), and the backends connected to the bench database, sampled (:meth:`sample`) while
    the run goes so that each backend's last reading is kept (a backend that connects and
    exits between two samples is missed: the services' pools keep theirs)."""

    def __init__(self, server: str, dbname: str) -> None:
        self.server, self.dbname = server, dbname
        self.conn = psycopg.connect(server, autocommit=True)
        backend = self.conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        stat = proc_stat(backend)
        self.postmaster = stat[0] if stat is not None else None
        self.why = (
            ""
            if self.postmaster is not None
            else f"no /proc/{backend} here (PostgreSQL runs elsewhere or in another namespace)"
        )
        self.first: dict[int, int] = {}  # backend pid -> ticks at the start (0: born since)
        self.last: dict[int, int] = {}
        self.server0 = self.server1 = 0

    def _backends(self) -> list[int]:
        rows = self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (self.dbname,),
        ).fetchall()
        return [r[0] for r in rows]

    def start(self) -> None:
        if self.postmaster is None:
            return
        self.server0 = server_ticks(self.postmaster)
        for pid in self._backends():
            self.first[pid] = self.last[pid] = process_ticks(pid)

    def sample(self) -> None:
        if self.postmaster is None:
            return
        for pid in self._backends():
            ticks = process_ticks(pid)
            if ticks:
                self.first.setdefault(pid, 0)
                self.last[pid] = ticks

    def stop(self) -> None:
        if self.postmaster is None:
            return
        self.sample()
        self.server1 = server_ticks(self.postmaster)

    @property
    def server_s(self) -> float:
        return (self.server1 - self.server0) / CLK_TCK

    @property
    def database_s(self) -> float:
        return sum(self.last[p] - self.first[p] for p in self.last) / CLK_TCK

    def close(self) -> None:
        self.conn.close()


def xact_commits(server: str) -> dict[str, int]:
    """Committed transactions of every database, read from the server URL's database."""
    with psycopg.connect(server, autocommit=True) as c:
        rows = c.execute(
            "SELECT datname, xact_commit FROM pg_stat_database WHERE datname IS NOT NULL"
        ).fetchall()
    return {name: int(n) for name, n in rows}


# --- the report ---------------------------------------------------------------------------------
@dataclass
class RoundTiming:
    """One round's times in seconds: from round_progress (the matchmaker's clock) and, marked
    "log", from its tables' logs (the gateways' clock, the same machine's)."""

    round: int
    tables: int
    seat_s: float  # the previous round's last table settled (or StartTournament) -> seated
    start_s: float  # seated -> started_at (round_progress: "its last table created")
    created_s: float | None  # seated -> the last table's first event (log)
    duration_s: float  # seated -> finished_at (its last table settled)
    ended_s: float | None  # seated -> the last table's last event (log)
    barrier_s: float | None  # finished_at -> advanced_at (the next round seated / finished)
    table_p50_s: float | None = None  # a table's first to last event (log)
    table_max_s: float | None = None
    slowest: str = ""


@dataclass
class Report:
    entrants: int
    rounds: int
    tournament_id: str = ""
    state: str = ""
    finished: bool = False
    wall_s: float = 0.0  # StartTournament called -> the tournament finished (server clock)
    start_call_s: float = 0.0  # how long StartTournament took to answer
    timings: list[RoundTiming] = field(default_factory=list)
    acts: float = 0.0
    commits: int | None = None
    other_commits: int = 0  # transactions the other databases committed meanwhile
    pg_why: str = ""
    pg_server_s: float | None = None
    pg_database_s: float | None = None
    cpu_s: dict[str, float] = field(default_factory=dict)  # service process -> CPU s
    ops: dict[str, Counter[str]] = field(default_factory=dict)  # service -> store operations
    hands: int = 0
    problems: list[str] = field(default_factory=list)
    stood: str = ""  # where a tournament that did not finish stood
    progress: str = ""  # the finished tournament's round_progress, as its message shows it

    @property
    def ok(self) -> bool:
        return self.finished and not self.problems


def fmt_s(v: float | None) -> str:
    return f"{'-':>7}" if v is None else f"{v:7.2f}"


def print_report(r: Report, out: Callable[[str], None] = print) -> None:
    out(
        f"tournament of {r.entrants:,} entrants, {r.rounds} Swiss rounds of {HANDS_PER_ROUND} "
        f"hand, all bots (--bot-delay-ms 0): cluster of "
        + ", ".join(f"{n} {s}" for s, n in REPLICAS.items())
        + " on one PostgreSQL database"
    )
    if not r.finished:
        out(f"  DID NOT FINISH: state {r.state}")
        if r.stood:
            out(r.stood)
        for p in r.problems:
            out(f"  problem: {p}")
        return
    out(
        f"  {'round':>5} {'tables':>6} {'seat':>7} {'start':>7} {'created':>7} {'ended':>7} "
        f"{'settled':>7} {'barrier':>7} {'tbl p50':>7} {'tbl max':>7} {'seated/s':>8}"
    )
    for t in r.timings:
        to_tables = t.seat_s + (t.created_s if t.created_s is not None else t.start_s)
        rate = f"{r.entrants / to_tables:8.0f}" if to_tables > 0 else f"{'-':>8}"
        out(
            f"  {t.round:>5} {t.tables:>6} {fmt_s(t.seat_s)} {fmt_s(t.start_s)} "
            f"{fmt_s(t.created_s)} {fmt_s(t.ended_s)} {fmt_s(t.duration_s)} "
            f"{fmt_s(t.barrier_s)} {fmt_s(t.table_p50_s)} {fmt_s(t.table_max_s)} {rate}"
        )
    out(
        "    (seconds) seat: the previous round's last table settled (round 1: the "
        "StartTournament call) to the round seated; then from the round seated: start: "
        'round_progress.started_at ("its last table created"); created: the last table\'s '
        "first event in its log; ended: the last table's last event (TableFinished); settled: "
        "round_progress.finished_at (its last table settled); barrier: settled to the next "
        "round seated (the last round: to FINISHED); tbl p50 / tbl max: a table's first to last "
        "event; seated/s: entrants / (seat + created)"
    )
    if r.timings and r.timings[-1].slowest:
        out(f"    slowest table of each round: {', '.join(t.slowest for t in r.timings)}")
    if r.progress:
        out("  the FINISHED tournament's message (times since the StartTournament call):")
        out(r.progress)
    seated = r.entrants * r.rounds
    out(
        f"  total {r.wall_s:.1f} s from StartTournament (which answered in {r.start_call_s:.1f} "
        f"s) to FINISHED: {seated / r.wall_s:.1f} entrant-rounds/s, {r.hands:,} hands, "
        f"{r.acts:,.0f} acts ({r.acts / r.wall_s:,.0f} acts/s)"
    )
    acts = max(r.acts, 1.0)
    if r.commits is not None:
        out(
            f"  store transactions per act: {r.commits / acts:.2f} ({r.commits:,} committed by "
            "the bench database from StartTournament to the cluster's stop — the checks' reads "
            "and the idle leases/ticker included — over the acts the gateways applied)"
        )
    if r.pg_database_s is not None:
        db_ms = r.pg_database_s * 1000 / acts
        out(
            f"  PostgreSQL CPU per act: {db_ms:.3f} ms by the bench database's backends "
            f"({r.pg_database_s:.1f} s) -> {1000 / db_ms if db_ms else float('inf'):,.0f} acts/s "
            "per PostgreSQL core"
        )
        assert r.pg_server_s is not None
        srv_ms = r.pg_server_s * 1000 / acts
        out(
            f"    the whole server: {srv_ms:.3f} ms per act ({r.pg_server_s:.1f} s: the "
            f"backends, WAL writer, checkpointer …) -> "
            f"{1000 / srv_ms if srv_ms else float('inf'):,.0f} acts/s per core; the other "
            f"databases (idle but present; the bench's own readings of the statistics go to "
            f"the server URL's) committed {r.other_commits:,} transactions "
            "meanwhile"
        )
    else:
        out(f"  PostgreSQL CPU per act: not measured ({r.pg_why})")
    for svc, ops in r.ops.items():
        shown = ", ".join(f"{op} {n / acts:.2f}" for op, n in ops.most_common(7))
        out(f"    {svc} store operations per act: {shown}")
    by_service: dict[str, float] = {}
    for name, s in r.cpu_s.items():
        svc = name.rsplit("-", 1)[0]
        by_service[svc] = by_service.get(svc, 0.0) + s
    out(
        "  CPU seconds over the run: "
        + ", ".join(
            f"{svc} {total:.1f} ("
            + " + ".join(f"{r.cpu_s[n]:.1f}" for n in sorted(r.cpu_s) if n.startswith(svc + "-"))
            + ")"
            for svc, total in by_service.items()
        )
        + f" of {r.wall_s:.0f} s x {os.cpu_count()} cores"
    )
    for p in r.problems:
        out(f"  CHECK FAILED: {p}")
    if not r.problems:
        out(
            "  checks: every entrant seated once per round, the final ranking holds each once, "
            "chips sum to zero and match the ledger, FINISHED (not cancelled, no failure)"
        )


# --- driving the tournament ---------------------------------------------------------------------
def describe(t: mm_pb.Tournament, started_ms: int) -> str:
    """Where a tournament stands, for a progress line or a timeout's report."""

    def rel(ms: int) -> str:
        return f"{(ms - started_ms) / 1000:.1f}" if ms else "-"

    lines = [
        f"  state {STATE(t.state)}, round {t.current_round}/{t.rounds}, "
        f"failure {t.failure!r}, stall_reason {t.stall_reason!r}, cancelled {t.cancelled}"
    ]
    for rp in t.round_progress:
        lines.append(
            f"    round {rp.round}: {rp.tables} tables, {rp.tables_started} started, "
            f"{rp.tables_finished} finished; seated {rel(rp.seated_at_unix_ms)} s, started "
            f"{rel(rp.started_at_unix_ms)} s, finished {rel(rp.finished_at_unix_ms)} s, advanced "
            f"{rel(rp.advanced_at_unix_ms)} s (since StartTournament)"
        )
    return "\n".join(lines)


def matchmaker_logs(cluster: BenchCluster, chars: int = 3000) -> str:
    out = []
    for name in cluster.names("matchmaking"):
        text = cluster.log_tail(name, 2_000_000)
        failed = [line for line in text.splitlines() if "tournament_step_failed" in line]
        out.append(f"  --- {name}: {len(failed)} tournament_step_failed lines; the last ones:")
        out.extend(f"    {line[:400]}" for line in failed[-5:])
        out.append(f"  --- {name}: the log's tail\n{text[-chars:]}")
    for name in cluster.names("gateway"):
        tail = cluster.log_tail(name, 1500)
        if tail.strip():
            out.append(f"  --- {name} (warnings): the log's tail\n{tail}")
    return "\n".join(out)


def paged(call, make_request, items: str) -> tuple[list, list]:
    """Every item of a paged RPC: (items, responses)."""
    got, responses, token = [], [], ""
    while True:
        resp = call(make_request(token), timeout=60)
        responses.append(resp)
        got.extend(getattr(resp, items))
        token = resp.next_page_token
        if not token:
            return got, responses


def table_times(url: str, table_ids: list[str]) -> dict[str, tuple[int, int]]:
    """Each table's first and last event (unix ms: the gateway created it, it finished), read
    from its log in the store."""
    from services.gateway.domain.events.codec import decode
    from services.gateway.tables.log import LOG_PREFIX

    logs = [LOG_PREFIX + t for t in table_ids]
    with psycopg.connect(url, autocommit=True) as c:
        rows = c.execute(
            "SELECT h.log, f.entry, l.entry FROM store_log_heads h "
            "JOIN store_logs f ON f.log = h.log AND f.seq = 1 "
            "JOIN store_logs l ON l.log = h.log AND l.seq = h.last WHERE h.log = ANY(%s)",
            (logs,),
        ).fetchall()
    return {
        log.removeprefix(LOG_PREFIX): (decode(bytes(first))[0], decode(bytes(last))[0])
        for log, first, last in rows
    }


def check(
    r: Report,
    mm,
    creator: str,
    final: mm_pb.Tournament,
    url: str,
    start_ms: int,
) -> None:
    """The checks of the module's docstring, and the per-round timings."""
    from infra.store import open_store
    from services.matchmaking.domain.economy import ledger
    from services.matchmaking.domain.tables.tags import tournament_group

    problems = r.problems
    tid = final.tournament_id
    if final.state != mm_pb.TOURNAMENT_STATE_FINISHED or final.cancelled or final.failure:
        problems.append(
            f"state {STATE(final.state)}, cancelled {final.cancelled}, failure {final.failure!r}"
        )
    if final.entrant_count != r.entrants:
        problems.append(f"entrant_count {final.entrant_count}, not {r.entrants}")
    if final.lists_paged != (r.entrants > 256):
        problems.append(f"lists_paged {final.lists_paged} with {r.entrants} entrants")

    # the final ranking: every entrant once
    ranking, pages = paged(
        mm.GetStandings,
        lambda tok: mm_pb.GetStandingsRequest(
            tournament_id=tid, session_token=creator, round=0, page_size=1000, page_token=tok
        ),
        "standings",
    )
    ids = Counter(s.player_id for s in ranking)
    if len(ids) != r.entrants or any(n != 1 for n in ids.values()):
        twice = [p for p, n in ids.items() if n > 1][:5]
        problems.append(f"final ranking: {len(ranking)} rows, {len(ids)} entrants, twice: {twice}")
    if not all(p.final for p in pages) or {p.total for p in pages} != {r.entrants}:
        problems.append(
            f"GetStandings pages: final {[p.final for p in pages]}, total "
            f"{sorted({p.total for p in pages})}"
        )
    if [s.rank for s in ranking] != list(range(1, len(ranking) + 1)):
        problems.append("final ranking: ranks are not 1..N in order")
    entrants = set(ids)
    chips = {s.player_id: s.chips for s in ranking}
    if sum(chips.values()) != 0:
        problems.append(f"the final ranking's chips sum to {sum(chips.values())}, not 0")

    # every entrant seated exactly once per round, every table played
    table_ids: dict[int, list[str]] = {}
    for rnd in range(1, r.rounds + 1):
        tables, resp = paged(
            mm.ListTournamentTables,
            lambda tok, rnd=rnd: mm_pb.ListTournamentTablesRequest(
                tournament_id=tid, session_token=creator, round=rnd, page_size=500,
                page_token=tok,
            ),
            "tables",
        )  # fmt: skip
        seats = Counter(p for x in tables for p in x.player_ids)
        want = r.entrants // 4
        if len(tables) != want or {x.total for x in resp} != {want}:
            problems.append(f"round {rnd}: {len(tables)} tables listed, not {want}")
        if set(seats) != entrants or any(n != 1 for n in seats.values()):
            twice = [p for p, n in seats.items() if n > 1][:5]
            missing = list(entrants - set(seats))[:5]
            problems.append(f"round {rnd}: seated twice {twice}, not seated {missing}")
        unplayed = [
            x.index
            for x in tables
            if not x.table_id or not x.finished or x.hands_played != HANDS_PER_ROUND
            or len(x.player_ids) != 4
        ]  # fmt: skip
        if unplayed:
            problems.append(f"round {rnd}: tables {unplayed[:10]} not finished with 1 hand")
        table_ids[rnd] = [x.table_id for x in tables if x.table_id]

    # the ledger (PostgreSQL): the hands, and the chips of the ranking
    store = open_store(url, pool_size=1)
    try:
        reports = ledger.hand_reports(store, tournament_group(tid))
    finally:
        store.close()
    r.hands = len(reports)
    want_hands = r.entrants // 4 * r.rounds * HANDS_PER_ROUND
    if r.hands != want_hands:
        problems.append(f"the ledger holds {r.hands} hands of the tournament, not {want_hands}")
    from_ledger: dict[str, int] = {}
    for h in reports:
        for pid, amount in zip(h.player_ids, h.payments, strict=True):
            from_ledger[pid] = from_ledger.get(pid, 0) + amount
    house = sum(h.house for h in reports)
    if house:
        problems.append(f"the house took {house} chips of the tournament's hands")
    differ = [p for p in entrants if chips[p] != from_ledger.get(p, 0)]
    if differ or set(from_ledger) - entrants:
        problems.append(
            f"ranking chips differ from the ledger for {len(differ)} entrants "
            f"(e.g. {differ[:3]}); in the ledger only: {list(set(from_ledger) - entrants)[:3]}"
        )

    # per-round timings
    progress = {rp.round: rp for rp in final.round_progress}
    if sorted(progress) != list(range(1, r.rounds + 1)):
        problems.append(f"round_progress lists rounds {sorted(progress)}")
    times = table_times(url, [t for ids_ in table_ids.values() for t in ids_])
    prev_finished = start_ms
    for rnd in sorted(progress):
        rp = progress[rnd]
        if not (rp.seated_at_unix_ms and rp.started_at_unix_ms and rp.finished_at_unix_ms):
            problems.append(f"round {rnd}: progress times missing: {rp}")
        ids_ = table_ids.get(rnd, [])
        if len([x for x in ids_ if x in times]) != len(ids_):
            problems.append(f"round {rnd}: {len(ids_) - len(times)} tables without a log")
        spans = {x: (times[x][1] - times[x][0]) / 1000 for x in ids_ if x in times}
        slowest = max(spans, key=spans.__getitem__) if spans else ""
        seated = rp.seated_at_unix_ms
        r.timings.append(
            RoundTiming(
                round=rnd,
                tables=rp.tables,
                seat_s=(seated - prev_finished) / 1000,
                start_s=(rp.started_at_unix_ms - seated) / 1000,
                created_s=(max(times[x][0] for x in spans) - seated) / 1000 if spans else None,
                duration_s=(rp.finished_at_unix_ms - seated) / 1000,
                ended_s=(max(times[x][1] for x in spans) - seated) / 1000 if spans else None,
                barrier_s=(rp.advanced_at_unix_ms - rp.finished_at_unix_ms) / 1000
                if rp.advanced_at_unix_ms
                else None,
                table_p50_s=statistics.median(spans.values()) if spans else None,
                table_max_s=spans[slowest] if slowest else None,
                slowest=slowest,
            )
        )
        prev_finished = rp.finished_at_unix_ms
    last = progress.get(r.rounds)
    if last is not None and last.advanced_at_unix_ms:
        r.wall_s = (last.advanced_at_unix_ms - start_ms) / 1000


def run_tournament(
    url: str,
    entrants: int,
    rounds: int = ROUNDS,
    timeout: float | None = None,
    out: Callable[[str], None] = print,
    progress_every: float = 30.0,
    stall_s: float | None = None,
) -> Report:
    """The tournament of the module's docstring on a cluster whose every service stores on
    ``url`` (a database or a schema URL on the test server); the cluster stops before it
    returns (the database is the caller's to drop)."""
    timeout = default_timeout(entrants) if timeout is None else timeout
    if stall_s is None:
        stall_s = float(os.environ.get("MAHJONG_BENCH_TOURNAMENT_STALL", "300"))
    r = Report(entrants, rounds)
    server = postgres.server_url()
    dbname = urlsplit(url).path.lstrip("/")
    tmp = Path(tempfile.mkdtemp(prefix="bench-tournament-"))
    flags = {k: list(v) for k, v in FLAGS.items()}
    cluster = BenchCluster(tmp, url, flags=flags)
    pg: PgCpu | None = None
    channel = None
    try:
        began = time.monotonic()
        out(f"  build: {build_state()}")
        cluster.start()
        out(f"  cluster up in {time.monotonic() - began:.1f} s (logs in {tmp})")
        channel = player_channel(cluster.player_target("matchmaking"))
        mm = mm_grpc.MatchmakingServiceStub(with_request_ids(channel))
        creator = sign_in(mm, "Bench")[1]
        t = mm.CreateTournament(
            mm_pb.CreateTournamentRequest(
                session_token=creator, name="bench", stake=1, rounds=rounds,
                hands_per_round=HANDS_PER_ROUND, bots=entrants,
            ),
            timeout=120,
        ).tournament  # fmt: skip
        tid = r.tournament_id = t.tournament_id
        pg = PgCpu(server, dbname)
        r.pg_why = pg.why
        time.sleep(2.0)  # the start-up's statistics flushed (a backend's, once idle 1 s)
        commits0 = xact_commits(server)
        acts0 = cluster.metric("gateway", ACTIONS)
        ops0 = {svc: cluster.store_ops(svc) for svc in STORED}
        cpu0 = {n: process_ticks(p.proc.pid) for n, p in cluster.procs.items()}
        pg.start()

        start_ms = int(time.time() * 1000)
        deadline = time.monotonic() + timeout
        t = mm.StartTournament(
            mm_pb.StartTournamentRequest(session_token=creator, tournament_id=tid),
            timeout=max(60.0, timeout / 2),
        ).tournament
        r.start_call_s = time.time() - start_ms / 1000
        out(f"  StartTournament answered in {r.start_call_s:.1f} s")
        last_print, last_key = time.monotonic(), None
        moved_at, moved = time.monotonic(), None  # the watchdog's last progress
        checked_at, acts = 0.0, acts0
        get = mm_pb.GetTournamentRequest(tournament_id=tid, session_token=creator)

        def give_up(why: str, more: str = "") -> Report:
            r.state = STATE(t.state)
            r.problems.append(why)
            r.stood = f"  {why}; where it stood:\n{describe(t, start_ms)}\n{more}"
            r.stood += matchmaker_logs(cluster)
            return r

        while t.state != mm_pb.TOURNAMENT_STATE_FINISHED:
            now = time.monotonic()
            if now > deadline:
                return give_up(f"did not finish within {timeout:.0f} s")
            if now - moved_at > stall_s:
                return give_up(f"no progress (tables, rounds, acts) for {stall_s:.0f} s")
            dead = cluster.dead()
            if dead:
                logs = "\n".join(f"  --- {n}\n{cluster.log_tail(n, 3000)}" for n in dead)
                return give_up(f"service processes exited: {dead}", logs + "\n")
            time.sleep(POLL_S)
            pg.sample()
            try:
                t = mm.GetTournament(get, timeout=30).tournament
            except grpc.RpcError as exc:
                out(f"  GetTournament failed {exc.code().name}: {exc.details()} (polling on)")
                continue
            cur = t.round_progress[-1] if t.round_progress else None
            now = time.monotonic()
            if now - checked_at >= 10.0:  # the gateways' acts: progress inside the hands
                checked_at, acts = now, cluster.metric("gateway", ACTIONS)
            counts = (cur.tables_started, cur.tables_finished) if cur else ()
            progress = (t.state, t.current_round, counts, acts)
            if progress != moved:
                moved_at, moved = now, progress
            key = (t.state, t.current_round, t.stall_reason)
            if key != last_key or now - last_print >= progress_every:
                checked_at, acts = now, cluster.metric("gateway", ACTIONS)
                done = f"{cur.tables_started}/{cur.tables_finished} of {cur.tables}" if cur else ""
                stall = f", stall_reason {t.stall_reason!r}" if t.stall_reason else ""
                out(
                    f"  {time.time() - start_ms / 1000:7.1f} s: {STATE(t.state)}, round "
                    f"{t.current_round}, tables started/finished {done}, {acts - acts0:,.0f} "
                    f"acts{stall}"
                )
                last_print, last_key = now, key
        r.state = STATE(t.state)
        r.finished = True
        pg.stop()
        cpu1 = {n: process_ticks(p.proc.pid) for n, p in cluster.procs.items()}
        r.acts = cluster.metric("gateway", ACTIONS) - acts0
        r.ops = {svc: cluster.store_ops(svc) - ops0[svc] for svc in STORED}
        r.cpu_s = {n: (cpu1[n] - cpu0[n]) / CLK_TCK for n in cpu0}
        if pg.postmaster is not None:
            r.pg_server_s, r.pg_database_s = pg.server_s, pg.database_s
        r.wall_s = time.time() - start_ms / 1000  # until check() reads the server's times
        check(r, mm, creator, t, url, start_ms)
        r.progress = describe(t, start_ms)
        failed = [
            line
            for n in cluster.names("matchmaking")
            for line in cluster.log_tail(n, 50_000_000).splitlines()
            if "tournament_step_failed" in line
        ]
        if failed:
            out(f"  note: {len(failed)} tournament_step_failed lines; the first: {failed[0][:400]}")
        channel.close()
        channel = None
        cluster.stop()
        time.sleep(0.5)  # the exited backends' last statistics
        commits1 = xact_commits(server)
        r.commits = commits1.get(dbname, 0) - commits0.get(dbname, 0)
        r.other_commits = sum(
            n - commits0.get(d, 0) for d, n in commits1.items() if d not in (dbname,)
        )
        return r
    finally:
        if channel is not None:
            channel.close()
        if pg is not None:
            pg.close()
        cluster.stop()
        if r.ok:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            out(f"  (the services' logs are kept in {tmp})")


def _terminated(signum, frame) -> None:
    raise SystemExit(128 + signum)  # the finally blocks stop the cluster, drop the database


def main() -> int:
    signal.signal(signal.SIGTERM, _terminated)
    server = postgres.server_url()
    why = postgres.probe(server)
    if why:
        print(f"  (skipped: {why})", flush=True)
        return 0
    entrants = default_entrants()

    def out(line: str) -> None:
        print(line, flush=True)

    db = postgres.TestDatabase(server)
    try:
        r = run_tournament(db.url, entrants, out=out)
    finally:
        db.drop()
    print_report(r, out)
    return 0 if r.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
