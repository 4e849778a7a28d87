"""Tournaments (比赛): the tournament and its life (:mod:`.tournament`), its records
(:mod:`.records`), consent to enter (:mod:`.consent`), rounds (:mod:`.rounds`), Swiss seating
(:mod:`.seating`), standings (:mod:`.standings`), the purse (:mod:`.purse`), and the facade's
tournament desk (:mod:`.desk`)."""
