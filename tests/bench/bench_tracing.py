"""What tracing costs (issue 32): the CPU the wall, rules, scoring and gateway processes spend
per action while a player plays whole hands over gRPC (one seat; three bots inside the
gateway), with tracing off, on at 1% sampling and on at 100%, side by side with the commit
before tracing (the parent of the commit that added infra/tracing.py, checked out in a
temporary git worktree; MAHJONG_BENCH_TRACING_BASE=<rev> names another, ``none`` skips it).
Every run is pure Python (MAHJONG_PURE_PYTHON=1: the baseline checkout has no compiled
modules), each service's CPU read from /proc (user + system) over the hands alone; the spans
go to a real OTLP/gRPC receiver in this process. Goals: off within 2% of the baseline, 1%
within 5%. MAHJONG_BENCH_TRACING_HANDS (default 6) hands per run, after one of warm-up.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import grpc
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra import tracing
from infra.config import Config, ServiceSpec
from infra.logs import configure_logging
from infra.ports import AUTO_PORT
from infra.server import start
from infra.store.memory import MemoryStore
from infra.supervisor import DEV_TLS_ROOT, ServiceProcess
from infra.tls import plaintext_channel
from tests.bench.bench_gateway import create
from tests.e2e.players import legal_answer
from tests.support.otlp import Receiver
from tests.support.sessions import NO_HOLD_FLAGS
from tests.support.tls import as_player

DOWNSTREAM = ("wall", "rules", "scoring")
ROOT = Path(__file__).resolve().parents[2]
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


class Run:
    """The four processes of one configuration (from ``tree``: None = this checkout)."""

    def __init__(self, flags: list[str], tree: Path | None) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-tracing-"))
        env = {"MAHJONG_PURE_PYTHON": "1"}
        prefix: list[str] = []
        if tree is not None:  # the baseline's modules first (the generated protos are main's)
            env["PYTHONPATH"] = str(tree)
            prefix = ["env", f"--chdir={tree}"]
        common = ["--log-level", "warning", *flags]
        self.procs: dict[str, ServiceProcess] = {}

        def proc(name: str, store: str, extra: list[str]) -> ServiceProcess:
            p = ServiceProcess(
                name,
                0,
                AUTO_PORT,
                store,
                [*common, *extra],
                env=env,
                log_path=self.tmp / f"{name}.log",
                tls_root=DEV_TLS_ROOT.resolve(),
                prefix=prefix,
            )
            self.procs[name] = p
            return p.start()

        try:
            for name in DOWNSTREAM:
                proc(name, "memory://", [])
            for p in self.procs.values():
                p.wait_ready(timeout=120)  # a busy machine starts them slowly
            addr = [f for n in DOWNSTREAM for f in (f"--{n}-addr", self.procs[n].internal_address)]
            gateway = proc(
                "gateway",
                f"sqlite:///{self.tmp / 'gateway.db'}",
                [*addr, *NO_HOLD_FLAGS, "--bot-delay-ms", "0", "--seat-calls-per-second", "0"],
            )
            gateway.wait_ready(timeout=120)
        except BaseException:
            self.close()
            raise

    def cpu(self) -> float:
        return sum(cpu_seconds(p.proc.pid) for p in self.procs.values())

    def actions(self) -> float:
        url = f"http://127.0.0.1:{self.procs['gateway'].ports.metrics}/metrics"
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if re.match(r"mahjong_gateway_actions_total(\{|\s)", line)
        )

    def close(self) -> None:
        for p in reversed(list(self.procs.values())):
            p.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def play(run: Run, hands: int) -> tuple[float, float]:
    """CPU seconds per action and actions, over ``hands`` hands of one player and three bots
    (after a hand of warm-up, not counted: the first of each process is slower)."""
    with as_player(run.procs["gateway"].address) as channel:
        stub = gateway_pb2_grpc.GatewayServiceStub(channel)
        _table(stub, 1)
        before_cpu, before_actions = run.cpu(), run.actions()
        _table(stub, hands)
        time.sleep(0.3)  # the last steps after the table's end (reports), then read
        actions = run.actions() - before_actions
        return (run.cpu() - before_cpu) / max(1.0, actions), actions


def _table(stub, hands: int) -> None:
    """A table of ``hands`` hands played to its end: the player answers every prompt."""
    seats = [pb.SeatAssignment(player_id="bench"), *[pb.SeatAssignment(bot=True)] * 3]
    t = create(stub, seats, hands)
    token = t.seat_tokens[0]
    for r in stub.Subscribe(
        pb.SubscribeRequest(table_id=t.table_id, seat_token=token), timeout=600
    ):
        e = r.event
        kind = e.WhichOneof("kind")
        if kind == "table_finished":
            break
        if kind == "prompt":
            stub.Act(
                pb.ActRequest(
                    table_id=t.table_id,
                    seat_token=token,
                    request_id=uuid.uuid4().hex,
                    last_sequence=e.sequence,
                    action=legal_answer(e.prompt),
                ),
                timeout=10,
            )


# --- (b) the cost of one call's tracing, in one process ------------------------------------
PROBE = "bench.v1.TraceProbe"


def _probe_spec() -> ServiceSpec:
    store = MemoryStore()

    def echo(request, context):  # a call that writes the store, as most of the gateway's do
        store.put("probe", "key", request)
        return request

    def add(server, config):
        handler = grpc.unary_unary_rpc_method_handler(echo)
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(PROBE, {"Echo": handler}),)
        )

    return ServiceSpec("probe", 0, 0, add, [PROBE])


def cpu_per_call(calls: int) -> float:
    """CPU seconds of this process (client and server) per unary call on a loopback server."""
    running = start(_probe_spec(), Config(port=0, insecure=True))
    try:
        with plaintext_channel(running.address) as channel:
            echo = channel.unary_unary(f"/{PROBE}/Echo")
            for _ in range(200):
                echo(b"warm", timeout=5)
            begin = time.process_time()
            for _ in range(calls):
                echo(b"x", timeout=5)
            return (time.process_time() - begin) / calls
    finally:
        running.stop(grace=0)


def hooks_off_seconds(rounds: int = 200_000) -> float:
    """CPU seconds the hooks of one call and one store operation take with tracing off."""
    tracing.install(None)
    store = MemoryStore()
    get, bare = MemoryStore.get, MemoryStore.get.__wrapped__
    begin = time.process_time()
    for _ in range(rounds):
        tracing.end_server_span(tracing.server_span("s", "m", None), "OK")
        tracing.exemplar()
        get(store, "n", "k")
    hooked = time.process_time() - begin
    begin = time.process_time()
    for _ in range(rounds):
        bare(store, "n", "k")
    return (hooked - (time.process_time() - begin)) / rounds


class _Metadata:
    def __init__(self, metadata) -> None:
        self.metadata = metadata

    def invocation_metadata(self):
        return self.metadata


def hooks_on_seconds(rounds: int = 50_000) -> tuple[float, float]:
    """CPU seconds of one call's hooks at 1% when not kept: (the server's span under a caller's
    trace not kept, the client's span of a new trace with its ``traceparent``)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased

    tracing.install(TracerProvider(sampler=ParentBased(ALWAYS_ON)), root_ratio=0.01)
    try:
        caller = _Metadata((("traceparent", f"00-{'1' * 32}-{'2' * 16}-00"),))
        begin = time.process_time()
        for _ in range(rounds):
            tracing.end_server_span(tracing.server_span("s", "m", caller), "OK")
            tracing.exemplar()
        server = (time.process_time() - begin) / rounds
        begin = time.process_time()
        for _ in range(rounds):
            span = tracing.client_span("/s/m")
            tracing.outgoing(span)
            tracing.end_span(span, "OK")
        return server, (time.process_time() - begin) / rounds
    finally:
        tracing.install(None)


