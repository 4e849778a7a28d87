"""The room service fee (房间服务费 / 台费, RULES.md §9a): a fee per hand from each human seat to
the house, its own ledger entries, the conservation "payments + fees + house = 0", the cover
that includes it, and the ways a farmer might try to dodge it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.matchmaking.domain.economy import hand_cover, ledger, reconciliation
from services.matchmaking.domain.economy.ledger import HOUSE, HandReport
from services.matchmaking.domain.queues import levels
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.service import Matchmaking, MatchmakingConfig
from shared.errors import FailedPrecondition, InvalidArgument
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service, seated_quick_table

UNITS = MatchmakingConfig().level_fee_units  # the deployment's default


def fee_table():
    """Four players (1,000 silver: 副主管, stake 8) at a quick-match table with the default
    level fee."""
    mm, alloc, _clock = make_service(level_fee_units=UNITS)
    tid, tag, ids, stake = seated_quick_table(mm, alloc)
    return mm, alloc, tid, tag, list(ids), stake


def set_silver(mm: Matchmaking, player_id: str, silver: int) -> None:
    have = ledger.balance(mm.store, player_id)
    ledger.grant(mm.store, player_id, f"set/{silver}/{have}", silver - have, mm.clock())


def kinds(mm: Matchmaking, account: str, ref: str) -> list[tuple[str, int]]:
    return [(e.kind, e.amount) for e in ledger.entries(mm.store, account) if e.ref == ref]


def test_the_default_level_fee_is_one_stake_unit_and_zero_for_daiye():
    assert UNITS == levels.FEE_STAKE_UNITS == 1
    assert [levels.fee_for_stake(s) for s in (1, 8, 65536)] == [1, 8, 65536]
    assert levels.fee_for_stake(0) == 0 and levels.fee_for_stake(3) == 0  # no tier
    assert levels.fee_for_stake(8, 0) == 0  # --level-fee-units 0: no fee


def test_a_hand_books_each_human_seats_fee_as_its_own_entry_to_the_house():
    mm, alloc, tid, tag, ids, stake = fee_table()
    fee = stake * UNITS
    ((request, _),) = alloc.tables.values()
    assert request.fee_per_hand == fee == 8
    house_before = ledger.balance(mm.store, HOUSE)
    report = HandReport("h1", tid, tag, tuple(ids), (-30, 10, 10, 10), fees=(fee,) * 4)
    assert mm.record_hand(report) is True
    assert kinds(mm, ids[0], "h1") == [("hand", -30), ("room_fee", -fee)]
    assert kinds(mm, ids[1], "h1") == [("hand", 10), ("room_fee", -fee)]
    assert ledger.balance(mm.store, ids[0]) == 1000 - 30 - fee
    assert ledger.balance(mm.store, HOUSE) - house_before == 4 * fee
    assert sorted(a for k, a in kinds(mm, HOUSE, "h1") if k == "room_fee") == [fee] * 4
    # a repeat writes nothing; the same hand with other fees is refused
    assert mm.record_hand(report) is False
    with pytest.raises(FailedPrecondition):
        mm.record_hand(HandReport("h1", tid, tag, tuple(ids), (-30, 10, 10, 10), fees=(0,) * 4))
    assert ledger.reconcile(mm.store) == []
    books = reconciliation.report_for(mm.store, "", mm.clock(), 10**9)
    assert books.discrepancies == ()
    assert (books.hand_payments, books.room_fees, books.house_take) == (0, 4 * fee, 4 * fee)
    assert books.hand_payments - books.room_fees + books.house_take == 0


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_room_fees_booked_beyond_what_hands_charged_are_a_discrepancy(backend, tmp_path):
    from infra.store import open_store

    store = open_store("memory://" if backend == "memory" else f"sqlite:///{tmp_path}/mm.db")
    mm, alloc, _ = make_service(store, level_fee_units=UNITS)
    tid, tag, ids, stake = seated_quick_table(mm, alloc)
    fee = stake * UNITS
    mm.record_hand(HandReport("h1", tid, tag, tuple(ids), (0,) * 4, fees=(fee,) * 4))
    day = reconciliation.report_for(mm.store, "", mm.clock(), 10**9)
    assert (day.room_fees, day.room_fees_booked, day.discrepancies) == (4 * fee, 4 * fee, ())
    # a room_fee booked to the house outside any hand (a forged transaction) is found
    legs = [
        ledger.Leg(ids[0], "silver", -1, "room_fee"),
        ledger.Leg(HOUSE, "silver", 1, "room_fee"),
    ]
    ledger.transact(mm.store, "forged-fee", legs, mm.clock())
    day = reconciliation.report_for(mm.store, "", mm.clock(), 10**9)
    assert day.room_fees_booked == 4 * fee + 1
    assert any("room fees" in d for d in day.discrepancies)


def test_conservation_names_a_stored_hand_that_breaks_it():
    good = HandReport(
        "h", "t", "quick/x", ("a", "b", "c", "bot-d"), (3, -1, -1, -1), 0, fees=(2,) * 3 + (0,)
    )
    assert reconciliation.conservation(good) == ""
    on_bot = HandReport("h", "t", "q", ("a", "b", "c", "bot-d"), (3, -1, -1, -1), fees=(1, 1, 1, 1))
    assert "bot" in reconciliation.conservation(on_bot)
    negative = HandReport("h", "t", "q", ("a", "b", "c", "d"), (0,) * 4, fees=(-1, 0, 0, 0))
    assert "negative" in reconciliation.conservation(negative)
    unbalanced = HandReport("h", "t", "q", ("a", "b", "c", "d"), (1, 0, 0, 0), fees=(1,) * 4)
    assert "do not sum to 0" in reconciliation.conservation(unbalanced)


def test_malformed_fees_are_refused_whole():
    mm, _, tid, tag, ids, _ = fee_table()
    before = {p: ledger.balance(mm.store, p) for p in [*ids, HOUSE]}
    for fees, reason in [((-8, 8, 8, 8), "FEE_NEGATIVE"), ((8, 8, 8), None)]:
        with pytest.raises(InvalidArgument) as err:
            mm.record_hand(HandReport("h1", tid, tag, tuple(ids), (0,) * 4, fees=fees))
        assert err.value.details["field"] == "fees"
        if reason:
            assert err.value.reason == reason
    assert {p: ledger.balance(mm.store, p) for p in [*ids, HOUSE]} == before


def test_a_report_that_skips_or_shrinks_the_fee_is_refused_and_books_nothing():
    mm, _, tid, tag, ids, _stake = fee_table()
    before = {p: ledger.balance(mm.store, p) for p in [*ids, HOUSE]}
    for fees in [(), (0, 8, 8, 8), (1, 1, 1, 1), (9, 9, 9, 9)]:
        with pytest.raises(FailedPrecondition) as err:
            mm.record_hand(HandReport("h1", tid, tag, tuple(ids), (-3, 1, 1, 1), fees=fees))
        assert err.value.reason == "FEE_MISMATCH"
    assert {p: ledger.balance(mm.store, p) for p in [*ids, HOUSE]} == before
    assert not ledger.has_hand(mm.store, "h1")


def test_a_bot_seat_pays_no_fee_and_cannot_be_charged_one():
    mm, alloc, _ = make_service(level_fee_units=UNITS, bot_fill_seconds=0)
    _, tok = sign_in(mm, "Solo")
    mm.join_queue(tok, "", 0)
    mm.tick()
    ((request, table),) = alloc.tables.values()
    ids = tuple(s.player_id for s in request.seats)
    human = next(i for i, p in enumerate(ids) if not ledger.is_bot(p))
    fee = request.fee_per_hand
    assert fee == request.stake * UNITS > 0
    charged_bots = tuple(fee for _ in ids)
    with pytest.raises(InvalidArgument) as err:  # a bot has no wallet: no fee
        mm.record_hand(
            HandReport("h1", table.table_id, request.tag, ids, (0,) * 4, fees=charged_bots)
        )
    assert err.value.reason == "FEE_ON_BOT"
    fees = tuple(fee if i == human else 0 for i in range(4))
    house = ledger.balance(mm.store, HOUSE)
    assert mm.record_hand(HandReport("h1", table.table_id, request.tag, ids, (0,) * 4, fees=fees))
    assert ledger.balance(mm.store, ids[human]) == 1000 - fee
    assert ledger.balance(mm.store, HOUSE) - house == fee


def test_leaving_mid_hand_does_not_dodge_the_fee():
    """The escape's own report charges no fee; the hand's report (its seats as dealt) charges
    the seat that left too: the fee is owed by whoever sat at the deal."""
    mm, _, tid, tag, ids, stake = fee_table()
    fee = stake * UNITS
    escape = HandReport("h1/escape/0", tid, tag, tuple(ids), (-24, 6, 6, 6), 6, escaped_seat=0)
    with pytest.raises(FailedPrecondition) as err:  # an escape's report charges no fee
        mm.record_hand(replace(escape, fees=(fee,) * 4))
    assert err.value.reason == "FEE_MISMATCH"
    assert mm.record_hand(escape)
    with pytest.raises(FailedPrecondition):  # the hand's own report must charge seat 0 too
        mm.record_hand(HandReport("h1", tid, tag, tuple(ids), (0,) * 4, fees=(0, fee, fee, fee)))
    assert mm.record_hand(HandReport("h1", tid, tag, tuple(ids), (0,) * 4, fees=(fee,) * 4))
    assert kinds(mm, ids[0], "h1") == [("hand", 0), ("room_fee", -fee)]
    assert ledger.balance(mm.store, ids[0]) == 1000 - 24 - fee
    assert ledger.reconcile(mm.store) == []


def test_a_fee_changed_after_seating_does_not_change_the_tables_fee():
    """The level fee is fixed into the table when it is formed: a replica started later with
    another --level-fee-units (here 0) still requires the table's own fee."""
    mm, alloc, tid, tag, ids, stake = fee_table()
    other = Matchmaking(
        mm.store,
        alloc,
        mm.clock,
        MatchmakingConfig(
            issuers=mm.config.issuers, token_secret=b"test-secret", level_fee_units=0
        ),
    )
    with pytest.raises(FailedPrecondition) as err:
        other.record_hand(HandReport("h1", tid, tag, tuple(ids), (0,) * 4))
    assert err.value.reason == "FEE_MISMATCH"
    fees = (stake * UNITS,) * 4
    assert other.record_hand(HandReport("h1", tid, tag, tuple(ids), (0,) * 4, fees=fees))


