"""The matchmaking outbox: settled hands and finished tables are written to the store
(namespace ``gateway-outbox``) by the table, then sent by this thread with retries and backoff,
and deleted once matchmaking accepted them (RecordHand is idempotent by hand id), so a report is
never lost when matchmaking is down or the gateway restarts.

Every report carries the deployment's internal token (RecordHand and TableFinished are internal
methods of matchmaking). What happens to a report matchmaking does not accept depends on the
status code (:func:`classify`):

* RETRY (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, …): kept; this pass stops so a table's reports
  stay in order, and the sender backs off.
* MISCONFIGURED (UNAUTHENTICATED, PERMISSION_DENIED, UNIMPLEMENTED): the token or the address is
  wrong, which an operator must fix; kept and retried like RETRY, but logged as an error and
  counted (``mahjong_gateway_outbox_misconfigured_total``) on every attempt.
* DROP (NOT_FOUND, FAILED_PRECONDITION, INVALID_ARGUMENT, ALREADY_EXISTS, OUT_OF_RANGE): refused
  for good — a table matchmaking did not allocate, a seating it does not know, a malformed
  report. Resending can never succeed and would block every later report, so it is dropped:
  logged as an error with the whole report (for operators) and counted
  (``mahjong_gateway_outbox_dropped_total``); the next report goes on. Nothing is kept in the
  store. Casual tables (created without the internal token: ``mahjong play``, tests, clients)
  never reach the outbox (``TableSpec.report_hands``), so a drop means something is wrong.

A hand's answer (RecordHand's: the seats whose player went bankrupt, 破产, and the bots taking
them) is kept in the store (``gateway-hand-answer``, :class:`~services.gateway.tables.records.
HandAnswerRecord`) before its row is deleted: the table deals its next hand only once it is
there, whichever replica runs the table or sent the report, and after a restart. A report
dropped for good gets a ``refused`` answer (no seat changes), so its table goes on.

Several gateway replicas share one store, and each runs a sender. A table's reports are sent
by one sender at a time: before sending them a sender claims the table's outbox lease
(``gateway-outbox/<table id>``, a store lease of :data:`CLAIM_TTL_MS` or more, skipped while
another sender holds it), reads the table's rows again under the claim (a row another sender
delivered meanwhile is gone), sends them in key order, deletes each under the claim's fence and
releases the claim. So a report is delivered once; only a sender that dies (or is paused past
the claim) between matchmaking's answer and the delete leaves a row for the next sender, whose
resend matchmaking answers as a repeat (RecordHand is idempotent per hand id, TableFinished per
table), so it is applied once.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator

import grpc
import structlog
from mahjong.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc
from prometheus_client import Counter, Gauge

from infra.convert.common import seat_from_proto, seat_to_proto
from infra.interceptor import internal_metadata
from infra.store import Store
from infra.store.base import Fenced, Lease, LeaseHeld, Record
from services.gateway.tables import OUTBOX
from services.gateway.tables.records import (
    ANSWERS,
    HandAnswerRecord,
    HandReport,
    Report,
    decode_report,
)
from shared.errors import InvalidArgument

log = structlog.get_logger("mahjong.gateway.outbox")

RETRY, MISCONFIGURED, DROP = "retry", "misconfigured", "drop"
CLAIM_PREFIX = "gateway-outbox/"
CLAIM_TTL_MS = 10_000  # at least; five send timeouts when those are longer
_MISCONFIGURED = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNIMPLEMENTED,
}
_PERMANENT = {
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.OUT_OF_RANGE,
}

OUTBOX_DROPPED = Counter(
    "mahjong_gateway_outbox_dropped_total",
    "Reports matchmaking refused for good (not its table, malformed), dropped and logged in full.",
    ["kind", "code"],
)
OUTBOX_MISCONFIGURED = Counter(
    "mahjong_gateway_outbox_misconfigured_total",
    "Report attempts refused as unauthenticated/unimplemented (wrong internal token or address).",
    ["code"],
)

OUTBOX_PENDING = Gauge(
    "mahjong_gateway_outbox_pending",
    "Reports in the store's outbox not yet accepted by matchmaking, as this replica's sender "
    "last counted them (the outbox is shared: every replica counts the same rows).",
)


def classify(code: grpc.StatusCode) -> str:
    """What the outbox does with a report refused with ``code``: RETRY, MISCONFIGURED or DROP."""
    if code in _PERMANENT:
        return DROP
    if code in _MISCONFIGURED:
        return MISCONFIGURED
    return RETRY


class OutboxSender:
    def __init__(
        self,
        store: Store,
        channel: grpc.Channel,
        *,
        timeout: float = 2.0,
        interval: float = 0.2,
        internal_token: str = "",
        owner: str = "",
    ) -> None:
        self.store = store
        # Who claims tables' reports: unique per sender (a restarted replica is a new sender).
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.claim_ttl_ms = max(CLAIM_TTL_MS, int(timeout * 5000))
        self.metadata = internal_metadata(internal_token)
        self.stub = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
        self.timeout = timeout
        self.interval = interval
        self.backoff = interval
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="outbox", daemon=True)

    def start(self) -> OutboxSender:
        self._thread.start()
        return self

    def send_one(self, report: Report) -> HandAnswerRecord | None:
        """Send one report; a hand's answer (None for a table's end)."""
        if isinstance(report, HandReport):
            esc = report.escaped_seat
            answer = self.stub.RecordHand(
                matchmaking_pb2.RecordHandRequest(
                    hand_id=report.hand_id,
                    table_id=report.table_id,
                    tag=report.tag,
                    player_ids=report.player_ids,
                    payments=report.payments,
                    house=report.house,
                    escaped_seat=seat_to_proto(esc) if esc is not None else 0,
                    hand_number=report.hand_number,
                    doubled_seats=[seat_to_proto(s) for s in report.doubled_seats],
                    fees=report.fees,
                    facts=_facts_message(report.facts),
                ),
                timeout=self.timeout,
                metadata=self.metadata,
            )
            return hand_answer(report, answer)
        self.stub.TableFinished(
            matchmaking_pb2.TableFinishedRequest(
                table_id=report.table_id, tag=report.tag, hands_played=report.hands_played
            ),
            timeout=self.timeout,
            metadata=self.metadata,
        )
        return None

    def flush(self) -> int:
        """Send every pending report once (a table's in key order: its hands before its end),
        each table under its claim; returns how many went out. Stops at a report to retry."""
        done = 0
        for table_id in self._tables_pending():
            sent, go_on = self._flush_table(table_id)
            done += sent
            if not go_on:
                return done
        return done

    def _tables_pending(self) -> list[str]:
        return sorted({key.split("/", 1)[0] for key, _ in self.store.scan(OUTBOX)})

    def _flush_table(self, table_id: str) -> tuple[int, bool]:
        """The table's reports under its claim: (how many went out, whether to go on)."""
        try:
            lease = self.store.acquire_lease(CLAIM_PREFIX + table_id, self.owner, self.claim_ttl_ms)
        except LeaseHeld:
            return 0, True  # another sender has them
        claim = _Claim(self.store, lease, self.claim_ttl_ms)
        done = 0
        try:
            for key, rec in self._rows(table_id):  # read under the claim: none sent twice
                if not claim.keep():
                    return done, True
                try:
                    report = decode_report(rec.value)
                except (ValueError, KeyError, TypeError) as exc:  # kept for an operator
                    log.error("outbox_record_unreadable", key=key, error=repr(exc))
                    continue
                try:
                    answer = self.send_one(report)
                except grpc.RpcError as exc:
                    if not self._refused(key, report, exc, claim.lease):
                        return done, False
                    continue
                done += 1
                self.sent += 1
                if answer is not None and not claim.put(ANSWERS, key, answer.encode()):
                    return done, True
                if not claim.delete(key):
                    return done, True
            return done, True
        finally:
            claim.release()

    def _rows(self, table_id: str) -> Iterator[tuple[str, Record]]:
        return self.store.scan(OUTBOX, table_id + "/")

    def _refused(self, key: str, report: Report, exc: grpc.RpcError, lease: Lease) -> bool:
        """Handle a refusal by its code; True when the report was set aside (go on)."""
        code = exc.code()
        details = exc.details() if hasattr(exc, "details") else ""
        decision = classify(code)
        if decision == RETRY:
            log.warning("outbox_send_failed", key=key, code=code.name, error=details)
            return False
        if decision == MISCONFIGURED:
            OUTBOX_MISCONFIGURED.labels(code.name).inc()
            log.error(
                "outbox_misconfigured",
                key=key,
                code=code.name,
                error=details,
                hint="matchmaking refuses this gateway's reports: give both the same "
                "MAHJONG_INTERNAL_TOKEN and check --matchmaking-addr; reports are kept and retried",
            )
            return False
        OUTBOX_DROPPED.labels(report.kind, code.name).inc()
        log.error(
            "outbox_report_dropped",
            key=key,
            table=report.table_id,
            tag=report.tag,
            code=code.name,
            error=details,
            report={"kind": report.kind, **dataclasses.asdict(report)},
        )
        try:
            if isinstance(report, HandReport):  # its table waits for an answer: go on
                refused = HandAnswerRecord(refused=True).encode()
                self.store.put(ANSWERS, key, refused, fence=lease.fence)
            self.store.delete(OUTBOX, key, fence=lease.fence)
        except Fenced:
            return False  # another sender took the table over: it decides
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.backoff):
            try:
                pending = sum(1 for _ in self.store.scan(OUTBOX))  # the scan reads them all
                OUTBOX_PENDING.set(pending)
                ok = self.flush() if pending else 0
                self.backoff = self.interval if ok or not pending else min(5.0, self.backoff * 2)
            except Exception as exc:  # never let the sender thread die
                log.exception("outbox_failed", error=repr(exc))

    def close(self) -> None:
        self._stop.set()


