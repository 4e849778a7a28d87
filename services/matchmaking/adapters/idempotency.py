"""Request ids (幂等): a mutating call retried with its request id gets its first answer again.

Every mutating call carries a ``request_id``; its first result — the answer, or a refusal — is
kept in the store under the key (method, caller, request id), with the *fingerprint* of the
request (a digest of everything it asks, without the request id and the session token). Then:

* the same key with the same fingerprint gets the kept answer, or the kept refusal raised
  again, and applies nothing (the call is not run a second time);
* the same key with another fingerprint is FAILED_PRECONDITION ``REQUEST_ID_REUSED``: a client
  bug, refused before anything runs;
* while the first call still runs (a retry that overtook it, or two at once), the key is held
  by a *pending* record and the other is ABORTED ``REQUEST_IN_PROGRESS`` (retry shortly). A
  pending record older than ``pending_ms`` (its replica died mid-call) is taken over and the
  call runs again — the only case in which a call can apply twice, a replica's death between
  its effect and its record; the ledger's own idempotency keys cover silver there.

Refusals that say nothing about the request — UNAVAILABLE, ABORTED, RESOURCE_EXHAUSTED,
UNAUTHENTICATED, a failure that is no domain error — are not kept: the claim is dropped and a
retry runs again.

How long: ``ttl_ms`` (an hour by default), as long as a client may retry; an expired record is
as good as absent. The records live in the store (every backend alike: the service's key/value
store) as typed, versioned values (:class:`RequestRecord`): namespace ``mm_requests``, and an
expiry index ``mm_requests_expiry`` (``<expiry minute>/<key>``) that :meth:`RequestLog.sweep`
walks minute by minute (up to the minute noted in ``mm_requests_swept``), deleting what expired.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import structlog

from infra.store.base import Store
from shared.errors import Aborted, DomainError, FailedPrecondition, InvalidArgument, Refusal

log = structlog.get_logger("mahjong.matchmaking.requests")

REQUESTS = "mm_requests"
EXPIRY = "mm_requests_expiry"
SWEPT = "mm_requests_swept"  # key "minute": the last expiry minute swept (JSON int)
VERSION = 1

DEFAULT_TTL_MS = 3_600_000  # an hour: longer than any client retries
DEFAULT_PENDING_MS = 30_000  # longer than any call's deadline: then its replica is gone
MAX_REQUEST_ID = 128
SWEEP_MINUTES = 120  # minutes of the expiry index one sweep walks at most
SWEEP_EVERY_MS = 60_000
# Refusals kept for the request id: they depend on the request (and the state it met).
KEPT_CODES = frozenset(
    {
        "INVALID_ARGUMENT",
        "FAILED_PRECONDITION",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "OUT_OF_RANGE",
    }
)


def check_request_id(request_id: str, *, min_length: int = 1) -> str:
    """A request id: ``min_length``-128 printable characters; INVALID_ARGUMENT otherwise."""
    if not request_id:
        raise InvalidArgument(
            "request_id is empty: every mutating call carries one (a new random id, e.g. a "
            "UUID, per intended action; the same id on its retries)",
            reason="REQUEST_ID_MISSING",
            field="request_id",
        )
    if not min_length <= len(request_id) <= MAX_REQUEST_ID or not request_id.isprintable():
        raise InvalidArgument(
            f"request_id must be {min_length}-{MAX_REQUEST_ID} printable characters "
            f"(it has {len(request_id)})",
            field="request_id",
        )
    return request_id


def request_key(method: str, caller: str, request_id: str) -> str:
    """The record key of a request id: the method, then a digest of (caller, request id)."""
    digest = hashlib.sha256(f"{caller}\x00{request_id}".encode()).hexdigest()
    return f"{method}/{digest[:40]}"


@dataclass(frozen=True)
class RequestRecord:
    """What a request id holds: the request's fingerprint, when it was claimed and when the
    record expires (ms since the epoch), and then its result — the answer (``response``, the
    serialized reply) or a refusal. Neither: the first call is still running (pending)."""

    fingerprint: str
    started_ms: int
    expires_ms: int
    response: bytes | None = None
    refusal: Refusal | None = None

    @property
    def pending(self) -> bool:
        return self.response is None and self.refusal is None

    def encode(self) -> bytes:
        d: dict[str, Any] = {
            "v": VERSION,
            "fingerprint": self.fingerprint,
            "started_ms": self.started_ms,
            "expires_ms": self.expires_ms,
        }
        if self.response is not None:
            d["response"] = base64.b64encode(self.response).decode()
        if self.refusal is not None:
            d["refused"] = self.refusal.as_dict()
        return json.dumps(d, separators=(",", ":"), sort_keys=True).encode()

    @staticmethod
    def decode(raw: bytes) -> RequestRecord:
        d = json.loads(raw)
        if not isinstance(d, dict):
            raise ValueError(f"a request record is a JSON object, not {type(d).__name__}")
        if d.get("v") != VERSION:
            raise ValueError(
                f"request record of version {d.get('v')}: this release reads version {VERSION}"
            )
        refused = d.get("refused")
        response = d.get("response")
        return RequestRecord(
            fingerprint=str(d["fingerprint"]),
            started_ms=int(d["started_ms"]),
            expires_ms=int(d["expires_ms"]),
            response=None if response is None else base64.b64decode(response),
            refusal=None if refused is None else Refusal.from_dict(refused),
        )


def _wall_ms() -> int:
    return int(time.time() * 1000)


class RequestLog:
    """The request ids of one service's mutating calls, kept in ``store``."""

    def __init__(
        self,
        store: Store,
        *,
        ttl_ms: int = DEFAULT_TTL_MS,
        pending_ms: int = DEFAULT_PENDING_MS,
        clock_ms: Callable[[], int] = _wall_ms,
    ) -> None:
        if ttl_ms <= 0 or pending_ms <= 0:
            raise ValueError("ttl_ms and pending_ms must be positive")
        self.store = store
        self.ttl_ms = ttl_ms
        self.pending_ms = pending_ms
        self.clock_ms = clock_ms
        self._swept_at: int | None = None

    def run(
        self,
        method: str,
        caller: str,
        request_id: str,
        fingerprint: str,
        call: Callable[[], bytes],
    ) -> tuple[bytes, bool]:
        """``call()``'s answer (serialized) for this request id, run at most once while the
        record lasts; returns (the answer, whether it was replayed)."""
        key = request_key(method, caller, request_id)
        now = self.clock_ms()
        claim = RequestRecord(fingerprint, now, now + self.ttl_ms)
        kept = self._claim(key, claim, now)
        if kept is not None:
            if kept.refusal is not None:
                kept.refusal.raise_again()
            assert kept.response is not None
            return kept.response, True
        self.store.put(EXPIRY, _expiry_key(claim.expires_ms, key), b"")
        try:
            answer = call()
        except DomainError as exc:
            if exc.code in KEPT_CODES:
                self._finish(key, claim, replace(claim, refusal=Refusal.of(exc)))
            else:
                self._drop(key, claim)
            raise
        except BaseException:
            self._drop(key, claim)
            raise
        self._finish(key, claim, replace(claim, response=answer))
        return answer, False

    def _claim(self, key: str, claim: RequestRecord, now: int) -> RequestRecord | None:
        """Hold ``key`` for this call (None), or the finished record to answer from."""

        def fn(raw: bytes | None) -> tuple[bytes | None, RequestRecord | None]:
            cur = None if raw is None else RequestRecord.decode(raw)
            if cur is None or cur.expires_ms <= now:
                return claim.encode(), None
            if cur.fingerprint != claim.fingerprint:
                raise FailedPrecondition(
                    "request_id was already used for a different request (of this caller and "
                    "method): a new action takes a new request id",
                    reason="REQUEST_ID_REUSED",
                    field="request_id",
                )
            if not cur.pending:
                return None, cur
            if now - cur.started_ms < self.pending_ms:
                raise Aborted(
                    "a call with this request_id is still running; retry shortly for its answer",
                    reason="REQUEST_IN_PROGRESS",
                    retry_delay_ms=200,
                )
            return claim.encode(), None  # its replica died mid-call: run it again

        return self.store.update(REQUESTS, key, fn)

    def _finish(self, key: str, claim: RequestRecord, done: RequestRecord) -> None:
        def fn(raw: bytes | None) -> tuple[bytes | None, None]:
            cur = None if raw is None else RequestRecord.decode(raw)
            if cur is not None and (not cur.pending or cur.started_ms != claim.started_ms):
                return None, None  # taken over meanwhile: the newer call records its own
            return done.encode(), None

        self.store.update(REQUESTS, key, fn)

    def _drop(self, key: str, claim: RequestRecord) -> None:
        cur = self.store.get(REQUESTS, key)
        if cur is not None:
            rec = RequestRecord.decode(cur.value)
            if rec.pending and rec.started_ms == claim.started_ms:
                self.store.delete(REQUESTS, key)

    def sweep_if_due(self, every_ms: int = SWEEP_EVERY_MS) -> int:
        """:meth:`sweep` when ``every_ms`` passed since this log's last sweep (the ticker calls
        this on every tick); returns how many records it deleted."""
        now = self.clock_ms()
        if self._swept_at is not None and now - self._swept_at < every_ms:
            return 0
        self._swept_at = now
        return self.sweep()

    def sweep(self, minutes: int = SWEEP_MINUTES) -> int:
        """Delete the records that expired (up to ``minutes`` of the expiry index from where the
        last sweep stopped); returns how many. Run by the replica holding the ticker duty."""
        now = self.clock_ms()
        current = now // 60_000
        mark = self.store.get(SWEPT, "minute")
        if mark is None:  # the first sweep ever: from the earliest minute indexed
            first = next(iter(self.store.scan(EXPIRY)), None)
            start = min(current, int(first[0].split("/", 1)[0])) if first else current
        else:
            start = int(json.loads(mark.value)) + 1
        deleted = 0
        last = min(current - 1, start + minutes - 1)
        for minute in range(start, last + 1):
            for index_key, _ in self.store.scan(EXPIRY, f"{minute:010d}/"):
                key = index_key.split("/", 1)[1]
                rec = self.store.get(REQUESTS, key)
                if rec is not None and RequestRecord.decode(rec.value).expires_ms <= now:
                    self.store.delete(REQUESTS, key)
                    deleted += 1
                self.store.delete(EXPIRY, index_key)
        if mark is None or last >= start:
            self.store.put(SWEPT, "minute", json.dumps(max(last, start - 1)).encode())
        if deleted:
            log.info("request_ids_swept", deleted=deleted, through_minute=last)
        return deleted


def _expiry_key(expires_ms: int, key: str) -> str:
    # The minute it expires in: swept once that minute is over, when all of it has expired.
    return f"{expires_ms // 60_000:010d}/{key}"