def test_a_player_who_cannot_cover_the_fee_on_top_of_the_cover_is_not_queued():
    mm, _, _ = make_service(level_fee_units=UNITS)
    player, tok = sign_in(mm, "Short")
    # 上海清混碰 (classic) covers 500 chips a stake unit: above the level floor (100), so the
    # fee decides; at stake 2 the cover is 1,000 and the fee 2
    cover = hand_cover.loss_cap("shanghai-classic", None, 2)
    assert cover == 1000
    set_silver(mm, player.player_id, cover + 2 - 1)
    with pytest.raises(FailedPrecondition) as err:
        mm.join_queue(tok, "shanghai-classic", 2)
    assert err.value.reason == "SILVER_BELOW_COVER_AND_FEE"
    assert err.value.details["short"] == "1" and err.value.details["fee"] == "2"
    assert "short by 1" in err.value.message and "台费" in err.value.message
    set_silver(mm, player.player_id, cover + 2)
    assert mm.join_queue(tok, "shanghai-classic", 2).stake == 2


def test_a_seat_that_no_longer_covers_the_next_hands_fee_goes_bankrupt():
    mm, _, tid, tag, ids, stake = fee_table()
    table = allocated_tables.find(mm.table_records, tid)
    cover = hand_cover.loss_cap(table.ruleset, dict(table.ruleset_options), stake)
    fee = stake * UNITS
    loss = 1000 - fee - cover - fee + 1  # A keeps cover + fee - 1 after this hand and its fee
    _, seats, _ = mm.hand_answer(
        HandReport("h1", tid, tag, tuple(ids), (-loss, loss, 0, 0), fees=(fee,) * 4)
    )
    assert ledger.balance(mm.store, ids[0]) == cover + fee - 1
    assert seats == [0]
    assert allocated_tables.seat_needs(mm.table_records, ids[1]).silver == cover + fee


