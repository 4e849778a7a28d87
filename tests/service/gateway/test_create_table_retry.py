"""A CreateTable retried while the first call is still starting the table gets the same table
and its seat tokens. (Matchmaking retries CreateTable on a deadline; the retry used to find the
request id claimed but the seats not yet stored, and answered with no seat tokens at all, so a
tournament player was sent an empty token.)"""

from __future__ import annotations

from dataclasses import replace

import pytest

from infra.store.memory import MemoryStore
from services.gateway.domain.session import Seat
from services.gateway.tables import CREATES, TableManager, TableSpec, spec_fingerprint
from services.gateway.tables.records import CreateRecord
from shared.errors import Unavailable
from tests.support.sessions import inprocess_ports
from tests.support.stacks import table_manager, table_spec


class RetryOnClaimStore(MemoryStore):
    """Runs ``on_claim`` once, right after a CreateTable request id is claimed: a retry of the
    same request arriving at the worst moment."""

    def __init__(self) -> None:
        super().__init__()
        self.on_claim = None

    def create(self, namespace, key, value):
        rec = super().create(namespace, key, value)
        if namespace == CREATES and self.on_claim is not None:
            hook, self.on_claim = self.on_claim, None
            hook()
        return rec


def _spec() -> TableSpec:
    return table_spec(
        [Seat(player_id="p0"), Seat(player_id="p1"), Seat("b2", bot=True), Seat("b3", bot=True)],
        request_id="tournament-T-r1-t0",
        tag="tournament/T/round/1",
        report_hands=False,
    )


def _manager(store) -> TableManager:
    return table_manager(store, inprocess_ports(), seed=1, replica_id="gw", bot_delay_ms=60_000)


def test_a_retry_during_creation_gets_the_seat_tokens():
    store = RetryOnClaimStore()
    manager = _manager(store)
    retried = []
    store.on_claim = lambda: retried.append(manager.create_table(_spec()))
    try:
        table_id, tokens = manager.create_table(_spec())
        assert tokens[0] and tokens[1] and tokens[2:] == ["", ""]
        assert retried == [(table_id, tokens)]
    finally:
        manager.close()


def test_a_claimed_request_id_without_seats_answers_unavailable():
    store = MemoryStore()
    spec = replace(_spec(), request_id="req-1")
    store.create(
        CREATES, "req-1", CreateRecord("t_0123456789abcdef", spec_fingerprint(spec)).encode()
    )
    manager = _manager(store)
    try:
        with pytest.raises(Unavailable, match="retry"):
            manager.create_table(spec)
    finally:
        manager.close()
