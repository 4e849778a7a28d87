"""Act (and 加倍卡): a seat's action checked against the table's state and applied in one step,
the engine steps it leads to run right after it (:meth:`ActCalls.act`; answered before them on
the asyncio server: :mod:`.answer_early`), its first result kept by request id
(:mod:`.requests`).

Request checks, in order: malformed input INVALID_ARGUMENT (before any lock), the token
(UNAUTHENTICATED forged or a spectator's revoked, PERMISSION_DENIED another table/seat), a
known request id returns its first result, a last sequence number older than the seat's pending
prompt ABORTED — or, with no prompt pending, older than the seat's latest decision (its last
prompt or the action that answered it, e.g. the timer's: a late answer is stale, not out of
turn) — then the action against the options held (FAILED_PRECONDITION). A refused request
changes nothing.
"""

from __future__ import annotations

from infra import tracing
from services.gateway.domain.ports import ActAnswer, DoubleCardBank, is_transient
from services.gateway.domain.session import PLAYING, between_hands
from services.gateway.tables.access import TableAccess
from services.gateway.tables.answer_early import answer_then_run
from services.gateway.tables.leases import TableLeases
from services.gateway.tables.live import LiveTable
from services.gateway.tables.records import Refusal, check_id
from services.gateway.tables.requests import remember
from services.gateway.tables.steps import StepWriter
from shared.errors import (
    Aborted,
    DomainError,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
)
from shared.table import ResumePlay, SeatRequest


class ActCalls:
    """Act at the tables ``access`` finds, each action a step (``writer``); NOT_OWNER from
    ``leases`` for a table this replica no longer runs."""

    def __init__(self, access: TableAccess, writer: StepWriter, leases: TableLeases) -> None:
        self.access = access
        self.writer = writer
        self.leases = leases

    def act(
        self,
        table_id: str,
        token: str,
        seat_claim: int | None,
        request_id: str,
        last_sequence: int,
        action: SeatRequest,
        answer: ActAnswer | None = None,
    ) -> tuple[int, bool]:
        """Apply a seat's action; returns (sequence, replayed). The engine steps it leads to
        (claim options, the next draw and its prompt, scoring) run right after it: with
        ``answer`` (:mod:`.answer_early`), the result goes to ``answer`` once the action is
        written, then they run as a step of their own, and the table's streams are woken
        once, after it, for both (one message each); without, they are one step with the
        action, answered after both."""
        check_id(request_id, "request_id")
        if last_sequence < 0:
            raise InvalidArgument("last_sequence is negative", field="last_sequence")
        access = self.access
        table = access.table(table_id)
        with table.lock:
            seat = access.actor(table, token, seat_claim)
            if seat is None:
                raise PermissionDenied("a spectator cannot act", field="seat_token")
            key = (seat, request_id)
            if key in table.requests:
                return table.requests[key].replay(), True
            if not table.owned:  # not kept: the request was not evaluated here
                raise self.leases.not_owner(table.id)
            access.refuse_if_over(table)  # not kept: nothing is remembered of a finished table
            session = access.session(table)
            if tracing.enabled():  # the act's span names its hand and seat
                hand_id, number = session.head()
                tracing.annotate(hand_id=hand_id, hand_number=number, seat=seat)
            with self.writer.step(table), session.steps_collected() as after:
                try:
                    seq = self._apply(table, seat, last_sequence, action, request_id)
                    # the last event it produced that the seat sees: the number of one it does
                    # not (a claim window's prompt of another seat) would tell what it is
                    seq = table.last_seen(seat, seq)
                except DomainError as exc:
                    if not is_transient(exc):  # an outage or NOT_OWNER: retried, not refused
                        remember(table, seat, request_id, refusal=Refusal.of(exc))
                    raise
                remember(table, seat, request_id, result=seq)
                if answer is None:
                    session.run_steps(after)  # within the action's step: one write
                elif after:
                    table.wake_hold.hold()  # the steps after it wake the streams for both
        if answer is not None:
            answer_then_run(table, session, self.writer.step, answer, seq, after)
        return seq, False

    def _apply(
        self, table: LiveTable, seat: int, last_sequence: int, action: SeatRequest, request_id: str
    ) -> int:
        """Check an action against the table's state and apply it; the resulting sequence."""
        shown = table.last_seen(seat, table.head)
        if last_sequence > shown:
            raise InvalidArgument(
                f"last_sequence {last_sequence} is beyond the last event you were shown {shown}",
                field="last_sequence",
            )
        session = self.access.session(table)
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
        # the seat's last decision, as the last event it was shown by then (its own answer to
        # a claim is numbered after prompts it does not see)
        decided = table.last_seen(seat, table.last_decision.get(seat, 0))
        if p is None and last_sequence <= decided and decided:
            # e.g. a late answer: the timer already decided the prompt it answers
            raise Aborted(
                f"stale: the last event seen is {last_sequence} but seat {seat}'s last "
                f"decision was made at event {decided}; refresh (no decision is pending)",
                last_sequence=last_sequence,
                decision_sequence=decided,
            )
        session.act(seat, action, request_id)
        return table.last_seq


