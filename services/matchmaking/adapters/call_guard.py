"""What every call of MatchmakingService passes before its handler (:mod:`.servicer`), written
once for all of them, from the service's descriptor (so a new RPC is guarded without an edit
here):

1. flood control (:mod:`.flood`) of public methods (and of any call over the web port: an
   operator's session there is a browser's): per signed-in player (the session token
   read without the store, :data:`Identify`) and per client address, before anything reads the
   store; a watch stream is also counted per player and address while it is open;
2. for a mutating method (its request has ``request_id``): the request id is required and the
   call runs at most once per (method, caller, request id) (:mod:`.idempotency`) — a retry gets
   the first answer, kept serialized in the store.

The caller a request id belongs to: the player of the session (``session_token``); for SignIn
the ID token presented (only its holder can repeat it); for the deployment's services and the
operator (methods that are not public) the workload of their certificate, or on the web port
the player of the operator's session token; else (SignInAsGuest)
the client address — there the request id must be at least
:data:`ADDRESS_KEYED_MIN_REQUEST_ID` characters, so that two guests behind one address never
share an id by chance. A call whose session token does not verify is passed to its handler
unguarded, which refuses it (UNAUTHENTICATED) and applies nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from prometheus_client import Counter

from infra.interceptor import peer_address
from infra.operator_calls import is_web_call, web_operator_token
from infra.settings import from_flags, setting
from infra.tls import caller_workload
from services.matchmaking.adapters.flood import FloodControl, FloodSettings
from services.matchmaking.adapters.idempotency import DEFAULT_TTL_MS, RequestLog, check_request_id
from shared.errors import InvalidArgument, Unauthenticated

SERVICE = pb.DESCRIPTOR.services_by_name["MatchmakingService"]
ADDRESS_KEYED_MIN_REQUEST_ID = 16

# A session token -> its player id, verified without the store (None: it does not verify).
Identify = Callable[[str], "str | None"]
# A call's context -> the workload name of its certificate ("" without one).
Workload = Callable[[Any], str]

REPLAYS = Counter(
    "mahjong_matchmaking_request_replays_total",
    "Mutating calls answered from their request id's first answer (a retry), by method.",
    ["method"],
)


@dataclass(frozen=True)
class Method:
    """How one RPC is guarded."""

    name: str
    public: bool  # called by players: flood control applies
    mutating: bool  # carries request_id: at most once per request id
    stream: bool  # server-streaming: counted while open
    session: bool  # carries session_token
    response: type[Message]


def methods(internal: Collection[str]) -> list[Method]:
    """Every RPC of the service; ``internal``: the names only the deployment calls."""
    out = []
    for m in SERVICE.methods:
        fields = m.input_type.fields_by_name
        out.append(
            Method(
                name=m.name,
                public=m.name not in internal,
                mutating="request_id" in fields,
                stream=m.server_streaming,
                session="session_token" in fields,
                response=getattr(pb, m.output_type.name),
            )
        )
    return out


def fingerprint(request: Message) -> str:
    """SHA-256 (hex) of what a request asks: its fields without the request id (the key) and
    the session token (who asks is the key's caller; a refreshed token asks the same)."""
    bare = type(request)()
    bare.CopyFrom(request)
    for name in ("request_id", "session_token"):
        if name in bare.DESCRIPTOR.fields_by_name:
            bare.ClearField(name)
    return hashlib.sha256(bare.SerializeToString(deterministic=True)).hexdigest()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class GuardedServicer:
    """``inner``'s RPCs (a MatchmakingServicer), each behind the guard; registered with
    ``add_MatchmakingServiceServicer_to_server`` in its place."""

    def __init__(
        self,
        inner: Any,
        *,
        flood: FloodControl,
        requests: RequestLog,
        identify: Identify,
        workload: Workload,
        internal: Collection[str] = (),
    ) -> None:
        self.inner = inner
        self.flood = flood
        self.requests = requests
        self.identify = identify
        self.workload = workload
        self.methods: dict[str, Method] = {}  # by name
        for m in methods(internal):
            handler = getattr(inner, m.name)
            self.methods[m.name] = m
            setattr(self, m.name, self._stream(m, handler) if m.stream else self._unary(m, handler))

    def _player(self, m: Method, request) -> str | None:
        token = request.session_token if m.session else ""
        return self.identify(token) if token else None

    def _caller(self, m: Method, request, context, player: str | None, address: str):
        """Whose request id this is (None: the handler refuses the call unguarded)."""
        if m.session:
            return None if player is None else f"player:{player}"
        if m.name == "SignIn":
            return f"id-token:{_digest(request.id_token)}" if request.id_token else None
        if not m.public:
            return self._operator(context, address)
        check_request_id(request.request_id, min_length=ADDRESS_KEYED_MIN_REQUEST_ID)
        return f"address:{address}"

    def _operator(self, context, address: str) -> str | None:
        """An operator's method: a web call is keyed by its session's player (never by the
        address, which two callers may share; None: no token that verifies), a gRPC call by
        its certificate's workload."""
        try:
            token = web_operator_token(context)
        except Unauthenticated:
            return None
        if token is not None:
            player = self.identify(token)
            return None if player is None else f"player:{player}"
        return f"workload:{self.workload(context) or address}"

    def admit(self, m: Method, request, context) -> tuple[str, str | None]:
        """Flood control of one call, before anything reads the store (public methods only):
        the caller's client address and player (None: no session that verifies)."""
        address = peer_address(context.peer())[0]
        player = self._player(m, request)
        if m.public or is_web_call(context):  # an operator's method on the web port too
            self.flood.admit(address, player)
        return address, player

    def answer(self, m: Method, handler, request, context, address: str, player: str | None):
        """An admitted unary call: for a mutating method at most once per request id (a retry
        gets the first answer), then ``handler``. Blocks (the store): never on an event loop."""
        if not m.mutating:
            return handler(request, context)
        caller = self._caller(m, request, context, player, address)
        if caller is None:
            return handler(request, context)
        check_request_id(request.request_id)
        first: list[Message] = []

        def run() -> bytes:
            response = handler(request, context)
            first.append(response)
            return response.SerializeToString(deterministic=True)

        raw, replayed = self.requests.run(
            m.name, caller, request.request_id, fingerprint(request), run
        )
        if replayed:
            REPLAYS.labels(m.name).inc()
            return m.response.FromString(raw)
        return first[0]

    def open_stream(self, m: Method, address: str, player: str | None):
        """What an admitted stream holds while it is open: its place among the player's and
        the address's open streams (public methods only)."""
        return self.flood.stream(address, player) if m.public else contextlib.nullcontext()

    def _unary(self, m: Method, handler):
        def call(request, context):
            return self.answer(m, handler, request, context, *self.admit(m, request, context))

        call.__name__ = m.name
        return call

    def _stream(self, m: Method, handler):
        def call(request, context):
            address, player = self.admit(m, request, context)
            with self.open_stream(m, address, player):
                yield from handler(request, context)

        call.__name__ = m.name
        return call


# --- configuration (flags of `mahjong serve matchmaking`) -------------------------------------
_FLOOD = FloodSettings()


@dataclass(frozen=True)
class GuardSettings:
    """The guard's flags (:mod:`infra.settings`): flood control and how long request ids are
    kept."""

    flood_player_rate: float = setting(
        _FLOOD.player_rate,
        "--flood-player-rate",
        "calls per second of one signed-in player (0: off)",
    )
    flood_player_burst: float = setting(
        _FLOOD.player_burst, "--flood-player-burst", "calls one player may make at once"
    )
    flood_address_rate: float = setting(
        _FLOOD.address_rate,
        "--flood-address-rate",
        "calls per second from one client address (0: off)",
    )
    flood_address_burst: float = setting(
        _FLOOD.address_burst,
        "--flood-address-burst",
        "calls one client address may make at once",
    )
    streams_per_player: int = setting(
        _FLOOD.streams_per_player,
        "--streams-per-player",
        "most watch streams one player holds open (0: no limit)",
    )
    streams_per_address: int = setting(
        _FLOOD.streams_per_address,
        "--streams-per-address",
        "most watch streams one address holds open (0: no limit)",
    )
    request_id_seconds: int = setting(
        DEFAULT_TTL_MS // 1000,
        "--request-id-seconds",
        "how long a mutating call's request id is kept: a retry within it gets the first answer",
    )

    def flood(self) -> FloodSettings:
        return FloodSettings(
            player_rate=self.flood_player_rate,
            player_burst=self.flood_player_burst,
            address_rate=self.flood_address_rate,
            address_burst=self.flood_address_burst,
            streams_per_player=self.streams_per_player,
            streams_per_address=self.streams_per_address,
        )


def guarded(inner: Any, mm: Any, config: Any, internal: Collection[str]) -> GuardedServicer:
    """``inner`` (the MatchmakingServicer of facade ``mm``) behind the guard ``config`` (the
    server's Config) sets up: flood control in memory, request ids in ``mm``'s store."""
    settings = from_flags(GuardSettings, config.extra)
    seconds = settings.request_id_seconds
    if seconds <= 0:
        raise InvalidArgument(
            f"--request-id-seconds {seconds} must be positive", field="request_id_seconds"
        )
    trust_domain = config.trust_domain
    return GuardedServicer(
        inner,
        flood=FloodControl(settings.flood()),
        requests=RequestLog(mm.store, ttl_ms=seconds * 1000),
        identify=mm.peek_session,
        workload=lambda context: caller_workload(context, trust_domain),
        internal=internal,
    )
