"""Matchmaking over the real stack: every service a real process (infra.supervisor), the
matchmaking store a SQLite file in tmp_path, tables played on the real gateway by its built-in
bots and by scripted players for the people (``tests.support.cluster.Entrant``: a RemotePlayer
per table).

The services call each other's mutual-TLS internal ports; players call the public ones over
server TLS. Every process binds ports the OS picks; the gateway and matchmaking, which call each
other, and the players find each other through address files (tests/support/address_book.py),
rewritten when matchmaking restarts on new ports. One stack serves the module (tests register
their own players).

* Restart: players, balances, an open room and a running tournament's standings survive a
  SIGTERM + restart of the matchmaking process in the middle of the tournament, which then
  runs to its end (the gateway's outbox delivers what it could not send meanwhile).
* A 16-entrant tournament (8 people, 8 bots) of 3 rounds runs to its final ranking; ledger
  the people's balances move by what the house's move (bots have no wallets); standings agree
  with the ledger;
  nobody meets anybody twice.
"""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from mahjong.common.v1 import common_pb2 as common_pb
from mahjong.gateway.v1 import gateway_pb2 as gw_pb
from mahjong.matchmaking.v1 import matchmaking_pb2 as pb
from mahjong.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from infra.request_ids import with_request_ids
from infra.store import open_store
from infra.supervisor import ServiceProcess, stop_all
from mahjong_client import RemotePlayer
from services.gateway.bots.planner import PlanningBot
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tables import allocated as allocated_tables
from services.matchmaking.storage.table_records import TableRecords
from shared.table import Discard, Pass, Win
from tests.support import probes
from tests.support.address_book import AddressBook
from tests.support.cluster import Entrant
from tests.support.identity import sign_in
from tests.support.stacks import backend_flags, service_process, start_services
from tests.support.tls import as_player

pytestmark = pytest.mark.integration

TIMEOUT = 10.0
STARTING_SILVER = 1000


