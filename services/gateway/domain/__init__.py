"""The gateway's table engine, pure (no gRPC).

* :mod:`.hand` — one hand as a state machine over the wall, rules and scoring ports
* :mod:`.session` — a table of successive hands: seats, timers, 托管, escapes, dealer, 荒番
* :mod:`.ports` — the ports (interfaces) and the facts passed through them
* :mod:`.rounds` — rounds (圈): when the deal has gone once around the table
* :mod:`.readiness` — who counts as ready (敲, or waiting without it) when a hand is scored
* :mod:`.clock` — injectable clocks and schedulers (tests never sleep)
* :mod:`.events` — what each viewer may see of an event (information hiding)
* :mod:`.tokens` — seat tokens signed with :mod:`infra.signing`
* :mod:`.replay` — export and verification of finished hands
* :mod:`.restore` — a table rebuilt from its event log (taking over an expired lease)
"""
