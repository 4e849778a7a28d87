import pytest

from services.matchmaking.domain.rooms import private as rooms
from services.matchmaking.storage import room_records
from shared.errors import FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service


@pytest.fixture
def svc():
    return make_service(ready_seconds=15, free_room_cards=2)


def register(mm, *names):
    return [sign_in(mm, n)[1] for n in names]


def test_opening_a_room_costs_a_room_card_and_gives_a_six_digit_code(svc):
    mm, _, _ = svc
    (owner,) = register(mm, "Owner")
    room = mm.open_room(owner, "", 0)
    assert len(room.code) == 6 and room.code.isdigit()
    assert mm.account(mm.authenticate(owner).player_id).room_cards == 1
    assert room.owner == mm.authenticate(owner).player_id
    assert room.state == rooms.OPEN


def test_without_room_cards_no_room_is_opened(svc):
    mm, _, _ = svc
    (owner,) = register(mm, "Owner")
    code = mm.open_room(owner, "", 0).code
    mm.leave_room(owner, code)
    mm.open_room(owner, "", 0)
    pid = mm.authenticate(owner).player_id
    mm.leave_room(owner, rooms.room_of_player(mm.room_records, pid))
    with pytest.raises(FailedPrecondition) as err:
        mm.open_room(owner, "", 0)
    assert err.value.reason == "NO_ROOM_CARD"
    assert rooms.room_of_player(mm.room_records, pid) is None
    assert list(mm.store.scan(room_records.ROOMS)) == []


def test_join_by_code_and_bad_codes(svc):
    mm, _, _ = svc
    owner, b = register(mm, "Owner", "B")
    code = mm.open_room(owner, "", 0).code
    room = mm.join_room(b, code)
    assert [m.display_name for m in room.members] == ["Owner", "B"]
    wrong = f"{(int(code) + 1) % 10**6:06d}"
    for bad in (wrong, "12ab56", "", "1234567"):
        with pytest.raises(NotFound):
            mm.join_room(b, bad)
    with pytest.raises(FailedPrecondition) as err:
        mm.join_room(b, code)
    assert err.value.reason == "ALREADY_IN_ROOM"


def test_a_full_room_refuses_and_changes_nothing(svc):
    mm, _, _ = svc
    owner, b, c, d, e = register(mm, "O", "B", "C", "D", "E")
    code = mm.open_room(owner, "", 0).code
    for tok in (b, c, d):
        mm.join_room(tok, code)
    with pytest.raises(FailedPrecondition) as err:
        mm.join_room(e, code)
    assert err.value.reason == "ROOM_FULL"
    assert rooms.room_of_player(mm.room_records, mm.authenticate(e).player_id) is None
    assert len(rooms.get_room(mm.room_records, code).members) == 4
    with pytest.raises(FailedPrecondition):
        mm.invite_bot(owner, code)


def test_owner_sets_stake_others_accept_or_refuse(svc):
    mm, _, _ = svc
    owner, b, c = register(mm, "O", "B", "C")
    code = mm.open_room(owner, "", 0).code
    mm.join_room(b, code)
    mm.join_room(c, code)
    with pytest.raises(FailedPrecondition):
        mm.answer_room_stake(b, code, True)  # nothing to accept yet
    with pytest.raises(PermissionDenied):
        mm.set_room_stake(b, code, 4)
    for bad in (0, 5):  # stakes are tiers of the level table (RULES-items §4)
        with pytest.raises(InvalidArgument):
            mm.set_room_stake(owner, code, bad)
    room = mm.set_room_stake(owner, code, 4)
    assert room.stake == 4
    assert [m.accepted for m in room.members] == [True, False, False]
    with pytest.raises(FailedPrecondition) as err:
        mm.set_room_stake(owner, code, 2)
    assert err.value.reason == "STAKE_SET"
    room = mm.answer_room_stake(b, code, True)
    assert [m.accepted for m in room.members] == [True, True, False]
    room = mm.answer_room_stake(c, code, False)  # refusing leaves
    assert [m.display_name for m in room.members] == ["O", "B"]
    assert rooms.room_of_player(mm.room_records, mm.authenticate(c).player_id) is None


def test_setter_leaving_passes_the_setting_to_the_next_player(svc):
    mm, _, _ = svc
    owner, b, c = register(mm, "O", "B", "C")
    code = mm.open_room(owner, "", 0).code
    mm.join_room(b, code)
    mm.join_room(c, code)
    room = mm.leave_room(owner, code)
    b_id = mm.authenticate(b).player_id
    assert room.owner == b_id and room.stake is None
    room = mm.set_room_stake(b, code, 2)
    assert room.stake == 2
    # After the stake is set, the setter leaving clears it for the next setter.
    mm.answer_room_stake(c, code, True)
    room = mm.leave_room(b, code)
    assert room.owner == mm.authenticate(c).player_id and room.stake is None
    assert all(not m.accepted for m in room.members)


def test_last_player_leaving_closes_the_room(svc):
    mm, _, _ = svc
    (owner,) = register(mm, "O")
    code = mm.open_room(owner, "", 0).code
    mm.invite_bot(owner, code)
    room = mm.leave_room(owner, code)
    assert room.state == rooms.CLOSED
    with pytest.raises(NotFound):
        rooms.get_room(mm.room_records, code)