class Stack:
    """wall, rules, scoring, matchmaking and gateway as processes on ports the OS picks; the
    gateway and matchmaking given each other's address files (``book``), as are the players
    matchmaking's (:attr:`mm_target`)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: dict[str, ServiceProcess] = {}
        self.book = AddressBook(tmp / "addresses")
        self.mm_target = self.book.player_target("matchmaking")

    def start(self) -> Stack:
        start_services(self.procs, self.tmp)
        for name in ("wall", "rules", "scoring"):
            self.procs[name].wait_ready(60)
        self.procs["matchmaking"] = self._matchmaking().start()
        gw_args = [
            *backend_flags(self.procs),
            "--matchmaking-addr", self.book.service_target("matchmaking"),
            "--discard-ms", "5000", "--claim-ms", "2000", "--auto-play-delay-ms", "0",
            "--seat-secret", "stack-secret", "--max-workers", "48",
            "--drain-seconds", "0", "--grace-seconds", "1",
            # scripted players answer every claim at once: ~80 calls a hand per seat, which the
            # default flood control (20 a second, tests/service/gateway/test_client_flood_control)
            # stretched to 2-3 s a hand of RESOURCE_EXHAUSTED waits
            "--seat-calls-per-second", "1000", "--seat-call-burst", "1000",
        ]  # fmt: skip
        gateway = service_process(
            "gateway", self.tmp, store_url=f"sqlite:///{self.tmp / 'gateway.db'}", extra=gw_args
        )
        self.procs["gateway"] = gateway.start()
        for name in ("matchmaking", "gateway"):
            self.book.list(name, self.procs[name].wait_ready(60))
        return self

    def _matchmaking(self) -> ServiceProcess:
        args = [
            "--gateway-addr", self.book.service_target("gateway"),
            "--tick-seconds", "0.1", "--ready-seconds", "2", "--bot-fill-seconds", "1",
            "--starting-silver", str(STARTING_SILVER), "--max-workers", "48",
            "--drain-seconds", "0", "--grace-seconds", "1",
            "--queue-one-per-address", "off",  # every player joins from loopback
        ]  # fmt: skip
        return service_process(
            "matchmaking",
            self.tmp,
            store_url=f"sqlite:///{self.tmp / 'matchmaking.db'}",
            extra=args,
        )

    def restart_matchmaking(self) -> None:
        """SIGTERM matchmaking (out of the address files first), start it again on new ports
        and list it once it answers SERVING."""
        self.book.unlist("matchmaking")
        assert self.procs["matchmaking"].stop() == 0
        self.procs["matchmaking"] = self._matchmaking().start().wait_ready(60)
        self.book.list("matchmaking", self.procs["matchmaking"])

    def house_silver(self) -> int:
        """The house's silver, read from matchmaking's SQLite file (only an operator's books
        show it over the API)."""
        store = open_store(f"sqlite:///{self.tmp / 'matchmaking.db'}")
        try:
            return ledger.balance(store, ledger.HOUSE)
        finally:
            store.close()

    def address(self, name: str) -> str:
        return self.procs[name].address

    def stop(self) -> None:
        stop_all(reversed(list(self.procs.values())))

    def logs(self, name: str) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    s = Stack(tmp_path_factory.mktemp("matchmaking-stack"))
    try:
        yield s.start()
    finally:
        s.stop()


def stub_for(stack: Stack) -> tuple[grpc.Channel, pb_grpc.MatchmakingServiceStub]:
    channel = as_player(stack.mm_target)
    return channel, pb_grpc.MatchmakingServiceStub(with_request_ids(channel))


def register(stub, name):
    return sign_in(stub, name)


def wait_for(predicate, timeout: float, what: str, stack: Stack):
    def logs() -> str:
        return f"--- matchmaking\n{stack.logs('matchmaking')}\n--- gateway\n{stack.logs('gateway')}"

    return probes.wait_for(predicate, timeout, what, logs, every=0.2)


def run_tournament(stub, stack, people: int, bots: int, rounds: int, hands: int, *, restart=False):
    persons = [register(stub, f"Person {i + 1}") for i in range(people)]
    house_before = stack.house_silver()
    creator = persons[0][1]
    t = stub.CreateTournament(
        pb.CreateTournamentRequest(
            session_token=creator, name="Stack Cup", stake=1, rounds=rounds,
            hands_per_round=hands, bots=bots,
        ),
        timeout=TIMEOUT,
    ).tournament  # fmt: skip
    tid = t.tournament_id
    for _, token in persons:  # each person enters themselves
        join = pb.JoinTournamentRequest(session_token=token, tournament_id=tid)
        t = stub.JoinTournament(join, timeout=TIMEOUT).tournament
    assert len(t.entrants) == people + bots
    deadline = time.monotonic() + 240
    threads = [
        Entrant(stack.mm_target, tid, tok, f"Person {i + 1}", deadline)
        for i, (_, tok) in enumerate(persons)
    ]
    for th in threads:
        th.start()
    stub.StartTournament(pb.StartTournamentRequest(session_token=creator, tournament_id=tid))
    snapshot = None
    if restart:

        def round_one_done():
            got = stub.GetTournament(
                pb.GetTournamentRequest(tournament_id=tid, session_token=creator), timeout=TIMEOUT
            )
            return got.tournament if len(got.tournament.standings) >= 1 else None

        before = wait_for(round_one_done, 120, "round 1 standings", stack)
        snapshot = stack_snapshot(stub, persons, before)
        stack.restart_matchmaking()
        _channel, stub = stub_for(stack)
        after = stub.GetTournament(
            pb.GetTournamentRequest(tournament_id=tid, session_token=creator), timeout=TIMEOUT
        )
        assert list(after.tournament.standings)[:1] == list(before.standings)[:1]
        assert after.tournament.entrants == before.entrants
        assert [x for x in after.tournament.tables if x.round == 1] == [
            x for x in before.tables if x.round == 1
        ]
        again = stack_snapshot(stub, persons, after.tournament)
        assert again[0] == snapshot[0], "players changed across the restart"
        assert again[2] == snapshot[2], "round 1 standings changed across the restart"
        for before_entries, after_entries, account in zip(
            snapshot[1], again[1], again[3], strict=True
        ):
            # Every entry is still there, in its order (the list is newest first: hands of
            # round 2 may have been added in front meanwhile), and the balance is still the
            # sum of the entries.
            assert is_subsequence(before_entries, after_entries)
            assert account.silver == silver_of(after_entries)

    def finished():
        got = stub.GetTournament(
            pb.GetTournamentRequest(tournament_id=tid, session_token=creator), timeout=TIMEOUT
        )
        return got.tournament if got.tournament.state == pb.TOURNAMENT_STATE_FINISHED else None

    final = wait_for(finished, 240, "the final ranking", stack)
    for th in threads:
        th.join(30)
        assert th.error is None, th.error
    return stub, persons, final, snapshot, house_before


def is_subsequence(part, whole) -> bool:
    """Whether every item of ``part`` is in ``whole``, in the same order."""
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


def silver_of(entries) -> int:
    """The silver that ledger entries add up to (the other assets have entries too)."""
    return sum(e.amount for e in entries if e.asset == pb.ASSET_SILVER)


def stack_snapshot(stub, persons, tournament):
    """Players (identity, room cards), their ledger entries, round 1's standings and accounts."""
    accounts = [
        stub.GetPlayer(pb.GetPlayerRequest(session_token=tok), timeout=TIMEOUT).player
        for _, tok in persons
    ]
    identities = [(a.player_id, a.display_name, a.room_cards) for a in accounts]
    entries = [
        list(stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(session_token=tok)).entries)
        for _, tok in persons
    ]
    r1 = [(s.player_id, s.chips, s.rank) for s in tournament.standings[0].standings]
    return identities, entries, r1, accounts


