"""Matchmaking's domain: pure Python over the service's store, one concept per module.

* :mod:`.players` — accounts, identity (issuers, ID tokens, sessions, guests), presence.
* :mod:`.economy` — the ledger (账本) and its assets: silver, 房卡, 加倍卡, 比赛卡; items,
  cover, reconciliation.
* :mod:`.tables` — the port to the gateway (:mod:`.tables.allocator`), the tables allocated
  through it, the live seats, the table tags.
* :mod:`.queues` — quick match and the levels (等级) that set its stakes.
* :mod:`.rooms` — private rooms (开房) and their Start timer.
* :mod:`.tournaments` — tournaments (比赛): registration, consent, rounds, seating, standings,
  the purse.
* :mod:`.changes` — change notification (what open streams wait on), with observers.
* :mod:`.clock`, :mod:`.records`, :mod:`.ruleset_choice` — time, JSON records, rulesets.
"""
