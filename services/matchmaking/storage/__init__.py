"""Where matchmaking keeps its records: each concept's repository over the service's store
(:mod:`.player_records`), the ledger's books on each kind of store (:mod:`.ledger`, one file
per backend: :mod:`.ledger_memory`, :mod:`.ledger_sql`, :mod:`.ledger_sqlite`,
:mod:`.ledger_postgres`) and the ticker duty's lease (:mod:`.duty`)."""