def check_final(stack, stub, persons, final, people, bots, rounds, house_before):
    ranking = list(final.final_ranking)
    assert len(ranking) == people + bots
    assert [s.rank for s in ranking] == list(range(1, people + bots + 1))
    assert [s.chips for s in ranking] == sorted((s.chips for s in ranking), reverse=True)
    assert len(final.standings) == rounds
    # Nobody met anybody twice (avoidable for 16 entrants over 3 rounds, not for 8 over 2).
    pairs: set = set()
    for table in final.tables:
        seats = sorted(table.player_ids)
        met = {(a, b) for i, a in enumerate(seats) for b in seats[i + 1 :]}
        assert not (met & pairs) or people + bots < 16
        pairs |= met
        assert table.finished and table.hands_played == final.hands_per_round
    # The ledger: what the people won or lost, the house lost or won (bots have no wallets:
    # their side is the house's, with the escape shares), and each person sees their own.
    balances = {
        player.player_id: stub.GetPlayer(pb.GetPlayerRequest(session_token=token)).player.silver
        for player, token in persons
    }
    house = stack.house_silver() - house_before
    assert sum(balances.values()) == people * STARTING_SILVER - house
    # Standings agree with the ledger: people's entries tagged with the tournament.
    chips = {s.player_id: s.chips for s in ranking}
    prefix = f"tournament/{final.tournament_id}/"
    for player, token in persons:
        entries = stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(session_token=token)).entries
        assert chips[player.player_id] == sum(e.amount for e in entries if e.tag.startswith(prefix))
        assert balances[player.player_id] == STARTING_SILVER + chips[player.player_id]
    return house


