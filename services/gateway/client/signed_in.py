"""A signed-in player's table: sign in to matchmaking with an ID token, open a private room,
invite three bots, set 底分 and press Start; the room's assignment is the seat (what
``mahjong play --sign-in`` and the other clients do).

The ID token is the studio's (``--id-token``), or the development issuer's for a name (the key
under ``.data/dev-issuer``, as ``mahjong login NAME`` prints it).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from mahjong.common.v1 import common_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from shared.tls import client_channel

TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class RoomSeat:
    player_id: str
    silver: int
    room_code: str
    gateway_address: str
    table_id: str
    seat: int  # 0-3
    seat_token: str


def dev_id_token(name: str, root: str = ".data/dev-issuer") -> str:
    """The development issuer's ID token for ``name`` (its key made on first use)."""
    from pathlib import Path

    from devkit.dev_issuer import DevIssuer

    return DevIssuer.at(Path(root)).id_token(name, name)


def room_with_bots(
    matchmaking_address: str,
    id_token: str,
    display_name: str,
    *,
    stake: int = 1,
    max_hands: int = 0,
    ruleset: str = "",
    options: dict[str, str] | None = None,
    wait_seconds: float = 30.0,
) -> RoomSeat:
    """Sign in and seat the player at a private room's table with three bots."""

    def rid() -> str:
        return uuid.uuid4().hex

    with client_channel(matchmaking_address) as channel:
        mm = pb_grpc.MatchmakingServiceStub(channel)
        signed = mm.SignIn(
            pb.SignInRequest(id_token=id_token, display_name=display_name, request_id=rid()),
            timeout=TIMEOUT,
        )
        session = signed.session.session_token
        rules = common_pb2.RulesetRef(name=ruleset, options=options or {})
        room = mm.OpenRoom(
            pb.OpenRoomRequest(
                session_token=session, ruleset=rules, max_hands=max_hands, request_id=rid()
            ),
            timeout=TIMEOUT,
        ).room
        code = room.code
        mm.SetRoomStake(
            pb.SetRoomStakeRequest(session_token=session, code=code, stake=stake, request_id=rid()),
            timeout=TIMEOUT,
        )
        for _ in range(3):
            mm.InviteBot(
                pb.InviteBotRequest(session_token=session, code=code, request_id=rid()),
                timeout=TIMEOUT,
            )
        mm.PressStart(
            pb.PressStartRequest(session_token=session, code=code, request_id=rid()),
            timeout=TIMEOUT,
        )
        deadline = time.monotonic() + wait_seconds
        while True:
            got = mm.GetRoom(pb.GetRoomRequest(session_token=session, code=code), timeout=TIMEOUT)
            a = got.room.assignment
            if a.table_id:
                return RoomSeat(
                    signed.player.player_id,
                    signed.player.silver,
                    code,
                    a.gateway_address,
                    a.table_id,
                    a.seat - 1,
                    a.seat_token,
                )
            if got.room.failure or time.monotonic() > deadline:
                raise RuntimeError(
                    f"room {code} got no table: {got.room.failure or 'no answer in time'}"
                )
            time.sleep(0.1)
