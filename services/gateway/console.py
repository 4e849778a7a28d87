"""The operator's RPCs of GatewayService (ListTables, InspectTable, EndTable): a thin
translation between protobuf and :class:`~services.gateway.tables.operations.TableOperations`,
for the whole cluster from any replica (README "Operations").

Who calls (:meth:`Console.operator`): on the gRPC ports the operator's certificate (``callers``
in :mod:`services.gateway.server`); on the web port an operator's session, checked with
matchmaking (:func:`~services.gateway.signed_in.operator_actor`); or another gateway replica
carrying an operator's signed claim (:mod:`services.gateway.delegation`), which only a gateway
peer's certificate may bring. The actor kept in the audit log is the certificate's subject, the
session's (``session:<player id>``), or the claim's operator ``via gateway <replica id>``.

* ListTables lists every replica's tables (:func:`~services.gateway.tables.listing.cluster_tables`:
  the store's leases, each owner asked on its internal port with the operator's claim, a silent
  owner's tables read from their logs); a call carrying a claim answers this replica's alone.
* InspectTable and EndTable on a table another replica runs are sent on to the owner's internal
  port with the operator's claim (:class:`OperatorForwarder`, the same route as the players'
  forwarded calls, :func:`~services.gateway.forwarding.route`); the owner answers and audits.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import grpc
import structlog
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from infra.interceptor import from_internal_caller, internal_metadata
from infra.operator_calls import is_web_call
from infra.tls import OPERATOR, TLSFiles, caller_subject, caller_workload
from services.gateway import delegation
from services.gateway.convert.events import event_to_proto
from services.gateway.convert.views import view_to_proto
from services.gateway.forwarding import FORWARDED_HEADER, SyncForwarder, forwarded, here_or_owner
from services.gateway.signed_in import SessionCheck, operator_actor
from services.gateway.tables import TableManager
from services.gateway.tables.leases import internal_address_of, owner_of
from services.gateway.tables.listing import cluster_tables
from services.gateway.tables.operations import TableSummary
from shared.errors import PermissionDenied, Unavailable

log_ = structlog.get_logger("mahjong.gateway.console")

CONSOLE_METHODS = ("ListTables", "EndTable", "InspectTable")
MATCHMAKING_METHODS = ("SuspendSeat",)
GATEWAYS = frozenset({"gateway"})
MAX_PEERS_ASKED_AT_ONCE = 8


class OperatorForwarder(SyncForwarder):
    """Console calls sent on to the replica that runs the table: its internal port (mutual
    TLS: this replica's certificate shows a gateway peer), with the operator's ``claim``
    (:meth:`carrying` makes a call's own, sharing the channels)."""

    def __init__(self, manager: TableManager, tls: TLSFiles | None) -> None:
        st = manager.settings
        super().__init__(st.replica_id, st.address, tls, st.lease_ms)
        self.store = manager.store
        self.internal_token = ""
        self.claim = ""

    def carrying(self, claim: str) -> OperatorForwarder:
        call = copy.copy(self)  # the same channels (``_stubs``), a claim of its own
        call.claim = claim
        return call

    def owner(self, exc: Exception, context) -> str | None:
        """The internal address of the replica whose lease on the table runs, for a NOT_OWNER
        refusal of a call not forwarded already."""
        if not isinstance(exc, Unavailable) or exc.reason != "NOT_OWNER" or forwarded(context):
            return None
        replica = owner_of(self.store, str(exc.details.get("table_id", "")))
        if not replica or replica == self.replica_id:
            return None
        return internal_address_of(self.store, replica) or None

    def metadata(self, context=None) -> tuple[tuple[str, str], ...]:
        return (
            *internal_metadata(self.internal_token),
            (FORWARDED_HEADER, self.replica_id),
            (delegation.CLAIM_HEADER, self.claim),
        )


class Console:
    """The console RPCs of one replica: its ``manager``'s tables, matchmaking's ``sessions``
    (read when called: set after the servicer is made), the other replicas through
    :class:`OperatorForwarder`."""

    def __init__(
        self,
        manager: TableManager,
        tls: TLSFiles | None,
        sessions: Callable[[], SessionCheck | None],
    ) -> None:
        self.manager = manager
        self.sessions = sessions
        self.forwarder = OperatorForwarder(manager, tls)
        self._pool: ThreadPoolExecutor | None = None

    @property
    def internal_token(self) -> str:
        return self.forwarder.internal_token

    @internal_token.setter
    def internal_token(self, token: str) -> None:
        self.forwarder.internal_token = token

    # --- who calls ---------------------------------------------------------------------------
    def operator(self, context, method: str, target: str) -> tuple[str, bool]:
        """(who acts, whether another replica sent the call on with the operator's claim).
        A claim is accepted only from a gateway peer's certificate (see
        :mod:`services.gateway.delegation`); a gateway peer without one is refused."""
        sent = dict(context.invocation_metadata() or ()).get(delegation.CLAIM_HEADER)
        peer = not is_web_call(context) and from_internal_caller(context, GATEWAYS, strict=True)
        if sent is not None:
            if not peer:
                raise PermissionDenied(
                    f"{delegation.CLAIM_HEADER} is accepted only from another gateway replica "
                    "(its certificate, on the internal port): an operator calls with their own "
                    "certificate or session",
                    reason="DELEGATION_REFUSED",
                    field=delegation.CLAIM_HEADER,
                )
            secret = self.manager.settings.secret
            claim = delegation.read(secret, str(sent), method, target, _now_ms())
            return claim.audit_actor, True
        if not is_web_call(context) and caller_workload(context) in GATEWAYS:
            raise PermissionDenied(
                f"a gateway replica calls {method} only on an operator's behalf: it sent no "
                f"{delegation.CLAIM_HEADER}",
                reason="CLAIM_MISSING",
                field=delegation.CLAIM_HEADER,
            )
        actor = operator_actor(self.sessions(), context, caller_subject(context) or OPERATOR)
        return actor, False

    def _carrying(self, actor: str, method: str, target: str) -> OperatorForwarder:
        st = self.manager.settings
        claim = delegation.Claim(actor, st.replica_id, method, target, _now_ms())
        return self.forwarder.carrying(delegation.sign(st.secret, claim))

    # --- the RPCs ----------------------------------------------------------------------------
    def list_tables(self, request, context) -> pb.ListTablesResponse:
        actor, delegated = self.operator(context, "ListTables", "")
        ops = self.manager.operations
        asked = (request.tag_prefix, request.stake, request.halted_only)
        mine = ops.list_tables(*asked, leased_only=delegated)
        if delegated:  # another replica lists the cluster: the tables this one runs
            return pb.ListTablesResponse(tables=[summary_to_proto(t) for t in mine])
        st = self.manager.settings

        def ask(peers: list[str]) -> dict[str, list[TableSummary] | None]:
            now = time.monotonic()  # the peers get 80% of the time left: the rest to answer
            until = now + 0.8 * (self.forwarder.give_up(context) - now)
            return self._ask_peers(peers, request, actor, until)

        found = cluster_tables(self.manager.store, st.replica_id, mine, ask, *asked)
        return pb.ListTablesResponse(tables=[summary_to_proto(t) for t in found])

    def _ask_peers(
        self, peers: list[str], request, actor: str, give_up: float
    ) -> dict[str, list[TableSummary] | None]:
        """Each of ``peers``' own tables (ListTables on its internal port with the operator's
        claim, one try of half a lease at most, within the caller's deadline ``give_up``),
        None for one that did not answer."""
        if not peers:
            return {}
        if self._pool is None:
            self._pool = ThreadPoolExecutor(MAX_PEERS_ASKED_AT_ONCE, "gateway-console")
        forwarder = self._carrying(actor, "ListTables", "")

        def one(replica: str) -> list[TableSummary] | None:
            address = internal_address_of(self.manager.store, replica)
            if not address:
                return None
            try:
                got = forwarder.stub(address).ListTables(
                    request, metadata=forwarder.metadata(), timeout=forwarder.try_timeout(give_up)
                )
            except grpc.RpcError as exc:
                code = exc.code().name if isinstance(exc, grpc.Call) else "UNAVAILABLE"
                log_.warning("console_peer_silent", replica=replica, code=code)
                return None
            return [summary_of_proto(t) for t in got.tables]

        return dict(zip(peers, self._pool.map(one, peers), strict=True))

    def end_table(self, request, context) -> pb.EndTableResponse:
        actor, _ = self.operator(context, "EndTable", request.table_id)

        def serve() -> pb.EndTableResponse:
            ended = self.manager.operations.end_table(request.table_id, request.reason, actor)
            return pb.EndTableResponse(
                voided_hand_id=ended.voided_hand_id,
                seed=ended.seed,
                hands_played=ended.hands_played,
            )

        forwarder = self._carrying(actor, "EndTable", request.table_id)
        return here_or_owner(forwarder, "EndTable", serve, request, context)

    def inspect_table(self, request, context) -> pb.InspectTableResponse:
        actor, _ = self.operator(context, "InspectTable", request.table_id)

        def serve() -> pb.InspectTableResponse:
            view, events, after = self.manager.operations.inspect(
                request.table_id, request.after_sequence, request.limit
            )
            return pb.InspectTableResponse(
                table=view_to_proto(view),
                events=[event_to_proto(logged, copy) for logged, copy in events],
                next_after_sequence=after,
            )

        forwarder = self._carrying(actor, "InspectTable", request.table_id)
        return here_or_owner(forwarder, "InspectTable", serve, request, context)


def suspend_seat(manager: TableManager, request, context) -> pb.SuspendSeatResponse:
    seat, changed = manager.operations.suspend_player(request.table_id, request.player_id)
    return pb.SuspendSeatResponse(seat=common_pb2.SEAT_0 + seat, changed=changed)


def summary_to_proto(t: TableSummary) -> pb.TableSummary:
    return pb.TableSummary(
        table_id=t.table_id,
        tag=t.tag,
        phase=t.phase,
        stake=t.stake,
        hands_played=t.hands_played,
        hand_id=t.hand_id,
        hand_number=t.hand_number,
        player_ids=list(t.player_ids),
        auto_play=list(t.auto_play),
        chips=list(t.chips),
        last_sequence=t.last_sequence,
        finish_reason=t.finish_reason,
        left=list(t.left),
    )


def summary_of_proto(t: pb.TableSummary) -> TableSummary:
    return TableSummary(
        t.table_id,
        t.tag,
        t.phase,
        t.stake,
        t.hands_played,
        t.hand_id,
        t.hand_number,
        tuple(t.player_ids),
        tuple(t.auto_play),
        tuple(t.chips),
        t.last_sequence,
        t.finish_reason,
        tuple(t.left),
    )


def _now_ms() -> int:
    return int(time.time() * 1000)