def test_restart_in_the_middle_loses_nothing(stack):
    channel, stub = stub_for(stack)
    # A private room waiting for players, with an agreed stake.
    (_, owner), (_, guest) = register(stub, "Owner"), register(stub, "Guest")
    room = stub.OpenRoom(pb.OpenRoomRequest(session_token=owner), timeout=TIMEOUT).room
    stub.JoinRoom(pb.JoinRoomRequest(session_token=guest, code=room.code), timeout=TIMEOUT)
    stub.SetRoomStake(pb.SetRoomStakeRequest(session_token=owner, code=room.code, stake=2))
    stub.AnswerRoomStake(
        pb.AnswerRoomStakeRequest(session_token=guest, code=room.code, accept=True)
    )
    room_before = stub.GetRoom(pb.GetRoomRequest(session_token=owner, code=room.code)).room

    stub, persons, final, snapshot, house_before = run_tournament(
        stub, stack, people=4, bots=4, rounds=2, hands=1, restart=True
    )
    assert snapshot is not None
    check_final(stack, stub, persons, final, people=4, bots=4, rounds=2, house_before=house_before)
    # The room and its players came through the restart unchanged; tokens still verify.
    room_after = stub.GetRoom(pb.GetRoomRequest(session_token=owner, code=room.code)).room
    assert room_after == room_before
    owner_account = stub.GetPlayer(pb.GetPlayerRequest(session_token=owner)).player
    assert owner_account.room_cards == 2 and owner_account.silver == STARTING_SILVER
    channel.close()


def test_sixteen_entrant_tournament_runs_to_its_final_ranking(stack):
    channel, stub = stub_for(stack)
    stub, persons, final, _, house_before = run_tournament(
        stub, stack, people=8, bots=8, rounds=3, hands=1
    )
    check_final(stack, stub, persons, final, people=8, bots=8, rounds=3, house_before=house_before)
    channel.close()


def test_quick_match_and_a_private_room_play_on_the_gateway(stack):
    channel, stub = stub_for(stack)
    # Quick match: one person waits, bots fill the other seats after the configured second.
    _, token = register(stub, "Quick")
    ticket = stub.JoinQueue(pb.JoinQueueRequest(session_token=token), timeout=TIMEOUT).ticket
    watch = pb.WatchAssignmentsRequest(session_token=token, ticket_id=ticket.ticket_id)
    last = list(stub.WatchAssignments(watch, timeout=30))[-1].ticket
    assert last.state == pb.TICKET_STATE_ASSIGNED
    a = last.assignment
    player = RemotePlayer(a.gateway_address, a.table_id, a.seat_token, seat=a.seat - 1)
    try:
        player.run(max_hands=1)
        penalty = player.leave()
    finally:
        player.close()
    assert len(player.log.hand_results) >= 1

    def quick_entries():
        entries = stub.ListLedgerEntries(
            pb.ListLedgerEntriesRequest(session_token=token), timeout=TIMEOUT
        )
        hands = [e for e in entries.entries if e.tag.startswith("quick/")]
        # (a hand can have two entries, its payments and the room's fee: the wait is for the
        # penalty's own entry, not for a count)
        escaped = any(e.kind == pb.LEDGER_ENTRY_KIND_ESCAPE_PENALTY for e in hands)
        return entries if hands and (escaped or not penalty) else None

    entries = wait_for(quick_entries, 60, "the quick-match hand in the ledger", stack)
    assert entries.balance == silver_of(entries.entries)

    # A private room: the owner and three invited bots, one hand.
    _, owner = register(stub, "Host")
    code = stub.OpenRoom(pb.OpenRoomRequest(session_token=owner, max_hands=1)).room.code
    for _ in range(3):
        stub.InviteBot(pb.InviteBotRequest(session_token=owner, code=code), timeout=TIMEOUT)
    stub.SetRoomStake(pb.SetRoomStakeRequest(session_token=owner, code=code, stake=2))
    room = stub.PressStart(pb.PressStartRequest(session_token=owner, code=code)).room

    def playing_room():
        got = stub.GetRoom(pb.GetRoomRequest(session_token=owner, code=code), timeout=TIMEOUT)
        return got.room if got.room.state == pb.ROOM_STATE_PLAYING else None

    # STARTING when the ticker was creating the room's table at the same moment (the same
    # request to the gateway, which answers the second TABLE_STARTING until it is up): the
    # room is PLAYING once either call got the table.
    if room.state != pb.ROOM_STATE_PLAYING:
        room = wait_for(playing_room, 30, "the room's table", stack)
    a = room.assignment
    player = RemotePlayer(a.gateway_address, a.table_id, a.seat_token, seat=a.seat - 1)
    try:
        player.run()
    finally:
        player.close()

    def finished_room():
        got = stub.GetRoom(pb.GetRoomRequest(session_token=owner, code=code), timeout=TIMEOUT)
        return got.room if got.room.state == pb.ROOM_STATE_FINISHED else None

    wait_for(finished_room, 60, "the room's table to finish", stack)
    entries = stub.ListLedgerEntries(pb.ListLedgerEntriesRequest(session_token=owner)).entries
    played = [
        e for e in entries if e.asset == pb.ASSET_SILVER and e.kind != pb.LEDGER_ENTRY_KIND_GRANT
    ]
    assert [e.tag for e in played] == [f"room/{code}"]
    (card,) = [e for e in entries if e.kind == pb.LEDGER_ENTRY_KIND_ROOM_CARD]
    assert (card.asset, card.amount, card.tag) == (pb.ASSET_ROOM_CARD, -1, f"room/{code}")
    # The host is free to open another room.
    stub.OpenRoom(pb.OpenRoomRequest(session_token=owner), timeout=TIMEOUT)
    channel.close()


