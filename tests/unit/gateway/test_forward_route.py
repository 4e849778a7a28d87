"""The one forward-or-serve path (``forwarding.route``), as both server models drive it: a call
is served here; NOT_OWNER naming another replica forwards it there; a table between owners, or
an owner that did not answer, is looked for again after a pause; anything else is the answer."""

from __future__ import annotations

import asyncio

import pytest

from services.gateway import forwarding
from services.gateway.forwarding import OwnerSilent, here_or_owner, here_or_owner_async
from shared.errors import FailedPrecondition, Unavailable


class Context:
    def __init__(self, forwarded: bool = False) -> None:
        self.forwarded = forwarded

    def invocation_metadata(self):
        return ((forwarding.FORWARDED_HEADER, "gw-a"),) if self.forwarded else ()

    def time_remaining(self):
        return 5.0


class Owner:
    """Stands in for the forwarder: ``unary`` answers from ``answers`` (raising errors)."""

    def __init__(self, *answers) -> None:
        self.inner = forwarding._Forwarding("gw-b", "b:1")
        self.answers = list(answers)
        self.sent: list[str] = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def unary(self, method, owner, request, context, give_up):
        self.sent.append(owner)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def not_owner(address: str = "") -> Unavailable:
    details = {"owner_address": address} if address else {}
    return Unavailable("not here", reason="NOT_OWNER", table_id="t", **details)


def serving(*answers):
    """``serve()`` answering from ``answers`` in turn (raising errors)."""
    left = list(answers)

    def serve():
        answer = left.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return serve


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch):
    monkeypatch.setattr(forwarding, "AGAIN_PAUSE_S", 0.0)


def test_served_here():
    assert here_or_owner(Owner(), "Act", serving("done"), None, Context()) == "done"


def test_another_replicas_table_is_forwarded_there():
    owner = Owner("theirs")
    assert here_or_owner(owner, "Act", serving(not_owner("a:1")), None, Context()) == "theirs"
    assert owner.sent == ["a:1"]


def test_a_silent_owner_is_looked_for_again_and_the_table_served_here():
    owner = Owner(OwnerSilent(0.0))
    serve = serving(not_owner("a:1"), "taken over")
    assert here_or_owner(owner, "Act", serve, None, Context()) == "taken over"


def test_a_table_between_owners_is_looked_for_again():
    assert here_or_owner(Owner(), "Act", serving(not_owner(), "ok"), None, Context()) == "ok"


def test_a_forwarded_call_is_never_forwarded_again():
    with pytest.raises(Unavailable):
        here_or_owner(Owner(), "Act", serving(not_owner("a:1")), None, Context(forwarded=True))


def test_a_refusal_is_the_answer():
    refused = FailedPrecondition("no", reason="NO_HAND")
    with pytest.raises(FailedPrecondition):
        here_or_owner(Owner(), "Act", serving(refused), None, Context())
    owner = Owner(refused)
    with pytest.raises(FailedPrecondition):
        here_or_owner(owner, "Act", serving(not_owner("a:1")), None, Context())


def test_the_event_loop_drives_the_same_path():
    class AsyncOwner(Owner):
        async def unary(self, *args):
            return Owner.unary(self, *args)

    def serve_async(*answers):
        serve = serving(*answers)

        async def run():
            return serve()

        return run

    owner = AsyncOwner(OwnerSilent(0.0), "theirs")
    serve = serve_async(not_owner("a:1"), not_owner("a:1"))
    result = asyncio.run(here_or_owner_async(owner, "Act", serve, None, Context()))
    assert result == "theirs" and owner.sent == ["a:1", "a:1"]
