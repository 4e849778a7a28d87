"""The operator's console on matchmaking's web port (Connect, as the web page calls it), for a
session signed in with the operator role of the studio's issuer (``authorization: Bearer``):
a player's session is PERMISSION_DENIED ``NOT_OPERATOR`` on every console RPC; a missing,
forged or tampered token is UNAUTHENTICATED; an operator token of another issuer or signed
with another key never signs in; an operator's session finds, suspends, lifts and revokes, the
audit log names its subject, a refresh keeps the role and a revoked operator session is
refused at once."""

from __future__ import annotations

import uuid

import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from google.rpc import error_details_pb2
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from devkit.dev_issuer import DevIssuer
from infra.ports import AUTO_PORT
from infra.web_calls import method_infos
from tests.support.grpc_server import serving
from tests.support.identity import TEST_AUDIENCE, TEST_ISSUER, id_token, sign_in
from tests.support.stacks import matchmaking_spec

METHODS = method_infos(pb.DESCRIPTOR.services_by_name["MatchmakingService"])
T = 10


def _requests(pid: str, session_id: str) -> dict:
    return {
        "FindPlayers": pb.FindPlayersRequest(player_id=pid),
        "SuspendPlayer": pb.SuspendPlayerRequest(
            player_id=pid, reason="chip dumping", request_id=uuid.uuid4().hex
        ),
        "LiftSuspension": pb.LiftSuspensionRequest(
            player_id=pid, reason="appeal", request_id=uuid.uuid4().hex
        ),
        "RevokeSession": pb.RevokeSessionRequest(
            player_id=pid, session_id=session_id, reason="stolen", request_id=uuid.uuid4().hex
        ),
        "ListAuditLog": pb.ListAuditLogRequest(),
    }


def _refused(web, method: str, request, token: str | None) -> tuple[Code, str]:
    headers = {} if token is None else {"authorization": f"Bearer {token}"}
    with pytest.raises(ConnectError) as err:
        web.execute_unary(request=request, method=METHODS[method], headers=headers)
    infos = [
        error_details_pb2.ErrorInfo.FromString(d.message_bytes)
        for d in err.value.details
        if d.type_name == "google.rpc.ErrorInfo"
    ]
    return err.value.code, infos[0].reason if infos else ""


def _sign_in(stub, name: str, subject: str, token: str) -> pb.SignInResponse:
    request = pb.SignInRequest(id_token=token, display_name=name, request_id=uuid.uuid4().hex)
    return stub.SignIn(request, timeout=T)


def test_only_an_operator_session_uses_the_console_on_the_web_port():
    with serving(matchmaking_spec(), extra={"web_port": AUTO_PORT}) as (server, channel):
        stub = pb_grpc.MatchmakingServiceStub(channel)
        web = ConnectClientSync(
            f"http://127.0.0.1:{server.resource.web_port}", codec=google_protobuf_binary_codec()
        )
        try:
            cheat, cheat_token = sign_in(stub, "Cheat")
            pid = cheat.player_id
            subject = f"ops-{uuid.uuid4().hex[:8]}"
            op = _sign_in(stub, "Ops", subject, id_token("Ops", subject, roles=["operator"]))
            assert op.session.operator and not op.player.guest
            op_token = op.session.session_token
            # a player's session: PERMISSION_DENIED on every console RPC, nothing applied
            for method, request in _requests(pid, "s-none").items():
                got = _refused(web, method, request, cheat_token)
                assert got == (Code.PERMISSION_DENIED, "NOT_OPERATOR"), method
                # no token, a forged one, the operator's tampered: UNAUTHENTICATED
                assert _refused(web, method, request, None)[0] == Code.UNAUTHENTICATED
                assert _refused(web, method, request, "forged.x.y")[0] == Code.UNAUTHENTICATED
                tampered = op_token[:-4] + ("AAAA" if op_token[-4:] != "AAAA" else "BBBB")
                assert _refused(web, method, request, tampered)[0] == Code.UNAUTHENTICATED
            # the role claimed by a token of another key, or of another issuer: no sign-in
            rogue_key = DevIssuer.ephemeral(
                "ES256", "test-k1", issuer=TEST_ISSUER, audience=TEST_AUDIENCE
            )
            rogue_issuer = DevIssuer.ephemeral(issuer="https://rogue.test", audience=TEST_AUDIENCE)
            for rogue in (rogue_key, rogue_issuer):
                forged = rogue.id_token(subject, "Ops", roles=["operator"])
                with pytest.raises(Exception) as err:
                    _sign_in(stub, "Ops", subject, forged)
                assert err.value.code().name == "UNAUTHENTICATED"  # type: ignore[attr-defined]
            # a role in another claim, or another role: a player's session
            other = _sign_in(stub, "Mod", "mod-1", id_token("Mod", "mod-1", roles=["moderator"]))
            assert not other.session.operator
            got = _refused(
                web, "ListAuditLog", pb.ListAuditLogRequest(), other.session.session_token
            )
            assert got == (Code.PERMISSION_DENIED, "NOT_OPERATOR")
            # the operator's session: finds, suspends, lifts, revokes; audited as its subject
            auth = {"authorization": f"Bearer {op_token}"}
            found = web.execute_unary(
                request=pb.FindPlayersRequest(player_id=pid),
                method=METHODS["FindPlayers"],
                headers=auth,
            )
            [dossier] = found.players
            session_id = dossier.sessions[0].session_id
            for method in ("SuspendPlayer", "LiftSuspension"):
                web.execute_unary(
                    request=_requests(pid, session_id)[method], method=METHODS[method], headers=auth
                )
            revoked = web.execute_unary(
                request=_requests(pid, session_id)["RevokeSession"],
                method=METHODS["RevokeSession"],
                headers=auth,
            )
            assert not revoked.revoked  # the suspension revoked it already
            log = web.execute_unary(
                request=pb.ListAuditLogRequest(), method=METHODS["ListAuditLog"], headers=auth
            )
            mine = [e for e in log.entries if pid in e.target]
            assert [e.action for e in mine] == ["SuspendPlayer", "LiftSuspension", "RevokeSession"]
            who = f"session:{op.player.player_id} {TEST_ISSUER}#{subject}"
            assert {e.actor for e in mine} == {who}
            # refreshing keeps the role; revoking the operator's session ends it at once
            fresh = stub.RefreshSession(
                pb.RefreshSessionRequest(refresh_token=op.session.refresh_token), timeout=T
            )
            assert fresh.session.operator
            new_token = fresh.session.session_token
            web.execute_unary(
                request=_requests(op.player.player_id, fresh.session.session_id)["RevokeSession"],
                method=METHODS["RevokeSession"],
                headers={"authorization": f"Bearer {new_token}"},
            )
            got = _refused(web, "ListAuditLog", pb.ListAuditLogRequest(), new_token)
            assert got[0] == Code.UNAUTHENTICATED
        finally:
            web.close()
