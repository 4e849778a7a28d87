"""The matchmaking service: how people get to a table (DESIGN.md; RULES.md §9, §11).

One concept per module, pure Python over :class:`shared.store.base.Store` (no gRPC here except in
``servicer.py``, ``server.py`` and ``gateway_client.py``):

* :mod:`.clock` — injectable clocks (tests never sleep).
* :mod:`.records` — JSON encoding of store records.
* :mod:`.tokens` — signed player tokens, verified on every call.
* :mod:`.levels` — 等级 levels by silver, their base chips, the stake tiers a level allows.
* :mod:`.players` — registration (display name → id + token), bot players.
* :mod:`.ledger` — 账本: every settled hand once, keyed by hand id; balances = sum of entries.
* :mod:`.room_cards` — 房卡: opening a private room costs one; new players get some free.
* :mod:`.allocator` — the port to the gateway (``TableAllocator.create_table``).
* :mod:`.allocated_tables` — the tables matchmaking allocated; gateway reports about any other
  table (or seating) are refused.
* :mod:`.tags` — the opaque table tags echoed back by the gateway ("tournament/T/round/2/table/0").
* :mod:`.queues` — quick match: a queue per (ruleset, stake tier), tables of four, bots fill
  empty seats after a wait (无须担心三缺一), one queue per player.
* :mod:`.rooms` — private rooms (开房): codes, joining and leaving, 底分 agreement, bots.
* :mod:`.room_start` — the Start button, its 15-second timer, the table on a gateway.
* :mod:`.seating` — Swiss seating by chips with no repeat meetings while avoidable.
* :mod:`.tournaments` — registration, rounds over many tables, standings, final ranking.
* :mod:`.metrics` — Prometheus metrics (queue wait, tables by kind, hands, rounds).
* :mod:`.ruleset_choice` — a preset, plus house rules for rooms and tournaments, checked once.
* :mod:`.service` — :class:`Matchmaking`, the facade the servicer calls (players, reports,
  queues, ``tick`` driving the timers), with :mod:`.room_desk` and :mod:`.tournament_desk`.
"""