def _facts_message(facts) -> matchmaking_pb2.HandFacts | None:
    """A hand's facts as RecordHand carries them (None: a row written before them)."""
    if facts is None:
        return None

    def pairs(xs):
        return [
            matchmaking_pb2.SeatPair(seat=seat_to_proto(a), from_seat=seat_to_proto(b))
            for a, b in xs
        ]

    return matchmaking_pb2.HandFacts(
        version=facts.version,
        discard_wins=pairs(facts.discard_wins),
        claims=pairs(facts.claims),
        passed_wins=pairs(facts.passed_wins),
        chows=pairs(facts.chows),
    )


def hand_answer(report: HandReport, answer) -> HandAnswerRecord:
    """RecordHand's answer as the table keeps it. One that does not pair each bankrupt seat
    (0-3) with a bot is a ValueError: the report stays and is sent again (the sender's loop
    logs it), as matchmaking answers a repeat the same way."""
    bots = list(answer.replacement_player_ids)
    try:
        seats = [seat_from_proto(s, "bankrupt_seats") for s in answer.bankrupt_seats]
    except InvalidArgument as exc:
        raise ValueError(f"RecordHand's answer for {report.hand_id}: {exc.message}") from exc
    if len(seats) != len(bots) or not all(bots):
        raise ValueError(
            f"RecordHand's answer for {report.hand_id} names bankrupt seats {seats} and bots "
            f"{bots}: one bot per seat"
        )
    return HandAnswerRecord(tuple(zip(seats, bots, strict=True)))


