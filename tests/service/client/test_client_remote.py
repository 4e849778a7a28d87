"""The Python client (mahjong_client) against the real stack: wall, rules, scoring and
gateway as processes on free loopback ports."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2, gateway_pb2_grpc

from mahjong_client import RemotePlayer, create_table
from mahjong_client.player import call_retrying, retry_delay
from services.gateway.bots import RandomBot
from shared.table import Discard
from tests.support.stacks import local_stack
from tests.support.tls import as_player

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stack():
    # the gateway's default pause between hands (the ruleset's, at tables with a person): the
    # clients here press Next as each result comes, so no table waits it out
    with local_stack(extra_args={"gateway": ["--between-hands-ms", "-1"]}) as s:
        yield s


def test_a_remote_planning_player_plays_whole_hands(stack):
    table = create_table(stack.gateway, ["alice", None, None, None], max_hands=2)
    player = RemotePlayer(stack.gateway, table.table_id, table.seat_tokens[0], seat=0)
    try:
        log = player.run()
    finally:
        player.close()
    assert log.table_finished is not None and log.table_finished.hands_played == 2
    assert len(log.hand_results) == 2
    for r in log.hand_results:
        assert sum(r.payments) + r.house == 0
    assert log.sequences == sorted(set(log.sequences))
    assert log.actions > 0
    assert not log.rejections, log.rejections
    assert log.subscribes == [0]


def test_a_dropped_stream_resumes_with_exactly_the_missed_events(stack):
    table = create_table(stack.gateway, ["bob", None, None, None], max_hands=1)
    cut_at = 40
    holder: dict[str, RemotePlayer] = {}

    def on_event(event: gateway_pb2.Event) -> None:
        p = holder["p"]
        if len(p.log.sequences) == cut_at:
            p.drop_connection()

    player = RemotePlayer(
        stack.gateway,
        table.table_id,
        table.seat_tokens[0],
        seat=0,
        on_event=on_event,
        keep_events=True,
    )
    holder["p"] = player
    try:
        log = player.run()
    finally:
        player.close()
    assert log.table_finished is not None
    assert len(log.subscribes) == 2
    assert log.subscribes[1] == log.sequences[cut_at - 1]  # resumed from the last number seen
    # A fresh subscription from the start with the same token sees the same events, no more
    # (after the wait flood control asks for: the token just played a whole hand).
    request = gateway_pb2.SubscribeRequest(
        table_id=table.table_id, seat_token=table.seat_tokens[0], after_sequence=0
    )
    with as_player(stack.gateway) as ch:
        stub = gateway_pb2_grpc.GatewayServiceStub(ch)

        def whole_stream(req, timeout):
            return [r.event.sequence for r in stub.Subscribe(req, timeout=timeout)]

        replay = call_retrying(whole_stream, request, timeout=30, retry_for=30, transient=False)
    assert replay == log.sequences
    assert [e.sequence for e in player.events] == log.sequences


def test_four_remote_random_players_finish_a_table(stack):
    """Four people: between the hands each sees every seat's Next (next_hand_ready) as it is
    pressed, and the next hand is dealt once all four have, not after the 15 s pause."""
    table = create_table(stack.gateway, ["p0", "p1", "p2", "p3"], max_hands=2)
    players = [
        RemotePlayer(
            stack.gateway,
            table.table_id,
            table.seat_tokens[i],
            seat=i,
            policy=RandomBot(i),
            name=f"p{i}",
            keep_events=True,
        ).start()
        for i in range(4)
    ]
    try:
        logs = [p.wait(timeout=120) for p in players]
    finally:
        for p in players:
            p.close()
    assert all(log.table_finished is not None for log in logs)
    results = [log.hand_results[0] for log in logs]
    assert all(list(r.payments) == list(results[0].payments) for r in results)
    assert all(log.actions > 0 for log in logs)
    for p in players:
        kinds = [e.WhichOneof("kind") for e in p.events]
        ended = kinds.index("hand_result")
        dealt = kinds.index("hand_started", ended)
        between = p.events[ended:dealt]
        pressed = [e.next_hand_ready for e in between if e.HasField("next_hand_ready")]
        assert sorted(r.seat - 1 for r in pressed) == [0, 1, 2, 3]
        assert all(r.after_hand == 1 for r in pressed)
        assert p.events[dealt].time_unix_ms - p.events[ended].time_unix_ms < 10_000


def test_refusals_are_recorded_not_raised(stack):
    table = create_table(stack.gateway, ["carol", None, None, None], max_hands=1, first_dealer=1)
    player = RemotePlayer(stack.gateway, table.table_id, table.seat_tokens[0], seat=0)
    try:
        deadline = time.monotonic() + 10
        while player.state().hand.to_act == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        # seat 0 is not the dealer: a discard before its turn is refused, nothing changes
        assert player.act(Discard(0)) is None
        assert player.log.rejections[-1].code in (
            grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.ABORTED,
        )
        log = player.run()
        assert log.table_finished is not None
    finally:
        player.close()


def test_calls_wait_out_flood_control_instead_of_failing(stack):
    """A seat that has spent its call budget (here: a burst of GetTableState) still leaves:
    the client waits as the refusal's RetryInfo says and retries with the same request id."""
    table = create_table(stack.gateway, ["erin", None, None, None], max_hands=1)
    player = RemotePlayer(stack.gateway, table.table_id, table.seat_tokens[0], seat=0)
    request = gateway_pb2.GetTableStateRequest(
        table_id=table.table_id, seat_token=table.seat_tokens[0], seat=1
    )
    try:
        refused = None
        for _ in range(200):  # past the burst: the next call is refused with a delay
            try:
                player.stub.GetTableState(request, timeout=10)
            except grpc.RpcError as exc:
                refused = exc
                break
        assert refused is not None and retry_delay(refused) is not None, refused
        assert player.state().table_id == table.table_id  # waited, then answered
        for _ in range(200):
            try:
                player.stub.GetTableState(request, timeout=10)
            except grpc.RpcError:
                break
        assert player.leave() >= 0  # waited, then left: not RESOURCE_EXHAUSTED
    finally:
        player.close()


