"""The operator's console over a real matchmaking server with TLS: only the operator's
certificate finds players, suspends, lifts, revokes sessions and reads the audit log (a player's
session, a player's or the gateway's certificate and a certificate from another CA claiming to be
the operator are refused); a suspended player's session calls, sign-in and the gateway's
CheckSession answer PERMISSION_DENIED PLAYER_SUSPENDED; bad input is INVALID_ARGUMENT or
NOT_FOUND and applies nothing; every action is in the audit log, which `mahjong admin audit
--export` writes as JSON lines."""

from __future__ import annotations

import json
import shutil

import grpc
import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from devkit import dev_ca
from infra.interceptor import internal_metadata
from infra.tls import OPERATOR, TLSFiles, dial
from services.matchmaking.adapters.console import CONSOLE_METHODS
from tests.service.matchmaking.test_suspicious_pairs_over_grpc import cli
from tests.service.matchmaking.test_tournament_operations_over_grpc import _stub
from tests.support.grpc_server import DEV_TLS_ROOT, serving
from tests.support.identity import id_token, sign_in, unique_subject
from tests.support.probes import rpc_error
from tests.support.stacks import matchmaking_spec
from tests.support.tls import dev_certs
from tests.unit.matchmaking.mm_fakes import FakeAllocator

TOKEN = "internal-test-token"
T = 10


def _refused(call) -> tuple[grpc.StatusCode, str]:
    code, _, info = rpc_error(call)
    return code, info.reason


def test_only_the_operator_uses_the_console_and_a_suspension_holds(tmp_path):
    with serving(matchmaking_spec(FakeAllocator()), internal_token=TOKEN) as (server, channel):
        player = pb_grpc.MatchmakingServiceStub(channel)
        meta = internal_metadata(TOKEN)
        subject = unique_subject("Cheat")
        cheat, token = sign_in(player, "Cheat", subject)
        _, honest = sign_in(player, "Honest")
        pid = cheat.player_id
        op_channel, operator = _stub(server, OPERATOR)
        gw_channel, gateway = _stub(server, "gateway")
        dev_certs(pid)
        me_channel, me = _stub(server, pid)
        # a certificate named "operator" from another CA: no handshake at all
        rogue = tmp_path / "rogue"
        dev_ca.ensure([OPERATOR], rogue)
        forged = tmp_path / "forged"
        forged.mkdir()
        shutil.copy(rogue / OPERATOR / "tls.crt", forged / "tls.crt")
        shutil.copy(rogue / OPERATOR / "tls.key", forged / "tls.key")
        shutil.copy(DEV_TLS_ROOT / "ca.crt", forged / "ca.crt")
        forged_channel = dial(server.internal_address, "matchmaking", TLSFiles(forged))
        try:
            suspend = pb.SuspendPlayerRequest(player_id=pid, reason="chip dumping")
            for method, request in (
                ("SuspendPlayer", suspend),
                ("FindPlayers", pb.FindPlayersRequest(player_id=pid)),
                ("ListAuditLog", pb.ListAuditLogRequest()),
            ):
                for stub in (gateway, me):
                    call = getattr(stub, method)
                    got = _refused(lambda c=call, r=request: c(r, metadata=meta, timeout=T))
                    assert got == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")
                # a player's session on the public port: no certificate, no console
                call = getattr(player, method)
                code, _ = _refused(lambda c=call, r=request: c(r, timeout=T))
                assert code == grpc.StatusCode.UNAUTHENTICATED
                forged_stub = pb_grpc.MatchmakingServiceStub(forged_channel)
                call = getattr(forged_stub, method)
                code, _ = _refused(lambda c=call, r=request: c(r, timeout=T))
                assert code == grpc.StatusCode.UNAVAILABLE
            player.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T)  # untouched

            # bad input: refused, nothing applied
            for bad, want in (
                (dict(player_id="p-nobody", reason="x"), "NOT_FOUND"),
                (dict(player_id=pid), "INVALID_ARGUMENT"),
                (dict(player_id=pid, reason="x", until_unix_ms=5), "INVALID_ARGUMENT"),
                (dict(player_id=pid, reason="x", until_unix_ms=-5), "INVALID_ARGUMENT"),
            ):
                request = pb.SuspendPlayerRequest(**bad)
                code, _ = _refused(lambda r=request: operator.SuspendPlayer(r, timeout=T))
                assert code.name == want
            player.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T)

            # the operator finds the player by name and suspends them
            found = operator.FindPlayers(pb.FindPlayersRequest(display_name="cheat"), timeout=T)
            (dossier,) = found.players
            assert dossier.player.player_id == pid and len(dossier.sessions) == 1
            assert dossier.player.silver == 1000 and dossier.last_entries
            done = operator.SuspendPlayer(suspend, timeout=T)
            assert done.sessions_revoked == 1
            assert done.suspension.by.startswith("spiffe://mahjong.local/operator")
            relogin = id_token("Cheat", subject)
            for call in (
                lambda: player.GetPlayer(pb.GetPlayerRequest(session_token=token), timeout=T),
                lambda: player.JoinQueue(pb.JoinQueueRequest(session_token=token), timeout=T),
                lambda: player.SignIn(pb.SignInRequest(id_token=relogin), timeout=T),
                lambda: gateway.CheckSession(
                    pb.CheckSessionRequest(session_token=token), metadata=meta, timeout=T
                ),
            ):
                assert _refused(call) == (grpc.StatusCode.PERMISSION_DENIED, "PLAYER_SUSPENDED")
            player.GetPlayer(pb.GetPlayerRequest(session_token=honest), timeout=T)
            found = operator.FindPlayers(pb.FindPlayersRequest(player_id=pid), timeout=T)
            assert found.players[0].suspension.reason == "chip dumping"

            # `mahjong admin`: lift it, then the log as JSON lines
            addr = ["--matchmaking-addr", server.internal_address]
            code, out, _ = cli("admin", "lift", pid, "--reason", "appeal upheld", *addr)
            assert code == 0 and json.loads(out[0])["lifted"] is True
            with pytest.raises(SystemExit):  # no --reason: argparse refuses
                cli("admin", "lift", pid, *addr)
            again = player.SignIn(pb.SignInRequest(id_token=id_token("Cheat", subject)), timeout=T)
            assert again.player.player_id == pid
            code, out, _ = cli("admin", "audit", "--export", *addr)
            assert code == 0
            lines = [json.loads(line) for line in out]
            assert [(e["action"], e["result"]) for e in lines] == [
                ("SuspendPlayer", "NOT_FOUND"),
                ("SuspendPlayer", "INVALID_ARGUMENT"),
                ("SuspendPlayer", "INVALID_ARGUMENT"),
                ("SuspendPlayer", "INVALID_ARGUMENT"),
                ("SuspendPlayer", "OK"),
                ("LiftSuspension", "OK"),
            ]
            assert all("/operator" in e["actor"] for e in lines)
            assert lines[4]["reason"] == "chip dumping" and lines[4]["target"] == pid
            gateway_tls = ["--tls-dir", str(DEV_TLS_ROOT / "gateway")]
            code, _, err = cli("admin", "audit", *gateway_tls, *addr)
            assert code == 1 and "PERMISSION_DENIED" in err
            # nothing but acting writes to it: the log has no writing RPC
            service = pb.DESCRIPTOR.services_by_name["MatchmakingService"]
            assert [m.name for m in service.methods if "Audit" in m.name] == ["ListAuditLog"]
            assert set(CONSOLE_METHODS) <= {m.name for m in service.methods}
        finally:
            for c in (op_channel, gw_channel, me_channel, forged_channel):
                c.close()
