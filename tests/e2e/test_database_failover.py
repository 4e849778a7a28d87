"""The database fails under two gateway replicas mid-hand, and the tables ride through it.

Real PostgreSQL servers the test starts itself (tests/support/pg_servers.py): a primary
(``initdb``) with a synchronous standby (``pg_basebackup``, ``synchronous_standby_names``), and
two gateway processes whose store URL names both (``host=a,b port=p1,p2
target_session_attrs=read-write``, as CloudNativePG's ``-rw`` Service or a multi-host DSN
gives them). A player (on replica B, its acts forwarded to the owner A) and three bots play:

1. **Failover**: right after an act is acknowledged, the primary is SIGKILLed (every process
   of it) and the standby promoted 2 s later, as a failover manager would.
2. **Restart**: later, the promoted server, now alone, is SIGKILLed and started again 1 s
   later on the same port and data (crash recovery).

The player retries each act with its request id and resumes its stream from its last
sequence, alternating between the replicas. Afterwards, from the surviving database: the table
finished; its log is numbered 1..N without a gap; every act the player was told was accepted
is in the log at its sequence (none lost, though the primary died right after acknowledging
one); every hand replay-verifies. The time from each kill to the first act accepted after it
is printed (the README's "Operations: database failover" quotes it)."""

from __future__ import annotations

import contextlib
import time
import uuid

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.store import open_store
from infra.supervisor import stop_all
from services.gateway.domain.events import kinds as K
from services.gateway.domain.replay import export_hand, table_header
from services.gateway.tables import read_table_log
from services.gateway.verify import verify_hand
from tests.e2e.players import legal_answer
from tests.support import probes
from tests.support.events import json_log
from tests.support.pg_servers import pg_servers
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.tables import request_table
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

LEASE_MS = 1500
PROMOTE_AFTER_S = 2.0  # what a failover manager takes to decide, at the shortest
RESTART_AFTER_S = 1.0
TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
SYNC = "synchronous_standby_names=standby"


