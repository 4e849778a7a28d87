"""Tables over the GatewayService API for tests: CreateTable requests (seats of people and
bots), a seat's view, waiting for its turn and acting in it. Views and actions wait out the
gateway's flood control as its RetryInfo asks (a test polling a view meets it by design)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from mahjong_client.player import call_retrying

RULESET = "shanghai-qiaoma"


def bot_seats(prefix: str = "b") -> list[pb.SeatAssignment]:
    """Four built-in bots with the player ids ``b0`` … ``b3``."""
    return [pb.SeatAssignment(player_id=f"{prefix}{i}", bot=True) for i in range(4)]


def mixed_seats(humans: int, prefix: str, players: str | None = None) -> list[pb.SeatAssignment]:
    """Four seats, the first ``humans`` for people and the rest for bots, with the player ids
    ``{prefix}{seat}-{players}`` (``p0-1a2b3c``); without ``players`` each seat gets a fresh
    random suffix."""
    return [
        pb.SeatAssignment(
            player_id=f"{prefix}{i}-{players or uuid.uuid4().hex[:6]}", bot=i >= humans
        )
        for i in range(4)
    ]


def table_request(
    seats: Sequence[pb.SeatAssignment],
    *,
    stake: int = 1,
    ruleset: str | None = RULESET,
    options: Mapping[str, str] | None = None,
    request_id: str | None = None,
    **fields,
) -> pb.CreateTableRequest:
    """A CreateTableRequest with a fresh request id (unless given) and a RulesetRef naming
    ``ruleset`` with ``options`` (``ruleset=None``: no RulesetRef, the gateway's default);
    ``fields`` are the request's other fields (``max_hands``, ``first_dealer``, ``tag`` …)."""
    if ruleset is not None:
        fields["ruleset"] = common_pb2.RulesetRef(name=ruleset, options=options or {})
    return pb.CreateTableRequest(
        request_id=request_id or uuid.uuid4().hex, stake=stake, seats=seats, **fields
    )


def request_table(stub, seats, *, metadata=None, **request) -> pb.CreateTableResponse:
    """CreateTable over ``stub`` with ``table_request(seats, **request)`` (five seconds)."""
    return stub.CreateTable(table_request(seats, **request), timeout=5, metadata=metadata)


def open_seat_request(open_seat: bool = True, **fields) -> pb.CreateTableRequest:
    """A person at seat 0, seat 1 open (or, with ``open_seat=False``, the player ``p1``) and
    bots at seats 2 and 3: stake 2, one hand, seat 0 deals; ``fields`` replace any of these
    or set others (``request_id``, ``seat_wait_seconds`` …)."""
    seats = [pb.SeatAssignment(player_id=f"p0-{uuid.uuid4().hex[:6]}")]
    seats.append(pb.SeatAssignment() if open_seat else pb.SeatAssignment(player_id="p1"))
    seats += [pb.SeatAssignment(player_id=f"b{i}", bot=True) for i in (2, 3)]
    defaults = {"stake": 2, "max_hands": 1, "first_dealer": common_pb2.SEAT_0}
    return table_request(seats, **{**defaults, **fields})


def state(stub, t, seat=0):
    """Seat ``seat``'s view of table ``t`` (a CreateTableResponse) from GetTableState."""
    req = pb.GetTableStateRequest(table_id=t.table_id, seat_token=t.seat_tokens[seat])
    return call_retrying(stub.GetTableState, req, timeout=5, retry_for=10, transient=False).table


def wait_prompt(stub, t, seat=0, timeout=10.0):
    """The seat's next own turn; claims offered to it on the way are passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = state(stub, t, seat)
        if view.HasField("prompt") and view.prompt.kind == pb.PROMPT_KIND_OWN_TURN:
            return view
        if view.HasField("prompt") and view.prompt.kind == pb.PROMPT_KIND_CLAIM:
            act(stub, t, pb.Action(**{"pass": pb.Pass()}), last=view.last_sequence)
        time.sleep(0.01)
    raise AssertionError("no own-turn prompt")


def act(stub, t, action, *, last=None, rid=None, seat_token=None, seat=0, table_id=None):
    """Act for seat 0 of table ``t`` (by default: its token, a fresh request id and the last
    sequence number it sees); each keyword replaces one field to make a bad request."""
    view = state(stub, t)
    return call_retrying(
        stub.Act,
        pb.ActRequest(
            table_id=table_id or t.table_id,
            seat_token=seat_token if seat_token is not None else t.seat_tokens[0],
            request_id=uuid.uuid4().hex if rid is None else rid,
            last_sequence=view.last_sequence if last is None else last,
            action=action,
            seat=seat,
        ),
        timeout=5,
        retry_for=10,
        transient=False,
    )


def discard(tile):
    """The action discarding ``tile`` (a proto Tile value)."""
    return pb.Action(discard=pb.Discard(tile=tile))
