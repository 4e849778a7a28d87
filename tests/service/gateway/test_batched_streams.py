"""Subscribe ``batched``: a step's events in one message, the same events as a stream of one
event per message, on both server models; and an Act answered once its action and the engine
steps after it (claim options, the next draw) are logged (the domain's side of it:
tests/unit/gateway/test_steps_inline.py)."""

from __future__ import annotations

import contextlib
import time
import uuid

import pytest
from mahjong.gateway.v1 import gateway_pb2 as pb

from mahjong_client.tables import create_table
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


@contextlib.contextmanager
def _person_prompted(model: str):
    """A table of one person and three bots on a gateway of ``model``, waiting for the person's
    first prompt (its timers long): (the gateway, the table id, the person's token, the view)."""
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
        yield gw, table.table_id, token, state


@pytest.mark.parametrize("model", ["threads", "asyncio"])
def test_a_batched_stream_holds_the_same_events_in_fewer_messages(model):
    with inprocess_gateway(
        seat_secret="s", bot_delay_ms=0, server_config={"server_model": model}
    ) as gw:
        # Three hands: more events than one replay message holds, however quickly a random
        # wall ends a hand (one hand once gave 63).
        table_id = create_table(gw.server.address, [None] * 4, max_hands=3).table_id
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
    with _person_prompted(model) as (gw, table_id, token, state):
        deadline = time.monotonic() + 30
        live = gw.server.resource.manager.tables[table_id]
        woken: list[int] = []  # the table's last event at each wake-up of its streams
        notify = live.notify
        live.notify = lambda: (woken.append(live.head), notify())
        acted = gw.stub.Act(
            pb.ActRequest(
                table_id=table_id,
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


def _view_request(table_id: str, token: str, after: int = 0, **fields) -> pb.SubscribeRequest:
    return pb.SubscribeRequest(
        table_id=table_id, seat_token=token, after_sequence=after, with_view=True, **fields
    )


@pytest.mark.parametrize("model", ["threads", "asyncio"])
def test_a_stream_with_view_carries_the_viewers_view_after_each_batch(model):
    """``with_view``: the last message of each batch carries the view GetTableState gives the
    same token once those events were read; no other message does, and a stream without it
    carries none. A person's seat sees its own tiles there, a spectator none."""
    with _person_prompted(model) as (gw, table_id, token, state):
        look = pb.GetTableStateRequest(table_id=table_id, seat_token=token)
        head = state.last_sequence  # the table waits for the person here
        # one event per message, the last events: one batch, its last message with the view
        stream = gw.stub.Subscribe(_view_request(table_id, token, after=head - 5), timeout=30)
        singles = [next(stream)]
        while singles[-1].event.sequence < head:
            singles.append(next(stream))
        stream.cancel()
        # a spectator's view: no one's concealed tiles
        spectator = _spectator(gw.stub, table_id)
        stream = gw.stub.Subscribe(_view_request(table_id, spectator, batched=True), timeout=30)
        spectated = [next(stream)]
        while not spectated[-1].HasField("view"):
            spectated.append(next(stream))
        stream.cancel()
        watched = gw.stub.GetTableState(
            pb.GetTableStateRequest(table_id=table_id, seat_token=spectator)
        ).table
        # the person's seat, batched, from the start: the replay, its last message with the view
        stream = gw.stub.Subscribe(_view_request(table_id, token, batched=True), timeout=30)
        replay = [next(stream)]
        while replay[-1].events[-1].sequence < head:
            replay.append(next(stream))
        # the person acts; what follows comes in batches, each ending with a view
        acted = gw.stub.Act(
            pb.ActRequest(
                table_id=table_id,
                seat_token=token,
                request_id=str(uuid.uuid4()),
                last_sequence=head,
                action=legal_answer(state.prompt),
            )
        )
        after_act = [next(stream)]
        while not after_act[-1].HasField("view"):
            after_act.append(next(stream))
        stream.cancel()
        now = gw.stub.GetTableState(look).table
        plain = gw.stub.Subscribe(
            pb.SubscribeRequest(table_id=table_id, seat_token=token, batched=True), timeout=30
        )
        without = next(plain)
        plain.cancel()

    assert len(singles) >= 2 and all(m.HasField("event") for m in singles)
    assert [m.HasField("view") for m in singles] == [False] * (len(singles) - 1) + [True]
    assert singles[-1].view == state
    assert spectated[-1].view == watched and not any(s.concealed for s in watched.seats)
    assert [m.HasField("view") for m in replay] == [False] * (len(replay) - 1) + [True]
    assert replay[-1].events[-1].sequence == head
    assert replay[-1].view == state and state.seats[0].concealed  # the person's own tiles
    last = after_act[-1]
    # the answer names the last event the seat sees once its action was applied: its own prompt
    # still when it passed a claim (the answer and the other seats' prompts are not its to see)
    assert acted.sequence >= head and last.events[-1].sequence >= acted.sequence
    assert last.events[-1].sequence <= last.view.last_sequence <= now.last_sequence
    assert last.view.viewer == state.viewer and last.view.seats[0].concealed
    assert not without.HasField("view")
