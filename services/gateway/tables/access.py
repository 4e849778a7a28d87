"""Finding a table and who a token is at it: every call's first checks.

:meth:`TableAccess.table` finds a live table (one whose owner's lease expired is taken over
from its log; another replica's answers NOT_OWNER with its address), :meth:`TableAccess.session`
its session under the lock, and :meth:`holder`, :meth:`viewer` and :meth:`actor` who a seat
token is: its seat, or a spectator the table still admits (:mod:`.spectators`). Player ids are
public; a token is not.
"""

from __future__ import annotations

from infra.store import Store
from services.gateway.domain.session import FINISHED, HALTED, TableSession, presence
from services.gateway.domain.tokens import SeatToken, read_seat_token
from services.gateway.settings import GatewaySettings
from services.gateway.tables import spectators
from services.gateway.tables.leases import TableLeases, owner_of
from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import check_id
from services.gateway.tables.recovery import TableRecovery
from services.gateway.tables.registry import TableRegistry
from shared.errors import FailedPrecondition, NotFound, PermissionDenied


def refuse_suspended(table: LiveTable, seat: int) -> None:
    """PERMISSION_DENIED ``PLAYER_SUSPENDED`` for the seat of a player an operator suspended
    (:func:`...domain.session.presence.suspend`): its token does nothing more."""
    session = table.session
    if session is not None and seat in session.presence.suspended:
        raise PermissionDenied(
            f"the player of seat {seat} is suspended: their seat token does nothing more",
            reason="PLAYER_SUSPENDED",
            field="seat_token",
        )


class TableAccess:
    """The tables in the ``registry`` (loaded by ``recovery`` when this replica may own
    them, as ``leases`` say) and the tokens of their seats and spectators (signed with the
    ``settings``' secret, spectators admitted in ``store``)."""

    def __init__(
        self,
        store: Store,
        settings: GatewaySettings,
        registry: TableRegistry,
        leases: TableLeases,
        recovery: TableRecovery,
    ) -> None:
        self.store = store
        self.settings = settings
        self.registry = registry
        self.leases = leases
        self.recovery = recovery

    def table(self, table_id: str) -> LiveTable:
        """A live table; one whose owner's lease expired is taken over from its log."""
        check_id(table_id, "table_id")
        tables = self.registry.tables
        t = tables.get(table_id)
        if t is not None and t.owned and self.leases.ownership.unsure(table_id):
            self.leases.confirm(t)
            t = tables.get(table_id)
        if t is None:
            self.refuse_if_elsewhere(table_id)
            t = self.recovery.recover(table_id)
        if t is None:
            self.refuse_if_elsewhere(table_id)
            raise NotFound(f"no table {table_id!r} on this gateway", table_id=table_id)
        return t

    def refuse_if_elsewhere(self, table_id: str) -> None:
        """NOT_OWNER (naming the owner) when another replica's lease on the table runs: not
        ours to load."""
        owner = owner_of(self.store, table_id)
        if owner and owner != self.settings.replica_id:
            raise self.leases.not_owner(table_id)

    def session(self, t: LiveTable) -> TableSession:
        """The table's session, under its lock; NOT_OWNER for a table this replica let go
        while the caller waited for the lock (its session is detached: the new owner's to
        answer)."""
        if not t.owned:
            raise self.leases.not_owner(t.id)
        if t.session is None:
            raise NotFound(f"table {t.id!r} is not ready")
        return t.session

    def refuse_if_over(self, table: LiveTable) -> None:
        """FAILED_PRECONDITION for a table that finished (``TABLE_FINISHED``) or halted."""
        session = self.session(table)
        if session.phase == FINISHED:
            why = f" ({session.finish_reason})" if session.finish_reason else ""
            raise FailedPrecondition(
                f"table {table.id} has finished{why}",
                reason="TABLE_FINISHED",
                finish_reason=session.finish_reason,
            )
        if session.phase == HALTED:
            raise FailedPrecondition(
                f"table {table.id} stopped on an internal error; nothing can be played there",
                reason="TABLE_HALTED",
            )

    def holder(self, table: LiveTable, token: str, seat_claim: int | None) -> SeatToken:
        """Who ``token`` is at ``table``: its seat, or a spectator the table still admits
        (UNAUTHENTICATED ``SPECTATOR_TOKEN_REVOKED`` otherwise)."""
        held = read_seat_token(self.settings.secret, token, table.id)
        seat = held.seat
        if seat is None and not spectators.admitted(self.store, table, held.spectator_id):
            raise spectators.revoked(held.spectator_id)
        if seat_claim is not None and seat_claim != seat:
            raise PermissionDenied(
                f"seat_token is for {'a spectator' if seat is None else f'seat {seat}'}, "
                f"not seat {seat_claim}",
                field="seat_token",
            )
        if seat is not None:
            refuse_suspended(table, seat)
            self.called(table, seat)
        return held

    @staticmethod
    def called(table: LiveTable, seat: int) -> None:
        """A call with ``seat``'s token (掉线, :mod:`...domain.session.presence`): its grace runs
        from now; a seat found disconnected is back, as a step of the table."""
        session = table.session
        if session is None or not session.presence.watching:
            return
        if presence.called(session, seat):
            session.scheduler.call_later(0, lambda: presence.came_back(session, seat))

    def viewer(self, table: LiveTable, token: str, seat_claim: int | None) -> int | None:
        """Whose view ``token`` sees at ``table``: its seat, or None (a spectator it admits, or
        the token of a seat whose player went bankrupt, 破产: they watch as spectators do)."""
        return self.watching(table, self.holder(table, token, seat_claim).seat)

    def watching(self, table: LiveTable, seat: int | None) -> int | None:
        """The view of a seat's token: none (a spectator's) once its player went bankrupt."""
        session = table.session
        if seat is not None and session is not None and seat in session.bankrupt:
            return None
        return seat

    def actor(self, table: LiveTable, token: str, seat_claim: int | None) -> int | None:
        """The seat ``token`` acts for (None: a spectator's); PERMISSION_DENIED
        ``SEAT_BANKRUPT`` for the seat of a player who went bankrupt (破产): a bot plays it."""
        seat = self.holder(table, token, seat_claim).seat
        session = table.session
        gone = session.bankrupt.get(seat) if seat is not None and session is not None else None
        if gone is not None:
            raise PermissionDenied(
                f"seat {seat}'s player {gone.player_id} went bankrupt (破产) after hand "
                f"{gone.after_hand}: their silver no longer covers the most one hand can cost at "
                f"stake {session.config.stake}, so they left the table and the bot "
                f"{gone.bot_id} plays the seat; this seat token can still watch the table "
                "(GetTableState, Subscribe) but no longer acts",
                reason="SEAT_BANKRUPT",
                field="seat_token",
                seat=seat,
                after_hand=gone.after_hand,
            )
        return seat
