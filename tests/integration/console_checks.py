"""The operator's console over the real stack (every service a process), run on the stack of
tests/integration/test_matchmaking_stack.py (its module's processes, not five more): two
private rooms each with one person and three bots, the people making no move:

* the operator ends the first table mid-hand (the gateway's EndTable, the operator's
  certificate): its hand is voided — no ledger entry of it for the person — its seed revealed,
  and matchmaking, told the table finished, releases the person's seat (their cover) and closes
  the room;
* the operator suspends the second room's person (matchmaking's SuspendPlayer): their session
  and seat token are refused PERMISSION_DENIED PLAYER_SUSPENDED at once, their seat is on 托管
  and, once the hand ends, a bot's.
"""

from __future__ import annotations

import grpc
from mahjong.gateway.v1 import gateway_pb2 as gw
from mahjong.gateway.v1 import gateway_pb2_grpc as gw_grpc
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.request_ids import with_request_ids
from infra.tls import OPERATOR
from tests.support import probes
from tests.support.identity import sign_in
from tests.support.probes import rpc_error
from tests.support.tls import as_player, as_workload

TIMEOUT = 10


def wait_for(predicate, timeout: float, what: str, stack):
    def logs() -> str:
        return f"--- matchmaking\n{stack.logs('matchmaking')}\n--- gateway\n{stack.logs('gateway')}"

    return probes.wait_for(predicate, timeout, what, logs, every=0.2)


def _room_table(stub, stack, name: str):
    """A person's room with three bots, started: (player, session, assignment)."""
    player, token = sign_in(stub, name)
    code = stub.OpenRoom(pb.OpenRoomRequest(session_token=token, max_hands=4)).room.code
    for _ in range(3):
        stub.InviteBot(pb.InviteBotRequest(session_token=token, code=code), timeout=TIMEOUT)
    stub.SetRoomStake(pb.SetRoomStakeRequest(session_token=token, code=code, stake=1))
    stub.PressStart(pb.PressStartRequest(session_token=token, code=code))

    def assigned():
        got = stub.GetRoom(pb.GetRoomRequest(session_token=token, code=code), timeout=TIMEOUT)
        return got.room.assignment if got.room.assignment.table_id else None

    return player, token, code, wait_for(assigned, 30, f"{name}'s table", stack)


def _summary(op_gw, table_id: str):
    tables = op_gw.ListTables(gw.ListTablesRequest(), timeout=TIMEOUT).tables
    return next((t for t in tables if t.table_id == table_id), None)


def operator_ends_a_table_and_suspends_a_seated_player(stack) -> None:
    channel = as_player(stack.mm_target)
    stub = pb_grpc.MatchmakingServiceStub(with_request_ids(channel))
    gw_proc, mm_proc = stack.procs["gateway"], stack.procs["matchmaking"]
    op_gw_channel = as_workload(gw_proc.internal_address, "gateway", OPERATOR)
    op_mm_channel = as_workload(mm_proc.internal_address, "matchmaking", OPERATOR)
    op_gw = gw_grpc.GatewayServiceStub(op_gw_channel)
    op_mm = pb_grpc.MatchmakingServiceStub(with_request_ids(op_mm_channel))
    try:
        ender, ender_token, ender_room, a = _room_table(stub, stack, "Ended")
        cheat, cheat_token, _, b = _room_table(stub, stack, "Cheat")
        for table in (a, b):  # both dealt, a hand running
            wait_for(lambda t=table: (_summary(op_gw, t.table_id) or gw.TableSummary()).hand_id,
                     30, "a hand dealt", stack)  # fmt: skip

        # end the first table mid-hand
        running = _summary(op_gw, a.table_id)
        end = gw.EndTableRequest(table_id=a.table_id, reason="integration: end mid-hand")
        ended = op_gw.EndTable(end, timeout=TIMEOUT)
        assert ended.voided_hand_id == running.hand_id and ended.seed
        code, _, info = rpc_error(lambda: op_gw.EndTable(end, timeout=TIMEOUT))
        assert (code, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FINISHED")

        def released():
            ask = pb.FindPlayersRequest(player_id=ender.player_id, ledger_entries=50)
            (d,) = op_mm.FindPlayers(ask, timeout=TIMEOUT).players
            return d if not d.seats else None

        dossier = wait_for(released, 30, "the ended table's seat released", stack)
        assert not [e for e in dossier.last_entries if e.ref == running.hand_id]  # unpaid
        room = stub.GetRoom(pb.GetRoomRequest(session_token=ender_token, code=ender_room))
        assert room.room.state != pb.ROOM_STATE_PLAYING

        # suspend the second table's person
        suspend = pb.SuspendPlayerRequest(player_id=cheat.player_id, reason="integration")
        done = op_mm.SuspendPlayer(suspend, timeout=TIMEOUT)
        assert list(done.table_ids) == [b.table_id] and not done.tables_not_told
        seat = b.seat - 1
        summary = _summary(op_gw, b.table_id)
        assert summary.auto_play[seat] and not summary.left[seat]
        gw_channel = as_player(b.gateway_address)
        try:
            player_gw = gw_grpc.GatewayServiceStub(gw_channel)
            view = gw.GetTableStateRequest(table_id=b.table_id, seat_token=b.seat_token)
            for call in (
                lambda: player_gw.GetTableState(view, timeout=TIMEOUT),
                lambda: stub.GetPlayer(pb.GetPlayerRequest(session_token=cheat_token)),
            ):
                code, _, info = rpc_error(call)
                assert (code, info.reason) == (
                    grpc.StatusCode.PERMISSION_DENIED,
                    "PLAYER_SUSPENDED",
                )
        finally:
            gw_channel.close()
        wait_for(lambda: _summary(op_gw, b.table_id).left[seat], 60, "a bot in the seat", stack)
    finally:
        for c in (op_gw_channel, op_mm_channel, channel):
            c.close()
