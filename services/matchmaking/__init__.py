"""The matchmaking service: how people get to a table (DESIGN.md; RULES.md §9, §11).

Adapters over a domain, as the rules and scoring services are:

* :mod:`.domain` — pure Python, one concept per module, by sub-package: ``players`` (accounts,
  identity and sessions, presence), ``economy`` (the ledger and its assets), ``tables`` (the
  port to the gateway and the tables allocated through it), ``queues`` (quick match, levels),
  ``rooms`` (private rooms) and ``tournaments``. No gRPC, no generated protos, no adapter.
* :mod:`.service` — :class:`~.service.Matchmaking`, the facade the adapters call, composed of
  the domain's desks with their dependencies passed in.
* :mod:`.adapters` — gRPC: the servicers (threaded and asyncio), proto conversion, the call
  guard (flood control, request ids) and the gateway client.
* :mod:`.storage` — the ledger's books on each kind of store, the ticker duty's lease.
* :mod:`.metrics` — Prometheus metrics (queue wait, tables by kind, hands, rounds).
* :mod:`.server` — ``mahjong serve matchmaking``; :mod:`.cli` — ``mahjong mm``.

Importing the package gives the domain's ledger its storage backends
(:func:`.domain.economy.books.use_backends`): the one place the two meet.
"""

from services.matchmaking.domain.economy.books import use_backends
from services.matchmaking.storage.ledger import ledger_for

use_backends(ledger_for)
