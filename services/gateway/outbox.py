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
"""

from __future__ import annotations

import json
import threading

import grpc
import structlog
from mahjong.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc
from prometheus_client import Counter, Gauge

from services.gateway.tables import OUTBOX
from shared.convert.common import seat_to_proto
from shared.server import internal_metadata
from shared.store import Store

log = structlog.get_logger("mahjong.gateway.outbox")

RETRY, MISCONFIGURED, DROP = "retry", "misconfigured", "drop"
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
    ) -> None:
        self.store = store
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

    def send_one(self, payload: dict) -> None:
        if payload["kind"] == "hand":
            esc = payload.get("escaped_seat")
            self.stub.RecordHand(
                matchmaking_pb2.RecordHandRequest(
                    hand_id=payload["hand_id"],
                    table_id=payload["table_id"],
                    tag=payload["tag"],
                    player_ids=payload["player_ids"],
                    payments=payload["payments"],
                    house=payload["house"],
                    escaped_seat=seat_to_proto(esc) if esc is not None else 0,
                ),
                timeout=self.timeout,
                metadata=self.metadata,
            )
        else:
            self.stub.TableFinished(
                matchmaking_pb2.TableFinishedRequest(
                    table_id=payload["table_id"],
                    tag=payload["tag"],
                    hands_played=payload["hands_played"],
                ),
                timeout=self.timeout,
                metadata=self.metadata,
            )

    def flush(self) -> int:
        """Send every pending report once (in key order: a table's hands before its end);
        returns how many went out."""
        done = 0
        for key, rec in self.store.scan(OUTBOX):
            payload = json.loads(rec.value)
            try:
                self.send_one(payload)
            except grpc.RpcError as exc:
                if not self._refused(key, payload, exc):
                    return done
                continue
            self.store.delete(OUTBOX, key)
            done += 1
            self.sent += 1
        return done

    def _refused(self, key: str, payload: dict, exc: grpc.RpcError) -> bool:
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
        OUTBOX_DROPPED.labels(payload.get("kind", "?"), code.name).inc()
        log.error(
            "outbox_report_dropped",
            key=key,
            table=payload.get("table_id"),
            tag=payload.get("tag"),
            code=code.name,
            error=details,
            report=payload,
        )
        self.store.delete(OUTBOX, key)
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
