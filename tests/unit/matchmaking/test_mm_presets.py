"""Matchmaking offers the presets shanghai-old and shanghai-baida (RULES-presets §13): quick
play queues per preset and rooms with a preset and its house rules; a bad preset option is
refused naming it."""

from __future__ import annotations

import pytest

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.queues import quick_match as queues
from shared.errors import InvalidArgument
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import give, make_service


@pytest.mark.parametrize("preset", ["shanghai-old", "shanghai-baida"])
def test_a_quick_queue_per_preset_makes_a_table_of_it(preset):
    mm, alloc, _ = make_service()
    signed = [sign_in(mm, f"P{i}") for i in range(5)]
    tokens = [tok for _, tok in signed]
    for (
        player,
        _,
    ) in signed:  # 老麻将 at stake 1 can cost 6,000: 3 winners × 4 shares × limit_hu 500
        give(mm, player.player_id, ledger.SILVER, 6_000)
    tickets = [mm.join_queue(tok, preset, 1) for tok in tokens[:4]]
    mm.join_queue(tokens[4], "", 0)  # the default preset's queue is another queue
    mm.tick()
    states = {mm.ticket(tok, t.ticket_id).state for tok, t in zip(tokens, tickets, strict=False)}
    assert states == {queues.ASSIGNED}
    ((request, _),) = alloc.tables.values()
    assert request.ruleset == preset


def test_a_room_plays_baida_with_house_rules_and_refuses_a_bad_one():
    mm, alloc, _ = make_service(free_room_cards=2)
    owner = sign_in(mm, "O")[1]
    with pytest.raises(InvalidArgument, match=r"baida_tiles\.wildcards"):
        mm.open_room(owner, "shanghai-baida", 0, {"baida_tiles.wildcards": "jokers"})
    with pytest.raises(InvalidArgument, match="no 敲"):
        mm.open_room(owner, "shanghai-old", 0, {"ready.require_declare_ready": "true"})
    house = {"baida_tiles.extra_bonus_tiles": "false"}
    code = mm.open_room(owner, "shanghai-baida", 0, house).code
    guest = sign_in(mm, "G")[1]
    mm.join_room(guest, code)
    mm.set_room_stake(owner, code, 1)
    mm.answer_room_stake(guest, code, True)
    for _ in range(2):
        mm.invite_bot(owner, code)
    mm.press_start(owner, code)
    mm.press_start(guest, code)
    ((request, _),) = alloc.tables.values()
    assert request.ruleset == "shanghai-baida" and request.ruleset_options == house
