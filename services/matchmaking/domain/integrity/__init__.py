"""Fair play: collusion signals (串通 / 合伙作弊) per ordered pair of players who sat together,
counted as hands are recorded, and a ranking of the pairs by how unlikely their record is by
chance (:mod:`.facts`, :mod:`.counts`, :mod:`.scoring`); its repository is a port
(:class:`.counts.IntegrityRepository`), stored in :mod:`services.matchmaking.storage`."""