def per_call(endpoint: str, calls: int, rounds: int = 4) -> dict[str, float]:
    """CPU per call with tracing off, at 1% and at 100% (spans to ``endpoint``): the least of
    ``rounds`` interleaved rounds (what other processes do to this one's CPU time only adds)."""
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased

    configure_logging("warning")  # the probe servers' start-up lines
    out: dict[str, list[float]] = {}
    for _ in range(rounds):
        for label, ratio in (("off", None), ("on, 1%", 0.01), ("on, 100%", 1.0)):
            provider = None
            if ratio is not None:
                provider = TracerProvider(sampler=ParentBased(ALWAYS_ON))  # as configure() does
                exporter = OTLPSpanExporter(endpoint=f"http://{endpoint}", insecure=True)
                provider.add_span_processor(BatchSpanProcessor(exporter))
            tracing.install(provider, root_ratio=ratio)
            try:
                out.setdefault(label, []).append(cpu_per_call(calls))
            finally:
                tracing.install(None)
                if provider is not None:
                    provider.shutdown()
    configure_logging("info")
    return {label: min(v) for label, v in out.items()}


def per_call_report(receiver: Receiver) -> None:
    """(b): the hooks' cost with tracing off, and one call's CPU off, at 1% and at 100%."""
    calls = int(os.environ.get("MAHJONG_BENCH_TRACING_CALLS", "1000"))
    off_hooks = hooks_off_seconds()
    costs = per_call(receiver.endpoint, calls)
    off = costs["off"]
    print(
        f"(b) one unary call with a store write, client and server in one process "
        f"(least of 4 rounds of {calls}):"
    )
    server, client = hooks_on_seconds()
    print(f"    tracing off, the hooks alone: {off_hooks * 1e6:.2f} µs per call")
    print(
        f"    tracing on at 1%, a call not kept, the hooks alone: server {server * 1e6:.1f} µs, "
        f"client {client * 1e6:.1f} µs"
    )
    for label in ("on, 1%", "on, 100%"):
        extra = costs[label] - off
        print(
            f"    {label}: {costs[label] * 1e6:6.1f} µs CPU per call against {off * 1e6:.1f} off "
            f"({extra * 1e6:+.1f} µs, {costs[label] / off:.3f} x)"
        )


