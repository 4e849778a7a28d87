"""A replica paused in the middle of a store transaction (SIGSTOP between two statements, as a
GC pause or a stopped container would) holds row locks on the PostgreSQL server: here the
lease row of a table it owned. The server ends such a session after the store's idle
transaction timeout, so another replica's takeover waits at most that long instead of for as
long as the pause lasts (the cluster test's SIGSTOP once timed out on exactly this)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from infra.store.postgres import PostgresStore

HOLDER = textwrap.dedent(
    """
    import sys, time
    from infra.store.postgres import PostgresStore

    store = PostgresStore(sys.argv[1], idle_transaction_timeout_ms=int(sys.argv[2]))
    store.acquire_lease("gateway-table/t_paused", "gw-a", 100)

    def hold(conn):
        conn.execute(
            "SELECT epoch FROM store_leases WHERE name = 'gateway-table/t_paused' FOR UPDATE"
        )
        print("locked", flush=True)
        time.sleep(120)  # stopped here, between two statements of one transaction

    store.transaction(hold)
    """
)


def test_a_paused_lock_holder_stalls_a_takeover_only_until_the_idle_timeout(postgres_url):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, postgres_url, "1000"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        holder.send_signal(signal.SIGSTOP)
        time.sleep(0.3)  # its 100 ms lease has expired by the server's clock
        with PostgresStore(postgres_url) as taker:
            start = time.monotonic()
            lease = taker.acquire_lease("gateway-table/t_paused", "gw-b", 3000)
            waited = time.monotonic() - start
        assert lease.owner == "gw-b" and lease.epoch == 2
        assert waited < 1.0 + 2.0, f"the takeover waited {waited:.1f} s on a paused holder"
    finally:
        holder.kill()
        holder.wait()
