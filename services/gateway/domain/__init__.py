"""The gateway's table engine, pure (no gRPC): a hand as a state machine (:mod:`.hand`), a table
session of successive hands (:mod:`.session`), the ports to wall, rules and scoring
(:mod:`.ports`), injectable clocks (:mod:`.clock`), what each viewer may see (:mod:`.events`),
signed seat tokens (:mod:`.tokens`) and replays (:mod:`.replay`)."""
