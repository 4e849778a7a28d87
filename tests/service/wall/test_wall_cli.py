"""``mahjong wall …`` against a real loopback wall server, ending in ``mahjong verify-wall`` on
what ``mahjong wall reveal`` printed."""

from __future__ import annotations

import json

import pytest

from services.cli import main
from services.wall.server import SPEC
from shared import tiles as T
from tests.support.grpc_server import serving


@pytest.fixture(scope="module")
def addr():
    with serving(SPEC, extra={"allow_fixed_seed": True}) as (server, _):
        yield server.address


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, *argv) -> dict:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def test_a_hand_through_the_cli_then_verified(addr, capsys, tmp_path):
    new = run_json(
        capsys, "wall", "new", "--addr", addr, "--dealer", "1", "--option", "table.tile_swap=true"
    )
    hand = new["hand_id"]
    assert len(new["commitment"]) == 64 and new["opened_seat"] in range(4)
    deal = run_json(capsys, "wall", "deal", "--addr", addr, hand)
    assert [len(T.parse(h)) for h in deal["hands"]] == [13, 14, 13, 13]
    buried = T.format_tiles([k for k in T.parse(deal["hands"][2]) if not T.is_flower(k)][:5])
    swap = run_json(capsys, "wall", "swap", "--addr", addr, "--seat", "2", hand, buried)
    assert len(T.parse(swap["taken"])) == 5
    draw = run_json(capsys, "wall", "draw", "--addr", addr, "--seat", "1", hand)
    assert draw["counts"]["live_drawn"] == 54 and len(T.parse(draw["tile"])) == 1
    repl = run_json(capsys, "wall", "replacement", "--addr", addr, "--seat", "1", hand)
    assert repl["counts"]["replacements_drawn"] == 1
    assert run_json(capsys, "wall", "remaining", "--addr", addr, hand)["remaining"] == 89

    code, out, _ = run(capsys, "wall", "reveal", "--addr", addr, hand)
    assert code == 0
    path = tmp_path / "hand.json"
    path.write_text(out, encoding="utf-8")
    record = json.loads(out)
    assert record["tile_swap_count"] == 5 and record["events"][-3]["kind"] == "swap"
    code, out, _ = run(capsys, "verify-wall", str(path))
    assert code == 0 and out.startswith("OK")


def test_errors_are_reported_with_their_status(addr, capsys):
    code, _, err = run(capsys, "wall", "deal", "--addr", addr, "h_nope")
    assert code == 1 and "NOT_FOUND" in err and "h_nope" in err
    code, _, err = run(capsys, "wall", "new", "--addr", addr, "--seed", "xyz")
    assert code == 2 and "not hex" in err
    code, _, err = run(capsys, "wall", "new", "--addr", addr, "--option", "table.tile_swap")
    assert code == 2 and "section.option=value" in err
    code, _, err = run(capsys, "wall", "new", "--addr", addr, "--ruleset", "nope")
    assert code == 1 and "INVALID_ARGUMENT" in err
    new = run_json(capsys, "wall", "new", "--addr", addr)
    code, _, err = run(capsys, "wall", "swap", "--addr", addr, "--seat", "0", new["hand_id"], "1x")
    assert code == 2 and "'x'" in err


def test_fixed_seed_through_the_cli(addr, capsys):
    seed = "00" * 32
    new = run_json(capsys, "wall", "new", "--addr", addr, "--seed", seed, "--dealer", "1")
    assert new["dice"] == [5, 2]
    assert new["commitment"] == "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
