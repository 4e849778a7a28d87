"""A Subscribe stream's messages (``SubscribeResponse``) from a batch of a viewer's events
(:data:`~services.gateway.tables.streams.Seen`: what one step of the table appended, or a
replay's run of older events): one event per message, or, for a stream asked ``batched``, the
batch in as few messages as :data:`MAX_EVENTS_PER_MESSAGE` allows. Fewer messages is less work
per action on both ends: each write costs the server about as much as the event's conversion.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.convert.events import event_to_proto
from services.gateway.domain.events.kinds import TableEvent
from services.gateway.domain.events.log import LoggedEvent

MAX_EVENTS_PER_MESSAGE = 64  # a replay of older events comes in messages of at most this many


def responses(
    seen: Sequence[tuple[LoggedEvent, TableEvent]], batched: bool
) -> Iterator[tuple[int, int, pb.SubscribeResponse]]:
    """(the first and the last sequence it holds, the message) for each message of ``seen``."""
    if not batched:
        for logged, copy in seen:
            yield logged.seq, logged.seq, pb.SubscribeResponse(event=event_to_proto(logged, copy))
        return
    for i in range(0, len(seen), MAX_EVENTS_PER_MESSAGE):
        chunk = seen[i : i + MAX_EVENTS_PER_MESSAGE]
        events = [event_to_proto(logged, copy) for logged, copy in chunk]
        yield chunk[0][0].seq, chunk[-1][0].seq, pb.SubscribeResponse(events=events)


def last_sequence(response: pb.SubscribeResponse) -> int:
    """The last event's number in a message of either kind (a relayed stream's progress)."""
    return response.events[-1].sequence if response.events else response.event.sequence
