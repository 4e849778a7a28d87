"""Gateway benchmarks (issue 5):

(a) whole hands per second with four planning bots
    * in-process, domain only (the engine on the wall, rules and scoring domains), and
    * through the full multi-process stack (wall, rules, scoring and gateway processes on
      loopback, tables created through the API, bots inside the gateway),
    and the service calls an action costs (wall + rules + scoring calls / actions): counted by
    the in-process adapters, and in the real stack from the services' own Prometheus counters.
(c) 300 concurrent tables whose players act once a second (one scripted player per table over
    gRPC, three bots that think for one second): p50 and p99 latency of the player's Act (goal
    p99 ≤ 50 ms) and the gateway's resident memory per table. Loopback only, bounded run time
    (MAHJONG_BENCH_LOAD_SECONDS, default 20).

(b), the comparison with RLCard, is in bench_gateway_bots.py.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.ports import AUTO_PORT
from infra.supervisor import ServiceProcess
from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring, InProcessWall
from services.gateway.bots import engine_policy, make_bot
from services.gateway.domain.events.kinds import ActionTaken
from services.gateway.domain.ports import CallCounter
from services.gateway.domain.session import Ports, Seat, SessionConfig, TableSession
from shared.ruleset import load_ruleset
from tests.bench import aio_player_channel
from tests.doubles.scheduler import ManualScheduler
from tests.support.tls import as_player

DOWNSTREAM = ("wall", "rules", "scoring")


# --- (a) in-process -----------------------------------------------------------------------------
def in_process(hands: int) -> tuple[float, float, int]:
    """Hands per second, service calls per action, actions — four planning bots, no gRPC."""
    counter = CallCounter()
    actions = events = 0

    def emit(event) -> int:  # the table's log: count its applied decisions
        nonlocal actions, events
        actions += isinstance(event, ActionTaken)
        events += 1
        return events

    sched = ManualScheduler()
    session = TableSession(
        SessionConfig(
            "bench",
            load_ruleset(),
            "shanghai-qiaoma",
            {},
            1,
            max_hands=hands,
            chain_bot_decisions=True,
        ),
        [Seat(bot=True) for _ in range(4)],
        ports=Ports(InProcessWall(counter), InProcessRules(counter), InProcessScoring(counter)),
        scheduler=sched,
        emit=emit,
        report=lambda kind, data: None,
        policy=engine_policy(make_bot("planner", seed=7)),
    )
    start = time.perf_counter()
    session.start()
    sched.drain()
    elapsed = time.perf_counter() - start
    assert session.hands_played == hands
    return hands / elapsed, counter.total / max(1, actions), actions


# --- the real stack -----------------------------------------------------------------------------
class Stack:
    def __init__(self, gateway_flags: list[str], max_workers: int = 32) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
        self.procs: dict[str, ServiceProcess] = {}
        for name in DOWNSTREAM:
            self.procs[name] = ServiceProcess(
                name,
                0,
                AUTO_PORT,
                "memory://",
                log_path=self.tmp / f"{name}.log",
                extra_args=["--log-level", "warning", "--max-workers", "32"],
            ).start()
        for p in self.procs.values():
            p.wait_ready()
        flags = [f for n in DOWNSTREAM for f in (f"--{n}-addr", self.procs[n].internal_address)]
        # Tables are created by players through the public API (server TLS, no certificate):
        # the per-address limits on public tables are off, the benchmark makes hundreds.
        flags += ["--public-tables-per-minute", "0", "--public-tables-per-address", "0"]
        self.gateway = ServiceProcess(
            "gateway",
            0,
            AUTO_PORT,
            f"sqlite:///{self.tmp / 'gateway.db'}",
            [*flags, "--log-level", "warning", "--max-workers", str(max_workers), *gateway_flags],
            log_path=self.tmp / "gateway.log",
        ).start()
        self.gateway.wait_ready()
        self.channel = as_player(self.gateway.address)
        self.stub = gateway_pb2_grpc.GatewayServiceStub(self.channel)

    def calls(self) -> int:
        """RPCs the wall, rules and scoring servers handled (health checks excluded)."""
        total = 0
        for name in DOWNSTREAM:
            url = f"http://127.0.0.1:{self.procs[name].ports.metrics}/metrics"
            text = urllib.request.urlopen(url, timeout=5).read().decode()
            for line in text.splitlines():
                if line.startswith("grpc_server_handled_total{") and "Health" not in line:
                    total += float(line.rsplit(" ", 1)[1])
        return int(total)

    def gateway_metric(self, name: str) -> float:
        url = f"http://127.0.0.1:{self.gateway.ports.metrics}/metrics"
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if re.match(rf"{name}(\{{|\s)", line)
        )

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.gateway.proc.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))

    def close(self) -> None:
        self.channel.close()
        self.gateway.stop()
        for p in reversed(list(self.procs.values())):
            p.stop()


def create(stub, seats, max_hands: int) -> pb.CreateTableResponse:
    return stub.CreateTable(
        pb.CreateTableRequest(
            request_id=uuid.uuid4().hex,
            ruleset=common_pb2.RulesetRef(name="shanghai-qiaoma"),
            stake=1,
            seats=seats,
            max_hands=max_hands,
        ),
        timeout=10,
    )


def full_stack(tables: int, hands_each: int) -> tuple[float, float]:
    """Hands per second and service calls per action, bots inside the gateway."""
    stack = Stack([])
    try:
        calls_before = stack.calls()
        start = time.perf_counter()
        made = [
            create(stack.stub, [pb.SeatAssignment(bot=True) for _ in range(4)], hands_each)
            for _ in range(tables)
        ]
        for t in made:
            watcher = stack.stub.JoinSeat(
                pb.JoinSeatRequest(table_id=t.table_id, spectator=True), timeout=5
            )
            for r in stack.stub.Subscribe(
                pb.SubscribeRequest(table_id=t.table_id, seat_token=watcher.seat_token),
                timeout=600,
            ):
                if r.event.WhichOneof("kind") == "table_finished":
                    break
        elapsed = time.perf_counter() - start
        calls = stack.calls() - calls_before
        actions = stack.gateway_metric("mahjong_gateway_actions_total")
        return tables * hands_each / elapsed, calls / max(1.0, actions)
    finally:
        stack.close()


# --- (c) 300 concurrent tables ------------------------------------------------------------------
async def _player(stub, table: pb.CreateTableResponse, stop: float, lat: list, errors: list):
    token = table.seat_tokens[0]
    call = stub.Subscribe(pb.SubscribeRequest(table_id=table.table_id, seat_token=token))
    try:
        async for r in call:
            e = r.event
            if time.monotonic() > stop:
                break
            if e.WhichOneof("kind") != "prompt":
                continue
            await asyncio.sleep(1.0)  # the player thinks for a second
            o = e.prompt.options
            if e.prompt.kind == pb.PROMPT_KIND_OWN_TURN:
                tile = e.prompt.tile if e.prompt.tile in o.discards else o.discards[0]
                action = (
                    pb.Action(win=pb.Win()) if o.win else pb.Action(discard=pb.Discard(tile=tile))
                )
            else:
                action = pb.Action(win=pb.Win()) if o.win else pb.Action(**{"pass": pb.Pass()})
            t0 = time.perf_counter()
            try:
                await stub.Act(
                    pb.ActRequest(
                        table_id=table.table_id,
                        seat_token=token,
                        request_id=uuid.uuid4().hex,
                        last_sequence=e.sequence,
                        action=action,
                    ),
                    timeout=10,
                )
                lat.append(time.perf_counter() - t0)
            except grpc.aio.AioRpcError as exc:
                errors.append(exc.code().name)
    finally:
        call.cancel()


async def _load(address: str, tables: list, seconds: float) -> tuple[list, list]:
    lat: list[float] = []
    errors: list[str] = []
    async with aio_player_channel(address) as ch:
        stub = gateway_pb2_grpc.GatewayServiceStub(ch)
        stop = time.monotonic() + seconds
        tasks = [asyncio.create_task(_player(stub, t, stop, lat, errors)) for t in tables]
        await asyncio.sleep(seconds)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return lat, errors


def concurrent_tables(n: int, seconds: float, timer_workers: int = 2) -> dict:
    stack = Stack(
        [
            "--bot-delay-ms",
            "1000",
            "--auto-play-delay-ms",
            "1000",
            "--between-hands-ms",
            "1000",
            "--discard-ms",
            "60000",
            "--claim-ms",
            "60000",
            "--timer-workers",
            str(timer_workers),
        ],
        max_workers=n + 64,  # each Subscribe stream holds a server thread
    )
    try:
        time.sleep(0.5)
        rss0 = stack.rss_kib()
        tables = [
            create(
                stack.stub,
                [pb.SeatAssignment(player_id=f"load-{i}"), *[pb.SeatAssignment(bot=True)] * 3],
                0,
            )
            for i in range(n)
        ]
        lat, errors = asyncio.run(_load(stack.gateway.address, tables, seconds))
        rss1 = stack.rss_kib()
        hands = stack.gateway_metric("mahjong_gateway_hands_total")
        lat.sort()
        q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [0.0] * 99
        return {
            "tables": n,
            "player_actions": len(lat),
            "errors": len(errors),
            "p50_ms": q[49] * 1000,
            "p99_ms": q[98] * 1000,
            "max_ms": lat[-1] * 1000 if lat else 0.0,
            "mem_per_table_kib": (rss1 - rss0) / n,
            "hands": hands,
            "actions": stack.gateway_metric("mahjong_gateway_actions_total"),
            "seconds": seconds,
        }
    finally:
        stack.close()


def main() -> int:
    quick = os.environ.get("MAHJONG_BENCH_QUICK") == "1"
    hands = 20 if quick else 60
    rate_in, calls_in, actions = in_process(hands)
    print(
        f"(a) in-process, domain only: {rate_in:8.1f} hands/s "
        f"({hands} hands, {actions} actions, {calls_in:.2f} service calls per action)"
    )
    tables, each = (2, 5) if quick else (4, 10)
    rate_full, calls_full = full_stack(tables, each)
    print(
        f"(a) full multi-process stack: {rate_full:8.1f} hands/s "
        f"({tables} tables x {each} hands; {calls_full:.2f} gRPC calls per action)"
    )
    print(f"    ratio in-process / full stack: {rate_in / rate_full:.1f}x")
    n = 50 if quick else 300
    seconds = float(os.environ.get("MAHJONG_BENCH_LOAD_SECONDS", "8" if quick else "20"))
    for workers in (2, 4):  # the default, then more timer threads (more GIL contention)
        r = concurrent_tables(n, seconds, workers)
        goal = "meets" if r["p99_ms"] <= 50 else "MISSES"
        print(
            f"(c) {r['tables']} concurrent tables, players act once a second, {seconds:.0f}s, "
            f"--timer-workers {workers}: {r['player_actions']} player actions "
            f"({r['errors']} refused), {r['actions']:.0f} actions in all, "
            f"{r['hands']:.0f} hands finished"
        )
        print(
            f"    Act latency p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms "
            f"(max {r['max_ms']:.1f} ms) — {goal} the p99 ≤ 50 ms goal"
        )
        print(f"    gateway memory per table: {r['mem_per_table_kib']:.0f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
