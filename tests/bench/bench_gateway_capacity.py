"""Gateway capacity (issue 12): the previous server model (``--server-model threads``: one
handler thread per call, each open stream holding one) against the asyncio model (the
default), side by side in one run. The gateway is pinned to core 0 and everything else (wall,
rules, scoring, the load generators) to core 1 with ``taskset``, so the figures are the
gateway's own.

(1) Idle streams: spectator streams opened on one waiting table by a client process; how many
    one replica holds, the gateway's threads, its memory per stream (goal: 10,000 streams,
    ≤ 20 KiB each), and a unary call's latency while they are open. Then browser streams: the
    same over the web port (Connect, one HTTP/1.1 connection each, as browser tabs;
    tests/support/web_stream_load.py), on the asyncio model's event loop (goal: 10,000 held,
    no thread per stream), and how soon the gateway sees 1,000 of them close (its
    ``mahjong_web_streams_open`` gauge back down), beside the figures of the previous design
    (cheroot's WSGI server, a thread per stream), which is gone and so not run here.
(2) Human-paced tables: every seat a real gRPC client with its own stream
    (tests/bench/seat_load.py), deciding in about a second; Act p50/p99 (goal: p99 ≤ 50 ms at 600
    tables per core, issue 22), CPU per action, the gateway's core use and core 1's (the
    load generator with wall, rules and scoring: it must stay well under full, else the point is
    marked as bound by it, not by the gateway), all counted in the steady state: from 5 s after
    the last stream opened (every table's first prompt comes at once). Then the seats as
    browsers (tests/bench/web_seat_load.py): the web table's calls over Connect on the web port
    (HTTPS, each Subscribe on a connection of its own, Act and GetTableState on each browser's
    keep-alive connections), beside the gRPC seats at the same size (issue 22: the same goal
    holds for browsers): the page as it is (its stream carries its view, ``with_view``), the
    page before (``b-poll``: GetTableState after every event and Act), and no GetTableState at
    all (``b-stream``), to tell the protocol's cost from the page's. Then the floor under
    those figures: the same seats against tests/bench/transport_floor.py, a server of the
    gateway's wire traffic per act with no game behind it, adding the gateway's design a piece
    at a time (its worker hop, its three calls to the rules and the wall per act, those calls as
    grpc.aio calls): how much of the gateway's CPU per act any design on grpc.aio must spend,
    and what the event-loop design the issue proposes would save.
(3) Event fan-out: spectators on tables of bots; events delivered per second per gateway core.

MAHJONG_BENCH_QUICK=1 runs small sizes; MAHJONG_BENCH_CAPACITY_SECONDS sets each load point's
length (default 20); MAHJONG_BENCH_CAPACITY_SECTIONS the sections to run (default ``123``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path

from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.interceptor import internal_metadata
from infra.ports import AUTO_PORT
from infra.supervisor import DEV_TLS_ROOT, ServiceProcess, run_token
from tests.bench.trees import run_from, tree_at
from tests.support.tls import as_player, to_process

DOWNSTREAM = ("wall", "rules", "scoring")
# Main before an Act and the engine steps after it were one step and streams were batched.
BEFORE_ONE_STEP = "0f5f909"
TICKS = os.sysconf("SC_CLK_TCK")


def _pin(core: int) -> list[str]:
    """``taskset -c core`` when this machine has two cores to pin to, else nothing."""
    return ["taskset", "-c", str(core)] if len(os.sched_getaffinity(0)) >= 2 else []


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _status(pid: int, key: str) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"{key}:\s+(\d+)", text).group(1))


class PinnedStack:
    """Wall, rules and scoring on core 1, the gateway (``model``) alone on core 0."""

    def __init__(
        self, model: str, workers: int, flags: list[str], tree: Path | None = None
    ) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-capacity-"))
        self.procs: dict[str, ServiceProcess] = {}
        for name in DOWNSTREAM:
            self.procs[name] = ServiceProcess(
                name,
                0,
                AUTO_PORT,
                "memory://",
                ["--log-level", "warning", "--max-workers", "64"],
                log_path=self.tmp / f"{name}.log",
                prefix=_pin(1),
            ).start()
        for p in self.procs.values():
            p.wait_ready()
        addrs = [f for n in DOWNSTREAM for f in (f"--{n}-addr", self.procs[n].internal_address)]
        self.gateway = ServiceProcess(
            "gateway",
            0,
            AUTO_PORT,
            f"sqlite:///{self.tmp / 'gateway.db'}",
            [
                *addrs,
                "--log-level",
                "warning",
                "--server-model",
                model,
                "--max-workers",
                str(workers),
                "--max-streams",
                "0",
                "--max-streams-per-address",
                "0",
                "--max-connections-per-address",
                "0",
                "--seat-wait-seconds",
                "0",
                *flags,
            ],
            log_path=self.tmp / "gateway.log",
            prefix=_pin(0) + (run_from(tree) if tree else []),
        ).start()
        self.gateway.wait_ready(timeout=60)
        # Players on the public port (server TLS); tables made as matchmaking makes them, with
        # its certificate on the internal port (mutual TLS) and the internal token.
        self.channel = as_player(self.gateway.address)
        self.stub = gateway_pb2_grpc.GatewayServiceStub(self.channel)
        self.internal = to_process(self.gateway, "matchmaking")
        self.creator = gateway_pb2_grpc.GatewayServiceStub(self.internal)
        self.pid = self.gateway.proc.pid

    def downstream_cpu(self) -> float:
        """CPU seconds wall, rules and scoring have used (they share core 1)."""
        return sum(_cpu_seconds(p.proc.pid) for p in self.procs.values())

    def create(self, seats: list[pb.SeatAssignment], max_hands: int = 0) -> pb.CreateTableResponse:
        return self.creator.CreateTable(  # as matchmaking: its certificate and the token
            pb.CreateTableRequest(
                request_id=uuid.uuid4().hex, stake=1, seats=seats, max_hands=max_hands
            ),
            metadata=internal_metadata(run_token()),
            timeout=30,
        )

    def spectator(self, table_id: str) -> str:
        return self.stub.JoinSeat(
            pb.JoinSeatRequest(request_id=uuid.uuid4().hex, table_id=table_id, spectator=True),
            timeout=10,
        ).seat_token

    def close(self) -> None:
        self.channel.close()
        self.internal.close()
        self.gateway.stop()
        for p in self.procs.values():
            p.stop()


class StreamClient:
    """tests/support/stream_load.py (or another ``module`` of the same commands) in a process
    on core 1."""

    def __init__(
        self,
        address: str,
        table_id: str,
        token: str,
        n: int,
        channels: int = 0,
        module: str = "tests.support.stream_load",
    ) -> None:
        args = [address, table_id, token, str(n), *([str(channels)] if channels else [])]
        self.proc = subprocess.Popen(
            [*_pin(1), sys.executable, "-m", module, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        self.opened = self._reply()

    def _reply(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the stream client died")
        return json.loads(line)

    def ask(self, command: str) -> dict:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self) -> dict:
        try:
            return self.ask("close")
        finally:
            self.proc.wait(timeout=60)


# --- (1) idle streams ---------------------------------------------------------------------------
def idle_streams(model: str, n: int, workers: int) -> dict:
    stack = PinnedStack(model, workers, ["--seat-calls-per-second", "0"])
    try:
        table = stack.create([pb.SeatAssignment(player_id="host")] + [pb.SeatAssignment()] * 3)
        token = stack.spectator(table.table_id)
        time.sleep(1.0)
        rss0 = _status(stack.pid, "VmRSS")
        client = StreamClient(stack.gateway.address, table.table_id, token, n, max(10, n // 500))
        time.sleep(2.0)
        rss1 = _status(stack.pid, "VmRSS")
        threads = _status(stack.pid, "Threads")
        unary = client.ask("probe")["unary_ms"]
        client.close()
        held = client.opened["open"]
        return {
            "model": model,
            "asked": n,
            "held": held,
            "refused": client.opened["failed"],
            "threads": threads,
            "kib_per_stream": (rss1 - rss0) / max(1, held),
            "unary_ms": unary,
            "open_seconds": client.opened["seconds"],
        }
    finally:
        stack.close()


# The previous web port (cheroot's threaded WSGI server, --web-threads 1536, one thread per stream
# and every stream ended after --web-stream-seconds), as this bench measured it before it went.
FLOOR_MODES = (
    ("loop", "an Act and four stream writes on the event loop: grpc.aio's own cost"),
    ("pool", "the Act handled in a worker thread that wakes the loop (the gateway's hop)"),
    ("pool+calls", "and three blocking unary calls from the worker, as to the rules and wall"),
    ("loop+calls", "the three calls as grpc.aio calls from the loop instead, no worker"),
)
THREADED_WEB_BEFORE = {"asked": 1500, "held": 1016}


def _gauge(port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    return float(re.search(rf"^{name} (\S+)$", text, re.M).group(1))


def idle_web_streams(n: int, leave: int = 1000) -> dict:
    flags = ["--seat-calls-per-second", "0", "--web-port", "auto", "--web-max-streams", "0"]
    stack = PinnedStack("asyncio", 64, flags)
    try:
        table = stack.create([pb.SeatAssignment(player_id="host")] + [pb.SeatAssignment()] * 3)
        token = stack.spectator(table.table_id)
        ports = stack.gateway.ports
        time.sleep(1.0)
        rss0 = _status(stack.pid, "VmRSS")
        url = f"http://127.0.0.1:{ports.web}"
        module = "tests.support.web_stream_load"  # a connection per stream, as browser tabs
        client = StreamClient(url, table.table_id, token, n, module=module)
        time.sleep(2.0)
        rss1 = _status(stack.pid, "VmRSS")
        threads = _status(stack.pid, "Threads")
        unary = client.ask("probe")["unary_ms"]
        held = client.opened["open"]
        counted = _gauge(ports.metrics, "mahjong_web_streams_open")
        k = min(leave, held)
        client.ask(f"leave {k}")
        start = time.monotonic()
        while _gauge(ports.metrics, "mahjong_web_streams_open") > counted - k:
            if time.monotonic() - start > 30:
                break
            time.sleep(0.02)
        seen = time.monotonic() - start
        closed = client.close()
        return {
            "model": "asyncio web",
            "asked": n,
            "held": held,
            "counted": int(counted),
            "refused": client.opened["failed"],
            "threads": threads,
            "kib_per_stream": (rss1 - rss0) / max(1, held),
            "unary_ms": unary,
            "open_seconds": client.opened["seconds"],
            "left": k,
            "left_seen_s": seen,
            "ended_by_server": closed["ended"],
        }
    finally:
        stack.close()


# --- (2) human-paced tables ---------------------------------------------------------------------
# The web port as browsers reach it: HTTPS with the gateway's development certificate (as the
# gRPC seats' server TLS), no cap on its streams.
WEB_PORT_FLAGS = [
    "--web-port",
    "auto",
    "--web-max-streams",
    "0",
    "--web-tls-dir",
    str(DEV_TLS_ROOT / "gateway"),
]


WEB_SEATS = "tests.bench.web_seat_load"


def human_paced(
    model: str,
    tables: int,
    seconds: float,
    stream: str = "batched",
    tree: Path | None = None,
    web: str = "",
) -> dict:
    """``tables`` tables of four human-paced seats on a gateway of ``model`` (of ``tree``, the
    commit before, when given), the seats' streams ``stream`` (``batched`` or ``single``). The
    seats are gRPC clients (tests/bench/seat_load.py), or with ``web`` browsers on the web port
    (tests/bench/web_seat_load.py's modes: ``view``, the web table's calls; ``poll``, the page
    before its stream carried the view; ``stream``, no GetTableState after the first)."""
    workers = 64 if model == "asyncio" else tables * 4 + 64  # threads: one per stream
    flags = ["--discard-ms", "60000", "--claim-ms", "60000", "--between-hands-ms", "1000"]
    stack = PinnedStack(model, workers, flags + (WEB_PORT_FLAGS if web else []), tree)
    try:
        made = []
        for _ in range(tables):
            t = stack.create([pb.SeatAssignment(player_id=f"p{s}") for s in range(4)])
            made.append([t.table_id, list(t.seat_tokens)])
        path = stack.tmp / "tables.json"
        path.write_text(json.dumps(made))
        address, pid, module, extra = stack.gateway.address, stack.pid, "tests.bench.seat_load", ()
        if web:  # the page's own origin: the web port, over HTTPS
            address, module = f"https://127.0.0.1:{stack.gateway.ports.web}", WEB_SEATS
            extra = (web,)
        r = _seats_play(address, path, seconds, stream, pid, stack.downstream_cpu, module, extra)
        r.update(model=model, tables=tables, web=web)
        return r
    finally:
        stack.close()


def _seats_play(
    address: str,
    tables_json: Path,
    seconds: float,
    stream: str,
    pid: int,
    downstream_cpu: Callable[[], float] = lambda: 0.0,
    module: str = "tests.bench.seat_load",
    extra: tuple[str, ...] = (),
) -> dict:
    """Run the load generator ``module`` (:mod:`tests.bench.seat_load`'s command line) on core 1
    against ``address`` for the tables of ``tables_json``; its figures, with the CPU of the
    server ``pid`` (and of the services ``downstream_cpu`` counts) over the same counted
    part. ``extra``: words after the stream's on its command line (web_seat_load's mode)."""
    args = [address, str(tables_json), str(seconds), stream, *extra]
    load = subprocess.Popen(
        [*_pin(1), sys.executable, "-m", module, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    with load:
        if json.loads(load.stdout.readline() or "{}").get("ready") is not True:
            raise RuntimeError("the load generator died before its streams were open")
        cpu0 = _cpu_seconds(pid)  # from the end of its warm-up, as its own counts
        others0 = downstream_cpu()
        started = time.monotonic()
        last = load.stdout.readline()
        wall = time.monotonic() - started
        server_cpu = _cpu_seconds(pid) - cpu0
        others = downstream_cpu() - others0
    if load.returncode != 0 or not last:
        raise RuntimeError(f"the load generator failed ({load.returncode})")
    r = json.loads(last)
    loadgen_core = r["cpu_seconds"] / r["seconds"]
    r.update(
        gateway_core=server_cpu / wall,
        gateway_ms_per_act=server_cpu * 1000 / max(1, r["acts"]),
        loadgen_core=loadgen_core,
        other_core=others / wall + loadgen_core,  # core 1: the services beside the load
        threads=_status(pid, "Threads"),
    )
    return r


def transport_floor(tables: int, seconds: float, mode: str = "loop") -> dict:
    """The same seats against :mod:`tests.bench.transport_floor` (``mode``) on core 0: the
    gateway's wire traffic per act (an Act, a message of two events to each of the table's four
    streams) with none of the game behind it."""
    floor = subprocess.Popen(
        [*_pin(0), sys.executable, "-m", "tests.bench.transport_floor", str(tables), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        served = json.loads(floor.stdout.readline() or "{}")
        if "address" not in served:
            raise RuntimeError("the transport floor server died before it served")
        with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
            path = Path(tmp) / "tables.json"
            path.write_text(json.dumps(served["tables"]))
            r = _seats_play(served["address"], path, seconds, "batched", floor.pid)
        r.update(model=f"floor {mode}", tables=tables)
        return r
    finally:
        floor.stdin.close()
        try:
            floor.wait(timeout=30)
        except subprocess.TimeoutExpired:
            floor.kill()
            floor.wait()


def _print_paced(who: str, n: int, r: dict) -> None:
    """One point of (2) on one line."""
    bound = (
        " [core 1 near full: bound by the services or the load]" if r["other_core"] > 0.85 else ""
    )
    goal = "≤ 50 ms" if r["p99_ms"] <= 50 else "> 50 ms"
    views = (
        f"; {r['views'] / r['seconds']:.0f} GetTableState/s (refused "
        f"{sum(r['view_refused'].values())}), {r['stream_views'] / r['seconds']:.0f} views/s "
        "on the streams"
        if r.get("web")
        else ""
    )
    print(
        f"    {who:8s} {n:5d} tables: Act p50 {r['p50_ms']:7.1f} ms, p99 "
        f"{r['p99_ms']:7.1f} ms ({goal}); {r['acts'] / r['seconds']:6.0f} acts/s, "
        f"{r['gateway_ms_per_act']:.2f} gateway CPU ms per act; gateway core "
        f"{r['gateway_core']:.0%}, load generator {r['loadgen_core']:.0%} and core 1 "
        f"{r['other_core']:.0%}; {r['events'] / max(1, r['messages']):.2f} events per "
        f"message; refused {sum(r['refused'].values())}, stream errors "
        f"{r['stream_errors']}{views}; {r['threads']} threads{bound}"
    )


# --- (3) fan-out --------------------------------------------------------------------------------
def fan_out(model: str, tables: int, watchers: int, seconds: float) -> dict:
    n = tables * watchers
    workers = 64 if model == "asyncio" else n + 64
    stack = PinnedStack(model, workers, ["--seat-calls-per-second", "0", "--bot-delay-ms", "100"])
    try:
        made = [
            stack.create([pb.SeatAssignment(bot=True)] * 4, max_hands=1000) for _ in range(tables)
        ]
        clients = [
            StreamClient(
                stack.gateway.address, t.table_id, stack.spectator(t.table_id), watchers, 4
            )
            for t in made
        ]
        before = sum(c.ask("count")["events"] for c in clients)
        cpu0, t0 = _cpu_seconds(stack.pid), time.monotonic()
        time.sleep(seconds)
        delivered = sum(c.ask("count")["events"] for c in clients) - before
        wall = time.monotonic() - t0
        gateway_cpu = _cpu_seconds(stack.pid) - cpu0
        for c in clients:
            c.close()
        return {
            "model": model,
            "streams": n,
            "delivered_per_s": delivered / wall,
            "gateway_core": gateway_cpu / wall,
            "per_core_s": delivered / max(1e-9, gateway_cpu),
        }
    finally:
        stack.close()


def _idle_section(quick: bool, seconds: float) -> None:
    print("(1) idle streams on one replica")
    idle = [
        idle_streams("threads", 300 if quick else 1500, 256 if quick else 1024),
        idle_streams("asyncio", 2000 if quick else 10_000, 64),
    ]
    for r in idle:
        print(
            f"    {r['model']:8s} asked {r['asked']:6d}: held {r['held']:6d}, refused "
            f"{r['refused']:5d}; {r['threads']:5d} gateway threads; "
            f"{r['kib_per_stream']:6.1f} KiB per stream; a unary call meanwhile "
            f"{r['unary_ms']:.1f} ms"
        )
    old, new = idle
    goal = "meets" if new["held"] >= 10_000 and new["kib_per_stream"] <= 20 else "MISSES"
    print(
        f"    ratio asyncio/threads: {new['held'] / max(1, old['held']):.1f}x streams held, "
        f"{new['kib_per_stream'] / max(1e-9, old['kib_per_stream']):.2f}x memory per stream "
        f"— {goal} the 10,000 streams ≤ 20 KiB goal"
    )

    web = idle_web_streams(2000 if quick else 10_000)
    print(
        f"    browser streams over the web port (Connect, a connection each), asyncio: asked "
        f"{web['asked']:6d}: held {web['held']:6d} (the gateway counts {web['counted']}), refused "
        f"{web['refused']:5d}; {web['threads']:5d} gateway threads; "
        f"{web['kib_per_stream']:6.1f} KiB per stream; a unary call meanwhile "
        f"{web['unary_ms']:.1f} ms; {web['left']} closed by their clients: the gateway's count "
        f"down in {web['left_seen_s']:.2f} s; {web['ended_by_server']} ended by the server"
    )
    before = THREADED_WEB_BEFORE
    goal = "meets" if web["held"] >= 10_000 else "MISSES"
    print(
        f"    the previous web port (cheroot, a thread per stream; measured before, not run "
        f"now): held {before['held']} of {before['asked']} asked; ratio "
        f"{web['held'] / before['held']:.1f}x streams held — {goal} the 10,000 browser streams "
        "goal"
    )


def _paced_section(quick: bool, seconds: float) -> None:
    print(f"(2) human-paced tables, every seat a gRPC client deciding in ~1 s, {seconds:g} s each")
    print(
        f"    this tree (a step's events in one message) beside commit {BEFORE_ONE_STEP} "
        "(before: an action and the engine steps after it written apart, one event per message)"
    )
    before = tree_at(BEFORE_ONE_STEP)
    sizes = (50, 100) if quick else (300, 600, 900)
    points = [("threads", sizes[0], "single", None)]
    for n in sizes:
        points += [("asyncio", n, "batched", None)]
        if before is not None and n <= sizes[1]:
            points += [("asyncio", n, "single", before)]
    done: dict[tuple[int, bool], dict] = {}
    for model, n, stream, tree in points:
        r = human_paced(model, n, seconds, stream, tree)
        if model == "asyncio":
            done[n, tree is None] = r
        who = model if model == "threads" else ("asyncio" if tree is None else BEFORE_ONE_STEP)
        _print_paced(who, n, r)
        if (n, False) in done and (n, True) in done:
            new, old = done[n, True], done[n, False]
            print(
                f"    ratio this/{BEFORE_ONE_STEP} at {n} tables: gateway CPU per act "
                f"{new['gateway_ms_per_act'] / max(1e-9, old['gateway_ms_per_act']):.2f}x, "
                f"Act p99 {new['p99_ms'] / max(1e-9, old['p99_ms']):.2f}x, acts/s "
                f"{new['acts'] / max(1, old['acts']):.2f}x"
            )

    print(
        "    browser seats: the web table's calls over Connect on the web port (HTTPS, a "
        "connection per stream, Acts and GetTableState on each browser's keep-alive ones; "
        "tests/bench/web_seat_load.py), asyncio. 'browser': the page as it is (its stream "
        "carries the view, with_view); 'b-poll': the page before with_view (GetTableState after "
        "every event and Act); 'b-stream': no GetTableState at all"
    )
    names = {"view": "browser", "poll": "b-poll", "stream": "b-stream"}
    web_points = [(sizes[0], "view"), (sizes[0], "poll"), (sizes[0], "stream"), (sizes[1], "view")]
    for n, web in web_points:
        r = human_paced("asyncio", n, seconds, web=web)
        _print_paced(names[web], n, r)
        grpc_point = done.get((n, True))
        if grpc_point is not None:
            print(
                f"    ratio {names[web]}/gRPC at {n} tables: gateway CPU per act "
                f"{r['gateway_ms_per_act'] / max(1e-9, grpc_point['gateway_ms_per_act']):.2f}x, "
                f"Act p99 {r['p99_ms'] / max(1e-9, grpc_point['p99_ms']):.2f}x, acts/s "
                f"{r['acts'] / max(1, grpc_point['acts']):.2f}x"
            )

    n = sizes[0]
    gateway = done.get((n, True))
    print(
        f"    the floor under these figures at {n} tables (tests/bench/transport_floor.py): the "
        "same seats against a server of the gateway's wire traffic per act and no game, adding "
        "the gateway's design a piece at a time"
    )
    floors = {}
    for mode, what in FLOOR_MODES:
        r = floors[mode] = transport_floor(n, seconds, mode)
        share = (
            f", {r['gateway_ms_per_act'] / gateway['gateway_ms_per_act']:.0%} of the gateway's"
            if gateway
            else ""
        )
        print(
            f"    {mode:10s} {r['gateway_ms_per_act']:.2f} ms of CPU per act{share}; Act p50 "
            f"{r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms; {r['acts'] / r['seconds']:.0f} "
            f"acts/s; refused {sum(r['refused'].values())} — {what}"
        )
    ms = {mode: r["gateway_ms_per_act"] for mode, r in floors.items()}
    per_call = (ms["pool+calls"] - ms["pool"]) / 3
    per_aio = (ms["loop+calls"] - ms["loop"]) / 3
    print(
        f"    so a blocking unary call from a worker costs {per_call:.3f} ms of the gateway's "
        f"CPU, a grpc.aio call from the loop {per_aio:.3f} ms "
        f"({per_aio / max(1e-9, per_call):.2f}x), the worker hop {ms['pool'] - ms['loop']:.3f} ms"
    )
    calls = floors["pool+calls"]
    rate = calls["acts"] / calls["seconds"] / n  # acts per table per second, human-paced
    print(
        f"    at 600 tables ({rate * 600:.0f} acts/s) the floor with the calls alone would take "
        f"{ms['pool+calls'] * rate * 600 / 1000:.0%} of a core, the gateway's design "
        f"{gateway['gateway_ms_per_act'] * rate * 600 / 1000:.0%}"
        if gateway
        else ""
    )


def _fan_out_section(quick: bool, seconds: float) -> None:
    print(f"(3) event fan-out to spectators of bot tables, {seconds:g} s")
    tables, watchers = (2, 100) if quick else (4, 250)
    fans = [fan_out(m, tables, watchers, seconds) for m in ("threads", "asyncio")]
    for r in fans:
        print(
            f"    {r['model']:8s} {r['streams']} streams: {r['delivered_per_s']:8.0f} events "
            f"delivered/s, gateway core {r['gateway_core']:.0%}, "
            f"{r['per_core_s']:8.0f} deliveries per gateway core-second"
        )
    ratio = fans[1]["per_core_s"] / max(1e-9, fans[0]["per_core_s"])
    print(f"    ratio asyncio/threads per core: {ratio:.2f}x")


def main() -> int:
    quick = os.environ.get("MAHJONG_BENCH_QUICK") == "1"
    seconds = float(os.environ.get("MAHJONG_BENCH_CAPACITY_SECONDS", "8" if quick else "20"))
    pinned = "gateway on core 0, the rest on core 1" if _pin(0) else "NOT pinned (one core)"
    print(f"gateway capacity: threads (previous model) vs asyncio; {pinned}")
    sections = os.environ.get("MAHJONG_BENCH_CAPACITY_SECTIONS", "123")
    for number, section in (("1", _idle_section), ("2", _paced_section), ("3", _fan_out_section)):
        if number in sections:
            section(quick, seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
