"""GetReplay (牌谱) over a real gateway whose sessions a real matchmaking server checks: a
signed-in player who sat at a finished hand gets its events as their seat's stream showed them
(their own deal, nobody else's concealed tiles); another player's session, a forged one, a hand
of another table and one still being played get nothing of it."""

from __future__ import annotations

import time

import grpc
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc

from mahjong_client import RemotePlayer
from tests.support.grpc_server import serving
from tests.support.identity import sign_in
from tests.support.probes import rpc_error
from tests.support.stacks import inprocess_gateway, matchmaking_spec
from tests.support.tables import request_table

T = 10


def _seats(player_id: str) -> list[pb.SeatAssignment]:
    """The player in seat 1, three bots around."""
    return [
        pb.SeatAssignment(
            player_id=player_id if i == 1 else f"bot{i}",
            display_name="Alice" if i == 1 else f"Bot {i}",
            bot=i != 1,
        )
        for i in range(4)
    ]


def test_a_player_replays_their_own_finished_hand_as_their_seat_saw_it_and_nobody_else_can():
    with serving(matchmaking_spec()) as (mm_server, mm_channel):
        mm = mm_grpc.MatchmakingServiceStub(mm_channel)
        (alice, alice_s), (_, bob_s) = sign_in(mm, "Alice"), sign_in(mm, "Bob")
        with inprocess_gateway(
            seat_secret="replay-secret",
            discard_ms=60_000,
            claim_ms=60_000,
            auto_play_delay_ms=0,
            matchmaking_addr=mm_server.internal_address,
        ) as gw:
            table = request_table(gw.stub, _seats(alice.player_id), max_hands=1)
            streamed: list[pb.Event] = []
            player = RemotePlayer(
                gw.server.address,
                table.table_id,
                table.seat_tokens[1],
                seat=1,
                on_event=streamed.append,
            )
            player.run()
            player.close()
            hand_id = next(e.hand_id for e in streamed if e.hand_id)

            def replay(session: str, table_id: str = table.table_id, hand: str = hand_id):
                req = pb.GetReplayRequest(session_token=session, table_id=table_id, hand_id=hand)
                return gw.stub.GetReplay(req, timeout=T)

            got = replay(alice_s)
            assert got.seat == common_pb2.SEAT_1
            kinds = [e.WhichOneof("kind") for e in got.events]
            assert kinds[0] == "hand_started" and "tiles_dealt" in kinds
            assert kinds[-1] in ("hand_result", "seed_revealed", "hand_drawn")
            assert all(e.hand_id == hand_id for e in got.events)
            # what seat 1's stream showed of the hand, event for event
            assert list(got.events) == [e for e in streamed if e.hand_id == hand_id]
            dealt = next(e.tiles_dealt for e in got.events if e.HasField("tiles_dealt"))
            # its own deal, no other seat's concealed tiles
            assert [len(h.tiles) > 0 for h in dealt.hands] == [False, True, False, False]
            assert all(h.count >= 13 for h in dealt.hands)
            assert list(got.display_names) == ["Bot 0", "Alice", "Bot 2", "Bot 3"]

            cheats = [
                (bob_s, table.table_id, hand_id, grpc.StatusCode.PERMISSION_DENIED),
                ("forged." + alice_s[7:], table.table_id, hand_id, grpc.StatusCode.UNAUTHENTICATED),
                ("", table.table_id, hand_id, grpc.StatusCode.INVALID_ARGUMENT),
                (alice_s, table.table_id, "no-such-hand", grpc.StatusCode.NOT_FOUND),
                (alice_s, "no-such-table", hand_id, grpc.StatusCode.NOT_FOUND),
                (alice_s, table.table_id, "", grpc.StatusCode.INVALID_ARGUMENT),
            ]
            for session, table_id, hand, code in cheats:
                got_code, _, _ = rpc_error(lambda: replay(session, table_id, hand))  # noqa: B023
                assert got_code == code, (session[:12], table_id, hand)

            # a hand of a table Alice never sat at: Bob's own hand is not hers to read
            bobs = request_table(gw.stub, _seats("bob-elsewhere"), max_hands=1)
            code, _, _ = rpc_error(lambda: replay(alice_s, bobs.table_id, hand_id))
            assert code == grpc.StatusCode.NOT_FOUND

            # a hand still being played (Alice holds up the first discard): refused
            running = request_table(gw.stub, _seats(alice.player_id), max_hands=1)
            state = pb.GetTableStateRequest(
                table_id=running.table_id, seat_token=running.seat_tokens[1]
            )
            # the table deals its first hand once created, not before CreateTable answers
            deadline = time.monotonic() + T
            live_hand = ""
            while not live_hand and time.monotonic() < deadline:
                live_hand = gw.stub.GetTableState(state, timeout=T).table.hand.hand_id
                time.sleep(0 if live_hand else 0.02)
            assert live_hand, "the table dealt no hand"
            code, _, info = rpc_error(lambda: replay(alice_s, running.table_id, live_hand))
            assert (code, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HAND_NOT_FINISHED")
