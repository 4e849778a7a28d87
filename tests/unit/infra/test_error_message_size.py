"""An error that echoes a huge input must still reach the client with its own status code.

gRPC carries the status message and details in trailing metadata, which a client refuses past
16 KiB: before the fix a NotFound naming a 100,000-character id reached the client as
RESOURCE_EXHAUSTED "received metadata size exceeds hard limit"."""

from __future__ import annotations

from infra.status import status_for
from shared.errors import NotFound


def test_status_for_bounds_message_and_details():
    status = status_for(NotFound(f"no room {'9' * 100_000!r}", code="9" * 100_000))
    assert len(status.details) < 4096
    trailing = dict(status.trailing_metadata)
    assert len(trailing["grpc-status-details-bin"]) < 4096
    assert status.details.startswith("no room '999")


def test_short_messages_are_unchanged():
    status = status_for(NotFound("no room '123456'", code="123456"))
    assert status.details == "no room '123456'"
