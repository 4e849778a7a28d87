"""Quick match (:mod:`.quick_match`: a queue per ruleset and stake tier, bots after a wait) and
the levels (等级) by silver that set the stakes a player may join (:mod:`.levels`)."""
