"""GatewayService: a thin translation between protobuf and the table manager
(:mod:`services.gateway.tables`)."""

from __future__ import annotations

import time

import grpc
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.convert.common import (
    ruleset_from_ref,
    seat_from_proto_optional,
    seat_to_proto,
)
from infra.interceptor import from_internal_caller, peer_address
from infra.rate_limit import RateLimiter
from infra.tls import OPERATOR, TLSFiles
from services.gateway import console
from services.gateway.convert.actions import action_from_proto, action_to_proto
from services.gateway.convert.events import event_to_proto
from services.gateway.convert.stream import last_sequence, responses
from services.gateway.convert.views import view_to_proto
from services.gateway.domain.ports import ActAnswer
from services.gateway.domain.seat_replay import seat_replay
from services.gateway.domain.session import Seat
from services.gateway.domain.tokens import SeatToken
from services.gateway.flood import Admission, FloodControl
from services.gateway.forwarding import (
    AGAIN_PAUSE_S,
    RelayWatch,
    Stuck,
    SyncForwarder,
    error_of,
    here_or_owner,
)
from services.gateway.hints import gives_hints, hint, hints_allowed
from services.gateway.signed_in import SessionCheck, joining_player
from services.gateway.tables import TableManager, TableSpec, check_id
from services.gateway.tables.leases import LeaseWatch
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import read_table_log
from services.gateway.tables.streams import Seen
from shared.errors import (
    DomainError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unavailable,
)
from shared.ruleset import DEFAULT_RULESET
from shared.table import MAX_HANDS, MAX_ROUNDS

# The workloads whose CreateTable makes a table of the ledger (its hands reported), and those
# that may take any player's seat token (JoinSeat by player id without the token).
TABLE_CREATORS = frozenset({"matchmaking"})
SEAT_ISSUERS = frozenset({"matchmaking", OPERATOR})

MAX_SEAT_WAIT_SECONDS = 86_400


MIN_UNIX_MS = 10**12  # 2001-09-09: a deadline before it was given in seconds, not ms


def table_spec_from_proto(req: pb.CreateTableRequest, *, report_hands: bool = True) -> TableSpec:
    check_id(req.request_id, "request_id", required=False)
    ruleset = ruleset_from_ref(req.ruleset if req.HasField("ruleset") else None)
    if req.stake <= 0:
        raise InvalidArgument(f"stake {req.stake} must be > 0 chips per point", field="stake")
    if len(req.seats) != 4:
        raise InvalidArgument(f"seats has {len(req.seats)} entries, not 4", field="seats")
    if not 0 <= req.max_hands <= MAX_HANDS:
        raise InvalidArgument(
            f"max_hands {req.max_hands} out of range 0-{MAX_HANDS}", field="max_hands"
        )
    if not 0 <= req.max_rounds <= MAX_ROUNDS:
        raise InvalidArgument(
            f"max_rounds {req.max_rounds} out of range 0-{MAX_ROUNDS}", field="max_rounds"
        )
    payment = ruleset.payment
    if payment.garden and req.max_rounds not in (0, payment.garden_rounds):
        raise InvalidArgument(
            f"max_rounds {req.max_rounds} contradicts the ruleset: 逛花园 (payment.garden) lasts "
            f"payment.garden_rounds = {payment.garden_rounds} rounds; leave max_rounds 0 or set "
            "that option",
            field="max_rounds",
        )
    if not -1 <= req.seat_wait_seconds <= MAX_SEAT_WAIT_SECONDS:
        raise InvalidArgument(
            f"seat_wait_seconds {req.seat_wait_seconds} out of range: 0 (the gateway's "
            f"default), 1-{MAX_SEAT_WAIT_SECONDS}, or -1 (wait forever)",
            field="seat_wait_seconds",
        )
    if req.end_by_unix_ms < 0 or 0 < req.end_by_unix_ms < MIN_UNIX_MS:
        # below 2001-09-09 in ms: a time in seconds sent by mistake, or a negative one
        raise InvalidArgument(
            f"end_by_unix_ms {req.end_by_unix_ms} must be a Unix time in ms (at least "
            f"{MIN_UNIX_MS}), or 0 for no deadline",
            field="end_by_unix_ms",
        )
    seats = []
    players = set()
    for i, s in enumerate(req.seats):
        check_id(s.player_id, f"seats[{i}].player_id", required=False)
        if len(s.display_name) > 64:
            raise InvalidArgument(f"seats[{i}].display_name is longer than 64 characters")
        if s.player_id and not s.bot:
            if s.player_id in players:
                raise InvalidArgument(f"player {s.player_id!r} has two seats", field="seats")
            players.add(s.player_id)
        seats.append(
            Seat(player_id=s.player_id, display_name=s.display_name or s.player_id, bot=s.bot)
        )
    if all(s.bot for s in seats) and not (req.max_hands or req.max_rounds or payment.garden):
        raise InvalidArgument(
            "a table of four bots needs max_hands > 0 or max_rounds > 0", field="max_hands"
        )
    return TableSpec(
        request_id=req.request_id,
        ruleset=ruleset,
        ruleset_name=req.ruleset.name or DEFAULT_RULESET,
        overrides=dict(req.ruleset.options),
        stake=req.stake,
        seats=seats,
        max_hands=req.max_hands,
        max_rounds=req.max_rounds,
        tag=req.tag,
        first_dealer=seat_from_proto_optional(req.first_dealer, "first_dealer"),
        report_hands=report_hands,
        seat_wait_ms=_seat_wait_ms(req.seat_wait_seconds),
        end_by_ms=req.end_by_unix_ms,
        fee_per_hand=_fee_per_hand(req.fee_per_hand),
    )


