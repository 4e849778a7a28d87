"""What a call that failed is answered with, on every transport: a domain error
(:mod:`shared.errors`) or a store error becomes its status code with a ``google.rpc.Status``
carrying an ``ErrorInfo`` (and a ``RetryInfo`` when it says when to retry); a failed call to
another service keeps that call's code; anything else is INTERNAL and logged, never a crash.
"""

from __future__ import annotations

import grpc
import structlog
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from infra.store.base import StoreError
from shared.errors import DomainError

log = structlog.get_logger("mahjong.server")

ERROR_DOMAIN = "mahjong"

# The status travels in trailing metadata, which clients refuse past 16 KiB (the call would end
# RESOURCE_EXHAUSTED instead): a message or detail echoing a huge input is cut short.
MAX_ERROR_TEXT = 1000


def _bounded(text: str) -> str:
    if len(text) <= MAX_ERROR_TEXT:
        return text
    return f"{text[:MAX_ERROR_TEXT]}… ({len(text)} characters)"


def rich_status(err: DomainError | StoreError) -> status_pb2.Status:
    """The google.rpc.Status (code, message, an ErrorInfo detail) of a domain error, or of a
    store error with a code of its own (UNAVAILABLE when the store cannot be reached)."""
    code = getattr(code_pb2, err.code, code_pb2.UNKNOWN)
    facts = details_of(err)
    metadata = {_bounded(k): _bounded(v) for k, v in facts.items()}
    info = error_details_pb2.ErrorInfo(reason=err.reason, domain=ERROR_DOMAIN, metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    delay = facts.get("retry_delay_ms", "")
    if delay.isdigit():  # a refusal that says when to retry: google.rpc.RetryInfo as well
        retry = any_pb2.Any()
        retry.Pack(
            error_details_pb2.RetryInfo(
                retry_delay=duration_pb2.Duration(
                    seconds=int(delay) // 1000, nanos=int(delay) % 1000 * 1_000_000
                )
            )
        )
        details.append(retry)
    return status_pb2.Status(code=code, message=_bounded(err.message), details=details)


def details_of(err: DomainError | StoreError) -> dict[str, str]:
    """The facts of an error (ErrorInfo metadata); ``retry_delay_ms`` is sent as RetryInfo too."""
    return err.details if isinstance(err, DomainError) else {}


def status_for(err: DomainError | StoreError) -> grpc.Status:
    """A rich status (google.rpc.Status with ErrorInfo) for a domain or store error, as gRPC
    sends it."""
    return rpc_status.to_status(rich_status(err))


def error_status(exc: BaseException, service: str, method: str) -> status_pb2.Status:
    """What a handler's exception is answered with, on every transport (gRPC here, Connect and
    gRPC-Web in :mod:`infra.web`), logged: a domain error its rich status; a failed call to
    another service that call's code, named; anything else INTERNAL (never the process)."""
    if isinstance(exc, DomainError):
        log.info("rpc_rejected", code=exc.code, error=exc.message)
        return rich_status(exc)
    if isinstance(exc, StoreError) and exc.code != "INTERNAL":
        log.warning("store_failed", code=exc.code, reason=exc.reason, error=exc.message)
        return rich_status(exc)
    if isinstance(exc, grpc.RpcError) and isinstance(exc, grpc.Call):
        log.warning("downstream_failed", code=exc.code().name, error=exc.details())
        return status_pb2.Status(
            code=exc.code().value[0], message=_bounded(f"downstream: {exc.details()}")
        )
    log.exception("rpc_failed", error=repr(exc))
    return status_pb2.Status(
        code=code_pb2.INTERNAL, message=f"internal error in {service}/{method}"
    )


def status_code(code: int) -> grpc.StatusCode:
    """The grpc.StatusCode of a google.rpc code number."""
    return next((c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN)
