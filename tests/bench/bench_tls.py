"""What transport security costs: mutual TLS against plaintext, side by side in one run, the
rounds of the two sides interleaved (the machine is shared: each side sees the same noise).

(a) Unary calls on one persistent channel, one client: calls per second and latency p50/p99,
    against two rules processes started alike, one serving mutual TLS (its development
    certificate) and one plaintext (``MAHJONG_INSECURE=1``). The TLS one is called as the
    gateway, on a channel as the services make one (``infra.tls.dial``: a ReloadingChannel)
    and on a bare ``grpc.secure_channel`` with the same certificate (TLS without our wrapper).
    Two calls: grpc health ``Check`` (the transport alone: health skips the authorization) and
    rules' ``EvaluateHand`` on a winning hand (a real call of the deployment, rules' cheapest,
    the caller's certificate checked). The ratio is the median over the rounds of TLS's time
    per call over plaintext's in the same round. Goal: TLS ≤ 10% slower.
(b) A new channel and its first call (health ``Check``), TCP connect and the TLS handshake
    included: every channel its own connection (``grpc.use_local_subchannel_pool``), no TLS
    session resumption (gRPC Python keeps no session cache unless given one); with the
    credentials made once, and through ``infra.tls.dial`` as a service makes a channel (the
    certificate files read too). p50/p99 in ms against a new plaintext channel.
(c) Whole hands per second through the full stack: wall, rules, scoring and gateway as
    processes, twice — TLS as deployed, and plaintext (``MAHJONG_INSECURE=1`` in every process's
    environment, plaintext client channels) — both started up front and played in alternate
    rounds: each round a few tables of four bots (public tables created through the gateway's
    API, ``max_hands`` 1) kept in flight, a new one as each finishes, each watched by a
    spectator's Subscribe until TableFinished; the tables playing at a round's end are played
    out uncounted before the other stack's round. Hands differ in length (every wall is
    shuffled anew), so the events the spectators received per second are given too, and their
    ratio is the comparison of the work done.

``MAHJONG_BENCH_SECONDS`` sets each side's time per measurement ((c): eight times that, in
rounds of 3 s, at least two a side, after a warm-up).
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc
from mahjong.rules.v1 import rules_pb2, rules_pb2_grpc

from infra.supervisor import ServiceProcess
from infra.tls import dial, name_override
from services.rules import convert as R
from shared import tiles as T
from tests.bench import bench_seconds
from tests.support.concurrency import run_threads
from tests.support.tls import as_player, files_of, to_process

TIMEOUT = 10
ROUNDS = 20  # interleaved rounds per measurement of (a)
QUIET = ["--log-level", "warning"]
PLAINTEXT = {"MAHJONG_INSECURE": "1"}
DOWNSTREAM = ("wall", "rules", "scoring")
TABLES = 4  # bot tables in flight at once in (c)
ROUND_SECONDS = 3.0  # a round of (c): a hand takes a second or two
OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)  # a new channel, a new connection
GOAL = 1.10  # TLS at most 10% slower


def quantiles_ms(values: list[float]) -> tuple[float, float]:
    """(p50, p99) of ``values`` (seconds) in milliseconds."""
    if len(values) < 2:
        v = values[0] * 1000 if values else 0.0
        return v, v
    q = statistics.quantiles(values, n=100)
    return q[49] * 1000, q[98] * 1000


def start(name: str, tmp: Path, label: str, extra: list[str] = (), plaintext: bool = False):
    return ServiceProcess(
        name,
        0,
        0,
        "memory://",
        [*QUIET, *extra],
        env=dict(PLAINTEXT) if plaintext else {},
        log_path=tmp / f"{label}-{name}.log",
    ).start()


# --- (a) persistent channel ---------------------------------------------------------------------
def interleaved(sides: dict[str, Callable[[], None]], seconds: float) -> dict[str, dict]:
    """Each side's call run for ``seconds`` in all, in ``ROUNDS`` slices taken in turn (the
    order flipped every round): calls/s and latency p50/p99 over all of them, and each side's
    time per call in each round (the rounds pair the sides up under the same load)."""
    lat: dict[str, list[float]] = {s: [] for s in sides}
    per_call: dict[str, list[float]] = {s: [] for s in sides}
    spent = dict.fromkeys(sides, 0.0)
    for call in sides.values():  # warm up: connection, handshake, the server's first calls
        for _ in range(20):
            call()
    names = list(sides)
    for r in range(ROUNDS):
        for side in names if r % 2 == 0 else names[::-1]:
            call, out = sides[side], lat[side]
            n = 0
            start_t = time.perf_counter()
            end = start_t + seconds / ROUNDS
            while True:
                t0 = time.perf_counter()
                call()
                t1 = time.perf_counter()
                out.append(t1 - t0)
                n += 1
                if t1 >= end:
                    break
            per_call[side].append((t1 - start_t) / n)
            spent[side] += t1 - start_t
    return {
        s: {
            "per_s": len(lat[s]) / spent[s],
            "calls": len(lat[s]),
            "ms": quantiles_ms(lat[s]),
            "rounds": per_call[s],
        }
        for s in sides
    }


def slower(r: dict[str, dict], side: str = "tls") -> float:
    """The median over the rounds of ``side``'s time per call over plaintext's in the same
    round."""
    return statistics.median(
        t / p for t, p in zip(r[side]["rounds"], r["plain"]["rounds"], strict=True)
    )


def gateway_credentials() -> grpc.ChannelCredentials:
    cert, key, ca = files_of("gateway").read()
    return grpc.ssl_channel_credentials(
        root_certificates=ca, private_key=key, certificate_chain=cert
    )


# The sides of (a): a channel as the services make one (infra.tls.dial: a ReloadingChannel
# presenting the gateway's certificate), a bare grpc.secure_channel with the same credentials
# (TLS without the reloading wrapper), and plaintext.
SIDES = {
    "tls": "mutual TLS, infra.tls.dial",
    "tls-raw": "mutual TLS, grpc.secure_channel",
    "plain": "plaintext",
}


def persistent(tls: ServiceProcess, plain: ServiceProcess) -> list[tuple[str, dict]]:
    rows = []
    channels = {
        "tls": to_process(tls, "gateway"),
        "tls-raw": grpc.secure_channel(
            tls.address, gateway_credentials(), options=list(name_override("rules"))
        ),
        "plain": to_process(plain, "gateway"),
    }
    try:
        health = {k: health_pb2_grpc.HealthStub(c) for k, c in channels.items()}
        rules = {k: rules_pb2_grpc.RulesServiceStub(c) for k, c in channels.items()}
        check = health_pb2.HealthCheckRequest()
        winning = T.parse_counts("12345678911122m")  # 清一色, one decomposition
        hand = rules_pb2.EvaluateHandRequest(hand=R.hand_to_proto(winning))
        assert all(stub.EvaluateHand(hand, timeout=TIMEOUT).winning for stub in rules.values())

        def checker(side: str):
            return lambda: health[side].Check(check, timeout=TIMEOUT)

        def evaluator(side: str):
            return lambda: rules[side].EvaluateHand(hand, timeout=TIMEOUT)

        for label, make in (("health Check", checker), ("rules EvaluateHand", evaluator)):
            rows.append((label, interleaved({k: make(k) for k in SIDES}, bench_seconds())))
    finally:
        for c in channels.values():
            c.close()
    return rows


# --- (b) new channels ---------------------------------------------------------------------------
def new_channels(tls: ServiceProcess, plain: ServiceProcess, seconds: float) -> dict[str, list]:
    """Seconds from making a channel to its first call's answer, per kind of channel, the kinds
    taken in turn until ``seconds`` have passed (at least 30 of each)."""
    files = files_of("gateway")
    creds = gateway_credentials()
    tls_opts = [*OWN_CONNECTION, *name_override("rules")]
    check = health_pb2.HealthCheckRequest()

    def first_call(make: Callable[[], grpc.Channel]) -> float:
        t0 = time.perf_counter()
        channel = make()
        try:
            health_pb2_grpc.HealthStub(channel).Check(check, timeout=TIMEOUT)
            return time.perf_counter() - t0
        finally:
            channel.close()

    kinds: dict[str, Callable[[], grpc.Channel]] = {
        "plain": lambda: grpc.insecure_channel(plain.address, options=list(OWN_CONNECTION)),
        "tls": lambda: grpc.secure_channel(tls.address, creds, options=tls_opts),
        "dial": lambda: dial(tls.address, "rules", files, OWN_CONNECTION),
    }
    out: dict[str, list[float]] = {k: [] for k in kinds}
    for make in kinds.values():  # warm up
        first_call(make)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or min(len(v) for v in out.values()) < 30:
        for kind, make in kinds.items():
            out[kind].append(first_call(make))
    return out


# --- (c) the full stack -------------------------------------------------------------------------
class Stack:
    """Wall, rules, scoring and a gateway as processes, TLS or plaintext, with a player's
    channel to the gateway's public port."""

    def __init__(self, tmp: Path, plaintext: bool) -> None:
        self.label = "plain" if plaintext else "tls"
        self.procs: dict[str, ServiceProcess] = {}
        try:
            for name in DOWNSTREAM:
                self.procs[name] = start(name, tmp, self.label, plaintext=plaintext)
            for p in self.procs.values():
                p.wait_ready()
            flags = [f for n in DOWNSTREAM for f in (f"--{n}-addr", self.procs[n].internal_address)]
            flags += ["--bot-delay-ms", "0", "--between-hands-ms", "0"]
            # public tables, as many as the benchmark makes
            flags += ["--public-tables-per-minute", "0", "--public-tables-per-address", "0"]
            self.procs["gateway"] = start("gateway", tmp, self.label, flags, plaintext)
            gateway = self.procs["gateway"].wait_ready()
        except BaseException:
            self.close()
            raise
        assert gateway.plaintext == plaintext
        if plaintext:
            self.channel = grpc.insecure_channel(gateway.address)
        else:
            self.channel = as_player(gateway.address)  # server TLS, trusting the development CA
        self.stub = gateway_pb2_grpc.GatewayServiceStub(self.channel)

    def play(self, in_flight: int, window: float) -> tuple[int, int]:
        """Tables of four bots (one hand each) kept ``in_flight`` at once for ``window``
        seconds, a new one made as each finishes: (hands finished, events the spectators
        received) within the window. The tables still playing at its end are then played out,
        uncounted, so the next round (the other stack's) runs alone."""
        hands = [0] * in_flight
        events = [0] * in_flight
        end = time.perf_counter() + window

        def one_table(i: int) -> None:
            made = self.stub.CreateTable(
                pb.CreateTableRequest(
                    request_id=uuid.uuid4().hex,
                    stake=1,
                    seats=[pb.SeatAssignment(bot=True) for _ in range(4)],
                    max_hands=1,
                ),
                timeout=TIMEOUT,
            )
            watcher = self.stub.JoinSeat(
                pb.JoinSeatRequest(table_id=made.table_id, spectator=True), timeout=TIMEOUT
            )
            request = pb.SubscribeRequest(table_id=made.table_id, seat_token=watcher.seat_token)
            for r in self.stub.Subscribe(request, timeout=300):
                counted = time.perf_counter() < end
                events[i] += counted
                if r.event.WhichOneof("kind") == "table_finished":
                    hands[i] += counted
                    return
            raise RuntimeError(f"table {made.table_id}: the stream ended before it finished")

        def worker(i: int) -> None:
            while True:  # at least one table each (the warm-up's window is 0)
                one_table(i)
                if time.perf_counter() >= end:
                    return

        run_threads(worker, in_flight, with_index=True)  # a worker's failure fails the round
        return sum(hands), sum(events)

    def close(self) -> None:
        if hasattr(self, "channel"):
            self.channel.close()
        for p in reversed(list(self.procs.values())):
            p.stop()


