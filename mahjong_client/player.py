"""A remote player: one seat played over the gateway's gRPC API by a bot policy.

It joins with a seat token, follows ``Subscribe`` (resuming from the last sequence number it saw
after a dropped stream), and answers each of its prompts through ``Act`` with a fresh request id
and its last sequence number. A retry after a transport error reuses the request id, so nothing
is applied twice. It never waits on a paused replica (:mod:`mahjong_client.failover`): its
stream has heartbeats and is resumed on another connection when silent; each call's try is
hedged on another connection after half the lease. Used by the end-to-end tests, the
tournament test (scripted players) and the Node/terminal clients' tests as the reference
client.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from infra.addresses import CLIENT_KEEPALIVE_OPTIONS
from infra.tls import client_channel
from mahjong_client.convert import (
    TILE_SWAP,
    action_to_proto,
    options_from_prompt,
    view_from_proto,
)
from mahjong_client.failover import Connections, Lease, SilenceWatch, call_hedged
from services.gateway.bots import PlanningBot, SeatView
from shared.table import Action, OwnTurnOptions
from shared.tiles import NUM_KINDS

_TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def retry_delay(exc: grpc.RpcError) -> float | None:
    """The seconds a RESOURCE_EXHAUSTED refusal asks to wait before retrying (its
    ``google.rpc.RetryInfo`` detail: the gateway's flood control), None for any other error."""
    if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return info.retry_delay.seconds + info.retry_delay.nanos / 1e9
    return None


def call_retrying(
    method: Callable[..., Any], req: Any, *, timeout: float, retry_for: float, transient: bool
) -> Any:
    """One unary call, retried: after the wait a RESOURCE_EXHAUSTED refusal's ``RetryInfo``
    names (flood control: the server says when the call will be taken; waiting it out spends
    nothing of the window), and for up to ``retry_for`` seconds (``transient``: reads, and calls
    that carry a request id, so a retry is never applied twice) after UNAVAILABLE /
    DEADLINE_EXCEEDED (the gateway unreachable, or the table moving to another replica:
    NOT_OWNER). Any other error, or a transient one that would outlast the window, is raised."""
    deadline = time.monotonic() + retry_for
    while True:
        try:
            return method(req, timeout=timeout)
        except grpc.RpcError as exc:
            asked = retry_delay(exc)
            if asked is not None:
                deadline += asked
                time.sleep(asked)
                continue
            if not transient or exc.code() not in _TRANSIENT:
                raise
            if time.monotonic() + 0.1 > deadline:
                raise
            time.sleep(0.1)


class Policy(Protocol):
    """What decides for the seat: a bot of :mod:`services.gateway.bots` or a scripted player."""

    def own_turn(self, view: SeatView, options: OwnTurnOptions) -> Action: ...

    def claim(self, view: SeatView, options: Any, tile: int) -> Action: ...

    def tile_swap(self, view: SeatView, count: int) -> tuple[int, ...]: ...


@dataclass
class Rejection:
    """An action the gateway refused (a late answer to an expired prompt, a stale sequence)."""

    code: grpc.StatusCode
    message: str
    action: gateway_pb2.Action


@dataclass
class PlayerLog:
    """What the player saw and did."""

    sequences: list[int] = field(default_factory=list)  # every event number received
    subscribes: list[int] = field(default_factory=list)  # after_sequence of each Subscribe
    actions: int = 0
    rejections: list[Rejection] = field(default_factory=list)
    hand_results: list[gateway_pb2.HandResult] = field(default_factory=list)
    table_finished: gateway_pb2.TableFinished | None = None


def same_prompt(table: gateway_pb2.TableView, prompt: gateway_pb2.Prompt) -> bool:
    """Is ``prompt`` (from the event stream) still the seat's pending decision in ``table``?
    Its deadline is no part of that: a prompt's timer starts afresh when another replica takes
    the table over, or when the seat comes back from 托管. (A newer prompt that looks the same
    is answered from this view too; the Act's last_sequence lets the gateway refuse a stale
    answer.)"""
    if not table.HasField("prompt"):
        return False
    now = table.prompt
    return now.kind == prompt.kind and now.tile == prompt.tile


class RemotePlayer:
    """Plays one seat of one table through a gateway.

    ``target`` is an address (``"127.0.0.1:50055"``) or an open channel; ``fallbacks`` other
    replicas' addresses, where a silent stream or an unanswered call goes on. ``lease_s``: the
    replicas' lease if known (else the gateway's default until the stream's first heartbeat
    names it). ``on_event`` is called with every event received (before the player answers a
    prompt in it).
    """

    def __init__(
        self,
        target: str | grpc.Channel,
        table_id: str,
        seat_token: str,
        *,
        seat: int | None = None,
        policy: Policy | None = None,
        on_event: Callable[[gateway_pb2.Event], None] | None = None,
        timeout: float = 10.0,
        reconnect_for: float = 15.0,
        name: str = "player",
        keep_events: bool = False,
        fallbacks: Sequence[str | grpc.Channel] = (),
        lease_s: float | None = None,
    ) -> None:
        self._own_channel = isinstance(target, str)
        self.channel = (
            client_channel(target, CLIENT_KEEPALIVE_OPTIONS) if isinstance(target, str) else target
        )
        self.stub = gateway_pb2_grpc.GatewayServiceStub(self.channel)
        self.connections = Connections(self.channel, fallbacks)
        self.lease = Lease(lease_s)
        self.table_id = table_id
        self.seat_token = seat_token
        self.seat = seat
        self.policy: Policy = policy if policy is not None else PlanningBot()
        self.on_event = on_event
        self.timeout = timeout
        self.reconnect_for = reconnect_for
        self.name = name
        self.keep_events = keep_events
        self.events: list[gateway_pb2.Event] = []
        self.last_sequence = 0
        self.log = PlayerLog()
        self._stream: Any = None
        self._stream_on = 0  # the connection the stream is open on
        self._moved = False  # the stream was cancelled to follow a call to another connection
        self._max_hands: int | None = None
        self._stop = threading.Event()
        self._drop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    # --- joining ---------------------------------------------------------------------------
    @classmethod
    def join(
        cls,
        target: str | grpc.Channel,
        table_id: str,
        *,
        player_id: str = "",
        display_name: str = "",
        seat: int | None = None,
        spectator: bool = False,
        seat_token: str = "",
        **kwargs: Any,
    ) -> RemotePlayer:
        """Take a seat with JoinSeat and return its player. A transport error is retried (for
        ``reconnect_for`` seconds) with the same request id, which the gateway answers with the
        seat it gave that request even when the first answer was lost. Rejoining a seat already
        assigned to ``player_id`` needs its ``seat_token``."""
        channel = (
            client_channel(target, CLIENT_KEEPALIVE_OPTIONS) if isinstance(target, str) else target
        )
        req = gateway_pb2.JoinSeatRequest(
            request_id=str(uuid.uuid4()),
            table_id=table_id,
            player_id=player_id,
            display_name=display_name or player_id,
            seat=0 if seat is None else seat + 1,
            spectator=spectator,
            seat_token=seat_token,
        )
        lease = Lease(kwargs.get("lease_s"))
        timeout = kwargs.get("timeout", 10.0)
        resp = call_hedged(
            Connections(channel, kwargs.get("fallbacks", ())),
            "JoinSeat",
            req,
            try_s=min(timeout, lease.try_s),
            hedge_s=lease.hedge_s,
            overall_s=timeout + kwargs.get("reconnect_for", 15.0),
            retry_delay=retry_delay,
        )
        player = cls(
            channel, table_id, resp.seat_token, seat=resp.seat - 1 if resp.seat else None, **kwargs
        )
        player._own_channel = isinstance(target, str)
        return player

    # --- calls -----------------------------------------------------------------------------
    @property
    def _seat_value(self) -> int:
        """The proto Seat sent with Act and GetTableState (unset when the seat is unknown)."""
        return 0 if self.seat is None else self.seat + 1

    def state(self) -> gateway_pb2.TableView:
        """GetTableState: this seat's view now, retried (it is a read) while the gateway is
        unreachable or its table is moving between replicas, and after the wait flood control
        asks for. A prompt's decision reads it: failing there would lose the prompt, since the
        stream resumes after it."""
        req = gateway_pb2.GetTableStateRequest(
            table_id=self.table_id, seat_token=self.seat_token, seat=self._seat_value
        )
        return self._call("GetTableState", req).table

    def act(
        self, action: Action | tuple[int, ...] | gateway_pb2.Action, *, request_id: str = ""
    ) -> gateway_pb2.ActResponse | None:
        """Send one action. Transport errors are retried with the same request id; a refusal
        (FAILED_PRECONDITION, ABORTED, …) is recorded in ``log.rejections`` and gives None."""
        pb = action if isinstance(action, gateway_pb2.Action) else action_to_proto(action)
        req = gateway_pb2.ActRequest(
            table_id=self.table_id,
            seat_token=self.seat_token,
            request_id=request_id or f"{self.name}-{uuid.uuid4()}",
            last_sequence=self.last_sequence,
            action=pb,
            seat=self._seat_value,
        )
        try:
            resp = self._call("Act", req)
        except grpc.RpcError as exc:
            self.log.rejections.append(Rejection(exc.code(), exc.details() or "", pb))
            return None
        self.log.actions += 1
        return resp

    def leave(self) -> int:
        """Leave the table; returns the escape penalty paid (0 between hands)."""
        req = gateway_pb2.LeaveRequest(
            table_id=self.table_id, seat_token=self.seat_token, request_id=str(uuid.uuid4())
        )
        return self._call("Leave", req).penalty

    def ready_for_next_hand(self) -> bool:
        """Next: this seat has seen the hand's result (the table deals once everyone at it has,
        or after its pause). False when the table refused (no pause on: a result of an escape
        mid-hand, the table finished) or could not be reached: the pause then runs out."""
        req = gateway_pb2.ReadyForNextHandRequest(
            table_id=self.table_id, seat_token=self.seat_token, request_id=str(uuid.uuid4())
        )
        try:
            self._call("ReadyForNextHand", req)
        except grpc.RpcError:
            return False
        return True

    def _call(self, method: str, req: Any) -> Any:
        """A call that carries a request id or reads: tried as :func:`call_hedged` says, each
        try within the lease and a second (and ``timeout``), in all ``timeout`` and
        ``reconnect_for``."""
        resp = call_hedged(
            self.connections,
            method,
            req,
            try_s=min(self.timeout, self.lease.try_s),
            hedge_s=self.lease.hedge_s,
            overall_s=self.timeout + self.reconnect_for,
            retry_delay=retry_delay,
            most=max(2, len(self.connections.targets)),
        )
        if self._stream is not None and self.connections.current != self._stream_on:
            self._moved = True  # its connection left a call unanswered: the stream follows
            self._stream.cancel()
        return resp

    def _subscribe(self, request: gateway_pb2.SubscribeRequest) -> Any:
        """Subscribe on the current connection (the first: through ``self.stub``)."""
        if self.connections.current == 0:
            return self.stub.Subscribe(request)
        return self.connections.stub().Subscribe(request)

    # --- the event loop --------------------------------------------------------------------
    def run(self, max_hands: int | None = None) -> PlayerLog:
        """Follow the table and answer prompts until it finishes, ``max_hands`` hand results
        arrive, or :meth:`stop` is called. A dropped stream (or :meth:`drop_connection`) is
        resumed with ``after_sequence`` = the last number seen, for up to ``reconnect_for``
        seconds without an event; a stream refused by flood control is resumed after the wait
        its RetryInfo asks for, which spends nothing of that budget. A stream silent for longer
        than the lease allows (:class:`SilenceWatch`) is resumed at once on the next
        connection."""
        self._max_hands = max_hands
        give_up = None
        silence = SilenceWatch(self.lease)
        try:
            while not self._done():
                give_up = self._follow(silence, give_up)
        finally:
            silence.close()
        return self.log

    def _follow(self, silence: SilenceWatch, give_up: float | None) -> float | None:
        """One Subscribe, read until it ends; when to give up resuming (None: not failing)."""
        self.log.subscribes.append(self.last_sequence)
        self._stream_on, self._moved = self.connections.current, False
        self._stream = self._subscribe(
            gateway_pb2.SubscribeRequest(
                table_id=self.table_id,
                seat_token=self.seat_token,
                after_sequence=self.last_sequence,
                batched=True,
                heartbeats=True,
            )
        )
        silence.watch(self._stream)
        try:
            messages = iter(self._stream)
            while True:
                silence.waiting()
                resp = next(messages, None)
                silence.got()
                if resp is None:
                    break
                give_up = None
                if resp.HasField("heartbeat"):
                    self.lease.heard(resp.heartbeat)
                elif self._handle_all(events_of(resp)):
                    break
        except grpc.RpcError as exc:
            if silence.silent:  # its replica is paused or cut off: elsewhere, at once
                self.connections.rotate(self._stream_on)
                return give_up
            if self._moved:  # to where the last call was answered, at once
                return give_up
            code = exc.code()
            asked = retry_delay(exc)
            if asked is not None:  # flood control: the server says when to come back
                if give_up is not None:
                    give_up += asked
                time.sleep(asked)
            # a dropped stream, or one cut for its pace (a slow reader): resumed from the
            # last event seen
            elif (
                code == grpc.StatusCode.CANCELLED
                or code in _TRANSIENT
                or (code == grpc.StatusCode.RESOURCE_EXHAUSTED)
            ):
                if give_up is None:
                    give_up = time.monotonic() + self.reconnect_for
                if time.monotonic() > give_up:
                    raise
                if not self._drop.is_set():
                    time.sleep(0.1)
            else:
                raise
        finally:
            self._stream.cancel()
            self._drop.clear()
        return give_up

    def _done(self) -> bool:
        if self._stop.is_set() or self.log.table_finished is not None:
            return True
        return self._max_hands is not None and len(self.log.hand_results) >= self._max_hands

    def _handle_all(self, events) -> bool:
        """Handle a message's events in order; True once the stream is to end (the table is
        over, enough hands were seen, or a drop was asked for): the rest of the message is left
        unseen, so a resumed stream sends it again."""
        for event in events:
            self._handle(event)
            if self._done() or self._drop.is_set():
                return True
        return False

    def _handle(self, event: gateway_pb2.Event) -> None:
        if event.sequence <= self.last_sequence:
            return  # already seen (a resume never repeats, but be safe)
        self.last_sequence = event.sequence
        self.log.sequences.append(event.sequence)
        if self.keep_events:
            self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)
        kind = event.WhichOneof("kind")
        if kind == "prompt":
            if self.seat is None or event.prompt.seat == self.seat + 1:
                self.decide(event.prompt)
        elif kind == "hand_result":
            self.log.hand_results.append(event.hand_result)
            if self.seat is not None:
                self.after_result()
        elif kind == "table_finished":
            self.log.table_finished = event.table_finished

    def after_result(self) -> None:
        """A hand's result came: a bot has seen it, Next at once (a person's client holds the
        result first: :class:`mahjong_client.terminal.TerminalPlayer`)."""
        self.ready_for_next_hand()

    def decide(self, prompt: gateway_pb2.Prompt) -> gateway_pb2.ActResponse | None:
        """Answer one prompt with the policy's action, on the seat's view from GetTableState."""
        table = self.state()
        if not same_prompt(table, prompt):
            return None  # answered or expired meanwhile; a newer prompt will come
        if self.seat is None and table.viewer:
            self.seat = table.viewer - 1  # a token given without its seat
        view = view_from_proto(table, prompt)
        if prompt.kind == TILE_SWAP:
            action: Action | tuple[int, ...] = tuple(
                self.policy.tile_swap(view, prompt.options.swap_count)
            )
        else:
            options = options_from_prompt(prompt, view)
            if isinstance(options, OwnTurnOptions):
                action = self.policy.own_turn(view, options)
            else:
                tile = prompt.tile - 1 if prompt.tile else NUM_KINDS
                action = self.policy.claim(view, options, tile)
        return self.act(action)

    # --- control ---------------------------------------------------------------------------
    def start(self, max_hands: int | None = None) -> RemotePlayer:
        """Run in a background thread; :meth:`wait` joins it."""

        def target() -> None:
            try:
                self.run(max_hands)
            except BaseException as exc:  # reported by wait()
                self.error = exc

        self._thread = threading.Thread(target=target, name=f"player-{self.name}", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> PlayerLog:
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError(f"{self.name} still playing after {timeout}s")
        if self.error is not None:
            raise self.error
        return self.log

    def drop_connection(self) -> None:
        """Cut the event stream as a network failure would; the loop resumes from the last
        sequence number it saw."""
        self._drop.set()
        if self._stream is not None:
            self._stream.cancel()

    def stop(self) -> None:
        self._stop.set()
        if self._stream is not None:
            self._stream.cancel()

    def close(self) -> None:
        self.stop()
        self.connections.close()  # the fallbacks' channels (never the first)
        if self._own_channel:
            self.channel.close()


def events_of(response: gateway_pb2.SubscribeResponse) -> Sequence[gateway_pb2.Event]:
    """A Subscribe message's events: a batched stream's ``events``, or the one ``event`` of a
    gateway that sends one per message (a replica of an older version, during a rollout)."""
    if response.events:
        return response.events
    return (response.event,) if response.HasField("event") else ()
