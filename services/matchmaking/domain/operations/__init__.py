"""The operator's console: suspensions (:mod:`.suspensions`), the audit log (:mod:`.audit`) and
the desk that acts and records (:mod:`.console`)."""
