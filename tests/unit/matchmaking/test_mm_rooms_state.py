"""Rooms under random sequences of operations (hypothesis state machine): every refused call
changes nothing, and the room records and the player→room index always agree."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from services.matchmaking.domain.players import presence
from services.matchmaking.domain.rooms import private as rooms
from services.matchmaking.storage import player_records, room_records
from shared.errors import DomainError
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service, repositories

PLAYERS = 6


def snapshot(store) -> dict:
    state = {
        ns: [(k, r.value) for k, r in store.scan(ns)] for ns in (room_records.ROOMS, "mm_players")
    }
    state["presence"] = [
        held
        for k, _ in store.scan(player_records.PRESENCE)
        if (held := presence.current(repositories(store).presence, k))
    ]
    return state


class Rooms(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.mm, self.alloc, self.clock = make_service(ready_seconds=15, free_room_cards=2)
        self.tokens = [sign_in(self.mm, f"P{i}")[1] for i in range(PLAYERS)]
        self.ids = [self.mm.authenticate(t).player_id for t in self.tokens]
        self.codes: list[str] = ["000000"]

    def _try(self, fn, *args) -> None:
        before = snapshot(self.mm.store)
        try:
            room = fn(*args)
        except DomainError:
            assert snapshot(self.mm.store) == before, f"{fn.__name__} refused but changed state"
            return
        if isinstance(room, rooms.Room) and room.code not in self.codes:
            self.codes.append(room.code)

    def _code(self, data) -> str:
        """Mostly the newest room (so rooms fill up), sometimes any code, even a wrong one."""
        return data.draw(st.sampled_from([self.codes[-1]] * 6 + self.codes))

    def _member_or_anyone(self, data, code: str) -> str:
        """A token, usually of a player seated in the room (so agreement and Start happen)."""
        rec = self.mm.store.get(room_records.ROOMS, code)
        seated = []
        if rec is not None:
            room = rooms.Room.from_json(rec.value)
            seated = [self.ids.index(m.player_id) for m in room.humans()]
        p = data.draw(st.sampled_from(seated * 4 + list(range(PLAYERS))))
        return self.tokens[p]

    @rule(p=st.integers(0, PLAYERS - 1), hands=st.integers(0, 2))
    def open_room(self, p, hands):
        self._try(self.mm.open_room, self.tokens[p], "", hands)

    @rule(p=st.integers(0, PLAYERS - 1), data=st.data())
    def join(self, p, data):
        self._try(self.mm.join_room, self.tokens[p], self._code(data))

    @rule(data=st.data())
    def leave(self, data):
        code = self._code(data)
        self._try(self.mm.leave_room, self._member_or_anyone(data, code), code)

    @rule(stake=st.integers(-1, 5), data=st.data())
    def set_stake(self, stake, data):
        code = self._code(data)
        self._try(self.mm.set_room_stake, self._member_or_anyone(data, code), code, stake)

    @rule(accept=st.sampled_from([True, True, True, False]), data=st.data())
    def answer(self, accept, data):
        code = self._code(data)
        self._try(self.mm.answer_room_stake, self._member_or_anyone(data, code), code, accept)

    @rule(data=st.data())
    def bot(self, data):
        code = self._code(data)
        self._try(self.mm.invite_bot, self._member_or_anyone(data, code), code)

    @rule(data=st.data())
    def start(self, data):
        code = self._code(data)
        self._try(self.mm.press_start, self._member_or_anyone(data, code), code)

    @rule()
    def everyone_agrees(self):
        """The newest room's setter sets 底分 and every seated player accepts and presses
        Start (so rooms also reach the table)."""
        rec = self.mm.store.get(room_records.ROOMS, self.codes[-1])
        if rec is None:
            return
        room = rooms.Room.from_json(rec.value)
        token = {pid: tok for pid, tok in zip(self.ids, self.tokens, strict=True)}
        self._try(self.mm.set_room_stake, token[room.owner], room.code, 1)
        for m in room.humans():
            if m.player_id != room.owner:
                self._try(self.mm.answer_room_stake, token[m.player_id], room.code, True)
            self._try(self.mm.press_start, token[m.player_id], room.code)

    @rule()
    def tables_finish(self):
        for code, rec in list(self.mm.store.scan(room_records.ROOMS)):
            room = rooms.Room.from_json(rec.value)
            if room.state == rooms.PLAYING:
                self.mm.table_finished(room.table_id, f"room/{code}", room.max_hands)

    @rule(seconds=st.sampled_from([1, 7, 15]))
    def wait(self, seconds):
        self.clock.advance(seconds)
        self.mm.tick()

    @invariant()
    def rooms_and_index_agree(self):
        store = self.mm.store
        index = {
            k: held.ref
            for k, _ in store.scan(player_records.PRESENCE)
            if (held := presence.current(repositories(store).presence, k))
            and held.kind == presence.ROOM
        }
        for code, rec in store.scan(room_records.ROOMS):
            room = rooms.Room.from_json(rec.value)
            assert len(room.members) <= rooms.SEATS
            assert len({m.player_id for m in room.members}) == len(room.members)
            if room.state in (rooms.OPEN, rooms.STARTING, rooms.PLAYING):
                humans = room.humans()
                assert humans and room.owner in {m.player_id for m in humans}
                for m in humans:
                    assert index.get(m.player_id) == code
                if room.stake is None:
                    assert not any(m.ready for m in humans)
                for m in room.members:
                    assert not m.ready or m.accepted
            if room.state == rooms.PLAYING:
                assert room.table_id and len(room.members) == rooms.SEATS
        for pid, code in index.items():
            room = rooms.get_room(repositories(store).rooms, code)
            assert room.member(pid) is not None


Rooms.TestCase.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
TestRooms = Rooms.TestCase