def test_a_retried_request_id_is_applied_once(stack):
    table = create_table(stack.gateway, ["dave", None, None, None], max_hands=1, first_dealer=0)
    player = RemotePlayer(stack.gateway, table.table_id, table.seat_tokens[0], seat=0)
    answered = threading.Event()
    first: dict[str, gateway_pb2.ActResponse] = {}

    def on_event(event):
        if (
            not answered.is_set()
            and event.WhichOneof("kind") == "prompt"
            and event.prompt.kind == gateway_pb2.PROMPT_KIND_OWN_TURN
        ):
            answered.set()
            tile = event.prompt.options.discards[0] - 1
            first["a"] = player.act(Discard(tile), request_id="dave-once")
            first["b"] = player.act(Discard(tile), request_id="dave-once")

    player.on_event = on_event
    try:
        log = player.run()
    finally:
        player.close()
    assert first["a"] is not None and first["b"] is not None
    assert not first["a"].replayed and first["b"].replayed
    assert first["a"].sequence == first["b"].sequence
    assert log.table_finished is not None


def test_a_remote_player_answers_the_tile_swap_prompt(stack):
    table = create_table(
        stack.gateway, ["fay", None, None, None], max_hands=1, options={"table.tile_swap": "true"}
    )
    player = RemotePlayer(
        stack.gateway, table.table_id, table.seat_tokens[0], seat=0, keep_events=True
    )
    try:
        log = player.run()
    finally:
        player.close()
    assert log.table_finished is not None
    assert not log.rejections, log.rejections
    prompts = [e.prompt for e in player.events if e.WhichOneof("kind") == "prompt"]
    assert prompts[0].kind == gateway_pb2.PROMPT_KIND_TILE_SWAP
    dealt = next(e.tiles_dealt for e in player.events if e.WhichOneof("kind") == "tiles_dealt")
    own = [e.tiles_swapped for e in player.events if e.WhichOneof("kind") == "tiles_swapped"]
    mine = [s for s in own if s.seat == 1]
    assert len(mine) == 1 and len(mine[0].buried) == prompts[0].options.swap_count
    hand = list(dealt.hands[0].tiles)
    for e in player.events:  # 补花 replacements come before the swap
        if e.WhichOneof("kind") == "flowers_exposed" and e.flowers_exposed.seat == 1:
            hand.extend(e.flowers_exposed.replacements)
    for t in mine[0].buried:  # the planning bot buried tiles it held
        hand.remove(t)


def test_a_spectator_follows_a_bot_table_and_sees_only_public_facts(stack):
    table = create_table(stack.gateway, [None, None, None, None], max_hands=1)
    watcher = RemotePlayer.join(stack.gateway, table.table_id, spectator=True, keep_events=True)
    try:
        assert watcher.seat is None
        log = watcher.run()
    finally:
        watcher.close()
    assert log.table_finished is not None
    assert log.actions == 0
    kinds = [e.WhichOneof("kind") for e in watcher.events]
    assert "prompt" not in kinds
    for e in watcher.events:
        if e.WhichOneof("kind") == "tiles_dealt":
            assert all(not h.tiles and h.count for h in e.tiles_dealt.hands)
        if e.WhichOneof("kind") == "tile_drawn":
            assert e.tile_drawn.tile == 0