def test_a_signed_in_player_takes_their_seat_by_session_and_nobody_else_can(stack):
    """JoinSeat with a session: the gateway asks matchmaking (CheckSession) whose it is, and
    gives that player's reserved seat only (listed by ListLiveSeats, to the player alone); a
    forged or signed-out session, or one naming another player's seat, gets nothing."""
    from mahjong.gateway.v1 import gateway_pb2 as gw
    from mahjong.gateway.v1 import gateway_pb2_grpc as gw_grpc

    channel, stub = stub_for(stack)
    owner_player, owner = register(stub, "Seated")
    _, other = register(stub, "Other")
    code = stub.OpenRoom(pb.OpenRoomRequest(session_token=owner, max_hands=1)).room.code
    for _ in range(3):
        stub.InviteBot(pb.InviteBotRequest(session_token=owner, code=code), timeout=TIMEOUT)
    stub.SetRoomStake(pb.SetRoomStakeRequest(session_token=owner, code=code, stake=1))
    stub.PressStart(pb.PressStartRequest(session_token=owner, code=code))

    def assigned():
        got = stub.GetRoom(pb.GetRoomRequest(session_token=owner, code=code), timeout=TIMEOUT)
        return got.room.assignment if got.room.assignment.table_id else None

    a = wait_for(assigned, 30, "the room's table", stack)
    gw_channel = as_player(a.gateway_address)
    try:
        gateway = gw_grpc.GatewayServiceStub(gw_channel)

        def join(session: str, player_id: str = ""):
            req = gw.JoinSeatRequest(
                table_id=a.table_id, player_id=player_id, session_token=session
            )
            return gateway.JoinSeat(req, timeout=TIMEOUT)

        for session, player_id, code_ in (
            ("forged." + owner[7:], "", grpc.StatusCode.UNAUTHENTICATED),
            (other, owner_player.player_id, grpc.StatusCode.PERMISSION_DENIED),
        ):
            with pytest.raises(grpc.RpcError) as err:
                join(session, player_id)
            assert err.value.code() == code_, err.value.details()
        # where the owner sits (ListLiveSeats): their own seat only, nothing of the other's
        (live,) = stub.ListLiveSeats(pb.ListLiveSeatsRequest(session_token=owner)).seats
        assert (live.table_id, live.seat) == (a.table_id, a.seat)
        assert not stub.ListLiveSeats(pb.ListLiveSeatsRequest(session_token=other)).seats
        got = join(owner)  # no seat token: the session proves the seat
        assert got.seat_token == a.seat_token  # the same token: the old one stays valid
        assert got.seat == a.seat and got.seat_token
        stub.SignOut(pb.SignOutRequest(session_token=owner, all_sessions=True), timeout=TIMEOUT)
        with pytest.raises(grpc.RpcError) as err:
            join(owner)
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        RemotePlayer(a.gateway_address, a.table_id, got.seat_token, seat=a.seat - 1).close()
    finally:
        gw_channel.close()
        channel.close()


