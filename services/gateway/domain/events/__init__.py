"""The table's events: the kinds (:mod:`.kinds`), their log records (:mod:`.codec`) and what
each viewer sees of them (:mod:`.views`)."""
