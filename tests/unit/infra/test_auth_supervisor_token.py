"""infra.supervisor: the services a supervisor starts share one internal token, so the real
stack (``mahjong run``, integration and e2e stacks, LocalStack) always authenticates internal
calls; an operator's MAHJONG_INTERNAL_TOKEN or a caller's explicit env wins."""

from __future__ import annotations

import grpc
import pytest

from devkit.stack import LocalStack
from infra import supervisor as sup
from infra.interceptor import internal_metadata
from infra.tls import TLSFiles, dial


@pytest.fixture
def fresh_token(monkeypatch):
    monkeypatch.setattr(sup, "_run_token", None)
    monkeypatch.delenv("MAHJONG_INTERNAL_TOKEN", raising=False)


def test_children_share_one_random_token(fresh_token):
    a = sup.ServiceProcess("wall", 1, 2, "memory://").child_env()["MAHJONG_INTERNAL_TOKEN"]
    b = sup.ServiceProcess("rules", 3, 4, "memory://").child_env()["MAHJONG_INTERNAL_TOKEN"]
    assert a == b == sup.run_token() and len(a) >= 32


def test_tokens_differ_between_runs(fresh_token, monkeypatch):
    first = sup.run_token()
    monkeypatch.setattr(sup, "_run_token", None)
    assert sup.run_token() != first


def test_operator_token_and_explicit_env_win(fresh_token, monkeypatch):
    monkeypatch.setenv("MAHJONG_INTERNAL_TOKEN", "operator")
    assert sup.ServiceProcess("wall", 1, 2, "m").child_env()["MAHJONG_INTERNAL_TOKEN"] == "operator"
    own = sup.ServiceProcess("wall", 1, 2, "m", env={"MAHJONG_INTERNAL_TOKEN": "mine"})
    assert own.child_env()["MAHJONG_INTERNAL_TOKEN"] == "mine"
    assert (
        sup.ServiceProcess("w", 1, 2, "m", internal_token="x").child_env()["MAHJONG_INTERNAL_TOKEN"]
        == "x"
    )


def test_local_stack_reports_the_token_its_services_get(fresh_token):
    assert LocalStack(()).internal_token == sup.run_token()
    assert LocalStack((), env={"MAHJONG_INTERNAL_TOKEN": "t"}).internal_token == "t"


def test_a_started_matchmaking_process_refuses_reports_without_the_token(fresh_token, tmp_path):
    """The real process reads the token from the environment the supervisor gave it: the
    gateway's certificate alone is not enough while a token is configured."""
    from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
    from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

    proc = sup.ServiceProcess(
        "matchmaking",
        0,
        0,
        f"sqlite:///{tmp_path / 'mm.db'}",
        ["--gateway-addr", "127.0.0.1:1"],
        log_path=tmp_path / "mm.log",
    )
    proc.start()
    try:
        proc.wait_ready(60)
        gateway = TLSFiles(sup.DEV_TLS_ROOT / "gateway")
        with dial(proc.internal_address, "matchmaking", gateway) as channel:
            stub = pb_grpc.MatchmakingServiceStub(channel)
            req = pb.TableFinishedRequest(table_id="t-1", tag="quick/x", hands_played=1)
            with pytest.raises(grpc.RpcError) as err:
                stub.TableFinished(req, timeout=10)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(grpc.RpcError) as err:
                stub.TableFinished(req, timeout=10, metadata=internal_metadata(sup.run_token()))
            assert err.value.code() == grpc.StatusCode.NOT_FOUND  # authenticated; unknown table
    finally:
        assert proc.stop() == 0
