"""The PostgreSQL store's pool tries to reconnect at most RECONNECT_MAX_DELAY_S apart while the
database is away (a failover, a restart): psycopg_pool's own backoff doubles from 1 s (attempts
at 0, 1, 3, 7, 15, 31 s …), so a store would find a database back after a 16 s failover only
at 31 s. Here the "database" is a loopback port that accepts each connection and closes it at
once, which counts the attempts."""

from __future__ import annotations

import itertools
import socket
import threading
import time

from infra.store.postgres import RECONNECT_MAX_DELAY_S, _Pool

WINDOW_S = 3.2


def test_the_pool_reconnects_at_most_a_second_apart():
    attempts: list[float] = []
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            attempts.append(time.monotonic())
            conn.close()  # the server went away as the client said hello

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    pool = _Pool(
        f"host=127.0.0.1 port={port} user=mahjong dbname=mahjong connect_timeout=2",
        min_size=1,
        max_size=1,
        open=False,
    )
    try:
        pool.open(wait=False)
        time.sleep(WINDOW_S)
    finally:
        pool.close(timeout=1)
        done.set()
        thread.join()
        listener.close()
    # ours: 0, 0.2, 0.6, 1.4, 2.4 s …; psycopg_pool's: 0, 1, 3 s
    gaps = [b - a for a, b in itertools.pairwise(attempts)]
    assert len(attempts) >= 4, gaps
    assert max(gaps) <= RECONNECT_MAX_DELAY_S + 0.4, gaps
