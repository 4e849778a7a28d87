"""Spectators: each JoinSeat as a spectator gets a token of its own — counted per table
(``--max-spectators-per-table``), revoked when its spectator leaves (also on the replica that
takes the table over), with a flood-control budget of its own — and a spectator's token never
acts, never sees a concealed tile, and cannot spend another spectator's budget. Over real gRPC
with the gateway's TLS, beside the TableManager's own checks on a shared store."""

from __future__ import annotations

import asyncio
import time
import uuid

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.signing import signature
from infra.store.memory import MemoryStore
from infra.tls import player_credentials
from mahjong_client.tables import create_table
from services.gateway.domain.session import Seat
from shared.errors import ResourceExhausted, Unauthenticated, Unavailable
from tests.support.probes import error_info, rpc_error
from tests.support.sessions import inprocess_ports
from tests.support.stacks import inprocess_gateway, table_manager, table_spec
from tests.support.tables import act, discard, wait_prompt
from tests.support.tls import CA_FILE

SECRET = "s"  # the gateways' seat secret here
REVOKED = "SPECTATOR_TOKEN_REVOKED"  # the reason a revoked spectator token is refused with
SPECTATORS = "gateway-spectator"  # the store's namespace of admitted spectators
SLOW = {"discard_ms": 60_000, "claim_ms": 60_000}  # a human's turn waits: the table stays live


@pytest.fixture(scope="module")
def gw():
    """A gateway with the default flood control (20 calls per second per token, bursts of 40)
    and room for 1,000 spectators per table."""
    with inprocess_gateway(
        seat_secret=SECRET, auto_play_delay_ms=0, max_spectators_per_table=1_000, **SLOW
    ) as gw:
        yield gw


def _waiting_table(address: str):
    """A table whose seat 0 (a person) is prompted to discard and does not: it stays live."""
    return create_table(address, ["alice", None, None, None], max_hands=1, first_dealer=0)


def _watch(stub, table_id: str, token: str = "") -> str:
    return stub.JoinSeat(
        pb.JoinSeatRequest(
            request_id=uuid.uuid4().hex, table_id=table_id, spectator=True, seat_token=token
        ),
        timeout=10,
    ).seat_token


def _view(stub, table_id: str, token: str) -> pb.TableView:
    return stub.GetTableState(
        pb.GetTableStateRequest(table_id=table_id, seat_token=token), timeout=10
    ).table


def _events(
    stub, table_id: str, token: str, upto: int, timeout: float = 10, *, quiet_after: bool = False
) -> list[pb.Event]:
    """The token's events from the start up to sequence ``upto`` (or the stream's end);
    ``quiet_after``: the table may send it nothing more (the events up to ``upto`` may be
    others' only), so a deadline ends the reading instead of failing it."""
    out = []
    request = pb.SubscribeRequest(table_id=table_id, seat_token=token)
    try:
        for r in stub.Subscribe(request, timeout=timeout):
            out.append(r.event)
            if r.event.sequence >= upto:
                break
    except grpc.RpcError as exc:
        if not (quiet_after and exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED):
            raise
    return out


# --- a token of its own ------------------------------------------------------------------------


def test_every_spectator_gets_a_token_of_its_own_and_a_reconnect_keeps_it(gw):
    t = _waiting_table(gw.server.address)
    tokens = [_watch(gw.stub, t.table_id) for _ in range(5)]
    assert len(set(tokens)) == 5
    assert _watch(gw.stub, t.table_id, tokens[0]) == tokens[0]  # the same spectator again
    table = gw.server.resource.manager.tables[t.table_id]
    assert len(table.spectators) == 5  # ... not counted twice
    assert len(list(gw.store.scan(SPECTATORS, f"{t.table_id}/"))) == 5
    # a seat's token asking to watch gets a spectator's token, not its seat's
    watcher = _watch(gw.stub, t.table_id, t.seat_tokens[0])
    assert watcher not in tokens and watcher != t.seat_tokens[0]
    assert _view(gw.stub, t.table_id, watcher).viewer == 0  # UNSPECIFIED: a spectator


