"""Collusion signals over a real matchmaking server with TLS: hands the gateway reports with
their facts are counted per ordered pair; ListSuspiciousPairs answers an operator's certificate
only (a player and the gateway are refused), pages its ranking, and refuses a negative limit or
a page token it did not give (INVALID_ARGUMENT)."""

from __future__ import annotations

import contextlib
import io
import json

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb

from infra.interceptor import internal_metadata
from services.cli import main
from tests.service.matchmaking.test_tournament_operations_over_grpc import _stub
from tests.support.grpc_server import DEV_TLS_ROOT, serving
from tests.support.identity import sign_in
from tests.support.probes import rpc_error
from tests.support.stacks import matchmaking_spec, table_fees
from tests.support.tls import dev_certs
from tests.unit.matchmaking.mm_fakes import FakeAllocator

TOKEN = "internal-test-token"
T = 10


def cli(*args: str) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    operator = ["--tls-dir", str(DEV_TLS_ROOT / "operator")]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, *([] if "--tls-dir" in args else operator)])
    return code, out.getvalue().splitlines(), err.getvalue()


def seat(i: int) -> int:
    return common_pb2.SEAT_0 + i


def test_only_an_operator_reads_the_ranking_and_bad_input_is_refused():
    alloc = FakeAllocator()
    with serving(matchmaking_spec(alloc), internal_token=TOKEN) as (server, channel):
        from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

        player = pb_grpc.MatchmakingServiceStub(channel)
        mm = server.resource.matchmaking
        tokens = [sign_in(player, f"P{i}")[1] for i in range(4)]
        for i, tok in enumerate(tokens):
            player.JoinQueue(pb.JoinQueueRequest(session_token=tok, request_id=f"q{i}"), timeout=T)
        mm.tick()  # the four join at one moment: a table, counted as queued together
        table_id, request = next((a.table_id, r) for r, a in alloc.tables.values())
        ids = [s.player_id for s in request.seats]
        gw_channel, gateway = _stub(server, "gateway")
        op_channel, operator = _stub(server, "operator")
        meta = internal_metadata(TOKEN)
        try:
            # seat 0 claims seat 1's discards and passes a win on them, hand after hand
            for h in range(6):
                facts = pb.HandFacts(
                    version=1,
                    claims=[pb.SeatPair(seat=seat(0), from_seat=seat(1))] * 2,
                    passed_wins=[pb.SeatPair(seat=seat(0), from_seat=seat(1))],
                    discard_wins=[pb.SeatPair(seat=seat(2), from_seat=seat(3))],
                )
                report = pb.RecordHandRequest(
                    hand_id=f"h{h}", table_id=table_id, tag=request.tag, player_ids=ids,
                    payments=[0, 0, 3, -3], hand_number=h + 1, facts=facts,
                    fees=table_fees(alloc, table_id),
                )  # fmt: skip
                gateway.RecordHand(report, metadata=meta, timeout=T)
                gateway.RecordHand(report, metadata=meta, timeout=T)  # a repeat counts once

            ask = pb.ListSuspiciousPairsRequest(limit=5)
            got = operator.ListSuspiciousPairs(ask, metadata=meta, timeout=T)
            assert got.total_pairs == 12 and len(got.pairs) == 5 and got.next_page_token
            top = got.pairs[0]
            assert (top.player_id, top.partner_id) == (ids[0], ids[1])
            assert top.hands_together == 6 and top.score > got.pairs[-1].score
            evidence = {e.signal: e for e in top.evidence}
            assert evidence[pb.COLLUSION_SIGNAL_CLAIMS].observed == 12
            assert evidence[pb.COLLUSION_SIGNAL_PASSED_WINS].observed == 6
            assert evidence[pb.COLLUSION_SIGNAL_QUEUED_TOGETHER].observed == 1
            rest = operator.ListSuspiciousPairs(
                pb.ListSuspiciousPairsRequest(limit=5, page_token=got.next_page_token),
                metadata=meta,
                timeout=T,
            )
            assert len(rest.pairs) == 5 and rest.pairs[0].score <= got.pairs[-1].score
            seen = {(p.player_id, p.partner_id) for p in (*got.pairs, *rest.pairs)}
            assert len(seen) == 10

            # bad input: INVALID_ARGUMENT
            for bad in (
                pb.ListSuspiciousPairsRequest(limit=-1),
                pb.ListSuspiciousPairsRequest(limit=10_000),
                pb.ListSuspiciousPairsRequest(page_token="not-a-token!"),
            ):
                code, _, _ = rpc_error(
                    lambda b=bad: operator.ListSuspiciousPairs(b, metadata=meta, timeout=T)
                )
                assert code == grpc.StatusCode.INVALID_ARGUMENT

            # who may ask: the gateway's certificate and a player's are refused
            # (PERMISSION_DENIED); a player's session on the public port presents none at all
            dev_certs(ids[0])
            me_channel, me = _stub(server, ids[0])
            for other in (gateway, me):
                code, _, info = rpc_error(
                    lambda o=other: o.ListSuspiciousPairs(ask, metadata=meta, timeout=T)
                )
                assert code == grpc.StatusCode.PERMISSION_DENIED
                assert info.reason == "CALLER_NOT_ALLOWED"
            me_channel.close()
            code, _, _ = rpc_error(lambda: player.ListSuspiciousPairs(ask, timeout=T))
            assert code == grpc.StatusCode.UNAUTHENTICATED

            # `mahjong integrity pairs`, with the operator's certificate
            addr = ["--matchmaking-addr", server.internal_address]
            code, out, _ = cli("integrity", "pairs", "--limit", "3", *addr)
            assert code == 0 and out[0] == "12 pairs ranked; threshold 4.0"
            assert out[1].split()[0].rstrip("!") == "1" and f"{ids[0]} -> {ids[1]}" in out[1]
            assert "claims 12/" in out[1] and "passed 6/" in out[1]
            assert out[-1].startswith("next page: --page-token ")
            code, out, _ = cli("integrity", "pairs", "--json", "--limit", "12", *addr)
            assert code == 0 and len(json.loads(out[0])["pairs"]) == 12
            code, _, err = cli("integrity", "pairs", "--limit", "-2", *addr)
            assert code == 1 and "INVALID_ARGUMENT" in err
            gateway_tls = ["--tls-dir", str(DEV_TLS_ROOT / "gateway")]
            code, _, err = cli("integrity", "pairs", *gateway_tls, *addr)
            assert code == 1 and "PERMISSION_DENIED" in err
        finally:
            gw_channel.close()
            op_channel.close()
