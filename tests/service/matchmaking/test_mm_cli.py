"""The ``mahjong players|queue|room|tournament`` subcommands against a loopback server."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from services.cli import main
from tests.support.grpc_server import serving
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
    code, (reg,), _ = run("players", "register", "Alice")
    assert code == 0 and reg["player"]["displayName"] == "Alice"
    token = reg["playerToken"]
    _, (show,), _ = run("players", "show", "--token", token)
    assert show["player"]["silver"] == "1000" and show["player"]["level"]["name"] == "副主管"
    _, (levels,), _ = run("players", "levels")
    assert len(levels["levels"]) == 18
    _, (opened,), _ = run("room", "open", "--token", token, "--max-hands", "4")
    room_code = opened["room"]["code"]
    assert opened["roomCardsLeft"] == 2
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
    _, (standings,), _ = run("tournament", "standings", tid)
    assert len(standings["standings"]) == 4


def test_errors_print_the_status_and_exit_non_zero(run):
    code, out, err = run("room", "join", "--token", "p-x.forged", "123456")
    assert code == 1 and out == []
    assert "UNAUTHENTICATED" in err
    _, (reg,), _ = run("players", "register", "Bob")
    code, _, err = run("room", "join", "--token", reg["playerToken"], "000000")
    assert code == 1 and "NOT_FOUND" in err and "000000" in err