class _Claim:
    """A sender's claim on one table's reports: renewed before it could run out, each delete
    fenced by it (refused once another sender took the table over), released when done."""

    def __init__(self, store: Store, lease: Lease, ttl_ms: int) -> None:
        self.store, self.lease, self.ttl_ms = store, lease, ttl_ms
        self._renew_at = time.monotonic() + ttl_ms / 3000
        self.lost = False

    def keep(self) -> bool:
        """Whether the claim still holds (renewed when a third of it has passed)."""
        if not self.lost and time.monotonic() >= self._renew_at:
            try:
                self.lease = self.store.renew_lease(self.lease, self.ttl_ms)
                self._renew_at = time.monotonic() + self.ttl_ms / 3000
            except Fenced:
                self.lost = True
        return not self.lost

    def put(self, namespace: str, key: str, value: bytes) -> bool:
        """A record written under the claim; False when another sender took it over."""
        try:
            self.store.put(namespace, key, value, fence=self.lease.fence)
        except Fenced:
            self.lost = True
            log.warning("outbox_claim_lost", key=key, lease=self.lease.name)
            return False
        return True

    def delete(self, key: str) -> bool:
        """Delete a delivered row under the claim; False when another sender took it over."""
        try:
            self.store.delete(OUTBOX, key, fence=self.lease.fence)
        except Fenced:
            self.lost = True
            log.warning("outbox_claim_lost", key=key, lease=self.lease.name)
            return False
        return True

    def release(self) -> None:
        if not self.lost:
            self.store.release_lease(self.lease)
