"""Act (and 加倍卡): a seat's action checked against the table's state and applied in one step,
the engine steps it leads to run right after it (:meth:`ActCalls.act`), its first result kept
by request id (:mod:`.requests`).

Request checks, in order: malformed input INVALID_ARGUMENT (before any lock), the token
(UNAUTHENTICATED forged or a spectator's revoked, PERMISSION_DENIED another table/seat), a
known request id returns its first result, a last sequence number older than the seat's pending
prompt ABORTED — or, with no prompt pending, older than the seat's latest decision (its last
prompt or the action that answered it, e.g. the timer's: a late answer is stale, not out of
turn) — then the action against the options held (FAILED_PRECONDITION). A refused request
changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from services.gateway.domain.ports import is_transient
from services.gateway.domain.session import FINISHED, HALTED, PLAYING
from services.gateway.runtime import run_logged
from services.gateway.tables import requests
from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import Refusal, RequestRecord, check_id
from shared.errors import (
    Aborted,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
)
from shared.table import ResumePlay, SeatRequest


class ActCalls:
    """Mixed into :class:`~services.gateway.tables.manager.TableManager`, with ``table``,
    ``_session``, ``_actor``, ``step`` and ``_not_owner`` of the other parts."""

    def act(
        self,
        table_id: str,
        token: str,
        seat_claim: int | None,
        request_id: str,
        last_sequence: int,
        action: SeatRequest,
        answer: Callable[[tuple[int, bool]], None] | None = None,
    ) -> tuple[int, bool]:
        """Apply a seat's action; returns (sequence, replayed). The engine steps it leads to
        (claim options, the next draw and its prompt, scoring) run right after it: with
        ``answer``, the result goes to ``answer`` once the action is written, then they run as a
        step of their own, and the table's streams are woken once, after it, for both (one
        message each); without, they are one step with the action, answered after both."""
        check_id(request_id, "request_id")
        if last_sequence < 0:
            raise InvalidArgument("last_sequence is negative", field="last_sequence")
        table = self.table(table_id)
        with table.lock:
            seat = self._actor(table, token, seat_claim)
            if seat is None:
                raise PermissionDenied("a spectator cannot act", field="seat_token")
            key = (seat, request_id)
            if key in table.requests:
                return table.requests[key].replay(), True
            if not table.owned:  # not kept: the request was not evaluated here
                raise self._not_owner(table.id)
            self._refuse_if_over(table)  # not kept: nothing is remembered of a finished table
            session = self._session(table)
            with self.step(table), session.steps_collected() as after:
                try:
                    seq = self._apply(table, seat, last_sequence, action, request_id)
                except DomainError as exc:
                    if not is_transient(exc):  # an outage or NOT_OWNER: retried, not refused
                        self._remember(table, seat, request_id, refusal=Refusal.of(exc))
                    raise
                self._remember(table, seat, request_id, result=seq)
                if answer is None:
                    session.run_steps(after)  # within the action's step: one write
                elif after:
                    table.wake_later = True  # the steps after it wake the streams for both
        if answer is not None:
            answer((seq, False))
            if after:
                run_logged(table.lock, lambda: self.step(table), table.id, session.run_steps, after)
        return seq, False

    def _remember(self, table: LiveTable, seat: int, request_id: str, **result) -> None:
        """Keep a request's first result: written with the running step's events, then held
        here (a write that fails keeps nothing, and the retry is evaluated again). A request
        that ended the table (the last player leaving: 人走光) is held here only: a finished
        table's records leave the store with its end, and its lease with them, so a retry while
        the table is held gets the same answer and nothing is written."""
        record = RequestRecord(table.last_seq, **result)
        key = (seat, request_id)
        if not table.live:
            table.requests[key] = record
            return
        table.unwritten_records.append(requests.row(table.id, seat, request_id, record))
        table.after_write.append(lambda: table.requests.__setitem__(key, record))

    def _refuse_if_over(self, table: LiveTable) -> None:
        session = self._session(table)
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

    def _apply(
        self, table: LiveTable, seat: int, last_sequence: int, action: SeatRequest, request_id: str
    ) -> int:
        """Check an action against the table's state and apply it; the resulting sequence."""
        if last_sequence > table.head:
            raise InvalidArgument(
                f"last_sequence {last_sequence} is beyond the table's last event {table.head}",
                field="last_sequence",
            )
        session = self._session(table)
        if isinstance(action, ResumePlay):  # ends 托管: no decision on a prompt, never stale
            session.act(seat, action)
            return table.last_seq
        p = None
        if session.phase == PLAYING and session.hand is not None:
            p = session.hand.pending.get(seat)
        if p is not None and last_sequence < p.sequence:
            raise Aborted(
                f"stale: the last event seen is {last_sequence} but seat {seat}'s "
                f"prompt is event {p.sequence}; refresh and decide again",
                last_sequence=last_sequence,
                prompt_sequence=p.sequence,
            )
        decided = table.last_decision.get(seat, 0)
        if p is None and last_sequence < decided:
            # e.g. a late answer: the timer already decided the prompt it answers
            raise Aborted(
                f"stale: the last event seen is {last_sequence} but seat {seat}'s last "
                f"decision was made at event {decided}; refresh (no decision is pending)",
                last_sequence=last_sequence,
                decision_sequence=decided,
            )
        session.act(seat, action, request_id)
        return table.last_seq

    def play_double_card(self, table_id: str, token: str, request_id: str) -> tuple[int, int]:
        """加倍卡 for the next hand (:func:`services.gateway.double_cards.play_double_card`)."""
        from services.gateway.double_cards import play_double_card

        return play_double_card(self, table_id, token, request_id)