@pytest.fixture(scope="module")
def backends(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dbfail")
    procs = {}
    try:
        start_services(procs, tmp, ("wall", "rules", "scoring"))
        for p in procs.values():
            p.wait_ready(60)  # a loaded machine starts them slowly
        yield tmp, procs
    finally:
        stop_all(procs.values())


def multi_host_url(*servers) -> str:
    hosts = ",".join("127.0.0.1" for _ in servers)
    ports = ",".join(str(s.port) for s in servers)
    return (
        f"postgresql://postgres@/postgres?host={hosts}&port={ports}"
        "&target_session_attrs=read-write&connect_timeout=2"
    )


class Player:
    """One seat's client on two replicas: every call goes to one replica, the next try to the
    other; an act keeps its request id across tries (at most once in the log)."""

    def __init__(self, stubs, table_id: str, token: str) -> None:
        self.stubs, self.table_id, self.token = stubs, table_id, token
        self.turn = 0
        self.last = 0  # the last sequence seen
        self.acked: list[tuple[int, str]] = []  # (sequence, request id) of every accepted act

    def _stub(self):
        self.turn += 1
        return self.stubs[self.turn % len(self.stubs)]

    def act(self, prompt: pb.Event, deadline: float = 60) -> float:
        """Answer ``prompt`` until accepted; when it was accepted (monotonic)."""
        request = pb.ActRequest(
            table_id=self.table_id,
            seat_token=self.token,
            request_id=uuid.uuid4().hex,
            last_sequence=prompt.sequence,
            action=legal_answer(prompt.prompt),
        )
        end = time.monotonic() + deadline
        while True:
            try:
                response = self._stub().Act(request, timeout=5)
            except grpc.RpcError as exc:
                if exc.code() not in TRANSIENT or time.monotonic() > end:
                    raise
                time.sleep(0.1)
                continue
            self.acked.append((response.sequence, request.request_id))
            return time.monotonic()

    def prompts(self, deadline: float = 120):
        """The seat's events from after ``last`` on, resumed on the other replica whenever a
        stream breaks; yields each own-turn or claim prompt (the caller answers it) and stops
        at the table's end."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            request = pb.SubscribeRequest(
                table_id=self.table_id, seat_token=self.token, after_sequence=self.last
            )
            try:
                for r in self._stub().Subscribe(request, timeout=end - time.monotonic()):
                    assert r.event.sequence > self.last, (self.last, r.event.sequence)
                    self.last = r.event.sequence
                    kind = r.event.WhichOneof("kind")
                    if kind == "table_finished":
                        return
                    if kind == "prompt":
                        yield r.event
            except grpc.RpcError as exc:
                if exc.code() not in TRANSIENT:
                    raise
                time.sleep(0.1)
        raise AssertionError(f"the table did not finish within {deadline} s")


def gateway(tmp, procs, name: str, url: str):
    flags = [
        *backend_flags(procs),
        "--seat-secret", "e2e-secret", "--lease-ms", str(LEASE_MS), "--replica-id", name,
        "--discard-ms", "600000", "--claim-ms", "600000", "--bot-delay-ms", "0",
        "--seat-calls-per-second", "0",
    ]  # fmt: skip
    return service_process("gateway", tmp, store_url=url, extra=flags, log_name=name).start()


def test_tables_ride_through_a_failover_and_a_restart(backends):
    tmp, procs = backends
    t0 = time.monotonic()
    with pg_servers() as new_server:
        primary = new_server("primary").initdb().start(SYNC)
        standby = new_server("standby")
        url = multi_host_url(primary, standby)
        # the gateways start on the primary meanwhile (their first commits wait for the standby)
        gateways = [gateway(tmp, procs, n, url) for n in ("db-a", "db-b")]
        channels = []
        try:
            standby.base_backup_of(primary).start()
            replication = "SELECT application_name, sync_state FROM pg_stat_replication"
            probes.wait_for(  # streaming and caught up: every commit now waits for the standby
                lambda: primary.query(replication) == [("standby", "sync")], 30, "a sync standby"
            )
            t_servers = time.monotonic() - t0
            for g in gateways:
                g.wait_ready(60)
            channels = [as_player(g.address) for g in gateways]
            t_gateways = time.monotonic() - t0
            a, b = (gateway_pb2_grpc.GatewayServiceStub(c) for c in channels)
            t = request_table(
                a,
                [pb.SeatAssignment(player_id="db-0"), *[pb.SeatAssignment(bot=True)] * 3],
                max_hands=2,
                first_dealer=common_pb2.SEAT_0,
            )
            player = Player([b, a], t.table_id, t.seat_tokens[0])
            faults: list[tuple[str, float]] = []  # (what, when)
            measured: dict[str, float] = {}
            acts = 0
            for prompt in player.prompts():
                accepted = player.act(prompt)
                acts += 1
                for what, at in faults:
                    measured.setdefault(what, accepted - at)
                if acts == 3:  # the primary dies with the bots' turns in flight
                    primary.kill()
                    faults.append(("failover", time.monotonic()))
                    time.sleep(PROMOTE_AFTER_S)
                    standby.promote()
                elif acts == 6:  # the lone primary crashes and comes back
                    standby.kill()
                    faults.append(("restart", time.monotonic()))
                    time.sleep(RESTART_AFTER_S)
                    standby.start()
            assert set(measured) == {"failover", "restart"}, (acts, measured)
            print(
                f"\nfirst act accepted {measured['failover']:.2f} s after the primary's "
                f"SIGKILL (standby promoted at {PROMOTE_AFTER_S:g} s), "
                f"{measured['restart']:.2f} s after the lone primary's SIGKILL (restarted at "
                f"{RESTART_AFTER_S:g} s); {acts} acts; servers up at {t_servers:.1f} s, gateways "
                f"at {t_gateways:.1f} s, table finished at {time.monotonic() - t0:.1f} s"
            )
            store = open_store(standby.url())
            try:
                log = read_table_log(store, t.table_id)
            finally:
                store.close()
            assert [e.seq for e in log] == list(range(1, len(log) + 1)), "a gap or a repeat"
            assert isinstance(log[-1].event, K.TableFinished)
            decided = [  # (request id, where the log records it) of every player's decision
                (e.event.request_id, e.seq)
                for e in log
                if isinstance(e.event, K.ActionTaken) and e.event.request_id
            ]
            applied = dict(decided)
            assert len(applied) == len(decided) == len(player.acked), "an act twice, or unasked"
            for sequence, request_id in player.acked:  # every acknowledged act is in the log
                # (answered with the last event the seat sees: a number of the log)
                assert request_id in applied and sequence <= len(log), request_id
            header = table_header(t.table_id, log)
            hands = [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]
            assert len(hands) == 2
            for hid in hands:
                verdict = verify_hand(export_hand(header, log, hid))
                assert verdict.ok, verdict.problems
        except BaseException:
            print(primary.log_tail(), standby.log_tail(), sep="\n")
            raise
        finally:
            for c in channels:
                c.close()
            for g in gateways:
                with contextlib.suppress(Exception):
                    g.stop()
