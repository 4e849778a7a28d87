"""Private rooms (开房): codes, members, 底分 agreement and bots (:mod:`.private`), the Start
button and its timer (:mod:`.start`), and the facade's room desk (:mod:`.desk`)."""