class Feeder:
    """A person who never wins nor claims (the planning bot's discards, every claim passed), so
    they only ever pay: the seat that goes bankrupt below."""

    def __init__(self) -> None:
        self.inner = PlanningBot()

    def own_turn(self, view, options):
        action = self.inner.own_turn(view, options)
        if isinstance(action, Win):
            return Discard(options.discards[-1])
        return action

    def claim(self, view, options, tile):
        return Pass()

    def tile_swap(self, view, count):
        return self.inner.tile_swap(view, count)


def test_a_room_player_who_can_no_longer_cover_a_hand_goes_bankrupt_and_a_bot_takes_the_seat(
    stack,
):
    """破产 end to end: at a 百搭 room whose house rules cap a hand at 100 points (100 silver at
    stake 1, the cover), Poor keeps exactly that cover and never wins. 百搭 wins are self-drawn
    only and every other seat pays each (RULES-presets §13.B.7), so the first hand anybody wins
    leaves Poor short of the next; only a drawn hand (荒) costs them nothing. Matchmaking
    answers their seat bankrupt, the gateway seats the bot before the next deal and tells every
    seat, Poor's token acts no more but still watches, the next reports name the bot (the
    house's side), and Poor's balance never goes below 0 while the ledger stays balanced per
    asset. (At a 敲麻 room a discard win costs the discarder only: Poor paid in 63 hands of 200
    played in process, tests/support/arena.py, and 12 hands left them solvent after the
    eleventh about once in 60 runs; of 200 百搭 hands with Poor's policy, 1 was drawn.)"""
    channel, stub = stub_for(stack)
    (_, rich), (poor_player, poor) = register(stub, "Rich"), register(stub, "Poor")
    stub.BuyItems(
        pb.BuyItemsRequest(session_token=poor, asset=pb.ASSET_DOUBLE_CARD, count=18),
        timeout=TIMEOUT,
    )  # 900 of their 1,000 silver: 100 left, the room's cover at stake 1
    assert stub.GetPlayer(pb.GetPlayerRequest(session_token=poor)).player.silver == 100
    rules = common_pb.RulesetRef(
        name="shanghai-baida", options={"baida_scoring.hand_cap_points": "100"}
    )
    code = stub.OpenRoom(
        pb.OpenRoomRequest(session_token=rich, ruleset=rules, max_hands=4), timeout=TIMEOUT
    ).room.code
    stub.JoinRoom(pb.JoinRoomRequest(session_token=poor, code=code), timeout=TIMEOUT)
    for _ in range(2):
        stub.InviteBot(pb.InviteBotRequest(session_token=rich, code=code), timeout=TIMEOUT)
    stub.SetRoomStake(pb.SetRoomStakeRequest(session_token=rich, code=code, stake=1))
    stub.AnswerRoomStake(pb.AnswerRoomStakeRequest(session_token=poor, code=code, accept=True))
    for token in (rich, poor):
        stub.PressStart(pb.PressStartRequest(session_token=token, code=code), timeout=TIMEOUT)

    def seat_of(token):
        got = stub.GetRoom(pb.GetRoomRequest(session_token=token, code=code), timeout=TIMEOUT)
        return got.room.assignment if got.room.state == pb.ROOM_STATE_PLAYING else None

    rich_at = wait_for(lambda: seat_of(rich), 30, "the room's table", stack)
    poor_at = wait_for(lambda: seat_of(poor), 30, "Poor's seat", stack)
    players = [
        RemotePlayer(a.gateway_address, a.table_id, a.seat_token, seat=a.seat - 1, policy=p,
                     keep_events=True, name=n)
        for a, p, n in ((rich_at, None, "rich"), (poor_at, Feeder(), "poor"))
    ]  # fmt: skip
    try:
        for p in players:
            p.start()
        # spending while seated: Rich's seat needs 100 silver kept (the room's cover)
        silver = stub.GetPlayer(pb.GetPlayerRequest(session_token=rich)).player.silver
        with pytest.raises(grpc.RpcError) as held:
            stub.BuyItems(
                pb.BuyItemsRequest(
                    session_token=rich, asset=pb.ASSET_DOUBLE_CARD, count=silver // 50
                ),
                timeout=TIMEOUT,
            )
        assert held.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert rich_at.table_id in held.value.details() and "100 silver" in held.value.details()
        for p in players:
            p.wait(240)
            assert p.error is None, p.error
        # the bankrupt seat's token: no more acting, but it still watches (as a spectator)
        watcher = players[1]
        with pytest.raises(grpc.RpcError) as refused:
            watcher.stub.Act(
                gw_pb.ActRequest(
                    table_id=poor_at.table_id, seat_token=poor_at.seat_token, request_id="late",
                    last_sequence=watcher.last_sequence, action=gw_pb.Action(
                        resume=gw_pb.Resume()),
                ),
                timeout=TIMEOUT,
            )  # fmt: skip
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "bankrupt" in refused.value.details()
        assert not watcher.state().viewer  # the spectators' view
    finally:
        for p in players:
            p.close()
    seat = poor_at.seat - 1
    told = [
        [e.seat_bankrupt for e in p.events if e.WhichOneof("kind") == "seat_bankrupt"]
        for p in players
    ]
    assert told[0] == told[1] and len(told[0]) == 1, told  # every seat is told, once
    (gone,) = told[0]
    assert (gone.seat - 1, gone.player_id) == (seat, poor_player.player_id)
    after = gone.after_hand
    poor_silver = stub.GetPlayer(pb.GetPlayerRequest(session_token=poor)).player.silver
    assert 0 <= poor_silver < 100
    # Poor's silver, entry by entry from the oldest, never went below 0
    entries = stub.ListLedgerEntries(
        pb.ListLedgerEntriesRequest(session_token=poor, page_size=200)
    ).entries
    running = 0
    for e in reversed([e for e in entries if e.asset == pb.ASSET_SILVER]):  # newest first
        running += e.amount
        assert running >= 0
    assert running == poor_silver
    store = open_store(f"sqlite:///{stack.tmp / 'matchmaking.db'}")
    try:
        table = allocated_tables.find(TableRecords(store), poor_at.table_id)
        assert table is not None and table.player_ids[seat] == gone.bot_player_id
        reports = sorted(ledger.hand_reports(store, f"room/{code}"), key=lambda r: r.hand_number)
        assert [r.hand_number for r in reports] == list(range(1, len(reports) + 1))
        assert len(reports) > after, "no hand was played after the bankruptcy"
        for r in reports:
            named = poor_player.player_id if r.hand_number <= after else gone.bot_player_id
            assert r.player_ids[seat] == named
        # the bot's hands are the house's: Poor has no entry of any hand after theirs
        later = {r.hand_id for r in reports if r.hand_number > after}
        assert not [e for e in ledger.entries(store, poor_player.player_id) if e.ref in later]
        assert ledger.balance(store, gone.bot_player_id) == 0
        assert ledger.reconcile(store) == []  # every transaction balanced per asset
    finally:
        store.close()
    channel.close()


def test_the_operator_ends_a_table_mid_hand_and_suspends_a_seated_player(stack):
    """tests/integration/console_checks.py, on this module's stack."""
    from tests.integration.console_checks import operator_ends_a_table_and_suspends_a_seated_player

    operator_ends_a_table_and_suspends_a_seated_player(stack)
