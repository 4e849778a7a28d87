"""Taking or leaving a seat: JoinSeat (a seat, a reconnect or a spectator's own token, counted
and revocable: :mod:`.spectators`) and Leave. Who a token is: :mod:`.access`.

Player ids are public (table_started, the views), so a seat already assigned to a player is
given again only to a caller proving it holds it — its seat token, or the request id of the
JoinSeat that took the open seat — or to a service of the deployment.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

from infra.store import Store
from infra.store.base import Fence, Fenced
from services.gateway.domain.ports import is_transient
from services.gateway.domain.session import FINISHED, HALTED
from services.gateway.domain.tokens import (
    read_seat_token,
    sign_seat_token,
    sign_spectator_token,
    verify_seat_token,
)
from services.gateway.settings import GatewaySettings
from services.gateway.tables import spectators
from services.gateway.tables.access import TableAccess, refuse_suspended
from services.gateway.tables.leases import TableLeases
from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import JOINS, Refusal, check_id
from services.gateway.tables.requests import remember
from services.gateway.tables.steps import StepWriter
from shared.errors import DomainError, FailedPrecondition, PermissionDenied


class SeatCalls:
    """JoinSeat and Leave at the tables ``access`` finds, each change a step (``writer``)
    fenced by the table's lease (``leases``); the JoinSeat request ids and spectators in
    ``store``."""

    def __init__(
        self,
        store: Store,
        settings: GatewaySettings,
        access: TableAccess,
        writer: StepWriter,
        leases: TableLeases,
    ) -> None:
        self.store = store
        self.settings = settings
        self.access = access
        self.writer = writer
        self.leases = leases

    def join(
        self,
        table_id: str,
        player_id: str,
        display_name: str,
        seat: int | None,
        spectator: bool,
        *,
        seat_token: str = "",
        internal: bool = False,
        request_id: str = "",
    ) -> tuple[int | None, str, int]:
        """A seat's token (or a spectator's). An open seat goes to the first caller. Player ids
        are public (table_started, the views), so a seat already assigned to ``player_id`` is
        given only to a caller proving it holds it — its ``seat_token`` (a reconnect), or the
        ``request_id`` of the JoinSeat that took the open seat (a retry whose answer was lost)
        — or to a service of the deployment (``internal``); anyone else is PERMISSION_DENIED.
        A spectator gets a token of its own (:meth:`_spectate`)."""
        table = self.access.table(table_id)
        if spectator:
            return None, self._spectate(table, seat_token), table.last_seen(None, table.head)
        check_id(player_id, "player_id")
        with table.lock:
            session = self.access.session(table)
            seats = session.seats
            mine = [i for i, s in enumerate(seats) if s.player_id == player_id and not s.bot]
            if mine:
                chosen = mine[0]
                refuse_suspended(table, chosen)
                if not internal and not self._retried_join(table, player_id, request_id):
                    self._check_rejoin(table, chosen, seat_token)
                if seat is not None and seat != chosen:
                    raise PermissionDenied(
                        f"player {player_id!r} sits in seat {chosen}, not seat {seat}"
                    )
            elif seat is not None:
                if not seats[seat].open:
                    raise FailedPrecondition(f"seat {seat} is taken", reason="SEAT_TAKEN")
                chosen = seat
            else:
                free = [i for i, s in enumerate(seats) if s.open]
                if not free:
                    raise FailedPrecondition("no open seat at this table", reason="TABLE_FULL")
                chosen = free[0]
            with self.writer.step(table):
                session.join(chosen, player_id, display_name)
            if request_id and not mine:  # took an open seat: a retry of this request may too
                self.store.put(JOINS, f"{table.id}/{player_id}", request_id.encode())
            token = sign_seat_token(self.settings.secret, table.id, chosen)
            return chosen, token, table.last_seen(chosen, table.head)

    def _retried_join(self, table: LiveTable, player_id: str, request_id: str) -> bool:
        """Is this the JoinSeat that gave ``player_id`` its open seat, sent again?"""
        if not request_id:
            return False
        rec = self.store.get(JOINS, f"{table.id}/{player_id}")
        return rec is not None and secrets.compare_digest(rec.value, request_id.encode())

    def _check_rejoin(self, table: LiveTable, seat: int, token: str) -> None:
        """JoinSeat of a seat already assigned: only with that seat's own token."""
        if not token:
            raise PermissionDenied(
                f"seat {seat} is already assigned to this player: use the seat token given "
                "when the table was created (CreateTableResponse.seat_tokens) or by the first "
                "JoinSeat, and pass it as seat_token to join again",
                field="seat_token",
            )
        held = verify_seat_token(self.settings.secret, token, table.id)
        if held != seat:
            who = "a spectator" if held is None else f"seat {held}"
            raise PermissionDenied(
                f"seat_token is for {who}, not seat {seat}: use the token given for seat {seat} "
                "when the table was created",
                field="seat_token",
            )

    def _spectate(self, table: LiveTable, token: str) -> str:
        """A spectator's token: ``token`` again when it is a spectator's the table still admits
        (a reconnect: not counted twice), else a new spectator's, counted against
        ``max_spectators_per_table``. A forged ``token`` is UNAUTHENTICATED, another table's
        PERMISSION_DENIED; a seat's token, or a revoked one, gets a new spectator token."""
        secret = self.settings.secret
        if token:
            held = read_seat_token(secret, token, table.id)
            if held.seat is None and spectators.admitted(self.store, table, held.spectator_id):
                return token
        limit = self.settings.max_spectators_per_table
        now_ms = int(time.time() * 1000)
        spectator_id = self._spectators_write(
            table, lambda fence: spectators.admit(self.store, table, limit, fence, now_ms)
        )
        return sign_spectator_token(secret, table.id, spectator_id)

    def _spectators_write(self, table: LiveTable, write: Callable[[Fence | None], Any]) -> Any:
        """A write of ``table``'s spectators: fenced by its lease while it is live (NOT_OWNER
        when another replica took it over: nobody is admitted or revoked by a stale owner),
        unfenced once it is over (its lease goes with its end)."""
        fence = self.leases.fence(table) if table.live else None
        try:
            return write(fence)
        except Fenced as exc:
            if not table.live:  # it finished meanwhile: the lease was released with its end
                return write(None)
            self.leases.lost(table)
            raise self.leases.not_owner(table.id) from exc

    def leave(self, table_id: str, token: str, request_id: str) -> int:
        """A seat leaves (its escape penalty, if a hand runs); a spectator goes, its token
        revoked (a Leave repeated with it answers 0 again and changes nothing)."""
        check_id(request_id, "request_id", required=False)
        table = self.access.table(table_id)
        held = read_seat_token(self.settings.secret, token, table.id)
        if held.seat is None:
            self._spectators_write(
                table,
                lambda fence: spectators.revoke(self.store, table, held.spectator_id, fence),
            )
            return 0
        with table.lock:
            seat = self.access.holder(table, token, None).seat
            session = self.access.session(table)
            if seat is None or seat in session.bankrupt:  # 破产: they left already
                return 0
            rid = "leave:" + request_id
            if request_id and (seat, rid) in table.requests:
                return table.requests[(seat, rid)].replay()
            if not table.owned:
                raise self.leases.not_owner(table.id)
            if self.access.session(table).phase in (FINISHED, HALTED):
                return 0  # the table is over: nothing to pay and nothing to write
            with self.writer.step(table):
                try:
                    penalty = self.access.session(table).leave(seat)
                except DomainError as exc:
                    if request_id and not is_transient(exc):
                        remember(table, seat, rid, refusal=Refusal.of(exc))
                    raise
                if request_id:
                    remember(table, seat, rid, result=penalty)
            return penalty