def full_stack(tmp: Path, seconds: float) -> dict[str, dict]:
    """Both stacks, their rounds of ``ROUND_SECONDS`` alternating until each has had
    ``seconds`` (at least two rounds)."""
    stacks: dict[str, Stack] = {}
    try:
        stacks["tls"] = Stack(tmp, plaintext=False)
        stacks["plain"] = Stack(tmp, plaintext=True)
        for s in stacks.values():  # warm up: connections, the first hands' lazy work
            s.play(TABLES, 0.0)
        rounds = max(2, math.ceil(seconds / ROUND_SECONDS))
        played: dict[str, list[tuple[int, int]]] = {k: [] for k in stacks}
        order = list(stacks)
        for r in range(rounds):
            for side in order if r % 2 == 0 else order[::-1]:
                played[side].append(stacks[side].play(TABLES, ROUND_SECONDS))
        out = {}
        for k, v in played.items():
            hands, events = sum(h for h, _ in v), sum(e for _, e in v)
            spent = len(v) * ROUND_SECONDS
            out[k] = {
                "hands": hands,
                "events": events,
                "seconds": spent,
                "rounds": v,
                "per_s": hands / spent,
                "events_per_s": events / spent,
            }
        return out
    finally:
        for s in stacks.values():
            s.close()


