"""Request ids for a client that does not retry on its own: a channel whose calls get a new
random ``request_id`` (a UUID) whenever their request has the field and leaves it empty.

Matchmaking requires a request id on every mutating call (a retry with the same id gets the
first answer); a client that retries a call itself sets the id once and sends it on every try
(the id set is left alone). gRPC's own retries resend the same serialized request, so they
carry the same id too.
"""

from __future__ import annotations

import uuid

import grpc


def _with_id(request):
    fields = getattr(getattr(request, "DESCRIPTOR", None), "fields_by_name", {})
    if "request_id" not in fields or request.request_id:
        return request
    copy = type(request)()
    copy.CopyFrom(request)
    copy.request_id = uuid.uuid4().hex
    return copy


class RequestIds(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Fills an empty ``request_id`` with a new UUID before the call is sent."""

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(client_call_details, _with_id(request))

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(client_call_details, _with_id(request))


def with_request_ids(channel: grpc.Channel) -> grpc.Channel:
    """``channel`` with :class:`RequestIds` in front of its calls."""
    return grpc.intercept_channel(channel, RequestIds())
