"""Tables: the port to the gateway (:mod:`.allocator`), the tables matchmaking allocated
(:mod:`.allocated`: reports about any other are refused), the seats players hold at them
(:mod:`.live_seats`) and the opaque table tags (:mod:`.tags`)."""