def baseline_tree() -> tuple[Path | None, str]:
    """A worktree of the commit before tracing (None when skipped or not a git checkout)."""
    rev = os.environ.get("MAHJONG_BENCH_TRACING_BASE", "")
    if rev == "none":
        return None, ""
    git = ["git", "-C", str(ROOT)]
    try:
        if not rev:
            added = subprocess.run(
                [*git, "log", "--diff-filter=A", "--format=%H", "--", "infra/tracing.py"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            rev = f"{added[-1][:10]}^"
        tree = Path(tempfile.mkdtemp(prefix="bench-tracing-base-")) / "tree"
        subprocess.run(
            [*git, "worktree", "add", "--detach", str(tree), rev], check=True, capture_output=True
        )
        # compiled to bytecode up front, as this checkout's modules are by the runs before
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], capture_output=True)
    except (subprocess.CalledProcessError, FileNotFoundError, IndexError) as exc:
        print(f"no baseline ({exc}); set MAHJONG_BENCH_TRACING_BASE to a revision")
        return None, ""
    return tree, rev


def main() -> int:
    hands = int(os.environ.get("MAHJONG_BENCH_TRACING_HANDS", "6"))
    receiver = Receiver()
    stack = os.environ.get("MAHJONG_BENCH_TRACING_STACK") != "0"  # "0": (b) alone
    tree, rev = baseline_tree() if stack else (None, "")
    on = ["--otlp-endpoint", receiver.endpoint, "--trace-sample-ratio"]
    configs = [
        *([(f"before ({rev})", [], tree)] if tree is not None else []),
        ("off", [], None),
        ("on, 1%", [*on, "0.01"], None),
        ("on, 100%", [*on, "1"], None),
    ]
    if not stack:
        configs = []
    results: dict[str, list[float]] = {label: [] for label, _, _ in configs}
    try:  # two rounds, the second in the reverse order: what drifts meanwhile weighs on all
        for label, flags, where in [*configs, *reversed(configs)]:
            run = Run(flags, where)
            try:
                spans_before = len(receiver.spans)
                per_action, actions = play(run, hands)
            finally:
                run.close()  # its spans flushed at its stop
            results[label].append(per_action)
            print(
                f"{label:>28}: {per_action * 1e3:7.3f} ms CPU per action "
                f"({actions:.0f} actions, {len(receiver.spans) - spans_before} spans exported)",
                flush=True,
            )
        per_call_report(receiver)
    finally:
        receiver.stop()
        if tree is not None:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                capture_output=True,
            )
            shutil.rmtree(tree.parent, ignore_errors=True)
    means = {label: sum(v) / len(v) for label, v in results.items()}
    if not means:
        return 0
    first = next(iter(means))
    for label, value in means.items():
        print(
            f"{label:>28}: {value * 1e3:7.3f} ms CPU per action (mean of 2), "
            f"{value / means[first]:6.3f} x {first}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
