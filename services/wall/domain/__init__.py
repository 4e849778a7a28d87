"""The wall's domain, pure Python: the committed shuffle (:mod:`.shuffle`), one hand's wall and
its draws (:mod:`.wall`), the record of what was dealt and drawn (:mod:`.events`,
:mod:`.record`), and the check of a revealed record (:mod:`.verify`)."""
