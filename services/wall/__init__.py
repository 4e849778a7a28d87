"""The wall service (RULES.md §3): one hand's wall from a committed seed to its reveal.

Domain modules (pure Python, no gRPC):

* :mod:`~services.wall.domain.shuffle` — seed, SHA-256 commitment, the HMAC-SHA256 byte stream,
  rejection sampling, Fisher–Yates over the canonical order, the dice (language-neutral).
* :mod:`~services.wall.domain.wall` — the physical wall: 72 stacks, opening by the dice, live draws
  forward, replacement draws (补张) from the tail, the deal order, reserved tiles, 换牌 mechanics.
* :mod:`~services.wall.domain.events` — what the wall hands out: the event kinds and ``WallEvent``.
* :mod:`~services.wall.domain.record` — one hand's wall with its event log, request-id retries, 换牌
  rules, fencing and the revealed flag.
* :mod:`~services.wall.storage.rows` — its storage encoding: a header, then one row per operation.
* :mod:`~services.wall.domain.verify` — the verifier (验牌) of a revealed hand's record.
* :mod:`~services.wall.storage.repository` — walls in the store, one conditional append per draw.
* :mod:`~services.wall.storage.retention` — the sweeper that deletes old walls.

gRPC and process: :mod:`~services.wall.servicer` (protobuf ↔ domain), :mod:`~services.wall.server`
(``SPEC``, flags), :mod:`~services.wall.cli` (``mahjong verify-wall``, ``mahjong wall …``).
"""