def main() -> int:
    print("transport security: mutual TLS against plaintext, rounds interleaved")
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as d:
        tmp = Path(d)
        tls = start("rules", tmp, "tls")
        plain = start("rules", tmp, "plain", plaintext=True)
        try:
            tls.wait_ready()
            plain.wait_ready()
            assert not tls.plaintext and plain.plaintext
            print(
                f"(a) unary calls on one persistent channel, 1 client, to a rules process "
                f"(mutual TLS as the gateway / plaintext), {bench_seconds():g} s a side each"
            )
            print(
                f"    {'call':<20}{'side':<34}{'calls/s':>9}{'p50 ms':>9}{'p99 ms':>9}"
                f"{'time per call / plaintext':>28}"
            )
            worst = 0.0
            for label, r in persistent(tls, plain):
                for side, name in SIDES.items():
                    p50, p99 = r[side]["ms"]
                    ratio = ""
                    if side != "plain":
                        paired = slower(r, side)
                        overall = r["plain"]["per_s"] / r[side]["per_s"]
                        ratio = f"{paired:9.3f}x ({overall:.3f}x overall)"
                        if side == "tls":
                            worst = max(worst, paired)
                    line = (
                        f"    {label if side == 'tls' else '':<20}{name:<34}"
                        f"{r[side]['per_s']:>9,.0f}{p50:>9.3f}{p99:>9.3f}{ratio:>28}"
                    )
                    print(line.rstrip())
            verdict = "meets" if worst <= GOAL else "MISSES"
            print(
                f"    (time per call / plaintext: the median of the {ROUNDS} rounds' ratios; "
                "overall: calls/s over all rounds)"
            )
            print(
                f"    mutual TLS as the services call, time per call / plaintext's, at worst "
                f"{worst:.3f}x — {verdict} the ≤ {GOAL:.2f}x goal (TLS ≤ 10% slower)"
            )

            times = new_channels(tls, plain, 2 * bench_seconds())
            print(
                "(b) a new channel and its first call (health Check), its own connection: TCP "
                "connect, and for TLS the handshake (ECDSA P-256 certificates, both sides)"
            )
            labels = {
                "plain": "plaintext",
                "tls": "mutual TLS, credentials made once",
                "dial": "mutual TLS, infra.tls.dial (files read)",
            }
            base = quantiles_ms(times["plain"])
            for kind, label in labels.items():
                p50, p99 = quantiles_ms(times[kind])
                ratio = "" if kind == "plain" else f"   {p50 / base[0]:5.1f}x plaintext's p50"
                print(
                    f"    {label:<42} {len(times[kind]):4d} channels: p50 {p50:6.2f} ms, "
                    f"p99 {p99:6.2f} ms{ratio}"
                )
            print(
                f"    the handshake adds {quantiles_ms(times['tls'])[0] - base[0]:.2f} ms (p50) "
                "to a connection; a persistent channel pays it once"
            )
        finally:
            tls.stop()
            plain.stop()

        seconds = 8 * bench_seconds()
        print(
            f"(c) whole hands per second, full stack (wall, rules, scoring, gateway processes), "
            f"{TABLES} bot tables in flight (1 hand each), rounds of {ROUND_SECONDS:g} s "
            f"alternating, ≥ {seconds:g} s a side"
        )
        r = full_stack(tmp, seconds)
        for side, name in (("tls", "mutual TLS"), ("plain", "plaintext")):
            x = r[side]
            print(
                f"    {name:<11}{x['per_s']:8.2f} hands/s {x['events_per_s']:8.0f} events/s   "
                f"({x['hands']} hands, {x['events']} events in {x['seconds']:.1f} s, "
                f"{len(x['rounds'])} rounds)"
            )
        hands = r["plain"]["per_s"] / r["tls"]["per_s"]
        events = r["plain"]["events_per_s"] / r["tls"]["events_per_s"]
        paired = statistics.median(
            p / t for (_, t), (_, p) in zip(r["tls"]["rounds"], r["plain"]["rounds"], strict=True)
        )
        print(
            f"    plaintext / TLS: hands per second {hands:.3f}x; events per second {events:.3f}x "
            f"overall, {paired:.3f}x the median of the rounds' ratios"
        )
        print(
            "    (hands differ in length, every wall shuffled anew: the events, a spectator's view "
            "of the tables' logs, compare the work done)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
