"""Subscribe ``batched``: a step's events in one message, the same events as a stream of one
event per message, on both server models; and an Act answered once its action and the engine
steps after it (claim options, the next draw) are logged (the domain's side of it:
tests/unit/gateway/test_steps_inline.py)."""

from __future__ import annotations

import time
import uuid

import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.client.tables import create_table
from services.gateway.convert.stream import MAX_EVENTS_PER_MESSAGE
from tests.e2e.players import legal_answer
from tests.support.stacks import inprocess_gateway


def _spectator(stub, table_id: str) -> str:
    return stub.JoinSeat(
        pb.JoinSeatRequest(request_id=str(uuid.uuid4()), table_id=table_id, spectator=True)
    ).seat_token


def _messages(stub, table_id: str, token: str, batched: bool, after: int = 0) -> list:
    request = pb.SubscribeRequest(
        table_id=table_id, seat_token=token, after_sequence=after, batched=batched
    )
    return list(stub.Subscribe(request, timeout=60))


@pytest.mark.parametrize("model", ["threads", "asyncio"])
def test_a_batched_stream_holds_the_same_events_in_fewer_messages(model):
    with inprocess_gateway(
        seat_secret="s", bot_delay_ms=0, server_config={"server_model": model}
    ) as gw:
        table_id = create_table(gw.server.address, [None] * 4, max_hands=1).table_id
        token = _spectator(gw.stub, table_id)
        live = _messages(gw.stub, table_id, token, batched=True)  # from the deal to the end
        single = _messages(gw.stub, table_id, token, batched=False)
        replayed = _messages(gw.stub, table_id, token, batched=True)  # all held: one batch
        middle = single[len(single) // 2].event.sequence
        from_middle = _messages(gw.stub, table_id, token, batched=True, after=middle)

    assert all(m.HasField("event") and not m.events for m in single)
    events = [m.event for m in single]
    assert events[-1].WhichOneof("kind") == "table_finished"
    for stream in (live, replayed, from_middle):
        assert all(not m.HasField("event") for m in stream)
        assert all(1 <= len(m.events) <= MAX_EVENTS_PER_MESSAGE for m in stream)
    assert [e for m in live for e in m.events] == events
    assert [e for m in replayed for e in m.events] == events
    assert [e for m in from_middle for e in m.events] == [e for e in events if e.sequence > middle]
    assert len(live) < len(events)  # the deal, each bot's action and the draw after it
    # a replay comes in messages as full as they may be
    assert len(events) > MAX_EVENTS_PER_MESSAGE
    assert max(len(m.events) for m in replayed) == MAX_EVENTS_PER_MESSAGE


@pytest.mark.parametrize("model", ["threads", "asyncio"])
def test_the_streams_wake_once_for_an_action_and_the_steps_after_it(model):
    """The asyncio server answers an Act once its action is written and runs the engine steps
    after it next (the threaded one answers after both); either way the table's streams are
    woken once, after those steps: each stream sends the action and what follows it together."""
    with inprocess_gateway(
        seat_secret="s",
        bot_delay_ms=0,
        discard_ms=60_000,
        claim_ms=60_000,
        server_config={"server_model": model},
    ) as gw:
        table = create_table(gw.server.address, ["p", None, None, None], max_hands=1)
        token = table.seat_tokens[0]
        look = pb.GetTableStateRequest(table_id=table.table_id, seat_token=token)
        deadline = time.monotonic() + 30
        while not (state := gw.stub.GetTableState(look).table).HasField("prompt"):
            assert time.monotonic() < deadline, "the person was never prompted"
            time.sleep(0.02)
        live = gw.server.resource.manager.tables[table.table_id]
        woken: list[int] = []  # the table's last event at each wake-up of its streams
        notify = live.notify
        live.notify = lambda: (woken.append(live.head), notify())
        acted = gw.stub.Act(
            pb.ActRequest(
                table_id=table.table_id,
                seat_token=token,
                request_id=str(uuid.uuid4()),
                last_sequence=state.last_sequence,
                action=legal_answer(state.prompt),
            )
        )
        while not any(w >= acted.sequence for w in woken):
            assert time.monotonic() < deadline, "the streams were never woken"
            time.sleep(0.01)

    # the first wake-up after the action came with what it led to: the claim window's
    # prompts, the next seat's draw, or the hand's result
    first = next(w for w in woken if w >= acted.sequence)
    assert first > acted.sequence, woken
