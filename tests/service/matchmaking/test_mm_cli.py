"""The ``mahjong players|queue|room|tournament`` subcommands against a loopback server."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from services.cli import main
from tests.support.grpc_server import serving
from tests.support.identity import id_token
from tests.support.stacks import matchmaking_spec


@pytest.fixture
def run():
    with serving(matchmaking_spec()) as (server, _channel):

        def call(*args: str) -> tuple[int, list[dict], str]:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main([*args, "--matchmaking-addr", server.address])
            lines = [line for line in out.getvalue().splitlines() if line]
            return code, [json.loads(line) for line in lines], err.getvalue()

        yield call


def test_players_rooms_and_tournaments_from_the_shell(run):
    code, (reg,), _ = run("players", "sign-in", id_token("Alice"))
    assert code == 0 and reg["player"]["displayName"] == "Alice" and reg["created"]
    token = reg["session"]["sessionToken"]
    _, (show,), _ = run("players", "show", "--token", token)
    assert show["player"]["silver"] == "1000" and show["player"]["level"]["name"] == "副主管"
    _, (levels,), _ = run("players", "levels")
    assert len(levels["levels"]) == 18
    assert levels["levels"][4]["feePerHand"] == "8"  # 副主管: the level's 台费, 8 a hand
    _, (opened,), _ = run(
        "room", "open", "--token", token, "--max-hands", "4", "--fee-per-hand", "3"
    )  # fmt: skip
    room_code = opened["room"]["code"]
    assert opened["roomCardsLeft"] == 2 and opened["room"]["feePerHand"] == "3"
    _, (bot,), _ = run("room", "bot", "--token", token, room_code)
    assert len(bot["room"]["members"]) == 2
    _, (staked,), _ = run("room", "stake", "--token", token, room_code, "2")
    assert staked["room"]["stake"] == "2"
    _, (created,), _ = run(
        "tournament", "create", "--token", token, "--name", "Cup", "--stake", "1",
        "--rounds", "1", "--hands", "1", "--bots", "3",
    )  # fmt: skip
    tid = created["tournament"]["tournamentId"]
    run("tournament", "join", "--token", token, tid)
    _, (started,), _ = run("tournament", "start", "--token", token, tid)
    assert started["tournament"]["state"] == "TOURNAMENT_STATE_RUNNING"
    _, (standings,), _ = run("tournament", "standings", "--token", token, tid)
    assert len(standings["standings"]) == 4


def test_errors_print_the_status_and_exit_non_zero(run):
    code, out, err = run("room", "join", "--token", "p-x.forged", "123456")
    assert code == 1 and out == []
    assert "UNAUTHENTICATED" in err
    _, (reg,), _ = run("players", "sign-in", id_token("Bob"))
    code, _, err = run("room", "join", "--token", reg["session"]["sessionToken"], "000000")
    assert code == 1 and "NOT_FOUND" in err and "000000" in err


def test_login_prints_a_dev_issuer_token_that_signs_in_and_sessions_refresh_and_end(tmp_path):
    """``mahjong login NAME`` (the development issuer's key under --root) against a server
    trusting that issuer's key set, served over HTTP as ``mahjong run`` serves it."""
    from devkit.dev_issuer import DevIssuer, DevIssuerServer
    from services.matchmaking.domain.players.issuers import format_issuer

    root = tmp_path / "dev-issuer"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["login", "Carol", "--root", str(root)]) == 0
    token = out.getvalue().strip()
    assert (root / "key.pem").stat().st_mode & 0o077 == 0  # the key is its owner's only
    with DevIssuerServer(DevIssuer.at(root)) as issuer:
        extra = {"issuers": format_issuer(issuer.config()), "allow_guests": True}
        with serving(matchmaking_spec(), extra=extra) as (server, _):

            def call(*args: str) -> tuple[int, dict, str]:
                o, e = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
                    code = main([*args, "--matchmaking-addr", server.address])
                return code, (json.loads(o.getvalue()) if o.getvalue() else {}), e.getvalue()

            code, signed, _ = call("players", "sign-in", token)
            assert code == 0 and signed["player"]["displayName"] == "Carol"
            session = signed["session"]
            _, again, _ = call("players", "sign-in", DevIssuer.at(root).id_token("Carol"))
            assert again["player"]["playerId"] == signed["player"]["playerId"]
            assert "created" not in again  # the same identity: no second player, no grant
            code, refreshed, _ = call("players", "refresh", session["refreshToken"])
            assert code == 0 and refreshed["session"]["refreshToken"] != session["refreshToken"]
            code, _, err = call("players", "refresh", session["refreshToken"])  # spent
            assert code == 1 and "UNAUTHENTICATED" in err
            code, renamed, _ = call(
                "players", "rename", "--token", again["session"]["sessionToken"], "Caz"
            )
            assert code == 0 and renamed["player"]["displayName"] == "Caz"
            code, ended, _ = call(
                "players", "sign-out", "--token", again["session"]["sessionToken"], "--all"
            )
            assert code == 0 and ended["sessionsEnded"] >= 1
            code, _, err = call("players", "show", "--token", again["session"]["sessionToken"])
            assert code == 1 and "UNAUTHENTICATED" in err
            code, guest, _ = call("players", "guest", "Gus")
            assert code == 0 and guest["player"]["guest"]