def test_a_spectator_token_never_acts_and_never_sees_a_concealed_tile(gw):
    t = _waiting_table(gw.server.address)
    prompt = wait_prompt(gw.stub, t)
    token = _watch(gw.stub, t.table_id)
    legal = prompt.prompt.options.discards[0]
    for seat in (0, 1):  # for the prompted seat, or claiming another
        code, _, info = rpc_error(
            lambda s=seat: act(gw.stub, t, discard(legal), seat_token=token, seat=s)
        )
        assert code == grpc.StatusCode.PERMISSION_DENIED, info
    code, _, _ = rpc_error(
        lambda: gw.stub.GetHint(pb.GetHintRequest(table_id=t.table_id, seat_token=token))
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED
    code, _, _ = rpc_error(  # a spectator's token claiming to be seat 0's
        lambda: gw.stub.GetTableState(
            pb.GetTableStateRequest(table_id=t.table_id, seat_token=token, seat=1)
        )
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED
    view = _view(gw.stub, t.table_id, token)
    assert not view.HasField("prompt")
    assert all(not s.concealed and not s.drawn for s in view.seats)
    assert any(s.concealed_count for s in view.seats)  # there are tiles it does not see
    events = _events(gw.stub, t.table_id, token, view.last_sequence, 2, quiet_after=True)
    assert events
    kinds = [e.WhichOneof("kind") for e in events]
    assert "prompt" not in kinds
    for e in events:
        if e.HasField("tiles_dealt"):
            assert all(not h.tiles for h in e.tiles_dealt.hands)
        if e.HasField("tile_drawn"):
            assert not e.tile_drawn.tile
    assert act(gw.stub, t, discard(legal)).sequence  # nothing a spectator tried was applied


def test_a_spectator_cannot_make_its_token_another_spectators_nor_use_the_old_shared_one(gw):
    t = _waiting_table(gw.server.address)
    token = _watch(gw.stub, t.table_id)
    prefix, table_id, who, mac = token.split(".")
    other = who[:-1] + ("0" if who[-1] != "0" else "1")  # another spectator's id, same signature
    code, _, info = rpc_error(
        lambda: _view(gw.stub, t.table_id, f"{prefix}.{table_id}.{other}.{mac}")
    )
    assert code == grpc.StatusCode.UNAUTHENTICATED and info.reason == "UNAUTHENTICATED"
    # the token every spectator of a table shared before, validly signed, is admitted nowhere
    shared = f"st1.{table_id}.s.{signature(SECRET.encode(), f'st1|{table_id}|s')}"
    for call in (
        lambda: _view(gw.stub, t.table_id, shared),
        lambda: _events(gw.stub, t.table_id, shared, 1),
    ):
        code, message, info = rpc_error(call)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert info.reason == REVOKED and "JoinSeat" in message


def test_one_spectator_flooding_spends_only_its_own_budget(gw):
    """Spectators of one table from one client address: the one that floods is refused
    RATE_LIMITED; the others' calls, and a flood of forged tokens meanwhile, are counted
    apart (each token has its budget; tokens that do not verify share their address's)."""
    t = _waiting_table(gw.server.address)
    flooder, quiet = _watch(gw.stub, t.table_id), _watch(gw.stub, t.table_id)
    refused = 0
    for _ in range(80):  # twice the burst, faster than 20 per second
        try:
            _view(gw.stub, t.table_id, flooder)
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert error_info(exc).reason == "RATE_LIMITED"
            refused += 1
    assert refused >= 20
    for _ in range(20):  # within the quiet spectator's own burst: every call answered
        assert _view(gw.stub, t.table_id, quiet).table_id == t.table_id
    forged = 0
    for i in range(60):  # 60 different forged tokens: one budget, their address's
        code, _, _ = rpc_error(
            lambda i=i: _view(gw.stub, t.table_id, f"st1.{t.table_id}.s{i:016x}.x")
        )
        forged += code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert forged >= 10
    for _ in range(10):  # ... none of it the quiet spectator's
        assert _view(gw.stub, t.table_id, quiet).table_id == t.table_id


# --- counted and revocable ---------------------------------------------------------------------


def test_spectators_are_counted_per_table_and_one_leaving_makes_room():
    with inprocess_gateway(seat_secret=SECRET, max_spectators_per_table=2, **SLOW) as gw:
        t = _waiting_table(gw.server.address)
        first, second = _watch(gw.stub, t.table_id), _watch(gw.stub, t.table_id)
        code, message, info = rpc_error(lambda: _watch(gw.stub, t.table_id))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert info.reason == "SPECTATOR_LIMIT" and info.metadata["limit"] == "2"
        assert "2 spectators" in message
        assert len(list(gw.store.scan(SPECTATORS, f"{t.table_id}/"))) == 2  # nothing admitted
        assert _watch(gw.stub, t.table_id, first) == first  # a reconnect is no new spectator
        other = _waiting_table(gw.server.address)  # the limit is per table
        assert _watch(gw.stub, other.table_id)
        # the first leaves: its token is revoked, everywhere it could be used
        leave = pb.LeaveRequest(table_id=t.table_id, seat_token=first, request_id="bye")
        assert gw.stub.Leave(leave, timeout=5).penalty == 0
        for call in (
            lambda: _view(gw.stub, t.table_id, first),
            lambda: _events(gw.stub, t.table_id, first, 1),
        ):
            code, _, info = rpc_error(call)
            assert code == grpc.StatusCode.UNAUTHENTICATED and info.reason == REVOKED
        assert gw.stub.Leave(leave, timeout=5).penalty == 0  # leaving again changes nothing
        assert _view(gw.stub, t.table_id, second).table_id == t.table_id
        # its place is free: a JoinSeat with the revoked token is a new spectator that takes it
        third = _watch(gw.stub, t.table_id, first)
        assert third not in (first, second)
        assert _view(gw.stub, t.table_id, third).table_id == t.table_id
        assert rpc_error(lambda: _watch(gw.stub, t.table_id))[0] == (
            grpc.StatusCode.RESOURCE_EXHAUSTED
        )


def _manager(store, replica: str, **settings):
    return table_manager(store, inprocess_ports(), seed=5, replica_id=replica, **settings)


def _until(cond, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_revoked_spectator_stays_revoked_on_the_replica_that_takes_the_table_over():
    store = MemoryStore()
    # The first replica's lease lapses at once (as if paused); seat 0, a person, never answers.
    first = _manager(store, "gw-a", lease_ms=0, max_spectators_per_table=2, **SLOW)
    second = None
    try:
        seats = [Seat(player_id="p0", display_name="p0")]
        seats += [Seat(player_id=f"b{i}", bot=True) for i in (1, 2, 3)]
        t, tokens = first.create_table(table_spec(seats))
        _until(lambda: first.view(t, tokens[0], 0).get("prompt") is not None, "seat 0's prompt")
        gone, kept = (first.join(t, "", "", None, True)[1] for _ in range(2))
        assert first.leave(t, gone, "") == 0
        second = _manager(store, "gw-b", max_spectators_per_table=2, **SLOW)

        def taken_over() -> bool:  # the first one's lease (1 ms) may be running at a look
            try:
                return second.table(t).owned
            except Unavailable:
                return False

        _until(taken_over, "the second replica to take the table over from the store")
        assert second.view(t, kept, None)["phase"] == "playing"
        with pytest.raises(Unauthenticated) as revoked:
            second.view(t, gone, None)
        assert revoked.value.reason == REVOKED
        assert second.join(t, "", "", None, True, seat_token=gone)[1] != gone
        with pytest.raises(ResourceExhausted) as full:  # the count went on: 2 admitted
            second.join(t, "", "", None, True)
        assert full.value.reason == "SPECTATOR_LIMIT"
        # the replica that lost the table admits and revokes nobody any more
        with pytest.raises(Unavailable) as stale:
            first.join(t, "", "", None, True)
        assert stale.value.reason == "NOT_OWNER"
        with pytest.raises(Unavailable):
            first.leave(t, kept, "")
        assert second.view(t, kept, None)["phase"] == "playing"
        assert len(list(store.scan(SPECTATORS, f"{t}/"))) == 2
    finally:
        first.close()
        if second is not None:
            second.close()


def test_a_revoked_spectators_open_stream_ends_at_its_next_event():
    store = MemoryStore()
    manager = _manager(store, "gw-a", bot_delay_ms=20)
    try:
        t, _ = manager.create_table(table_spec(max_hands=2))
        token = manager.join(t, "", "", None, True)[1]
        stream = manager.subscribe(t, token, 0, lambda: True)
        next(stream)
        manager.leave(t, token, "")
        with pytest.raises(Unauthenticated) as ended:
            for _ in stream:
                pass
        assert ended.value.reason == REVOKED
        assert manager.tables[t].live, "the stream ran to the table's end instead"
    finally:
        manager.close()


# --- many spectators, and bursts of streams ------------------------------------------------------


async def _open(address: str, table_id: str, tokens: list[str], *, channels: int = 10):
    """Subscribe with each token at once, over ``channels`` TLS connections: each stream's
    first answer (an event or the error it ended with), then the streams are cancelled."""
    creds = player_credentials(CA_FILE)
    conns = [grpc.aio.secure_channel(address, creds) for _ in range(channels)]
    try:
        stubs = [gateway_pb2_grpc.GatewayServiceStub(c) for c in conns]
        calls = [
            stubs[i % channels].Subscribe(pb.SubscribeRequest(table_id=table_id, seat_token=tok))
            for i, tok in enumerate(tokens)
        ]
        firsts = await asyncio.gather(*(c.read() for c in calls), return_exceptions=True)
        for c in calls:
            c.cancel()
        return firsts
    finally:
        for c in conns:
            await c.close()


async def _join_and_open(address: str, table_id: str, n: int, channels: int = 10):
    creds = player_credentials(CA_FILE)
    conns = [grpc.aio.secure_channel(address, creds) for _ in range(channels)]
    try:
        stubs = [gateway_pb2_grpc.GatewayServiceStub(c) for c in conns]
        joined = await asyncio.gather(
            *(
                stubs[i % channels].JoinSeat(
                    pb.JoinSeatRequest(
                        request_id=uuid.uuid4().hex, table_id=table_id, spectator=True
                    ),
                    timeout=30,
                )
                for i in range(n)
            )
        )
    finally:
        for c in conns:
            await c.close()
    tokens = [j.seat_token for j in joined]
    start = time.perf_counter()
    firsts = await _open(address, table_id, tokens, channels=channels)
    return tokens, firsts, time.perf_counter() - start


def test_six_hundred_spectators_of_one_table_are_all_served(gw):
    """600 spectators join one table and open their streams at once, from one client address
    with the default flood control: every one gets its own token and its stream."""
    t = _waiting_table(gw.server.address)
    tokens, firsts, seconds = asyncio.run(_join_and_open(gw.server.address, t.table_id, 600))
    assert len(set(tokens)) == 600
    refused = [f for f in firsts if not isinstance(f, pb.SubscribeResponse)]
    assert not refused, f"{len(refused)} of 600 refused, e.g. {refused[0]!r}"
    assert all(f.event.sequence == 1 for f in firsts)
    assert seconds < 20, f"600 streams took {seconds:.1f} s to open"


SMALL_WINDOW = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]


def _reason(exc: grpc.aio.AioRpcError) -> tuple[str, dict[str, str]]:
    """The ErrorInfo reason and metadata of an asyncio call's error."""
    from google.rpc import error_details_pb2, status_pb2

    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for d in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if d.Unpack(info):
                    return info.reason, dict(info.metadata)
    return "", {}


async def _burst(address: str, quiet: tuple[str, str], busy: tuple[str, str], n: int, slow: int):
    """``n`` streams opened at once: ``slow`` of them on the busy table over connections with
    a tiny receive window, which stop reading after their first event; the rest on the quiet
    table. Returns how each stream opened, then for each slow one the sequences it read and
    how it ended (code, reason, ErrorInfo metadata)."""
    creds = player_credentials(CA_FILE)
    conns = [grpc.aio.secure_channel(address, creds) for _ in range(10)]
    narrow = [grpc.aio.secure_channel(address, creds, options=SMALL_WINDOW) for _ in range(slow)]
    try:
        stubs = [gateway_pb2_grpc.GatewayServiceStub(c) for c in conns]
        readers = [gateway_pb2_grpc.GatewayServiceStub(c) for c in narrow]
        calls = [
            readers[i].Subscribe(pb.SubscribeRequest(table_id=busy[0], seat_token=busy[1]))
            for i in range(slow)
        ] + [
            stubs[i % 10].Subscribe(pb.SubscribeRequest(table_id=quiet[0], seat_token=quiet[1]))
            for i in range(n - slow)
        ]
        firsts = await asyncio.gather(*(c.read() for c in calls), return_exceptions=True)
        await asyncio.sleep(1.5)  # the slow ones read nothing: their writes wait past 0.5 s
        ends = []
        for c, first in zip(calls[:slow], firsts[:slow], strict=True):
            seen = [first.event.sequence] if isinstance(first, pb.SubscribeResponse) else []
            try:
                while (r := await c.read()) is not grpc.aio.EOF:
                    seen.append(r.event.sequence)
                ends.append((seen, "OK", "", {}))
            except grpc.aio.AioRpcError as exc:
                ends.append((seen, exc.code().name, *_reason(exc)))
        for c in calls[slow:]:
            c.cancel()
        return firsts, ends
    finally:
        for c in conns + narrow:
            await c.close()


def test_a_burst_of_streams_with_readers_that_stop_never_ends_cancelled():
    """3,000 streams opened at once (more than gRPC core holds for a server by default, 1,000),
    a few of them readers that stop mid-stream: every stream is served, and every reader that
    stopped is cut RESOURCE_EXHAUSTED SLOW_CONSUMER with last_sequence — never a bare
    CANCELLED — and resumes from there with nothing lost."""
    with inprocess_gateway(
        seat_secret=SECRET,
        bot_delay_ms=10,
        stream_write_timeout_seconds=0.5,
        seat_calls_per_second=0,  # one client stands for 3,000 watchers of two tokens
        **SLOW,
    ) as gw:
        address = gw.server.address
        quiet = _waiting_table(address).table_id
        busy = create_table(address, [None] * 4, max_hands=1).table_id
        tokens = {t: _watch(gw.stub, t) for t in (quiet, busy)}
        firsts, ends = asyncio.run(
            _burst(address, (quiet, tokens[quiet]), (busy, tokens[busy]), n=3_000, slow=4)
        )
        failed = [f for f in firsts if not isinstance(f, pb.SubscribeResponse)]
        assert not failed, f"{len(failed)} of 3,000 streams never opened, e.g. {failed[0]!r}"
        everything = [e.sequence for e in _events(gw.stub, busy, tokens[busy], 10**9, 60)]
        for seen, code, reason, meta in ends:
            assert (code, reason) == ("RESOURCE_EXHAUSTED", "SLOW_CONSUMER"), (code, reason)
            last = int(meta["last_sequence"])
            assert 0 < last <= seen[-1]  # what was sent is no more than what was read
            resumed = []
            for r in gw.stub.Subscribe(
                pb.SubscribeRequest(table_id=busy, seat_token=tokens[busy], after_sequence=last),
                timeout=60,
            ):
                resumed.append(r.event.sequence)
            got = sorted(set(seen) | set(resumed))
            assert got == everything, "an event was lost across the cut"
            assert resumed == [s for s in everything if s > last]


def test_subscribe_checks_its_token_at_the_call_not_at_the_first_event():
    # A caller that opens a stream and reads it later learns of a forged or revoked token at
    # once, as the servicers' subscribe_batches does.
    store = MemoryStore()
    manager = _manager(store, "gw-a", bot_delay_ms=20)
    try:
        t, _ = manager.create_table(table_spec(max_hands=2))
        token = manager.join(t, "", "", None, True)[1]
        manager.leave(t, token, "")
        with pytest.raises(Unauthenticated):
            manager.subscribe(t, token, 0, lambda: True)  # not iterated
        with pytest.raises(Unauthenticated):
            manager.subscribe(t, token[:-4] + "AAAA", 0, lambda: True)
    finally:
        manager.close()
