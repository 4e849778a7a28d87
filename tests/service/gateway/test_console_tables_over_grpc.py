"""The operator's ListTables and EndTable over a real gateway (wall, rules and scoring served
in-process): a player's session on the public port, and the gateway's and matchmaking's
certificates, are refused; the operator lists the live tables by tag and ends one mid-hand —
its hand voided, its wall revealed, the seat's next call FAILED_PRECONDITION TABLE_FINISHED —
ending it twice, an unknown table and a missing reason are refused; `mahjong admin tables` and
`mahjong admin end-table` do the same from a terminal."""

from __future__ import annotations

import json

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from tests.service.matchmaking.test_suspicious_pairs_over_grpc import cli
from tests.support.probes import rpc_error
from tests.support.stacks import inprocess_gateway
from tests.support.tables import mixed_seats, request_table, state, wait_prompt

T = 10


def player_of(op, t) -> str:
    """The player id at seat 0 of table ``t``, as the operator lists it."""
    tables = op.ListTables(pb.ListTablesRequest(), timeout=T).tables
    return next(r.player_ids[0] for r in tables if r.table_id == t.table_id)


def test_only_the_operator_lists_and_ends_tables():
    slow = {"discard_ms": 60_000, "claim_ms": 60_000}
    with (
        inprocess_gateway(seat_secret="console", **slow) as gw,
        gw.calling_as("matchmaking") as mm,
        gw.calling_as("operator") as op,
    ):
        made = [
            request_table(mm, mixed_seats(1, "p"), tag=tag, max_hands=4,
                          first_dealer=common_pb2.SEAT_0)
            for tag in ("room/123456", "tournament/T-1/round/1/table/0")
        ]  # fmt: skip
        t, other = made
        wait_prompt(gw.stub, t)  # dealt: seat 0 is to discard
        ask = pb.ListTablesRequest(tag_prefix="room/")
        end = pb.EndTableRequest(table_id=t.table_id, reason="stuck engine")
        for method, request in (("ListTables", ask), ("EndTable", end)):
            code, _, info = rpc_error(lambda m=method, r=request: getattr(gw.stub, m)(r, timeout=T))
            assert code == grpc.StatusCode.UNAUTHENTICATED
            call = getattr(mm, method)
            code, _, info = rpc_error(lambda c=call, r=request: c(r, timeout=T))
            assert (code, info.reason) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "CALLER_NOT_ALLOWED",
            )
        (listed,) = op.ListTables(ask, timeout=T).tables
        assert listed.table_id == t.table_id and listed.phase == "playing"
        assert listed.hand_id and listed.stake == 1
        assert len(op.ListTables(pb.ListTablesRequest(), timeout=T).tables) == 2

        no_reason = pb.EndTableRequest(table_id=t.table_id)
        code, _, _ = rpc_error(lambda: op.EndTable(no_reason, timeout=T))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        unknown = pb.EndTableRequest(table_id="t_nope", reason="why")
        code, _, _ = rpc_error(lambda: op.EndTable(unknown, timeout=T))
        assert code == grpc.StatusCode.NOT_FOUND
        ended = op.EndTable(end, timeout=T)
        assert ended.voided_hand_id == listed.hand_id and ended.seed
        assert ended.hands_played == 0
        code, _, info = rpc_error(lambda: op.EndTable(end, timeout=T))
        assert (code, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FINISHED")
        view = state(gw.stub, t)
        assert view.phase == pb.TABLE_PHASE_FINISHED
        # InspectTable: the public state and log, paged; the voided hand's seed is in it
        ask = pb.InspectTableRequest(table_id=t.table_id, limit=5)
        first = op.InspectTable(ask, timeout=T)
        assert first.table.phase == pb.TABLE_PHASE_FINISHED and first.next_after_sequence == 5
        assert 0 < len(first.events) <= 5
        ask = pb.InspectTableRequest(table_id=t.table_id, after_sequence=5, limit=1000)
        rest = op.InspectTable(ask, timeout=T)
        assert rest.next_after_sequence == 0
        assert [e.WhichOneof("kind") for e in rest.events][-2:] == [
            "seed_revealed",
            "table_finished",
        ]
        assert rest.events[-2].seed_revealed.seed == ended.seed
        for bad in (dict(limit=-1), dict(limit=1001), dict(after_sequence=-1)):
            request = pb.InspectTableRequest(table_id=t.table_id, **bad)
            code, _, _ = rpc_error(lambda r=request: op.InspectTable(r, timeout=T))
            assert code == grpc.StatusCode.INVALID_ARGUMENT

        # SuspendSeat is matchmaking's alone: the operator's certificate is refused
        suspend = pb.SuspendSeatRequest(table_id=other.table_id, player_id=player_of(op, other))
        code, _, info = rpc_error(lambda: op.SuspendSeat(suspend, timeout=T))
        assert (code, info.reason) == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")
        got = mm.SuspendSeat(suspend, timeout=T)
        assert got.seat == common_pb2.SEAT_0 and got.changed
        view = pb.GetTableStateRequest(table_id=other.table_id, seat_token=other.seat_tokens[0])
        code, _, info = rpc_error(lambda: gw.stub.GetTableState(view, timeout=T))
        assert (code, info.reason) == (grpc.StatusCode.PERMISSION_DENIED, "PLAYER_SUSPENDED")
        (row,) = op.ListTables(pb.ListTablesRequest(tag_prefix="tournament/"), timeout=T).tables
        assert row.auto_play[0]

        # `mahjong admin tables` / `end-table` against the gateway's internal port
        addr = ["--gateway-addr", gw.server.internal_address]
        code, out, _ = cli("admin", "tables", "--tag-prefix", "tournament/", *addr)
        assert code == 0
        (row,) = json.loads(out[0])["tables"]
        assert row["tableId"] == other.table_id
        code, out, _ = cli("admin", "inspect", t.table_id, "--limit", "3", *addr)
        assert code == 0 and json.loads(out[0])["nextAfterSequence"] == "3"
        code, out, _ = cli("admin", "end-table", other.table_id, "--reason", "test", *addr)
        assert code == 0 and json.loads(out[0]).get("handsPlayed", 0) == 0
        code, _, err = cli("admin", "end-table", other.table_id, "--reason", "again", *addr)
        assert code == 1 and "FAILED_PRECONDITION" in err
