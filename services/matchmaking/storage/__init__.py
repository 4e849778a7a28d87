"""Where matchmaking keeps its records: each concept's repository over the service's store
(:mod:`.player_records`: players, sessions and presence; :mod:`.queue_records`,
:mod:`.room_records`, :mod:`.table_records` with :mod:`.table_claims`,
:mod:`.tournament_records`, :mod:`.hold_records`; :mod:`.writes` for what they share), the
ledger's books on each kind of store (:mod:`.ledger`, one file per backend:
:mod:`.ledger_memory`, :mod:`.ledger_sql`, :mod:`.ledger_sqlite`, :mod:`.ledger_postgres`) and
the ticker duty's lease (:mod:`.duty`)."""