LEFT_BITS = 32  # a remembered 加倍卡 result: hand number << 32 | cards left


class DoubleCardCalls:
    """PlayDoubleCard (加倍卡, :mod:`services.gateway.double_cards`) at the tables ``access``
    finds, kept by request id like Act, each record a step (``writer``)."""

    def __init__(self, access: TableAccess, writer: StepWriter, leases: TableLeases) -> None:
        self.access = access
        self.writer = writer
        self.leases = leases

    def play(
        self, bank: DoubleCardBank | None, table_id: str, token: str, request_id: str
    ) -> tuple[int, int]:
        """The token's seat plays a 加倍卡 for the next hand, held at ``bank`` (None: not
        played here): (hand number, cards left)."""
        check_id(request_id, "request_id")
        table = self.access.table(table_id)
        with table.lock:
            seat = self.access.actor(table, token, None)
            if seat is None:
                raise PermissionDenied("a spectator plays no 加倍卡", field="seat_token")
            rid = "double:" + request_id
            if (seat, rid) in table.requests:
                result = table.requests[(seat, rid)].replay()
                return result >> LEFT_BITS, result & ((1 << LEFT_BITS) - 1)
            if not table.owned:
                raise self.leases.not_owner(table.id)
            self.access.refuse_if_over(table)
            session = self.access.session(table)
            try:
                number = session.check_double_card(seat)
                if bank is None or not table.report_hands:
                    raise FailedPrecondition(
                        "this table keeps no ledger: 加倍卡 are for rated tables and rooms",
                        reason="DOUBLE_CARD_NOT_ALLOWED",
                    )
                player_id = session.seats[seat].player_id
                left = bank.hold(table.id, table.tag, player_id, number, session.config.stake)
            except DomainError as exc:
                if exc.reason.startswith("DOUBLE_CARD_"):  # a definite refusal: kept
                    with self.writer.step(table):
                        remember(table, seat, rid, refusal=Refusal.of(exc))
                raise
            try:
                with self.writer.step(table):
                    session.play_double_card(seat)
                    remember(table, seat, rid, result=number << LEFT_BITS | left)
            except BaseException:
                bank.release(table.id, player_id, number)
                raise
            return number, left


class NextHandCalls:
    """ReadyForNextHand (Next, :mod:`services.gateway.domain.session.between_hands`): the
    token's seat has seen the last hand's result. Pressing it twice changes nothing more."""

    def __init__(self, access: TableAccess, writer: StepWriter, leases: TableLeases) -> None:
        self.access = access
        self.writer = writer
        self.leases = leases

    def ready(self, table_id: str, token: str, request_id: str) -> list[int]:
        """The seats still waited for after the token's seat pressed Next."""
        check_id(request_id, "request_id", required=False)
        table = self.access.table(table_id)
        with table.lock:
            seat = self.access.actor(table, token, None)
            if seat is None:
                raise PermissionDenied("a spectator has no hand to deal", field="seat_token")
            if not table.owned:
                raise self.leases.not_owner(table.id)
            self.access.refuse_if_over(table)
            session = self.access.session(table)
            with self.writer.step(table):
                return between_hands.ready(session, seat)
