"""The matchmaking outbox: settled hands and finished tables are written to the store
(namespace ``gateway-outbox``) by the table, then sent by this thread with retries and backoff,
and deleted once matchmaking accepted them (RecordHand is idempotent by hand id), so a report is
never lost when matchmaking is down or the gateway restarts."""

from __future__ import annotations

import json
import threading

import grpc
import structlog
from mahjong.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc

from services.gateway.tables import OUTBOX
from shared.convert.common import seat_to_proto
from shared.store import Store

log = structlog.get_logger("mahjong.gateway.outbox")


class OutboxSender:
    def __init__(
        self, store: Store, channel: grpc.Channel, *, timeout: float = 2.0, interval: float = 0.2
    ) -> None:
        self.store = store
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
            )
        else:
            self.stub.TableFinished(
                matchmaking_pb2.TableFinishedRequest(
                    table_id=payload["table_id"],
                    tag=payload["tag"],
                    hands_played=payload["hands_played"],
                ),
                timeout=self.timeout,
            )

    def flush(self) -> int:
        """Send every pending report once (in key order: a table's hands before its end);
        returns how many went out."""
        done = 0
        for key, rec in self.store.scan(OUTBOX):
            try:
                self.send_one(json.loads(rec.value))
            except grpc.RpcError as exc:
                log.warning("outbox_send_failed", key=key, code=exc.code().name)
                return done
            self.store.delete(OUTBOX, key)
            done += 1
            self.sent += 1
        return done

    def _run(self) -> None:
        while not self._stop.wait(self.backoff):
            try:
                pending = any(True for _ in self.store.scan(OUTBOX))
                ok = self.flush() if pending else 0
                self.backoff = self.interval if ok or not pending else min(5.0, self.backoff * 2)
            except Exception as exc:  # never let the sender thread die
                log.exception("outbox_failed", error=repr(exc))

    def close(self) -> None:
        self._stop.set()
