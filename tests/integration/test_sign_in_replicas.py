"""One identity signing in 1,000 times over two matchmaking replicas (real processes) on one
PostgreSQL database, from 16 threads at once (flood control off): every answer names the one
player, with the 1,000 silver of exactly one welcome grant in the ledger; and signing out every
session on one replica is refused on the other at once."""

from __future__ import annotations

import threading
import uuid

import grpc
import pytest
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.request_ids import with_request_ids
from infra.store import open_store
from infra.supervisor import stop_all
from services.matchmaking.domain.economy import ledger
from tests.support.identity import id_token
from tests.support.probes import rpc_error
from tests.support.stacks import service_process
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

T = 30.0
SIGN_INS = 1000
THREADS = 16
FLAGS = [
    "--flood-address-rate", "0", "--flood-player-rate", "0",  # call_guard.py's flags
    "--max-workers", "48", "--drain-seconds", "0", "--grace-seconds", "1",
]  # fmt: skip


@pytest.fixture
def replicas(tmp_path, postgres_url):
    procs = {}
    try:
        for name in ("mm-a", "mm-b"):  # at once, on an empty database
            procs[name] = service_process(
                "matchmaking", tmp_path, store_url=postgres_url,
                extra=[*FLAGS, "--replica-id", name], log_name=name,
            ).start()  # fmt: skip
        for p in procs.values():
            p.wait_ready(60)
        channels = {n: with_request_ids(as_player(p.address)) for n, p in procs.items()}
        yield {n: pb_grpc.MatchmakingServiceStub(c) for n, c in channels.items()}, postgres_url
        for c in channels.values():
            c.close()
    finally:
        stop_all(procs.values())


def test_a_thousand_sign_ins_over_two_replicas_make_one_player_and_one_grant(replicas):
    stubs, url = replicas
    stubs = [stubs["mm-a"], stubs["mm-b"]]
    token = id_token("Ann", "ann-" + uuid.uuid4().hex)
    answers: list[tuple[int, pb.SignInResponse]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(THREADS)

    def run(t: int) -> None:
        try:
            barrier.wait(30)
            for i in range(t, SIGN_INS, THREADS):
                which = i % 2
                got = stubs[which].SignIn(
                    pb.SignInRequest(id_token=token, display_name="Ann"), timeout=T
                )
                with lock:
                    answers.append((which, got))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[:3]
    assert len(answers) == SIGN_INS
    assert {which for which, _ in answers} == {0, 1}
    assert {got.player.player_id for _, got in answers} == {answers[0][1].player.player_id}
    pid = answers[0][1].player.player_id
    assert {got.player.silver for _, got in answers} == {1000}
    assert sum(got.created for _, got in answers) == 1
    assert len({got.session.session_id for _, got in answers}) == SIGN_INS

    store = open_store(url)
    try:
        assert ledger.balance(store, pid) == 1000
        assert ledger.balance(store, pid, ledger.ROOM_CARD) == 3
        welcome = [e for e in ledger.entries(store, pid) if e.ref.startswith("welcome/")]
        assert len({e.ref for e in welcome}) == 1  # one welcome-grant transaction
        assert sorted((e.asset, e.amount) for e in welcome) == [
            (ledger.ROOM_CARD, 3),
            (ledger.SILVER, 1000),
        ]
        assert [(e.asset, e.amount) for e in ledger.entries(store, pid)] == [
            (e.asset, e.amount) for e in welcome
        ]  # and nothing else
        assert ledger.reconcile(store) == []
    finally:
        store.close()

    # SignOut of every session on replica A: replica B refuses them at once
    latest = {  # a live session from each replica
        which: stub.SignIn(pb.SignInRequest(id_token=token), timeout=T)
        for which, stub in enumerate(stubs)
    }
    for got in latest.values():
        me = pb.GetPlayerRequest(session_token=got.session.session_token)
        assert stubs[1].GetPlayer(me, timeout=T).player.player_id == pid
    out = stubs[0].SignOut(
        pb.SignOutRequest(session_token=latest[1].session.session_token, all_sessions=True),
        timeout=T,
    )
    assert 0 < out.sessions_ended <= 32  # MAX_SESSIONS: the older ones ended already
    for got in latest.values():
        for stub in stubs:
            me = pb.GetPlayerRequest(session_token=got.session.session_token)
            code, message, info = rpc_error(lambda s=stub, r=me: s.GetPlayer(r, timeout=T))
            assert code == grpc.StatusCode.UNAUTHENTICATED, message
            assert info.reason == "SESSION_ENDED"
            refresh = pb.RefreshSessionRequest(refresh_token=got.session.refresh_token)
            code, _, info = rpc_error(lambda s=stub, r=refresh: s.RefreshSession(r, timeout=T))
            assert code == grpc.StatusCode.UNAUTHENTICATED and info.reason == "SESSION_ENDED"
    again = stubs[1].SignIn(pb.SignInRequest(id_token=token), timeout=T)
    assert again.player.player_id == pid and not again.created and again.player.silver == 1000