def test_ready_timer_removes_who_did_not_press_start(svc):
    mm, alloc, clock = svc
    owner, b, c = register(mm, "O", "B", "C")
    code = mm.open_room(owner, "", 0).code
    mm.join_room(b, code)
    mm.join_room(c, code)
    mm.set_room_stake(owner, code, 2)
    mm.answer_room_stake(b, code, True)
    mm.answer_room_stake(c, code, True)
    with pytest.raises(FailedPrecondition):
        mm.answer_room_stake(owner, code, True)  # the setter does not answer itself
    mm.press_start(owner, code)
    clock.advance(10)
    mm.press_start(b, code)
    clock.advance(4.9)
    mm.tick()
    assert len(rooms.get_room(mm.room_records, code).members) == 3
    clock.advance(0.1)
    mm.tick()
    room = rooms.get_room(mm.room_records, code)
    assert [m.display_name for m in room.members] == ["O", "B"]
    assert rooms.room_of_player(mm.room_records, mm.authenticate(c).player_id) is None
    # A player joining after the first Start gets the full time from joining.
    (d,) = register(mm, "D")
    mm.join_room(d, code)
    clock.advance(14)
    mm.tick()
    assert len(rooms.get_room(mm.room_records, code).members) == 3
    clock.advance(1)
    mm.tick()
    assert len(rooms.get_room(mm.room_records, code).members) == 2
    assert alloc.tables == {}


def test_start_needs_an_accepted_stake(svc):
    mm, _, _ = svc
    owner, b = register(mm, "O", "B")
    code = mm.open_room(owner, "", 0).code
    with pytest.raises(FailedPrecondition) as err:
        mm.press_start(owner, code)
    assert err.value.reason == "NO_STAKE"
    mm.join_room(b, code)
    mm.set_room_stake(owner, code, 2)
    with pytest.raises(FailedPrecondition) as err:
        mm.press_start(b, code)
    assert err.value.reason == "NOT_ACCEPTED"


def test_full_agreed_ready_room_starts_on_a_gateway_with_bots(svc):
    mm, alloc, _ = svc
    owner, b = register(mm, "O", "B")
    code = mm.open_room(owner, "shanghai-classic", 8).code
    mm.join_room(b, code)
    with pytest.raises(PermissionDenied):
        mm.invite_bot(b, code)
    mm.invite_bot(owner, code)
    mm.invite_bot(owner, code)
    mm.set_room_stake(owner, code, 2)  # 1,000 silver covers a classic hand at 2 (2,000 at 4)
    mm.answer_room_stake(b, code, True)
    mm.press_start(owner, code)
    assert rooms.open_room_codes(mm.room_records) == [code]
    room = mm.press_start(b, code)
    assert room.state == rooms.PLAYING
    assert rooms.open_room_codes(mm.room_records) == []
    ((request, table),) = alloc.tables.values()
    assert request.ruleset == "shanghai-classic" and request.stake == 2
    assert request.max_hands == 8 and request.tag == f"room/{code}"
    assert [s.bot for s in request.seats] == [False, False, True, True]
    b_id = mm.authenticate(b).player_id
    assert room.assignment_for(b_id).seat_token == table.seat_tokens[1]
    with pytest.raises(FailedPrecondition):
        mm.join_room(sign_in(mm, "Late")[1], code)
    with pytest.raises(FailedPrecondition):
        mm.leave_room(b, code)
    mm.table_finished(table.table_id, request.tag, 8)
    assert rooms.get_room(mm.room_records, code).state == rooms.FINISHED
    assert rooms.room_of_player(mm.room_records, b_id) is None


def test_house_rules_are_checked_and_reach_the_gateway():
    mm, alloc, clock = make_service(free_room_cards=2)
    (owner,) = register(mm, "O")
    with pytest.raises(InvalidArgument) as err:
        mm.open_room(owner, "", 0, {"scoring.no_such_option": "1"})
    assert "scoring.no_such_option" in err.value.message
    with pytest.raises(InvalidArgument):
        mm.open_room(owner, "", 0, {"scoring.base_points": "many"})
    assert mm.account(mm.authenticate(owner).player_id).room_cards == 2  # nothing spent
    house = {"scoring.base_points": "3", "timers.ready_seconds": "5"}
    code = mm.open_room(owner, "", 0, house).code
    (b,) = register(mm, "B")
    mm.join_room(b, code)
    mm.set_room_stake(owner, code, 1)
    mm.answer_room_stake(b, code, True)
    mm.press_start(owner, code)
    clock.advance(5)  # the room's own ready time (no service override here)
    mm.tick()
    assert len(rooms.get_room(mm.room_records, code).members) == 1
    for _ in range(3):
        mm.invite_bot(owner, code)
    ((request, _),) = alloc.tables.values()
    assert request.ruleset_options == house


def test_room_start_waits_for_the_gateway(svc):
    mm, alloc, _ = svc
    (owner,) = register(mm, "O")
    code = mm.open_room(owner, "", 0).code
    for _ in range(3):
        mm.invite_bot(owner, code)
    mm.set_room_stake(owner, code, 1)
    alloc.down = True
    assert mm.press_start(owner, code).state == rooms.STARTING
    alloc.down = False
    mm.tick()
    assert rooms.get_room(mm.room_records, code).state == rooms.PLAYING