def _fee_per_hand(fee: int) -> int:
    """CreateTableRequest.fee_per_hand, checked: 0 or more (a negative fee would pay the seats
    out of the house's silver)."""
    if fee < 0:
        raise InvalidArgument(
            f"fee_per_hand {fee} is negative: the room service fee is what each seat pays the "
            "house (0 = none)",
            field="fee_per_hand",
        )
    return fee


def _seat_wait_ms(seconds: int) -> int | None:
    """CreateTableRequest.seat_wait_seconds as TableSpec.seat_wait_ms (None = the default)."""
    if seconds == 0:
        return None
    return 0 if seconds < 0 else seconds * 1000


def heartbeat(lease_ms: int) -> pb.SubscribeResponse:
    """A Subscribe heartbeat (``SubscribeRequest.heartbeats``): the lease, and how often one
    comes when the stream has nothing else to send (a third of it)."""
    return pb.SubscribeResponse(
        heartbeat=pb.StreamHeartbeat(lease_ms=lease_ms, interval_ms=lease_ms // 3)
    )


def act_response(sequence: int, replayed: bool) -> pb.ActResponse:
    return pb.ActResponse(sequence=sequence, replayed=replayed)


class GatewayServicer(gateway_pb2_grpc.GatewayServiceServicer):
    """Every call of the client API, whatever the transport: gRPC, and Connect and gRPC-Web
    for browsers (:mod:`infra.web` calls these same methods with the HTTP headers as
    metadata), so each call's checks and errors are written once. Each RPC is :meth:`admit`
    (flood control, before any work) then its call (``create_table`` …), which the asyncio
    server (:mod:`services.gateway.aio_servicer`) runs in a worker thread after admitting it on
    its event loop."""

    def __init__(self, manager: TableManager, tls: TLSFiles | None = None) -> None:
        self.manager = manager
        self.tls = tls  # this replica's certificate, for calls to the other replicas
        self.sessions: SessionCheck | None = None  # matchmaking's CheckSession (server.py)
        st = manager.settings
        self.flood = FloodControl(st, manager.registry)
        per_minute = st.public_tables_per_minute
        self.new_tables = RateLimiter(per_minute / 60, per_minute)
        self.forwarder = SyncForwarder(st.replica_id, st.address, tls, st.lease_ms)
        look_s = max(0.05, st.lease_ms / 3000)  # as often as the owner renews its leases
        self.watch = RelayWatch(LeaseWatch(manager.store, look_s), look_s)
        self.console = console.Console(manager, tls, lambda: self.sessions)

    def admit(self, method: str, request, context) -> Admission:
        """Flood control (:mod:`services.gateway.flood`), before any lock or store is touched:
        a seat token past its rate is refused RESOURCE_EXHAUSTED (with the delay to wait),
        unless the call is one the server asked for (the answer to the seat's open prompt, a
        GetTableState on arrival)."""
        return self.flood.admit(method, request, context)

    def elsewhere_or_refuse(self, request, refusal: ResourceExhausted):
        """A call over this replica's budget for a table it does not run: NOT_OWNER (sent on,
        the owner's flood control decides) when another replica runs it, else ``refusal``."""
        self.manager.access.refuse_if_elsewhere(request.table_id)
        raise refusal

    # --- the RPCs -------------------------------------------------------------------------
    def CreateTable(self, request, context):
        self.admit("CreateTable", request, context)
        return self.create_table(request, context)

    def JoinSeat(self, request, context):
        return self._here_or_owner("JoinSeat", self.join_seat, request, context)

    def Subscribe(self, request, context):
        self.admit("Subscribe", request, context)
        sent = request.after_sequence
        stuck = Stuck(self.forwarder)
        lease_ms = self.manager.settings.lease_ms
        beat = heartbeat(lease_ms) if request.heartbeats else None
        while context.is_active():
            try:
                table, viewer = self.manager.open_stream(request.table_id, request.seat_token, sent)
                if beat is not None:  # the token passed: the first at once (the lease told)
                    yield beat
                quiet_s = lease_ms / 3000 if beat is not None else 0.0
                batches = self.manager.stream_batches(
                    table, viewer, sent, context.is_active, quiet_s
                )
                for seen in batches:
                    if seen is None:  # nothing sent for a third of the lease
                        yield beat
                        continue
                    for _, last, response in self.stream_messages(request, table, viewer, seen):
                        yield response
                        sent = last
                return
            except Unavailable as exc:  # another replica runs the table (now): relayed from it
                owner = self.forwarder.owner(exc, context)
                if owner is None:
                    raise
            relayed = _Relayed(self, owner, request, sent, context, stuck)
            for response in relayed:
                yield response
                if not response.HasField("heartbeat"):
                    sent = last_sequence(response)
            if relayed.ended:
                return
            # its owner went silent or away: the stream goes on where the table runs now

    def Act(self, request, context):
        return self._here_or_owner("Act", self.act, request, context)

    def GetTableState(self, request, context):
        return self._here_or_owner("GetTableState", self.get_table_state, request, context)

    def Leave(self, request, context):
        return self._here_or_owner("Leave", self.leave, request, context)

    def GetHint(self, request, context):
        return self._here_or_owner("GetHint", self.get_hint, request, context)

    def PlayDoubleCard(self, request, context):
        return self._here_or_owner("PlayDoubleCard", self.play_double_card, request, context)

    def ListTables(self, request, context):  # operator only (server.py's callers)
        return self.console.list_tables(request, context)

    def EndTable(self, request, context):  # operator only (server.py's callers)
        return self.console.end_table(request, context)

    def InspectTable(self, request, context):  # operator only (server.py's callers)
        return self.console.inspect_table(request, context)

    def SuspendSeat(self, request, context):  # matchmaking only (server.py's callers)
        return console.suspend_seat(self.manager, request, context)

    def ReadyForNextHand(self, request, context):
        return self._here_or_owner("ReadyForNextHand", self.ready_for_next_hand, request, context)

    def GetReplay(self, request, context):
        self.admit("GetReplay", request, context)
        return self.get_replay(request, context)

    def _here_or_owner(self, method: str, call, request, context):
        """Admit, then answer here or at the table's owner (:func:`forwarding.route`)."""
        admission = self.admit(method, request, context)
        refusal = admission.deferred
        if refusal is None:
            serve = lambda: call(request, context)  # noqa: E731
        else:
            serve = lambda: self.elsewhere_or_refuse(request, refusal)  # noqa: E731
        try:
            return here_or_owner(self.forwarder, method, serve, request, context)
        except DomainError as exc:
            admission.refused(exc)
            raise

    # --- the calls ------------------------------------------------------------------------
    def create_table(self, request, context):
        # Only matchmaking's tables (CreateTable with its certificate, on the internal port) go
        # to its ledger; anyone else's are a setting of the gateway, limited per client address.
        internal = from_internal_caller(context, TABLE_CREATORS)
        spec = table_spec_from_proto(request, report_hands=internal)
        creator = "" if internal else self._public_creator(context)
        table_id, tokens = self.manager.create_table(spec, creator)
        return pb.CreateTableResponse(
            table_id=table_id, seat_tokens=tokens, gateway_address=self.manager.settings.address
        )

    def _public_creator(self, context) -> str:
        """The client address of a CreateTable not from matchmaking, if it may create."""
        if not self.manager.settings.public_tables:
            raise PermissionDenied(
                "CreateTable answers only matchmaking on this gateway (its certificate, on the "
                "internal port): tables come from matchmaking (join a queue or a room there); "
                "public table creation is off (--public-tables)",
                reason="PUBLIC_TABLES_OFF",
            )
        creator = peer_address(context.peer())[0]
        self.new_tables.take(creator, "tables created from this client address")
        return creator

    def join_seat(self, request, context):
        check_id(request.request_id, "request_id", required=False)
        seat = seat_from_proto_optional(request.seat, "seat")
        player_id = request.player_id
        # never open on a plaintext server: player ids are public, a token is not
        internal = from_internal_caller(context, SEAT_ISSUERS, strict=True)
        if request.session_token and not request.spectator:
            # a live session of the seat's player proves it holds the seat (signed_in.py)
            player_id = joining_player(self.sessions, request.session_token, player_id)
            internal = True
        got, token, last = self.manager.join(
            request.table_id,
            player_id,
            request.display_name,
            seat,
            request.spectator,
            seat_token=request.seat_token,
            internal=internal,
            request_id=request.request_id,
        )
        self.flood.joined(request.table_id, got)
        return pb.JoinSeatResponse(
            table_id=request.table_id,
            seat=seat_to_proto(got),
            seat_token=token,
            last_sequence=last,
        )

    def act(self, request, context, answer: ActAnswer | None = None):
        """Act; with ``answer`` (the asyncio server), the response goes to it as soon as the
        action is written, and the call returns once the engine steps after it have run
        (:mod:`services.gateway.tables.answer_early`)."""
        if not request.HasField("action"):
            raise InvalidArgument("action is not set", field="action")
        seat = seat_from_proto_optional(request.seat, "seat")
        action = action_from_proto(request.action)
        seq, replayed = self.manager.act(
            request.table_id,
            request.seat_token,
            seat,
            request.request_id,
            request.last_sequence,
            action,
            answer,
        )
        return act_response(seq, replayed)

    def get_table_state(self, request, context):
        seat = seat_from_proto_optional(request.seat, "seat")
        table = view_to_proto(self.manager.view(request.table_id, request.seat_token, seat))
        table.hints = hints_allowed(self.manager, request.table_id)
        return pb.GetTableStateResponse(table=table)

    def stream_messages(
        self, request, table: LiveTable, viewer: SeatToken, seen: Seen, wait: bool = True
    ) -> list[tuple[int, int, pb.SubscribeResponse]] | None:
        """An open stream's messages of one batch (:func:`responses`), the last with the
        viewer's view when it asked ``with_view`` (taken now, before any of them is sent: a view
        that fails, NOT_OWNER say, leaves them for where the stream goes on). Without ``wait``
        (on the event loop) None when the view would wait for the table's lock."""
        out = list(responses(seen, request.batched))
        if request.with_view:
            v = self.manager.stream_view(table, viewer, wait)
            if v is None:
                return None
            view = out[-1][2].view
            view.CopyFrom(view_to_proto(v))
            view.hints = gives_hints(table)
        return out

    def leave(self, request, context):
        penalty = self.manager.leave(request.table_id, request.seat_token, request.request_id)
        return pb.LeaveResponse(penalty=penalty)

    def play_double_card(self, request, context):
        number, left = self.manager.play_double_card(
            request.table_id, request.seat_token, request.request_id
        )
        return pb.PlayDoubleCardResponse(hand_number=number, double_cards_left=left)

    def ready_for_next_hand(self, request, context):
        waiting = self.manager.ready_for_next_hand(
            request.table_id, request.seat_token, request.request_id
        )
        return pb.ReadyForNextHandResponse(waiting_for=[seat_to_proto(s) for s in waiting])

    def get_replay(self, request, context):
        """A finished hand as the session's player's seat saw it (any replica: the log is in
        the store; :mod:`services.gateway.domain.seat_replay`)."""
        check_id(request.table_id, "table_id")
        check_id(request.hand_id, "hand_id")
        if not request.session_token:
            raise InvalidArgument("session_token is empty", field="session_token")
        player_id = joining_player(self.sessions, request.session_token, "")
        log = read_table_log(self.manager.store, request.table_id)
        if not log:
            raise NotFound(f"no table {request.table_id}", field="table_id")
        got = seat_replay(log, player_id, request.hand_id)
        return pb.GetReplayResponse(
            seat=seat_to_proto(got.seat),
            display_names=got.names,
            events=[event_to_proto(logged, seen) for logged, seen in got.events],
        )

    def get_hint(self, request, context):
        seat = seat_from_proto_optional(request.seat, "seat")
        h = hint(self.manager, request.table_id, request.seat_token, seat)
        return pb.GetHintResponse(
            action=action_to_proto(h.action), plan=h.plan, prompt_sequence=h.prompt_sequence
        )


class _Relayed:
    """A stream relayed from the owner (the threaded server, the web port): its responses from
    event ``sent`` on, each as it comes; afterwards ``ended`` says whether the stream is over
    (the table finished, or the owner's refusal was relayed) or is to re-attach where the
    table runs now — its lease moved (:class:`RelayWatch` cancelled it) or its owner could not
    be reached (for as long as :class:`Stuck` allows)."""

    def __init__(self, calls: GatewayServicer, owner: str, request, sent: int, context, stuck):
        self.calls, self.owner, self.request = calls, owner, request
        self.sent, self.context, self.stuck = sent, context, stuck
        self.ended = False

    def __iter__(self):
        calls, table_id = self.calls, self.request.table_id
        epoch = calls.watch.attach(table_id)
        if epoch is None:  # between its owner's lease running out and a takeover
            if not self.stuck.may_wait(self.sent):
                raise self.stuck.give_up(table_id)
            time.sleep(AGAIN_PAUSE_S)
            return
        call = calls.forwarder.stream(self.owner, self.request, self.sent, self.context)
        relay = calls.watch.watch(table_id, epoch, call.cancel)
        try:
            for response in call:
                if not self.context.is_active():
                    break
                yield response  # the owner's heartbeats too, when asked for: no event number
                if not response.HasField("heartbeat"):
                    self.sent = last_sequence(response)
            self.ended = True
        except grpc.RpcError as exc:
            if relay.stale:
                return
            code = exc.code() if isinstance(exc, grpc.Call) else None
            if code is grpc.StatusCode.UNAVAILABLE and self.stuck.may_wait(self.sent):
                time.sleep(AGAIN_PAUSE_S)  # gone or unreachable: look again
                return
            self.ended = True
            raise error_of(exc) from None
        finally:
            calls.watch.done(relay)
            call.cancel()