def test_a_fee_paid_short_is_the_houses_loss_never_a_players():
    """Silver spent during a hand (the net under the cover): the payment to the other players is
    paid first, the fee from what is left, and the house alone takes the shortfall of the fee."""
    mm, _, tid, tag, ids, stake = fee_table()
    fee = stake * UNITS
    set_silver(mm, ids[0], 33)  # after the deal: the cover was checked at the start
    house = ledger.balance(mm.store, HOUSE)
    report = HandReport("h1", tid, tag, tuple(ids), (-30, 30, 0, 0), fees=(fee,) * 4)
    assert mm.record_hand(report)
    assert ledger.balance(mm.store, ids[0]) == 0
    assert ledger.balance(mm.store, ids[1]) == 1000 + 30 - fee  # paid in full
    assert ledger.balance(mm.store, HOUSE) - house == 3 * fee + 3
    assert ledger.reconcile(mm.store) == []


def test_a_room_fee_is_set_by_the_opener_checked_and_fixed():
    mm, alloc, _ = make_service()
    owner_p, owner = sign_in(mm, "Owner")
    cards = mm.account(owner_p.player_id).room_cards
    for bad in (-1, 1_000_001):  # a negative fee would pay the seats out of the house
        with pytest.raises(InvalidArgument) as err:
            mm.open_room(owner, "", 0, None, bad)
        assert err.value.reason == "FEE_OUT_OF_RANGE"
    assert mm.account(owner_p.player_id).room_cards == cards  # nothing spent
    assert mm.open_room(owner, "", 0).fee_per_hand == 0  # the default: no fee
    mm.leave_room(owner, _code_of(mm, owner_p.player_id))
    room = mm.open_room(owner, "shanghai-classic", 0, None, 50)
    assert room.fee_per_hand == 50
    cover = hand_cover.loss_cap(room.ruleset, room.ruleset_options, 1)
    mm.set_room_stake(owner, room.code, 1)
    poor_p, poor = sign_in(mm, "Poor")
    set_silver(mm, poor_p.player_id, cover + 49)
    with pytest.raises(FailedPrecondition) as err:
        mm.join_room(poor, room.code)
    assert err.value.reason == "SILVER_BELOW_COVER_AND_FEE" and err.value.details["short"] == "1"
    set_silver(mm, poor_p.player_id, cover + 50)
    mm.join_room(poor, room.code)
    for _ in range(2):
        mm.invite_bot(owner, room.code)
    mm.answer_room_stake(poor, room.code, True)
    mm.press_start(owner, room.code)
    mm.press_start(poor, room.code)
    mm.tick()
    ((request, _),) = alloc.tables.values()
    assert request.fee_per_hand == 50  # what the room was opened with


def _code_of(mm: Matchmaking, player_id: str) -> str:
    from services.matchmaking.domain.rooms import private as rooms

    code = rooms.room_of_player(mm.room_records, player_id)
    assert code
    return code
