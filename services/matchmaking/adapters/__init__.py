"""Matchmaking's gRPC adapters over the facade: the servicer (:mod:`.servicer`) and its asyncio
twin (:mod:`.aio_servicer`), proto conversion (:mod:`.convert`), the call guard
(:mod:`.call_guard`: flood control :mod:`.flood`, request ids :mod:`.idempotency`) and the
client of the gateway that creates tables (:mod:`.gateway_client`)."""
